//! What is emitted beside `compile_error!`: the accessors and a stub impl, so that one mistake
//! in an attribute does not turn every use of the type into a further error.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use super::{paths, wrap};
use crate::model::{Container, Derive};

pub fn stub(input: &DeriveInput, cont: Option<&Container<'_>>, derive: Derive) -> TokenStream {
    // serde derives nothing for a union, so no stub could satisfy `Model`'s bounds: the one
    // error about the union is enough.
    if !input.generics.params.is_empty() || matches!(input.data, syn::Data::Union(_)) {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let body = match derive {
        Derive::Model => {
            let accessors = cont.map(paths::model_accessors);
            let names = cont.map_or_else(
                || {
                    quote!(
                        const NAME: &'static str = "";
                        const FIELDS: &'static [&'static str] = &[];
                    )
                },
                paths::names_consts,
            );
            let id_ty = cont
                .and_then(Container::id_field)
                .map_or_else(|| quote!(()), |id| paths::id_type_and_getter(id).0);
            let counters = cont.map(super::counters::stub);
            let tree = cont.map(super::tree::stub);
            quote! {
                #accessors
                #counters
                #tree

                impl ::odm::__private::Model for #ident {
                    type Id = #id_ty;
                    const COLLECTION: &'static str = "";
                    fn document_id(&self) -> ::odm::__private::Option<&Self::Id> {
                        ::odm::__private::Option::None
                    }
                    fn entry() -> &'static ::odm::__private::ModelEntry {
                        ::odm::__private::unregistered_entry()
                    }
                    fn generate_id() -> ::odm::__private::Option<Self::Id> {
                        ::odm::__private::Option::None
                    }
                }

                impl ::odm::__private::ReferenceTarget for #ident {
                    const COLLECTION: &'static str = "";
                    #names
                }

                impl ::odm::__private::Validated for #ident {
                    const SCHEMA: ::odm::__private::Schema = ::odm::__private::Schema::Object(&[]);
                }
            }
        }
        Derive::Embed => {
            let Some(cont) = cont else {
                return TokenStream::new();
            };
            let (paths_struct, paths_ident) = paths::embed_paths(cont);
            let summary_type = paths::summary_type_impl(cont, &paths_ident);
            let names = paths::names_consts(cont);
            quote! {
                #paths_struct
                #summary_type

                impl ::odm::__private::Embed for #ident {
                    type Paths<__Root, __W, __M, __S> = #paths_ident<__Root, __W, __M, __S>;
                    #names
                    fn paths<__Root, __W, __M, __S>(
                        field: ::odm::__private::Field<__Root, __W, __M>,
                    ) -> #paths_ident<__Root, __W, __M, __S> {
                        #paths_ident { field, _below: ::odm::__private::PhantomData }
                    }
                }
            }
        }
    };
    wrap(body)
}
