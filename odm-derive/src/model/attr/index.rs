//! `#[index(...)]` on a field and `#[odm(index(...))]` on a model.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Lit, LitStr};

use super::{key_name, set_flag, skip_value, string_value, COMPOUND_INDEX_KEYS, FIELD_INDEX_KEYS};
use crate::ctxt::Ctxt;

/// One key of a compound index: a field path (dotted into `#[embed]` fields), maybe descending.
pub struct IndexKeyPath {
    pub segments: Vec<String>,
    pub desc: bool,
}

/// `#[odm(index(keys = "book, -user", unique))]`.
pub struct CompoundIndex {
    pub span: Span,
    pub keys_lit: Option<LitStr>,
    pub keys: Vec<IndexKeyPath>,
    pub unique: Option<Span>,
    pub sparse: Option<Span>,
    pub text: Option<Span>,
    pub name: Option<LitStr>,
    pub more: IndexOptions,
}

/// The options a field's index and a compound one share beyond the flags: `collation(...)`,
/// `hidden`, `partial(field = value, ...)`.
#[derive(Default)]
pub struct IndexOptions {
    /// `collation(locale = "en", strength = 2)`: the locale and the strength.
    pub collation: Option<(String, i32)>,
    pub hidden: Option<Span>,
    /// `forever`: a unique index of a model with soft deletes applies to its deleted documents
    /// too (without it, to the live ones only).
    pub forever: Option<Span>,
    /// `partial(field = value, ...)`: the documents indexed, each field equal to its value.
    pub partial: Vec<(syn::Ident, Lit)>,
}

impl IndexOptions {
    /// Parses `meta` when it is one of these options: `Ok(true)`.
    fn parse(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
        if meta.path.is_ident("hidden") {
            set_flag(cx, &mut self.hidden, meta, "hidden")?;
        } else if meta.path.is_ident("forever") {
            set_flag(cx, &mut self.forever, meta, "forever")?;
        } else if meta.path.is_ident("collation") {
            self.parse_collation(cx, meta)?;
        } else if meta.path.is_ident("partial") {
            if !meta.input.peek(syn::token::Paren) {
                cx.error_spanned_by(&meta.path, "expected `partial(field = value, ...)`: the documents whose fields have these values");
                skip_value(meta)?;
                return Ok(true);
            }
            meta.parse_nested_meta(|inner| {
                let Some(field) = inner.path.get_ident().cloned() else {
                    cx.error_spanned_by(
                        &inner.path,
                        "expected a field of the model: `partial(status = \"active\")`",
                    );
                    return skip_value(&inner);
                };
                let value: Lit = inner.value()?.parse()?;
                self.partial.push((field, value));
                Ok(())
            })?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    fn parse_collation(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let (mut locale, mut strength) = (None, None);
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `collation(locale = \"en\", strength = 2)`",
            );
            return skip_value(meta);
        }
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("locale") {
                locale = string_value(cx, &inner, "locale", "en")?.map(|l| l.value());
            } else if inner.path.is_ident("strength") {
                let lit: Lit = inner.value()?.parse()?;
                match &lit {
                    Lit::Int(i) => match i.base10_parse::<i32>() {
                        Ok(n @ 1..=5) => strength = Some(n),
                        _ => cx.error_spanned_by(
                            &lit,
                            "`strength` is from 1 (base letters) to 5; 2 ignores case",
                        ),
                    },
                    _ => cx.error_spanned_by(
                        &lit,
                        "`strength` is from 1 (base letters) to 5; 2 ignores case",
                    ),
                }
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown collation option `{}`, expected `locale`, `strength`",
                        key_name(&inner)
                    ),
                );
                skip_value(&inner)?;
            }
            Ok(())
        })?;
        match (locale, strength) {
            (Some(locale), strength) if self.collation.is_none() => {
                self.collation = Some((locale, strength.unwrap_or(3)));
            }
            (Some(_), _) => cx.error_spanned_by(&meta.path, "duplicate `collation`"),
            (None, _) => cx.error_spanned_by(
                &meta.path,
                "a collation needs its `locale`: `collation(locale = \"en\", strength = 2)`",
            ),
        }
        Ok(())
    }
}

/// `kind = "..."` on a field's index: what its key is, other than ascending.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Sphere,
    Hashed,
    Wildcard,
}

/// `#[index(...)]` on a field.
pub struct FieldIndex {
    /// The whole attribute, where errors about the index as a whole point.
    pub tokens: TokenStream,
    pub unique: Option<Span>,
    pub sparse: Option<Span>,
    pub desc: Option<Span>,
    pub text: Option<Span>,
    pub name: Option<LitStr>,
    pub expire_after_secs: Option<(u64, Span)>,
    /// `kind = "2dsphere" | "hashed" | "wildcard"`, and where it is written.
    pub kind: Option<(IndexKind, Span)>,
    pub more: IndexOptions,
}

impl CompoundIndex {
    pub(super) fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Self> {
        let mut out = CompoundIndex {
            span: meta.path.span(),
            keys_lit: None,
            keys: Vec::new(),
            unique: None,
            sparse: None,
            text: None,
            name: None,
            more: IndexOptions::default(),
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `index(keys = \"field, -other\", ...)`",
            );
            skip_value(meta)?;
            return Ok(out);
        }
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("keys") {
                let lit = string_value(cx, &inner, "keys", "book, -user")?;
                if out.keys_lit.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `keys`");
                } else if let Some(lit) = lit {
                    out.keys = parse_keys(cx, &lit);
                    out.keys_lit = Some(lit);
                }
            } else if inner.path.is_ident("unique") {
                set_flag(cx, &mut out.unique, &inner, "unique")?;
            } else if inner.path.is_ident("sparse") {
                set_flag(cx, &mut out.sparse, &inner, "sparse")?;
            } else if inner.path.is_ident("text") {
                set_flag(cx, &mut out.text, &inner, "text")?;
            } else if inner.path.is_ident("name") {
                let lit = string_value(cx, &inner, "name", "book_user")?;
                if out.name.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `name`");
                }
                out.name = lit;
            } else if out.more.parse(cx, &inner)? {
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown index option `{}`, expected one of {COMPOUND_INDEX_KEYS}",
                        key_name(&inner)
                    ),
                );
                skip_value(&inner)?;
            }
            Ok(())
        })?;
        if out.keys_lit.is_none() {
            cx.error_at(
                out.span,
                "`index(...)` needs its keys: `index(keys = \"field, -other\")`",
            );
        }
        Ok(out)
    }
}

pub(super) fn parse_keys(cx: &Ctxt, lit: &LitStr) -> Vec<IndexKeyPath> {
    let value = lit.value();
    let mut keys = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let (desc, path) = match part.strip_prefix('-') {
            Some(rest) => (true, rest.trim()),
            None => (false, part),
        };
        if part.is_empty() {
            cx.error_spanned_by(
                lit,
                "empty index key: expected field names separated by commas (\"book, -user\")",
            );
            continue;
        }
        let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
        // Each segment becomes an accessor call, so it must be a Rust identifier.
        let valid = segments
            .iter()
            .all(|s| syn::parse_str::<syn::Ident>(&format!("r#{s}")).is_ok());
        if !valid {
            cx.error_spanned_by(
                lit,
                format!("invalid index key `{part}`: expected field names separated by commas, `-` before a descending key, `.` into embedded fields (\"book, -user\")"),
            );
            continue;
        }
        keys.push(IndexKeyPath { segments, desc });
    }
    keys
}

impl FieldIndex {
    pub(super) fn parse(cx: &Ctxt, attr: &Attribute) -> Self {
        let mut out = FieldIndex {
            tokens: attr.to_token_stream(),
            unique: None,
            sparse: None,
            desc: None,
            text: None,
            name: None,
            expire_after_secs: None,
            kind: None,
            more: IndexOptions::default(),
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return out;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("unique") {
                set_flag(cx, &mut out.unique, &meta, "unique")?;
            } else if meta.path.is_ident("sparse") {
                set_flag(cx, &mut out.sparse, &meta, "sparse")?;
            } else if meta.path.is_ident("desc") {
                set_flag(cx, &mut out.desc, &meta, "desc")?;
            } else if meta.path.is_ident("text") {
                set_flag(cx, &mut out.text, &meta, "text")?;
            } else if meta.path.is_ident("name") {
                let lit = string_value(cx, &meta, "name", "by_isbn")?;
                if out.name.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `name`");
                }
                out.name = lit;
            } else if meta.path.is_ident("expire_after_secs") {
                let lit: Lit = meta.value()?.parse()?;
                match &lit {
                    // MongoDB takes a 32-bit signed number of seconds (about 68 years).
                    Lit::Int(i) => match i.base10_parse::<u64>() {
                        Ok(v) if v <= i32::MAX as u64 => {
                            out.expire_after_secs = Some((v, i.span()))
                        }
                        _ => cx.error_spanned_by(
                            i,
                            format!(
                                "`expire_after_secs` is at most {} seconds (about 68 years)",
                                i32::MAX
                            ),
                        ),
                    },
                    other => cx.error_spanned_by(
                        other,
                        "expected a whole number of seconds: `expire_after_secs = 3600`",
                    ),
                }
            } else if meta.path.is_ident("kind") {
                if let Some(lit) = string_value(cx, &meta, "kind", "2dsphere")? {
                    let kind = match lit.value().as_str() {
                        "2dsphere" => Some(IndexKind::Sphere),
                        "hashed" => Some(IndexKind::Hashed),
                        "wildcard" => Some(IndexKind::Wildcard),
                        _ => None,
                    };
                    match kind {
                        _ if out.kind.is_some() => {
                            cx.error_spanned_by(&meta.path, "duplicate `kind`")
                        }
                        Some(kind) => out.kind = Some((kind, lit.span())),
                        None => cx.error_spanned_by(
                            &lit,
                            "an index's `kind` is \"2dsphere\", \"hashed\" or \"wildcard\"",
                        ),
                    }
                }
            } else if out.more.parse(cx, &meta)? {
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown index option `{}`, expected one of {FIELD_INDEX_KEYS}",
                        key_name(&meta)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
        out
    }
}
