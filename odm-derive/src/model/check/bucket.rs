//! The rules about the fields `#[odm(bucket(...))]` names (parsed in `attr::bucket`); what they
//! resolve is a `BucketFields`.

use proc_macro2::Span;
use syn::LitStr;

use super::super::attr::BucketAttr;
use super::super::bucket::BucketFields;
use super::super::{Container, Field, Shape};
use super::closest;
use crate::ctxt::Ctxt;

/// The field a bucket option names, or an error at its string suggesting the closest field.
fn named<'c, 'a>(
    cx: &Ctxt,
    cont: &'c Container<'a>,
    lit: &LitStr,
    what: &str,
) -> Option<&'c Field<'a>> {
    let name = lit.value();
    if let Some(f) = cont.stored_fields().find(|f| {
        use syn::ext::IdentExt;
        f.ident.unraw() == name
    }) {
        return Some(f);
    }
    let names: Vec<String> = cont
        .stored_fields()
        .map(|f| {
            use syn::ext::IdentExt;
            f.ident.unraw().to_string()
        })
        .collect();
    let hint = match closest(&name, &names) {
        Some(near) => format!(": did you mean `{near}`?"),
        None => format!(" (its fields: {})", names.join(", ")),
    };
    cx.error_spanned_by(
        lit,
        format!(
            "`{}` has no field `{name}` to hold the bucket's {what}{hint}",
            cont.ident
        ),
    );
    None
}

/// The rules of `bucket(...)`: it names the key, the period (and its length), the items and
/// their time, each a field of the struct (the count, by default `count`, too); the items
/// field is a `Vec` of an embedded type, marked `#[embed]`; the key and the period are not
/// `_id` (the server generates a bucket's id) and are distinct fields.
pub fn check<'c, 'a>(cx: &Ctxt, cont: &'c Container<'a>) -> Option<BucketFields<'c, 'a>> {
    let b = cont.bucket.as_ref()?;
    if cont.kind_of.is_some() {
        cx.error_at(b.span, "a kind cannot be a bucket: declare `bucket(...)` on a model with a collection of its own");
    }
    if !all_options(cx, b) {
        return None;
    }
    let field = |lit: &Option<LitStr>, what| named(cx, cont, lit.as_ref()?, what);
    let key = field(&b.key, "key");
    let period = field(&b.period, "period");
    let items = field(&b.items, "items");
    let (count, count_lit) = count_field(cx, cont, b);
    let mut ok = key.is_some() && period.is_some() && items.is_some() && count.is_some();
    let lits = [
        (&b.key, key, "key"),
        (&b.period, period, "period"),
        (&Some(count_lit), count, "count"),
    ];
    for (lit, f, what) in lits {
        if let (Some(lit), Some(f)) = (lit, f) {
            if f.is_id() {
                cx.error_spanned_by(lit, format!("the bucket's {what} cannot be `_id`: the server generates a bucket's id when an add opens it; store the {what} in a field of its own"));
                ok = false;
            }
        }
    }
    ok &= distinct(cx, b, [key, period, count, items]);
    if let (Some(items), Some(lit)) = (items, &b.items) {
        ok &= items_embedded(cx, items, lit);
    }
    if !ok {
        return None;
    }
    let (time, every) = (b.time.as_ref()?, b.every.as_ref()?.0);
    let (item_id, item_id_span) = item_id(cx, b)?;
    if time.parse::<syn::Ident>().is_err() {
        cx.error_spanned_by(
            time,
            "`time` names a field of the item: `time = \"created_at\"`",
        );
        return None;
    }
    Some(BucketFields {
        key: key?,
        period: period?,
        count: count?,
        items: items?,
        time,
        item_id,
        item_id_span,
        every,
    })
}

/// Whether the attribute has every option a bucket needs (reported once when not, unless an
/// option was already reported as wrong).
fn all_options(cx: &Ctxt, b: &BucketAttr) -> bool {
    let missing: Vec<&str> = [
        ("key", b.key.is_none()),
        ("period", b.period.is_none()),
        ("every", b.every.is_none()),
        ("items", b.items.is_none()),
        ("time", b.time.is_none()),
    ]
    .into_iter()
    .filter_map(|(k, m)| m.then_some(k))
    .collect();
    if missing.is_empty() {
        return true;
    }
    if !b.malformed {
        cx.error_at(
            b.span,
            format!(
                "`bucket(...)` also needs {}: `bucket(key = \"user\", period = \"month\", every = \"month\", items = \"reviews\", time = \"created_at\")`",
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ),
        );
    }
    false
}

/// The field counting the bucket's items (`count`, or the one `count = "..."` names), and the
/// string naming it.
fn count_field<'c, 'a>(
    cx: &Ctxt,
    cont: &'c Container<'a>,
    b: &BucketAttr,
) -> (Option<&'c Field<'a>>, LitStr) {
    let count_lit = b
        .count
        .clone()
        .unwrap_or_else(|| LitStr::new("count", b.span));
    let count = match cont.stored_fields().find(|f| {
        use syn::ext::IdentExt;
        f.ident.unraw() == count_lit.value()
    }) {
        Some(f) => Some(f),
        None if b.count.is_none() => {
            cx.error_at(b.span, "a bucket keeps the number of its items in an integer field, `count` unless `count = \"...\"` names another: add `count: u32` to the struct");
            None
        }
        None => named(cx, cont, &count_lit, "count"),
    };
    (count, count_lit)
}

/// Whether the key, the period, the count and the items are four fields.
fn distinct(cx: &Ctxt, b: &BucketAttr, fields: [Option<&Field<'_>>; 4]) -> bool {
    let mut ok = true;
    for (i, a) in fields.iter().enumerate() {
        for other in &fields[i + 1..] {
            if let (Some(a), Some(other)) = (a, other) {
                if std::ptr::eq(*a, *other) && !a.is_id() {
                    cx.error_at(b.span, format!("`bucket(...)` names the field `{}` twice: the key, the period, the count and the items are four fields", a.ident));
                    ok = false;
                }
            }
        }
    }
    ok
}

/// Whether the items are an array of embedded documents.
fn items_embedded(cx: &Ctxt, items: &Field<'_>, lit: &LitStr) -> bool {
    if !matches!(items.shape, Shape::Vec(_)) {
        cx.error_spanned_by(items.ty, format!("the bucket's items are an array: `{}` should be a `Vec` of an embedded type (`Vec<Review>`)", items.ident));
        return false;
    }
    if items.embed.is_none() {
        cx.error_spanned_by(
            lit,
            format!(
                "the bucket's items are embedded documents: mark `{}` with `#[embed]`",
                items.ident
            ),
        );
        return false;
    }
    true
}

/// The field of an item that identifies it (`item_id`, `id` by default), and where it is named.
fn item_id(cx: &Ctxt, b: &BucketAttr) -> Option<(syn::Ident, Span)> {
    match &b.item_id {
        Some(lit) => match lit.parse::<syn::Ident>() {
            Ok(id) => Some((id, lit.span())),
            Err(_) => {
                cx.error_spanned_by(
                    lit,
                    "`item_id` names a field of the item: `item_id = \"id\"`",
                );
                None
            }
        },
        None => Some((syn::Ident::new("id", b.span), b.span)),
    }
}
