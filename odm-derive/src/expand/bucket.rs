//! `#[odm(bucket(...))]`: the `Bucket` impl and the index the bucket operations go through.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::bucket::BucketFields;
use crate::model::Container;

/// The index of `odm::bucket::BucketSpec::index`, appended to the
/// declared indexes.
pub fn index(cont: &Container<'_>, f: &BucketFields<'_, '_>) -> TokenStream {
    let (key, period) = (&f.key.stored, &f.period.stored);
    let last = match cont.bucket.as_ref().and_then(|b| b.max) {
        None => quote!(.unique()),
        Some(_) => quote!(.then("_id", ::odm::__private::IndexKey::Desc)),
    };
    quote! {
        ::odm::__private::IndexSpec::on(#key, ::odm::__private::IndexKey::Asc)
            .then(#period, ::odm::__private::IndexKey::Desc)
            #last
    }
}

/// `impl Bucket`, and the checks of the types of the fields it names, each at the type (or,
/// for the item's time, at the `time` string).
pub fn bucket_impl(cont: &Container<'_>, fields: Option<&BucketFields<'_, '_>>) -> TokenStream {
    let Some(f) = fields else {
        return quote!();
    };
    let ident = cont.ident;
    let (key_ty, item_ty) = (f.key.ty, f.items.inner_ty());
    let (key, period, count, items) = (
        &f.key.stored,
        &f.period.stored,
        &f.count.stored,
        &f.items.stored,
    );
    let (items_ident, period_ident) = (f.items.ident, f.period.ident);
    let every = format_ident!("{}", f.every);
    let max = match cont.bucket.as_ref().and_then(|b| b.max) {
        Some((n, _)) => quote!(::odm::__private::Option::Some(#n)),
        None => quote!(::odm::__private::Option::None),
    };
    let time = format_ident!("{}", f.time.value(), span = f.time.span());
    let item_id = {
        let mut id = f.item_id.clone();
        id.set_span(f.item_id_span);
        id
    };
    let time_path = quote_spanned! {f.time.span()=>
        ::odm::__private::time_path(#items, &__items.#time())
    };
    let id_path = quote_spanned! {f.item_id_span=>
        ::odm::__private::item_path(#items, &__items.#item_id())
    };
    let period_ty = f.period.ty;
    let period_start = quote_spanned! {period_ty.span()=>
        <#period_ty as ::odm::__private::BucketPeriod>::instant(&self.#period_ident)
    };
    let checks = bucket_checks(cont, f, item_ty, &time, &item_id);
    quote! {
        #checks

        #[automatically_derived]
        impl ::odm::__private::Bucket for #ident {
            type Key = #key_ty;
            type Item = #item_ty;

            fn bucket() -> ::odm::__private::BucketSpec {
                // Stand-ins for item fields the item lacks, which the constants above report
                // by name: the item's own accessors, inherent methods, come first.
                #[allow(dead_code)]
                trait __ItemFields {
                    fn #time(&self) -> ::odm::__private::Field<(), ::odm::bson::DateTime> {
                        ::odm::__private::Field::top("")
                    }
                    fn #item_id(&self) -> ::odm::__private::Field<(), ()> {
                        ::odm::__private::Field::top("")
                    }
                }
                impl<__T> __ItemFields for __T {}
                let __items = #ident::#items_ident();
                ::odm::__private::BucketSpec::declared(
                    #key,
                    #period,
                    ::odm::__private::Every::#every,
                    #count,
                    #items,
                    #id_path,
                    #time_path,
                    #max,
                )
            }

            fn into_items(self) -> ::odm::__private::Vec<#item_ty> {
                self.#items_ident
            }

            fn period_start(&self) -> ::odm::bson::DateTime {
                #period_start
            }
        }
    }
}

/// The checks a bucket's code carries: the count's and the id's types, and the item's time and
/// id fields, each reported at the attribute that names it.
fn bucket_checks(
    cont: &Container<'_>,
    f: &BucketFields<'_, '_>,
    item_ty: &syn::Type,
    time: &syn::Ident,
    item_id: &syn::Ident,
) -> TokenStream {
    let count_ty = f.count.ty;
    let count_check = quote_spanned!(count_ty.span()=> ::odm::__private::count_type::<#count_ty>());
    let id_check = cont.id_field().map(|id| {
        let ty = id.ty;
        quote_spanned!(ty.span()=> ::odm::__private::id_type::<#ty>();)
    });
    let (time_name, id_name) = (time.to_string(), item_id.to_string());
    let item_names = |span: proc_macro2::Span, option: &str, name: &str| {
        quote_spanned! {span=>
            const _: () = ::odm::__private::item_field(
                <#item_ty as ::odm::__private::Embed>::NAME,
                <#item_ty as ::odm::__private::Embed>::FIELDS,
                #option,
                #name,
            );
        }
    };
    let time_names = item_names(f.time.span(), "time", &time_name);
    let id_names = item_names(f.item_id_span, "item_id", &id_name);
    quote! {
        const _: () = {
            #count_check;
            #id_check
        };
        #time_names
        #id_names
    }
}
