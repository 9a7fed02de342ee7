//! `#[odm(soft_delete)]`: the stored name of the field in the model's entry (the delete and the
//! model's filters use it), and the check that the field holds a date.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::{soft_delete, Container};

/// The entry's `soft_delete`: the stored name of the field, or `None`.
pub fn entry(cont: &Container<'_>) -> TokenStream {
    match soft_delete::field(cont) {
        Some(f) => {
            let stored = &f.stored;
            quote!(::odm::__private::Option::Some(#stored))
        }
        None => quote!(::odm::__private::Option::None),
    }
}

/// The field's type is `Option<bson::DateTime>`: an error at the type otherwise.
pub fn checks(cont: &Container<'_>) -> Option<TokenStream> {
    let ty = soft_delete::field(cont)?.ty;
    Some(quote_spanned! {ty.span()=>
        const _: fn() = || {
            fn kept<T: ?Sized + ::odm::__private::DeletedAt>() {}
            kept::<#ty>();
        };
    })
}
