//! The rules that tie `#[odm(counters(...))]` and `#[odm(time_series(...))]` to the struct's
//! fields (parsed in `attr::counters`).

use syn::ext::IdentExt;
use syn::{LitStr, Type};

use super::super::attr::CountersAttr;
use super::super::{Container, Field, Shape};
use super::closest;
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_counters_fields(cx, cont);
    check_counters_other_fields_optional(cx, cont);
    check_counters_id_generated(cx, cont);
    check_time_series_fields(cx, cont);
    check_counters_or_time_series(cx, cont);
}

/// The field an option names, reported at its string when there is none (or it is not
/// stored, or is the id).
pub fn named_field<'c, 'a>(
    cx: &Ctxt,
    cont: &'c Container<'a>,
    lit: &LitStr,
    what: &str,
) -> Option<&'c Field<'a>> {
    let name = lit.value();
    match cont.field_named(&name) {
        Some(f) if f.skipped => {
            cx.error_spanned_by(
                lit,
                format!("`{name}` is skipped by serde: the {what} must be stored"),
            );
            None
        }
        Some(f) if f.is_id() => {
            cx.error_spanned_by(lit, format!("the {what} cannot be the `_id`"));
            None
        }
        Some(f) => Some(f),
        None => {
            let names: Vec<String> = cont
                .stored_fields()
                .map(|f| f.ident.unraw().to_string())
                .collect();
            let hint = closest(&name, &names)
                .map(|near| format!("; did you mean `{near}`?"))
                .unwrap_or_default();
            cx.error_spanned_by(
                lit,
                format!(
                    "`{}` has no field `{name}` for the {what}{hint}",
                    cont.ident
                ),
            );
            None
        }
    }
}

/// The last path segment of a type, when it is a plain path: `DateTime` for `bson::DateTime`.
fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => {
            let last = tp.path.segments.last()?;
            last.arguments.is_empty().then(|| last.ident.to_string())
        }
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn shown(ty: &Type) -> String {
    quote::quote!(#ty).to_string().replace(' ', "")
}

/// The options that name fields (`key`, `day`, `total`, `hours`), with their defaults.
fn counter_options(c: &CountersAttr) -> [(Option<LitStr>, &'static str); 4] {
    let or = |lit: &Option<LitStr>, default: &str| {
        Some(lit.clone().unwrap_or_else(|| LitStr::new(default, c.span)))
    };
    [
        (c.key.clone(), "key"),
        (c.day.clone(), "day"),
        (or(&c.total, "total"), "total"),
        (or(&c.hours, "hour"), "hours"),
    ]
}

/// A counters model names its key and its day, and the fields it names exist with the types
/// the counters need: the day a `bson::DateTime`, the total a number `$inc` adds to, the hours
/// `odm::counters::Hours`; no field serves twice.
fn check_counters_fields(cx: &Ctxt, cont: &Container<'_>) {
    let Some(c) = &cont.counters else { return };
    if c.malformed {
        return;
    }
    if c.key.is_none() || c.day.is_none() {
        cx.error_at(
            c.span,
            "`counters(...)` needs the field that keys the counters and the day field: `counters(key = \"book\", day = \"day\")`",
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for (lit, option) in counter_options(c) {
        let Some(lit) = lit else { continue };
        let what = match option {
            "key" => "key of the counters",
            "day" => "day of the counters",
            "total" => "total of the counters (`total = \"...\"`)",
            _ => "hours of the counters (`hours = \"...\"`)",
        };
        let Some(f) = named_field(cx, cont, &lit, what) else {
            continue;
        };
        let name = f.ident.unraw().to_string();
        if seen.contains(&name) {
            cx.error_spanned_by(
                &lit,
                format!("`{name}` is already one of the counters' fields: key, day, total and hours are four different fields"),
            );
            continue;
        }
        seen.push(name.clone());
        let last = last_segment(f.ty);
        match option {
            "day" if last.as_deref() != Some("DateTime") => cx.error_spanned_by(
                &lit,
                format!("the day of the counters is a date, and `{name}` holds `{}`: declare it `bson::DateTime` (midnight UTC of the day)", shown(f.ty)),
            ),
            "total" if !matches!(last.as_deref(), Some("i32" | "i64" | "f64")) => cx.error_spanned_by(
                &lit,
                format!("a counter is a number `$inc` adds to, and `{name}` holds `{}`: declare it `i64` (or `i32`, `f64`)", shown(f.ty)),
            ),
            "hours" if last.as_deref() != Some("Hours") => cx.error_spanned_by(
                &lit,
                format!("the hours of the counters hold each hour's total and minutes, and `{name}` holds `{}`: declare it `odm::counters::Hours`", shown(f.ty)),
            ),
            _ => {}
        }
    }
}

/// The first event of a day creates its document with the key, the day and the counters only:
/// any other field must be able to be missing.
fn check_counters_other_fields_optional(cx: &Ctxt, cont: &Container<'_>) {
    let Some(c) = &cont.counters else { return };
    if c.malformed {
        return;
    }
    let named: Vec<String> = counter_options(c)
        .into_iter()
        .filter_map(|(lit, _)| lit.map(|l| l.value()))
        .collect();
    // A missing or misnamed option is reported already; which field it meant is unknown.
    if named.len() < 4 || named.iter().any(|n| cont.field_named(n).is_none()) {
        return;
    }
    for f in cont.stored_fields() {
        if f.is_id() || named.contains(&f.ident.unraw().to_string()) {
            continue;
        }
        if !matches!(f.shape, Shape::Option(_)) {
            cx.error_spanned_by(
                f.ident,
                format!("the first event of a day creates its document with the key, the day and the counters only, so `{}` would be missing from it: make it an `Option`", f.ident.unraw()),
            );
        }
    }
}

/// The first event of a day creates its document by an upsert, which gives it an `ObjectId`.
fn check_counters_id_generated(cx: &Ctxt, cont: &Container<'_>) {
    let Some(c) = &cont.counters else { return };
    let Some(id) = cont.id_field() else { return };
    if c.malformed {
        return;
    }
    let ty = id.inner_ty();
    if last_segment(ty).as_deref() != Some("ObjectId") {
        cx.error_spanned_by(
            id.ty,
            format!("the first event of a day creates its document by an upsert, which gives it an `ObjectId` id, and the id here is `{}`: declare it `ObjectId`", shown(id.ty)),
        );
    }
}

/// A time-series collection names its time field, a `bson::DateTime` every document holds, and
/// its meta field, if any, among the stored fields.
fn check_time_series_fields(cx: &Ctxt, cont: &Container<'_>) {
    let Some(t) = &cont.time_series else { return };
    if t.malformed {
        return;
    }
    match &t.time {
        None => cx.error_at(
            t.span,
            "`time_series(...)` needs the field holding each document's time: `time_series(time = \"at\")`",
        ),
        Some(lit) => {
            if let Some(f) = named_field(cx, cont, lit, "time of a time-series collection") {
                if last_segment(f.ty).as_deref() != Some("DateTime") {
                    cx.error_spanned_by(
                        lit,
                        format!("every document of a time-series collection holds its time as a date, and `{}` holds `{}`: declare it `bson::DateTime`", f.ident.unraw(), shown(f.ty)),
                    );
                }
            }
        }
    }
    if let (Some(meta), Some(time)) = (&t.meta, &t.time) {
        if meta.value() == time.value() {
            cx.error_spanned_by(
                meta,
                "the meta field and the time field are two different fields",
            );
        } else {
            named_field(cx, cont, meta, "meta field of a time-series collection");
        }
    }
}

/// Counters are documents the ODM updates in place; a time-series collection takes inserts
/// only: one model is one or the other.
fn check_counters_or_time_series(cx: &Ctxt, cont: &Container<'_>) {
    if let (Some(_), Some(t)) = (&cont.counters, &cont.time_series) {
        cx.error_at(
            t.span,
            "a model is either counters (documents updated in place) or a time-series collection (events inserted one by one), not both: declare them on two models",
        );
    }
}
