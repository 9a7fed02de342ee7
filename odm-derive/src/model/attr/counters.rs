//! Parsing `#[odm(counters(...))]` (pre-aggregated counters, one document per key and day) and
//! `#[odm(time_series(...))]` (a native time-series collection); their rules are in
//! `check::counters`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::LitStr;

use super::{key_name, skip_value, string_value};
use crate::ctxt::Ctxt;

const COUNTERS_KEYS: &str = "`key`, `day`, `total`, `hours`, `granularity`";
const TIME_SERIES_KEYS: &str = "`time`, `meta`, `granularity`";
const TIME_SERIES_GRANULARITIES: [&str; 3] = ["seconds", "minutes", "hours"];

/// How fine the counters of a day are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Granularity {
    Hour,
    Minute,
}

/// `counters(key = "book", day = "day", total = "total", hours = "hour", granularity = "minute")`.
pub struct CountersAttr {
    /// The `counters` key, where errors about the attribute as a whole point.
    pub span: Span,
    pub key: Option<LitStr>,
    pub day: Option<LitStr>,
    pub total: Option<LitStr>,
    pub hours: Option<LitStr>,
    pub granularity: Granularity,
    /// An option was already reported as wrong: what the attribute lacks is not checked.
    pub malformed: bool,
}

/// `time_series(time = "at", meta = "book", granularity = "minutes")`.
pub struct TimeSeriesAttr {
    pub span: Span,
    pub time: Option<LitStr>,
    pub meta: Option<LitStr>,
    pub granularity: Option<LitStr>,
    pub malformed: bool,
}

/// Parses one string option into `slot`, reporting a repeated one at its second occurrence.
fn string_option(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<LitStr>,
    key: &str,
    example: &str,
) -> syn::Result<bool> {
    let lit = string_value(cx, meta, key, example)?;
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate `{key}`"));
        return Ok(false);
    }
    *slot = lit;
    Ok(slot.is_some())
}

impl CountersAttr {
    pub fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Self> {
        let mut out = CountersAttr {
            span: meta.path.span(),
            key: None,
            day: None,
            total: None,
            hours: None,
            granularity: Granularity::Minute,
            malformed: false,
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `counters(key = \"book\", day = \"day\")`",
            );
            skip_value(meta)?;
            out.malformed = true;
            return Ok(out);
        }
        let mut granularity: Option<LitStr> = None;
        meta.parse_nested_meta(|inner| {
            let ok = if inner.path.is_ident("key") {
                string_option(cx, &inner, &mut out.key, "key", "book")?
            } else if inner.path.is_ident("day") {
                string_option(cx, &inner, &mut out.day, "day", "day")?
            } else if inner.path.is_ident("total") {
                string_option(cx, &inner, &mut out.total, "total", "total")?
            } else if inner.path.is_ident("hours") {
                string_option(cx, &inner, &mut out.hours, "hours", "hour")?
            } else if inner.path.is_ident("granularity") {
                string_option(cx, &inner, &mut granularity, "granularity", "minute")?
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown counters option `{}`, expected one of {COUNTERS_KEYS}",
                        key_name(&inner)
                    ),
                );
                skip_value(&inner)?;
                false
            };
            out.malformed |= !ok;
            Ok(())
        })?;
        if let Some(lit) = granularity {
            match lit.value().as_str() {
                "minute" => out.granularity = Granularity::Minute,
                "hour" => out.granularity = Granularity::Hour,
                other => cx.error_spanned_by(
                    &lit,
                    format!("unknown counters granularity \"{other}\", expected \"minute\" (the day, each hour and each minute) or \"hour\" (the day and each hour)"),
                ),
            }
        }
        Ok(out)
    }
}

impl TimeSeriesAttr {
    pub fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Self> {
        let mut out = TimeSeriesAttr {
            span: meta.path.span(),
            time: None,
            meta: None,
            granularity: None,
            malformed: false,
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `time_series(time = \"at\", meta = \"book\")`",
            );
            skip_value(meta)?;
            out.malformed = true;
            return Ok(out);
        }
        meta.parse_nested_meta(|inner| {
            let ok = if inner.path.is_ident("time") {
                string_option(cx, &inner, &mut out.time, "time", "at")?
            } else if inner.path.is_ident("meta") {
                string_option(cx, &inner, &mut out.meta, "meta", "book")?
            } else if inner.path.is_ident("granularity") {
                string_option(cx, &inner, &mut out.granularity, "granularity", "minutes")?
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown time_series option `{}`, expected one of {TIME_SERIES_KEYS}",
                        key_name(&inner)
                    ),
                );
                skip_value(&inner)?;
                false
            };
            out.malformed |= !ok;
            Ok(())
        })?;
        if let Some(lit) = &out.granularity {
            if !TIME_SERIES_GRANULARITIES.contains(&lit.value().as_str()) {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "unknown time-series granularity \"{}\", expected \"seconds\", \"minutes\" or \"hours\"",
                        lit.value()
                    ),
                );
            }
        }
        Ok(out)
    }
}
