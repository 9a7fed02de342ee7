//! Parsing `#[odm(bucket(...))]`: a model whose documents are the buckets of a key's items,
//! one per period (its rules are in `check::bucket`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Lit, LitStr};

use super::string_value;
use crate::ctxt::Ctxt;

const BUCKET_KEYS: &str = "`key`, `period`, `every`, `items`, `time`, `item_id`, `count`, `max`";
pub const EVERY_VALUES: &str = "\"hour\", \"day\", \"month\", \"year\"";

/// `bucket(key = "user", period = "month", every = "month", items = "reviews", time =
/// "created_at", max = 100)`.
pub struct BucketAttr {
    /// The `bucket` key, where errors about the attribute as a whole point.
    pub span: Span,
    pub key: Option<LitStr>,
    pub period: Option<LitStr>,
    /// The period's length (`Hour`, `Day`, `Month`, `Year`) and its literal.
    pub every: Option<(&'static str, LitStr)>,
    pub items: Option<LitStr>,
    pub time: Option<LitStr>,
    pub item_id: Option<LitStr>,
    pub count: Option<LitStr>,
    pub max: Option<(u32, Span)>,
    /// An option was already reported as wrong: what the attribute lacks is not reported.
    pub malformed: bool,
}

impl BucketAttr {
    pub fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Self> {
        let mut out = BucketAttr {
            span: meta.path.span(),
            key: None,
            period: None,
            every: None,
            items: None,
            time: None,
            item_id: None,
            count: None,
            max: None,
            malformed: false,
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `bucket(key = \"user\", period = \"month\", every = \"month\", items = \"reviews\", time = \"created_at\")`",
            );
            super::skip_value(meta)?;
            out.malformed = true;
            return Ok(out);
        }
        meta.parse_nested_meta(|inner| {
            let name = inner
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let slot = match name.as_str() {
                "key" => Some(&mut out.key),
                "period" => Some(&mut out.period),
                "items" => Some(&mut out.items),
                "time" => Some(&mut out.time),
                "item_id" => Some(&mut out.item_id),
                "count" => Some(&mut out.count),
                _ => None,
            };
            if let Some(slot) = slot {
                let lit = string_value(cx, &inner, &name, "...")?;
                if slot.is_some() {
                    cx.error_spanned_by(&inner.path, format!("duplicate `{name}`"));
                }
                if lit.is_none() {
                    out.malformed = true;
                }
                *slot = lit.or(slot.take());
            } else if name == "every" {
                let lit = string_value(cx, &inner, "every", "...")?;
                if out.every.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `every`");
                }
                match lit {
                    Some(lit) => match every(&lit.value()) {
                        Some(v) => out.every = Some((v, lit)),
                        None => {
                            cx.error_spanned_by(
                                &lit,
                                format!(
                                    "unknown period `{}`, expected one of {EVERY_VALUES}",
                                    lit.value()
                                ),
                            );
                            out.malformed = true;
                        }
                    },
                    None => out.malformed = true,
                }
            } else if name == "max" {
                parse_max(cx, &inner, &mut out)?;
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown bucket option `{}`, expected one of {BUCKET_KEYS}",
                        super::key_name(&inner)
                    ),
                );
                super::skip_value(&inner)?;
                out.malformed = true;
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// `max = N`: the most items one bucket holds, from 1 up.
fn parse_max(cx: &Ctxt, inner: &ParseNestedMeta<'_>, out: &mut BucketAttr) -> syn::Result<()> {
    let lit: Lit = inner.value()?.parse()?;
    match &lit {
        Lit::Int(n) => match n.base10_parse::<u32>() {
            Ok(0) | Err(_) => {
                cx.error_spanned_by(
                    &lit,
                    "`max` is the most items one bucket holds: a number from 1 up",
                );
                out.malformed = true;
            }
            Ok(v) => {
                if out.max.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `max`");
                }
                out.max = Some((v, lit.span()));
            }
        },
        _ => {
            cx.error_spanned_by(&lit, "expected a number: `max = 100`");
            out.malformed = true;
        }
    }
    Ok(())
}

fn every(value: &str) -> Option<&'static str> {
    Some(match value {
        "hour" => "Hour",
        "day" => "Day",
        "month" => "Month",
        "year" => "Year",
        _ => return None,
    })
}
