//! Parsing `#[odm(shard_key(...))]`: the model's collection is sharded by these fields (the
//! rules a shard key must follow are in `check::shard`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::LitStr;

use super::{key_name, skip_value, string_value};
use crate::ctxt::Ctxt;

const SHARD_KEYS: &str = "`keys`, `hashed`, `fill`, `month`, `hash`, `mutable`";

/// `#[odm(shard_key(keys = "host, time"))]`, with `hashed = "field"` (one key hashed), `fill =
/// "segment", month = "uploaded", hash = "data"` (a key the ODM computes) and `mutable`.
pub struct ShardAttr {
    /// The `shard_key` key, where errors about the key as a whole point.
    pub span: Span,
    pub keys: Option<LitStr>,
    pub hashed: Option<LitStr>,
    pub fill: Option<LitStr>,
    pub month: Option<LitStr>,
    pub hash: Option<LitStr>,
    pub mutable: Option<Span>,
}

impl ShardAttr {
    /// The key's field names, as written (`_id` or a Rust field name).
    pub fn names(&self) -> Vec<String> {
        self.keys.as_ref().map_or_else(Vec::new, |k| {
            k.value()
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
    }

    /// Parses the `shard_key` key of `#[odm(...)]`, reporting a repeated one.
    pub fn parse(
        cx: &Ctxt,
        meta: &ParseNestedMeta<'_>,
        slot: &mut Option<ShardAttr>,
    ) -> syn::Result<()> {
        let mut out = ShardAttr {
            span: meta.path.span(),
            keys: None,
            hashed: None,
            fill: None,
            month: None,
            hash: None,
            mutable: None,
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `shard_key(keys = \"category\")` (options: `hashed = \"field\"`, `fill = \"field\", month = \"date field\", hash = \"field\"`, `mutable`)",
            );
            skip_value(meta)?;
        } else {
            meta.parse_nested_meta(|inner| {
                let slot = if inner.path.is_ident("keys") {
                    Some((&mut out.keys, "keys", "category"))
                } else if inner.path.is_ident("hashed") {
                    Some((&mut out.hashed, "hashed", "user"))
                } else if inner.path.is_ident("fill") {
                    Some((&mut out.fill, "fill", "segment"))
                } else if inner.path.is_ident("month") {
                    Some((&mut out.month, "month", "uploaded"))
                } else if inner.path.is_ident("hash") {
                    Some((&mut out.hash, "hash", "data"))
                } else {
                    None
                };
                match slot {
                    Some((slot, key, example)) => {
                        let lit = string_value(cx, &inner, key, example)?;
                        if slot.is_some() {
                            cx.error_spanned_by(&inner.path, format!("duplicate `{key}`"));
                        } else {
                            *slot = lit;
                        }
                    }
                    None if inner.path.is_ident("mutable") => {
                        if out.mutable.is_some() {
                            cx.error_spanned_by(&inner.path, "duplicate `mutable`");
                        }
                        out.mutable = Some(inner.path.span());
                    }
                    None => {
                        cx.error_spanned_by(
                            &inner.path,
                            format!(
                                "unknown shard_key option `{}`, expected one of {SHARD_KEYS}",
                                key_name(&inner)
                            ),
                        );
                        skip_value(&inner)?;
                    }
                }
                Ok(())
            })?;
        }
        if slot.is_some() {
            cx.error_at(out.span, "duplicate odm attribute `shard_key`");
        } else {
            *slot = Some(out);
        }
        Ok(())
    }
}
