//! A bucket model as its rules resolved it (`#[odm(bucket(...))]`: parsed in `attr::bucket`,
//! checked in `check::bucket`), and what the other rules ask of it.

use proc_macro2::Span;
use syn::LitStr;

use super::{Container, Field};

/// The fields a bucket names, once every rule about them holds.
pub struct BucketFields<'c, 'a> {
    pub key: &'c Field<'a>,
    pub period: &'c Field<'a>,
    pub count: &'c Field<'a>,
    pub items: &'c Field<'a>,
    pub time: &'c LitStr,
    pub item_id: syn::Ident,
    pub item_id_span: Span,
    pub every: &'static str,
}

/// Whether `f` is the items field of the bucket, which the bucket bounds (by `max`, or by its
/// period), so that `#[embed]` on it needs no `max` of its own.
pub fn is_items(cont: &Container<'_>, f: &Field<'_>) -> bool {
    use syn::ext::IdentExt;
    cont.bucket
        .as_ref()
        .and_then(|b| b.items.as_ref())
        .is_some_and(|lit| f.ident.unraw() == lit.value())
}
