//! Typed path accessors: `Book::title()` on models, `.name()` below embedded fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::model::{Container, Field, Shape};

/// `(type Id, body of document_id)` for the `_id` field; an `Option<X>` id has type `X`.
pub fn id_type_and_getter(id: &Field<'_>) -> (TokenStream, TokenStream) {
    let ident = id.ident;
    match id.shape {
        Shape::Option(inner) => (quote!(#inner), quote!(self.#ident.as_ref())),
        _ => {
            let ty = id.ty;
            (quote!(#ty), quote!(::odm::__private::Option::Some(&self.#ident)))
        }
    }
}

/// The type an accessor returns and the expression that builds it, given the field path
/// expression of type `Field<Root, FieldTy, M>`, the root type, and the marker for paths below.
fn accessor_parts(
    f: &Field<'_>,
    root: &TokenStream,
    outer: &TokenStream,
    field_expr: TokenStream,
) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    if f.is_id() {
        let (id_ty, _) = id_type_and_getter(f);
        return (
            quote!(::odm::__private::Field<#root, #id_ty, #outer>),
            field_expr,
        );
    }
    match &f.embed {
        Some(_) => {
            let inner = f.inner_ty();
            let below = match f.shape {
                Shape::Vec(_) => quote!(::odm::__private::Each),
                _ => outer.clone(),
            };
            let span = inner.span();
            (
                quote_spanned!(span=> <#inner as ::odm::__private::Embed>::Paths<#root, #ty, #outer, #below>),
                quote_spanned!(span=> <#inner as ::odm::__private::Embed>::paths(#field_expr)),
            )
        }
        None => (quote!(::odm::__private::Field<#root, #ty, #outer>), field_expr),
    }
}

fn doc_for(f: &Field<'_>) -> String {
    format!("Typed path to `{}` (stored as `{}`).", f.ident, f.stored)
}

pub fn model_accessors(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let root = quote!(#ident);
    let single = quote!(::odm::__private::Single);
    let fns = cont.stored_fields().map(|f| {
        let name = f.ident;
        let vis = f.vis;
        let stored = &f.stored;
        let doc = doc_for(f);
        let (ret, body) = accessor_parts(f, &root, &single, quote!(::odm::__private::Field::top(#stored)));
        quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis fn #name() -> #ret {
                #body
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#fns)*
        }
    }
}

/// The paths struct of an embedded type and its name.
pub fn embed_paths(cont: &Container<'_>) -> (TokenStream, Ident) {
    let paths_ident = format_ident!("{}Paths", cont.ident);
    let root = quote!(Root);
    let below = quote!(S);
    let fns = cont.stored_fields().map(|f| {
        let name = f.ident;
        let vis = f.vis;
        let stored = &f.stored;
        let doc = doc_for(f);
        let (ret, body) = accessor_parts(f, &root, &below, quote!(self.field.child(#stored)));
        quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis fn #name(&self) -> #ret {
                #body
            }
        }
    });
    let doc = format!(
        "Typed paths into an embedded `{}`; dereferences to the field that holds it.",
        cont.ident
    );
    let tokens = quote! {
        #[doc = #doc]
        pub struct #paths_ident<Root, W, M, S> {
            field: ::odm::__private::Field<Root, W, M>,
            _below: ::odm::__private::PhantomData<fn() -> S>,
        }

        impl<Root, W, M, S> ::std::fmt::Debug for #paths_ident<Root, W, M, S> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Debug::fmt(&self.field, f)
            }
        }

        impl<Root, W, M, S> ::odm::__private::Deref for #paths_ident<Root, W, M, S> {
            type Target = ::odm::__private::Field<Root, W, M>;
            fn deref(&self) -> &Self::Target {
                &self.field
            }
        }

        impl<Root, W, M, S> #paths_ident<Root, W, M, S> {
            #(#fns)*
        }
    };
    (tokens, paths_ident)
}

/// For each `#[embed]` field, a compile-time check that its type derives `Embed`, reported
/// at the field's type.
pub fn embed_assertions(cont: &Container<'_>) -> TokenStream {
    let asserts = cont.fields.iter().filter(|f| f.embed.is_some()).map(|f| {
        let inner = f.inner_ty();
        quote_spanned! {inner.span()=>
            const _: () = ::odm::__private::assert_embed::<#inner>();
        }
    });
    quote!(#(#asserts)*)
}
