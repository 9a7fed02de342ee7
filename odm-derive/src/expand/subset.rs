//! The generated side of `#[odm(subset_of = "Movie")]`: the `Subset` impl naming the main
//! model, and the checks that both sides share the id type and belong to this pair only.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

use crate::model::{Container, Shape};

pub fn subset_items(cont: &Container<'_>) -> TokenStream {
    let Some((main, lit)) = &cont.subset_of else {
        return TokenStream::new();
    };
    let ident = cont.ident;
    let span = lit.span();
    // Every item is spanned at the string: a main type that is not a model is reported there
    // (`Subset::Main: Model`; the id check below repeats it at the id, the one place where a
    // second error cannot be avoided without knowing whether the main type is a model), and
    // a model in two pairs is a conflict there.
    let pair = quote_spanned! {span=>
        impl ::odm::__private::Subset for #ident {
            type Main = #main;
        }
        impl ::odm::__private::OneSubsetPairPerModel for #main {}
        impl ::odm::__private::OneSubsetPairPerModel for #ident {}
    };
    // At the details' id type, the culprit when the two differ.
    let id_ty = cont.id_field().map(|id| match id.shape {
        Shape::Option(inner) => inner,
        _ => id.ty,
    });
    let same_id = id_ty.map(|ty| {
        // The model's name, spanned at the id's type, where the compiler reports the bound.
        let details = syn::Ident::new(&ident.to_string(), ty.span());
        quote_spanned! {ty.span()=>
            const _: fn() = ::odm::__private::same_subset_id::<#details>;
        }
    });
    quote::quote! { #pair #same_id }
}
