//! What `#[odm(counters(...))]` and `#[odm(time_series(...))]` emit: the `Counted` impl, the
//! unique index on `(key, day)`, and the time-series declaration `sync_indexes` reads.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::attr::Granularity;
use crate::model::{Container, Field};

/// The field an option names (checked before expanding).
fn field<'c, 'a>(
    cont: &'c Container<'a>,
    name: Option<String>,
    default: &str,
) -> Option<&'c Field<'a>> {
    cont.field_named(name.as_deref().unwrap_or(default))
}

/// `impl Counted` and, for a time-series collection, its registry entry.
pub fn counters_impl(cont: &Container<'_>) -> TokenStream {
    let mut out = TokenStream::new();
    if let Some(c) = &cont.counters {
        let ident = cont.ident;
        let value = |lit: &Option<syn::LitStr>| lit.as_ref().map(syn::LitStr::value);
        let (Some(key), Some(day), Some(total), Some(hours)) = (
            field(cont, value(&c.key), ""),
            field(cont, value(&c.day), ""),
            field(cont, value(&c.total), "total"),
            field(cont, value(&c.hours), "hour"),
        ) else {
            return out;
        };
        let key_ty = key.ty;
        let (key, day, total, hours) = (&key.stored, &day.stored, &total.stored, &hours.stored);
        let granularity = match c.granularity {
            Granularity::Minute => quote!(::odm::__private::Granularity::Minute),
            Granularity::Hour => quote!(::odm::__private::Granularity::Hour),
        };
        out.extend(quote! {
            #[automatically_derived]
            impl ::odm::__private::Counted for #ident {
                type Key = #key_ty;
                const COUNTERS: ::odm::__private::CounterPaths = ::odm::__private::CounterPaths {
                    key: #key,
                    day: #day,
                    total: #total,
                    hours: #hours,
                    granularity: #granularity,
                };
            }
        });
    }
    out
}

/// The model entry's time-series declaration: `Some(TimeSeriesEntry { .. })` for a model stored
/// in a time-series collection, else `None`.
pub fn time_series(cont: &Container<'_>) -> TokenStream {
    let none = quote!(::odm::__private::Option::None);
    let Some(t) = &cont.time_series else {
        return none;
    };
    let value = |lit: &Option<syn::LitStr>| lit.as_ref().map(syn::LitStr::value);
    let Some(time) = field(cont, value(&t.time), "") else {
        return none;
    };
    let time = &time.stored;
    let meta = match field(cont, value(&t.meta), "") {
        Some(f) if t.meta.is_some() => {
            let stored = &f.stored;
            quote!(::odm::__private::Option::Some(#stored))
        }
        _ => quote!(::odm::__private::Option::None),
    };
    let granularity = match &t.granularity {
        Some(g) => quote!(::odm::__private::Option::Some(#g)),
        None => quote!(::odm::__private::Option::None),
    };
    let collection = cont.collection_expr();
    quote! {
        ::odm::__private::Option::Some(::odm::__private::TimeSeriesEntry {
            collection: #collection,
            time: #time,
            meta: #meta,
            granularity: #granularity,
        })
    }
}

/// For counters, the unique index on `(key, day)`: one document per key and day, and the index
/// every read of the counters uses. For a time-series collection with a meta field, the index
/// on `(meta, time)` that MongoDB 6.3 and later create with the collection (and that earlier
/// versions need to find a key's events).
pub fn indexes(cont: &Container<'_>) -> Option<TokenStream> {
    let value = |lit: &Option<syn::LitStr>| lit.as_ref().map(syn::LitStr::value);
    let asc = quote!(::odm::__private::IndexKey::Asc);
    if let Some(t) = &cont.time_series {
        t.meta.as_ref()?;
        let meta = &field(cont, value(&t.meta), "")?.stored;
        let time = &field(cont, value(&t.time), "")?.stored;
        return Some(quote!(::odm::__private::IndexSpec::on(#meta, #asc).then(#time, #asc)));
    }
    let c = cont.counters.as_ref()?;
    let key = &field(cont, value(&c.key), "")?.stored;
    let day = &field(cont, value(&c.day), "")?.stored;
    Some(quote!(::odm::__private::IndexSpec::on(#key, #asc).then(#day, #asc).unique()))
}

/// Beside `compile_error!`: a `Counted` impl, so that the model's uses do not add errors.
pub fn stub(cont: &Container<'_>) -> TokenStream {
    let Some(c) = &cont.counters else {
        return TokenStream::new();
    };
    let ident = cont.ident;
    let key_ty = match field(cont, c.key.as_ref().map(syn::LitStr::value), "") {
        Some(f) => {
            let ty = f.ty;
            quote!(#ty)
        }
        None => quote!(()),
    };
    quote! {
        impl ::odm::__private::Counted for #ident {
            type Key = #key_ty;
            const COUNTERS: ::odm::__private::CounterPaths = ::odm::__private::CounterPaths {
                key: "",
                day: "",
                total: "",
                hours: "",
                granularity: ::odm::__private::Granularity::Minute,
            };
        }
    }
}
