//! `#[denormalize(...)]`.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
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
    pub cascade: Option<(super::Cascade, Span)>,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks are not checked, since the user meant something else.
    pub malformed: bool,
}

pub(super) const DENORMALIZE_KEYS: &str =
    "`from`, `fields`, `via`, `latest`, `top`, `sort`, `cascade`, `max`, `allow_large`";

impl DenormalizeAttr {
    /// Whether the copies are cascaded in the background.
    pub fn in_background(&self) -> bool {
        matches!(self.cascade, Some((super::Cascade::Background, _)))
    }

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
                out.parse_from(cx, &meta)
            } else if meta.path.is_ident("fields") {
                out.parse_fields(cx, &meta)
            } else if meta.path.is_ident("via") {
                out.parse_via(cx, &meta)
            } else if meta.path.is_ident("latest") || meta.path.is_ident("top") {
                out.parse_count(cx, &meta)
            } else if meta.path.is_ident("sort") {
                out.parse_sort(cx, &meta)
            } else if meta.path.is_ident("cascade") {
                if !super::background::parse(cx, &meta, &mut out.cascade)? {
                    out.malformed = true;
                }
                Ok(())
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
                Ok(())
            }
        });
        if let Err(e) = result {
            out.malformed = true;
            cx.syn_error(e);
        }
        out
    }

    /// `from = "Part"`: the source model.
    fn parse_from(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let lit = string_value(cx, meta, "from", "Part")?;
        if self.from.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `from`");
        }
        match lit.as_ref().map(|lit| (lit, lit.parse::<syn::Path>())) {
            Some((lit, Ok(path))) => self.from = Some((path, lit.clone())),
            Some((lit, Err(_))) => {
                self.malformed = true;
                cx.error_spanned_by(lit, "`from` names the source model: `from = \"Part\"`");
            }
            None => self.malformed = true,
        }
        Ok(())
    }

    /// `fields = "name, catalog_number"`: the copied fields of the source.
    fn parse_fields(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let lit = string_value(cx, meta, "fields", "name")?;
        if self.fields_lit.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `fields`");
        }
        let Some(lit) = lit else {
            self.malformed = true;
            return Ok(());
        };
        self.fields.clear();
        for name in lit.value().split(',').map(str::trim) {
            if !is_field_name(name) {
                self.malformed = true;
                cx.error_spanned_by(&lit, format!("`{name}` is not a field name: `fields` lists the copied fields of the source, separated by commas (\"name, catalog_number\")"));
            } else if self.fields.iter().any(|f| f == name) {
                cx.error_spanned_by(&lit, format!("`{name}` is listed twice"));
            } else {
                self.fields.push(name.to_owned());
            }
        }
        self.fields_lit = Some(lit);
        Ok(())
    }

    /// `via = "product"`: the reference linking the two models.
    fn parse_via(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let lit = string_value(cx, meta, "via", "product")?;
        if self.via.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `via`");
        }
        match lit {
            Some(lit) if is_field_name(&lit.value()) => self.via = Some(lit),
            Some(lit) => {
                self.malformed = true;
                cx.error_spanned_by(&lit, "`via` names one reference field: `via = \"product\"`");
            }
            None => self.malformed = true,
        }
        Ok(())
    }

    /// `latest = N` or `top = N`: how many summaries are kept.
    fn parse_count(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta.path.span();
        let name = key_name(meta);
        let lit: Lit = meta.value()?.parse()?;
        if self.latest.is_some() {
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "duplicate `{name}`: `latest` and `top` both give the number of summaries kept"
                ),
            );
        }
        if name == "top" {
            self.top = Some(key);
        }
        match &lit {
            Lit::Int(i) => match i.base10_parse::<u32>() {
                Ok(v) if v > 0 => self.latest = Some((v, key, i.span())),
                _ => {
                    self.malformed = true;
                    cx.error_spanned_by(
                        i,
                        format!("`{name}` is a whole number of documents, at least 1"),
                    );
                }
            },
            other => {
                self.malformed = true;
                cx.error_spanned_by(other, format!("expected a whole number: `{name} = 100`"));
            }
        }
        Ok(())
    }

    /// `sort = "time"`: the field of the source ordering the summaries.
    fn parse_sort(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let lit = string_value(cx, meta, "sort", "time")?;
        if self.sort.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `sort`");
        }
        match lit {
            Some(lit) if is_field_name(sort_key(&lit.value()).1) => self.sort = Some(lit),
            Some(lit) => {
                self.malformed = true;
                cx.error_spanned_by(&lit, "`sort` names one field of the source, `-` before it for descending: `sort = \"time\"`");
            }
            None => self.malformed = true,
        }
        Ok(())
    }
}

/// What kind of copy a `#[denormalize]` field is: a summary of the source (with its id), a
/// plain field copied through a reference (`via`), or the last N sources (`latest`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CopyKind {
    Summary,
    Flat,
    Latest,
}

impl DenormalizeAttr {
    /// The kind of copy the attribute declares.
    pub fn kind(&self) -> CopyKind {
        match (self.latest, &self.via) {
            (Some(_), _) => CopyKind::Latest,
            (None, Some(_)) => CopyKind::Flat,
            (None, None) => CopyKind::Summary,
        }
    }
}
