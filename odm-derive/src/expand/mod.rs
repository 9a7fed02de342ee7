//! Code generation. Everything is emitted inside `const _: () = { ... };` and names `odm`
//! items by absolute path (`::odm::__private::...`), so user code can shadow anything.

mod bucket;
mod counters;
mod denormalize;
mod dummy;
mod embed_check;
mod indexes;
mod keys;
mod kinds;
mod model;
mod paths;
mod poly;
mod references;
mod shard;
mod soft_delete;
mod subset;
mod tree;
mod validators;
mod versioning;

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::model::resolved::Checked;
use crate::model::{Container, Declaration, Derive, Macro};
use model::model_impl;
pub(crate) use model::{registration, EntryParts};

/// The code of the derive `which` from the declaration it read (`None` when nothing could be
/// read), what its rules resolved (`checked`) and the `errors` they reported: the whole
/// expansion when there are none, else the errors and what keeps uses of the type from
/// adding more.
pub fn generate(
    input: &DeriveInput,
    which: Macro,
    decl: Option<&Declaration<'_>>,
    checked: Option<&Checked<'_, '_>>,
    errors: Option<syn::Error>,
) -> TokenStream {
    let errors = errors.map(|e| e.to_compile_error());
    let derive = match which {
        Macro::Embed => Derive::Embed,
        Macro::Model | Macro::PolyRef => Derive::Model,
    };
    match decl {
        Some(Declaration::Struct(cont)) => match (errors, checked) {
            (None, Some(checked)) => structure(cont, checked, input, derive),
            (errors, _) => {
                let around = around_errors(Some(cont), input, derive);
                quote! { #errors #around }
            }
        },
        None => {
            let around = around_errors(None, input, derive);
            quote! { #errors #around }
        }
        Some(Declaration::Kinds(kinds)) if kinds.generics.is_some() => errors.unwrap_or_default(),
        Some(Declaration::Kinds(kinds)) => kinds::model_enum(input, kinds, errors),
        Some(Declaration::Poly(poly)) => poly::expand(input, poly.targets().as_deref(), errors),
    }
}

/// The code of a struct deriving `Model` or `Embed` whose attributes resolved without an
/// error: `checked` is what the rules resolved.
fn structure(
    cont: &Container<'_>,
    checked: &Checked<'_, '_>,
    input: &DeriveInput,
    derive: Derive,
) -> TokenStream {
    let validator = validators::items(cont);
    let inner = match derive {
        Derive::Model => model_impl(cont, checked),
        Derive::Embed => embed_impl(cont),
    };
    let body = wrap(quote! { #inner #validator });
    let frequently_updated = frequently_updated(Some(cont), input, derive);
    let checks = (derive == Derive::Model).then(|| name_checks(cont));
    quote! { #body #frequently_updated #checks }
}

/// What is generated beside the errors of a struct whose attributes did not resolve: a stub
/// of the impls (so that uses of the type report nothing more), and for a model the fields it
/// lets others copy, so that its copies are not reported as errors on top of it.
fn around_errors(cont: Option<&Container<'_>>, input: &DeriveInput, derive: Derive) -> TokenStream {
    let stub = dummy::stub(input, cont, derive);
    let source = match (cont, derive) {
        (Some(cont), Derive::Model) if input.generics.params.is_empty() => {
            Some(wrap(denormalize::source_fields(cont)))
        }
        _ => None,
    };
    let frequently_updated = frequently_updated(cont, input, derive);
    quote! { #stub #source #frequently_updated }
}

/// The constants of `#[frequently_updated]` of a model, outside the `const _` block, so that
/// a deprecation message names `Part::...`.
fn frequently_updated(
    cont: Option<&Container<'_>>,
    input: &DeriveInput,
    derive: Derive,
) -> Option<TokenStream> {
    match (cont, derive) {
        (Some(cont), Derive::Model) if input.generics.params.is_empty() => {
            Some(denormalize::frequently_updated_consts(cont))
        }
        _ => None,
    }
}

/// The compile-time checks of names another type's derive defines (copied fields, `via` of a
/// `latest` copy, `inverse`, a dotted key's field): unnamed constants next to the struct, so
/// that the compiler's message says "evaluation of `_` failed" and names no generated item.
fn name_checks(cont: &Container<'_>) -> TokenStream {
    let copied = denormalize::copied_field_checks(cont);
    let inverse = references::inverse_field_checks(cont);
    let keys = indexes::key_field_checks(cont);
    let shard_keys = shard::key_field_checks(cont);
    quote! { #copied #inverse #keys #shard_keys }
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

fn embed_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let (paths_struct, paths_ident) = paths::embed_paths(cont);
    let embed_checks = embed_check::embed_attribute_checks(cont);
    let summary_type = paths::summary_type_impl(cont, &paths_ident);
    let names = paths::names_consts(cont);
    let stored = paths::stored_const(cont);
    let plain_keys = keys::embed_plain_keys(cont);
    quote! {
        #paths_struct
        #embed_checks

        #[automatically_derived]
        impl ::odm::__private::Embed for #ident {
            type Paths<__Root, __W, __M, __S> = #paths_ident<__Root, __W, __M, __S>;
            #names
            #stored
            #plain_keys

            fn paths<__Root, __W, __M, __S>(
                field: ::odm::__private::Field<__Root, __W, __M>,
            ) -> #paths_ident<__Root, __W, __M, __S> {
                #paths_ident {
                    field,
                    _below: ::odm::__private::PhantomData,
                }
            }
        }

        #summary_type

        // `Ref<Embedded>` is a type like any other; the reference's check reports it once.
        impl ::odm::__private::RefTarget for #ident {
            type Id = ::odm::__private::NotAModel;
        }

        impl ::odm::__private::ModelOrEmbedNotBoth for #ident {}
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    /// `#[derive(Model)]` on `input`.
    fn model(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
        crate::derive::derive(input, crate::derive::Macro::Model)
    }

    fn errors_in(out: &proc_macro2::TokenStream) -> usize {
        out.to_string().matches("compile_error").count()
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let out = model(&parse_quote! {
            #[odm(colection = "books", collection = "")]
            struct Book {
                #[serde(rename = "_id")]
                #[index]
                id: i32,
                #[index(unique, text)]
                title: String,
            }
        });
        assert_eq!(errors_in(&out), 4, "{out}");
    }

    #[test]
    fn only_frequently_updated_fields_are_deprecated_copy_sources() {
        let out = model(&parse_quote! {
            struct Part {
                #[serde(rename = "_id")]
                id: i32,
                name: String,
                #[frequently_updated]
                qty: i64,
            }
        });
        assert_eq!(errors_in(&out), 0, "{out}");
        let out = out.to_string();
        assert_eq!(out.matches("[deprecated (").count(), 1, "{out}");
        assert!(
            out.contains("`Part::qty` is `#[frequently_updated]`"),
            "{out}"
        );
    }

    #[test]
    fn every_copy_mistake_is_reported_at_once() {
        let out = model(&parse_quote! {
            struct Host {
                #[serde(rename = "_id")]
                id: i32,
                #[denormalize(from = "Part", fields = "name")]
                parts: Vec<PartSummary>,
                #[denormalize(from = "LogMsg", fields = "time", latest = 500, sort = "time")]
                logmsgs: Vec<LogSummary>,
                #[denormalize(from = "Product", via = "product", fields = "name, number", max = 1)]
                product_name: Vec<String>,
                #[frequently_updated]
                #[serde(skip)]
                load: f64,
            }
        });
        // No bound; `latest` without `via` and above the limit; a `via` copy on a `Vec`, of two
        // fields, with `max`; a skipped frequently updated field.
        assert_eq!(errors_in(&out), 7, "{out}");
    }

    #[test]
    fn a_copy_of_a_keyword_field_uses_a_raw_identifier() {
        let out = model(&parse_quote! {
            struct Product {
                #[serde(rename = "_id")]
                id: i32,
                #[denormalize(from = "Part", fields = "name, type", max = 10)]
                parts: Vec<PartSummary>,
            }
        });
        assert_eq!(errors_in(&out), 0, "{out}");
        assert!(out.to_string().contains("r#type"), "{out}");
    }

    #[test]
    fn a_keyword_in_a_dotted_key_becomes_a_raw_identifier() {
        let out = model(&parse_quote! {
            #[odm(index(keys = "publisher.type"))]
            struct Book {
                #[serde(rename = "_id")]
                id: i32,
                #[embed]
                publisher: Publisher,
            }
        });
        assert_eq!(errors_in(&out), 0, "{out}");
        assert!(out.to_string().contains("r#type"), "{out}");
    }

    #[test]
    fn a_key_that_is_not_an_identifier_is_an_error_not_a_panic() {
        for keys in [
            "publisher.1st",
            "a b",
            "",
            "title,",
            "publisher..name",
            "self",
        ] {
            let out = model(&parse_quote! {
                #[odm(index(keys = #keys))]
                struct Book {
                    #[serde(rename = "_id")]
                    id: i32,
                    title: String,
                    #[embed]
                    publisher: Publisher,
                }
            });
            assert_eq!(errors_in(&out), 1, "{keys:?}: {out}");
        }
    }

    #[test]
    fn plain_values_and_nested_wrappers_cannot_be_embedded() {
        for ty in [
            quote::quote!(String),
            quote::quote!(Vec<u8>),
            quote::quote!(Option<bson::oid::ObjectId>),
            quote::quote!((i32, i32)),
            quote::quote!(Option<Vec<Review>>),
            quote::quote!(Vec<Vec<Review>>),
        ] {
            let out = model(&parse_quote! {
                struct Book {
                    #[serde(rename = "_id")]
                    id: i32,
                    #[embed]
                    field: #ty,
                }
            });
            assert_eq!(errors_in(&out), 1, "{ty}: {out}");
        }
        for (attr, ty) in [
            (quote::quote!(#[embed]), quote::quote!(Review)),
            (quote::quote!(#[embed]), quote::quote!(Option<Review>)),
            (
                quote::quote!(#[embed(max = 10)]),
                quote::quote!(Vec<Review>),
            ),
        ] {
            let out = model(&parse_quote! {
                struct Book {
                    #[serde(rename = "_id")]
                    id: i32,
                    #attr
                    field: #ty,
                }
            });
            assert_eq!(errors_in(&out), 0, "{ty}: {out}");
        }
    }
}
