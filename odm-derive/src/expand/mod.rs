//! Code generation. Everything is emitted inside `const _: () = { ... };` and names `odm`
//! items by absolute path (`::odm::__private::...`), so user code can shadow anything.

mod dummy;
mod indexes;
mod paths;

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ctxt::Ctxt;
use crate::model::{check, Container, Derive};

pub fn model(input: &DeriveInput) -> TokenStream {
    expand(input, Derive::Model)
}

pub fn embed(input: &DeriveInput) -> TokenStream {
    expand(input, Derive::Embed)
}

fn expand(input: &DeriveInput, derive: Derive) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input, derive);
    if let Some(cont) = &cont {
        check::check(&cx, cont);
    }
    match (cx.check(), cont) {
        (Ok(()), Some(cont)) => wrap(match derive {
            Derive::Model => model_impl(&cont),
            Derive::Embed => embed_impl(&cont),
        }),
        (Err(errors), cont) => {
            let errors = errors.to_compile_error();
            let stub = dummy::stub(input, cont.as_ref(), derive);
            quote! { #errors #stub }
        }
        (Ok(()), None) => unreachable!("a container that failed to parse always records an error"),
    }
}

fn wrap(body: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #body
        };
    }
}

fn model_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let accessors = paths::model_accessors(cont);
    let embed_asserts = paths::embed_assertions(cont);
    let indexes = indexes::index_specs(cont);
    let collection = cont.collection_name();
    let type_name = ident.to_string();
    let id = cont.id_field().expect("checked: a model has an `_id` field");
    let (id_ty, id_expr) = paths::id_type_and_getter(id);
    quote! {
        #accessors
        #embed_asserts

        #[automatically_derived]
        impl ::odm::__private::Model for #ident {
            type Id = #id_ty;
            const COLLECTION: &'static str = #collection;

            fn document_id(&self) -> ::odm::__private::Option<&Self::Id> {
                #id_expr
            }

            fn indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
                #indexes
            }

            fn generate_id() -> ::odm::__private::Option<Self::Id> {
                #[allow(unused_imports)]
                use ::odm::__private::{GenerateNothing as _, GenerateObjectId as _};
                (&::odm::__private::IdGen::<Self::Id>::NEW).generate()
            }
        }

        impl ::odm::__private::ModelOrEmbedNotBoth for #ident {}

        ::odm::__private::inventory::submit! {
            ::odm::__private::ModelEntry {
                type_name: #type_name,
                collection: #collection,
                indexes: <#ident as ::odm::__private::Model>::indexes,
            }
        }
    }
}

fn embed_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let (paths_struct, paths_ident) = paths::embed_paths(cont);
    let embed_asserts = paths::embed_assertions(cont);
    quote! {
        #paths_struct
        #embed_asserts

        #[automatically_derived]
        impl ::odm::__private::Embed for #ident {
            type Paths<Root, W, M, S> = #paths_ident<Root, W, M, S>;

            fn paths<Root, W, M, S>(
                field: ::odm::__private::Field<Root, W, M>,
            ) -> Self::Paths<Root, W, M, S> {
                #paths_ident {
                    field,
                    _below: ::odm::__private::PhantomData,
                }
            }
        }

        impl ::odm::__private::ModelOrEmbedNotBoth for #ident {}
    }
}
