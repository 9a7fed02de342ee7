//! `#[denormalize(...)]`.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Attribute, Lit, LitStr};

use super::{
    is_field_name, key_name, parse_bound_key, skip_value, sort_key, string_value, Bound, BoundKey,
};
use crate::ctxt::Ctxt;

/// `#[denormalize(from = "Part", fields = "name", ...)]` on a field: a copy of fields of
/// another model, kept up to date by the ODM.
pub struct DenormalizeAttr {
    /// The whole attribute, where errors about it point.
    pub tokens: TokenStream,
    /// The source model.
    pub from: Option<(syn::Path, LitStr)>,
    /// The copied fields of the source, by Rust name, and the literal they came from.
    pub fields: Vec<String>,
    pub fields_lit: Option<LitStr>,
    /// The reference that links the two models: on this model (a copy of one source into
    /// many), or on the source for `latest` (the last N sources of this model).
    pub via: Option<LitStr>,
    /// Keep only the last N sources, ordered by `sort` (a field of the source): N, the span
    /// of the key and of the number.
    pub latest: Option<(u32, Span, Span)>,
    /// `top = N` rather than `latest = N`: the N first by a descending `sort` (the
    /// highest-rated comments), kept as `latest` keeps them; the span of the key.
    pub top: Option<Span>,
    pub sort: Option<LitStr>,
    pub bound: Bound,
    /// `cascade = "background"`: the mode and the span of the key.
    pub cascade: Option<(super::super::background::Cascade, Span)>,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks are not checked, since the user meant something else.
    pub malformed: bool,
}

pub(super) const DENORMALIZE_KEYS: &str =
    "`from`, `fields`, `via`, `latest`, `top`, `sort`, `cascade`, `max`, `allow_large`";

impl DenormalizeAttr {
    pub(super) fn parse(cx: &Ctxt, attr: &Attribute) -> Self {
        let mut out = DenormalizeAttr {
            tokens: attr.to_token_stream(),
            from: None,
            fields: Vec::new(),
            fields_lit: None,
            via: None,
            latest: None,
            top: None,
            sort: None,
            bound: Bound::default(),
            cascade: None,
            malformed: false,
        };
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("from") {
                let lit = string_value(cx, &meta, "from", "Part")?;
                if out.from.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `from`");
                }
                match lit.as_ref().map(|lit| (lit, lit.parse::<syn::Path>())) {
                    Some((lit, Ok(path))) => out.from = Some((path, lit.clone())),
                    Some((lit, Err(_))) => {
                        out.malformed = true;
                        cx.error_spanned_by(lit, "`from` names the source model: `from = \"Part\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("fields") {
                let lit = string_value(cx, &meta, "fields", "name")?;
                if out.fields_lit.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `fields`");
                }
                let Some(lit) = lit else {
                    out.malformed = true;
                    return Ok(());
                };
                out.fields.clear();
                for name in lit.value().split(',').map(str::trim) {
                    if !is_field_name(name) {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, format!("`{name}` is not a field name: `fields` lists the copied fields of the source, separated by commas (\"name, catalog_number\")"));
                    } else if out.fields.iter().any(|f| f == name) {
                        cx.error_spanned_by(&lit, format!("`{name}` is listed twice"));
                    } else {
                        out.fields.push(name.to_owned());
                    }
                }
                out.fields_lit = Some(lit);
            } else if meta.path.is_ident("via") {
                let lit = string_value(cx, &meta, "via", "product")?;
                if out.via.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `via`");
                }
                match lit {
                    Some(lit) if is_field_name(&lit.value()) => out.via = Some(lit),
                    Some(lit) => {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, "`via` names one reference field: `via = \"product\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("latest") || meta.path.is_ident("top") {
                let key = meta.path.span();
                let name = key_name(&meta);
                let lit: Lit = meta.value()?.parse()?;
                if out.latest.is_some() {
                    cx.error_spanned_by(&meta.path, format!("duplicate `{name}`: `latest` and `top` both give the number of summaries kept"));
                }
                if name == "top" {
                    out.top = Some(key);
                }
                match &lit {
                    Lit::Int(i) => match i.base10_parse::<u32>() {
                        Ok(v) if v > 0 => out.latest = Some((v, key, i.span())),
                        _ => {
                            out.malformed = true;
                            cx.error_spanned_by(i, format!("`{name}` is a whole number of documents, at least 1"));
                        }
                    },
                    other => {
                        out.malformed = true;
                        cx.error_spanned_by(other, format!("expected a whole number: `{name} = 100`"));
                    }
                }
            } else if meta.path.is_ident("sort") {
                let lit = string_value(cx, &meta, "sort", "time")?;
                if out.sort.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `sort`");
                }
                match lit {
                    Some(lit) if is_field_name(sort_key(&lit.value()).1) => out.sort = Some(lit),
                    Some(lit) => {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, "`sort` names one field of the source, `-` before it for descending: `sort = \"time\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("cascade") {
                if !super::super::background::parse(cx, &meta, &mut out.cascade)? {
                    out.malformed = true;
                }
            } else {
                match parse_bound_key(cx, &meta, &mut out.bound)? {
                    BoundKey::Valid => {}
                    BoundKey::Invalid => out.malformed = true,
                    BoundKey::Other => {
                        out.malformed = true;
                        cx.error_spanned_by(
                            &meta.path,
                            format!("unknown denormalize option `{}`, expected one of {DENORMALIZE_KEYS}", key_name(&meta)),
                        );
                        skip_value(&meta)?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            out.malformed = true;
            cx.syn_error(e);
        }
        out
    }
}
