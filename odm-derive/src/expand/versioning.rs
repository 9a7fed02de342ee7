//! The generated side of `#[odm(version)]`, `#[odm(created_at)]` and `#[odm(updated_at)]`:
//! the stored names (`Model::STAMPS`), the loaded version (`Model::document_version`), and the
//! checks of the fields' types, at the types.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::attr::Stamp;
use crate::model::versioning::field_of;
use crate::model::Container;

/// What kept fields add to the model's code.
pub struct StampItems {
    /// In the `Model` impl: `const STAMPS` and `fn document_version`.
    pub model_items: TokenStream,
    /// Beside it: the type checks.
    pub items: TokenStream,
}

pub fn stamp_items(cont: &Container<'_>) -> Option<StampItems> {
    if !cont.keeps_stamps() {
        return None;
    }
    let stored = |stamp| match field_of(cont, stamp) {
        Some(f) => {
            let name = &f.stored;
            quote!(::odm::__private::Option::Some(#name))
        }
        None => quote!(::odm::__private::Option::None),
    };
    let (version, created_at, updated_at) = (
        stored(Stamp::Version),
        stored(Stamp::CreatedAt),
        stored(Stamp::UpdatedAt),
    );
    // The version's type is checked by this call, at the field's type: a type that is not an
    // integer is one error there.
    let document_version = field_of(cont, Stamp::Version).map(|f| {
        let (ident, ty) = (f.ident, f.ty);
        let to_i64 = quote_spanned! {ty.span()=>
            <#ty as ::odm::__private::VersionNumber>::to_i64(&self.#ident)
        };
        quote! {
            fn document_version(&self) -> ::odm::__private::Option<i64> {
                ::odm::__private::Option::Some(#to_i64)
            }
        }
    });
    let checks = cont.stored_fields().filter_map(|f| {
        let (stamp, _) = f.stamp?;
        if stamp == Stamp::Version {
            return None;
        }
        let ty = f.ty;
        let bound = quote!(::odm::__private::StampDate);
        Some(quote_spanned! {ty.span()=>
            const _: fn() = || {
                fn kept<T: ?Sized + #bound>() {}
                kept::<#ty>();
            };
        })
    });
    Some(StampItems {
        model_items: quote! {
            const STAMPS: ::odm::__private::Stamps = __ODM_STAMPS;
            #document_version
        },
        items: quote! {
            const __ODM_STAMPS: ::odm::__private::Stamps = ::odm::__private::Stamps {
                version: #version,
                created_at: #created_at,
                updated_at: #updated_at,
                mixed: false,
            };
            #(#checks)*
        },
    })
}
