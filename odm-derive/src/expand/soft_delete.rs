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

/// The model's `SoftDeleting` impl; the field's type is `Option<bson::DateTime>` (an error at
/// the type otherwise); the model a `mark` rule references has soft deletes (an error at the
/// rule's value otherwise).
pub fn checks(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let marking = cont
        .soft_delete
        .as_ref()
        .map(|_| quote!(impl ::odm::__private::SoftDeleting for #ident {}));
    let field = soft_delete::field(cont).map(|f| {
        let ty = f.ty;
        quote_spanned! {ty.span()=>
            const _: fn() = || {
                fn kept<T: ?Sized + ::odm::__private::DeletedAt>() {}
                kept::<#ty>();
            };
        }
    });
    let targets = cont.stored_fields().filter_map(|f| {
        let r = f.reference.as_ref()?;
        let (true, span) = r.on_soft_delete? else {
            return None;
        };
        if r.poly.is_some() {
            return None;
        }
        let target = f.ref_target()?;
        Some(quote_spanned! {span=>
            const _: fn() = || {
                fn marked<T: ?Sized + ::odm::__private::SoftDeleting>() {}
                marked::<#target>();
            };
        })
    });
    quote! {
        #marking
        #field
        #(#targets)*
    }
}
