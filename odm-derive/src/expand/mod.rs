//! Code generation. Everything is emitted inside `const _: () = { ... };` and names `odm`
//! items by absolute path (`::odm::__private::...`), so user code can shadow anything.

mod bucket;
mod counters;
mod denormalize;
mod dummy;
mod embed_check;
mod indexes;
mod kinds;
mod paths;
mod poly;
mod references;
mod shard;
mod subset;
mod tree;
mod validators;
mod versioning;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::DeriveInput;

use crate::ctxt::Ctxt;
use crate::model::{check, Container, Derive};

pub fn model(input: &DeriveInput) -> TokenStream {
    if let syn::Data::Enum(_) = &input.data {
        return kinds::model_enum(input);
    }
    expand(input, Derive::Model)
}

pub fn poly_ref(input: &DeriveInput) -> TokenStream {
    poly::expand(input)
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
    // Outside the `const _` block, so that a deprecation message names `Part::...`.
    let frequently_updated = match (&cont, derive) {
        (Some(cont), Derive::Model) if input.generics.params.is_empty() => {
            Some(denormalize::frequently_updated_consts(cont))
        }
        _ => None,
    };
    match (cx.check(), cont) {
        (Ok(()), Some(cont)) => {
            let validator = validators::items(&cont, input);
            let inner = match derive {
                Derive::Model => model_impl(&cont),
                Derive::Embed => embed_impl(&cont),
            };
            let body = wrap(quote! { #inner #validator });
            let checks = (derive == Derive::Model).then(|| name_checks(&cont));
            quote! { #body #frequently_updated #checks }
        }
        (Err(errors), cont) => {
            let errors = errors.to_compile_error();
            let stub = dummy::stub(input, cont.as_ref(), derive);
            // A model with a mistake can still be copied from, so that its copies are not
            // reported as errors on top of it.
            let source = match (&cont, derive) {
                (Some(cont), Derive::Model) if input.generics.params.is_empty() => {
                    Some(wrap(denormalize::source_fields(cont)))
                }
                _ => None,
            };
            quote! { #errors #stub #source #frequently_updated }
        }
        (Ok(()), None) => unreachable!("a container that failed to parse always records an error"),
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

fn model_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let accessors = paths::model_accessors(cont);
    let declared = indexes::index_specs(cont);
    let indexes = match bucket::index(cont) {
        Some(index) => quote! {{
            let mut specs: ::odm::__private::Vec<::odm::__private::IndexSpec> = #declared;
            specs.push(#index);
            specs
        }},
        None => declared,
    };
    let bucket = bucket::bucket_impl(cont);
    let collection = cont.collection_expr();
    let id = cont
        .id_field()
        .expect("checked: a model has an `_id` field");
    let (id_ty, id_expr) = paths::id_type_and_getter(id);
    let references = references::reference_infos(cont);
    let inverse_checks = references::inverse_checks(cont);
    let bounds = references::bound_checks(cont);
    let bounded_arrays = references::bounded_arrays(cont);
    let copies = denormalize::copy_infos(cont);
    let source_fields = denormalize::source_fields(cont);
    let names = paths::names_consts(cont);
    let embed_checks = embed_check::embed_attribute_checks(cont);
    let validator = validators::registered(cont);
    let tree = tree::tree_items(cont, &id_ty);
    let indexes = match &tree {
        Some(tree) => {
            let added = &tree.indexes;
            quote! {{
                let mut specs: ::odm::__private::Vec<::odm::__private::IndexSpec> = #indexes;
                ::std::iter::Extend::extend(&mut specs, [#added]);
                specs
            }}
        }
        None => indexes,
    };
    let (tree_const, tree_items) = tree.map(|t| (t.model_const, t.items)).unzip();
    let (shard_const, shard_items) = shard::shard_items(cont)
        .map(|s| (s.model_const, s.items))
        .unzip();
    let indexes = match &shard_const {
        Some(_) => quote! {
            ::odm::__private::with_shard_index({ #indexes }, __SHARD_KEY)
        },
        None => indexes,
    };
    let (stamp_const, stamp_items) = versioning::stamp_items(cont)
        .map(|s| (s.model_items, s.items))
        .unzip();
    let kind_const = kinds::kind_const(cont);
    let kind_items = kinds::kind_items(cont);
    let counters = counters::counters_impl(cont);

    let subset = subset::subset_items(cont);
    // A kind's documents are versioned by its enum of kinds, through which they are also read.
    let version = match &cont.kind_of {
        Some((base, _)) => quote! {
            const SCHEMA_VERSION: ::odm::__private::Option<::odm::__private::SchemaVersion> =
                <#base as ::odm::__private::Model>::SCHEMA_VERSION;
        },
        None => validators::version_const(&cont.versions),
    };
    let (kind, indexes, copies, references) = match &kind_const {
        Some(_) => (
            quote! {
                const KIND: ::odm::__private::Option<::odm::__private::Kind> =
                    ::odm::__private::Option::Some(__KIND);
            },
            quote! {
                let specs: ::odm::__private::Vec<::odm::__private::IndexSpec> = #indexes;
                specs.into_iter().map(|s| s.for_kind(__KIND)).collect()
            },
            copies.map(|copies| quote! {
                let copies: ::odm::__private::Vec<::odm::__private::CopyInfo> = #copies;
                copies.into_iter().map(|c| c.in_kind(::odm::__private::Option::Some(__KIND))).collect()
            }),
            references.map(|references| quote! {
                let references: ::odm::__private::Vec<::odm::__private::ReferenceInfo> = #references;
                references.into_iter().map(|r| r.in_kind(::odm::__private::Option::Some(__KIND))).collect()
            }),
        ),
        None => (quote!(), indexes, copies, references),
    };
    // A model without copies, references or bounded arrays keeps the trait's defaults, and its
    // entry lists nothing: no function is generated for what it does not declare.
    let (copies_fn, copies_method, copies_entry) =
        declared_list(quote!(copies), quote!(::odm::__private::CopyInfo), copies);
    let (references_fn, references_method, references_entry) = declared_list(
        quote!(references),
        quote!(::odm::__private::ReferenceInfo),
        references,
    );
    let bounds = bound_methods(bounds, bounded_arrays);
    let registration = model_registration(cont, references_entry, copies_entry, validator);
    quote! {
        #kind_const
        #kind_items
        #counters
        #subset
        #accessors
        #embed_checks
        #inverse_checks
        #source_fields
        #bucket

        #copies_fn
        #references_fn

        // A free function, so that registering the model does not go through the `Model`
        // impl: a type whose serde derive is missing gets one error, at the impl.
        fn indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
            #indexes
        }

        #tree_items
        #shard_items
        #stamp_items

        #[automatically_derived]
        impl ::odm::__private::Model for #ident {
            type Id = #id_ty;
            const COLLECTION: &'static str = #collection;
            #kind
            #tree_const
            #shard_const
            #stamp_const
            #version

            #[inline]
            fn document_id(&self) -> ::odm::__private::Option<&#id_ty> {
                #id_expr
            }

            #[inline]
            fn indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
                indexes()
            }

            #[inline]
            fn entry() -> &'static ::odm::__private::ModelEntry {
                &__ODM_ENTRY
            }

            #[inline]
            fn generate_id() -> ::odm::__private::Option<#id_ty> {
                #[allow(unused_imports)]
                use ::odm::__private::{GenerateNothing as _, GenerateObjectId as _};
                (&::odm::__private::IdGen::<#id_ty>::NEW).generate()
            }

            #references_method
            #copies_method
            #bounds
        }

        impl ::odm::__private::ModelOrEmbedNotBoth for #ident {}

        impl ::odm::__private::ReferenceTarget for #ident {
            const COLLECTION: &'static str = #collection;
            #names
        }

        #registration
    }
}

/// What a model's entry says besides its name, collection and indexes.
pub(crate) struct EntryParts {
    references: TokenStream,
    copies: TokenStream,
    validator: TokenStream,
    shard_key: TokenStream,
    time_series: TokenStream,
}

impl EntryParts {
    /// An entry with no lists nor declarations, and `validator`.
    pub(crate) fn plain(validator: TokenStream) -> Self {
        EntryParts {
            references: quote!(::odm::__private::Vec::new),
            copies: quote!(::odm::__private::Vec::new),
            validator,
            shard_key: quote!(::odm::__private::Option::None),
            time_series: quote!(::odm::__private::Option::None),
        }
    }
}

/// The model's description, `__ODM_ENTRY` (the `indexes` function in scope): registered with
/// `inventory`, and returned by `Model::entry` (a catalog reaches it from the type).
pub(crate) fn registration(
    type_name: &str,
    collection: &impl ToTokens,
    parts: EntryParts,
) -> TokenStream {
    let EntryParts {
        references,
        copies,
        validator,
        shard_key,
        time_series,
    } = parts;
    quote! {
        const __ODM_ENTRY: ::odm::__private::ModelEntry = ::odm::__private::ModelEntry {
            type_name: #type_name,
            collection: #collection,
            indexes,
            references: #references,
            copies: #copies,
            validator: #validator,
            shard_key: #shard_key,
            time_series: #time_series,
        };

        ::odm::__private::inventory::submit! { __ODM_ENTRY }
    }
}

/// A model's entry (see [`registration`]).
fn model_registration(
    cont: &Container<'_>,
    references: TokenStream,
    copies: TokenStream,
    validator: TokenStream,
) -> TokenStream {
    let shard_key = match cont.shard_key {
        Some(_) => quote!(::odm::__private::Option::Some(__SHARD_KEY)),
        None => quote!(::odm::__private::Option::None),
    };
    let parts = EntryParts {
        references,
        copies,
        validator,
        shard_key,
        time_series: counters::time_series(cont),
    };
    registration(&cont.ident.to_string(), &cont.collection_expr(), parts)
}

/// The `Model` methods of a model with bounded arrays: the first array past its bound, and
/// the bounds.
fn bound_methods(bounds: Option<TokenStream>, bounded_arrays: TokenStream) -> Option<TokenStream> {
    bounds.map(|bounds| {
        quote! {
            #[inline]
            fn bound_violation(&self) -> ::odm::__private::Option<(&'static str, usize, u32)> {
                #bounds
                ::odm::__private::Option::None
            }

            #[inline]
            fn bounded_arrays() -> &'static [(&'static str, u32)] {
                #bounded_arrays
            }
        }
    })
}

/// For a list a model declares (`copies`, `references`): the free function building it, the
/// `Model` method returning it, and the registry's entry; without one, none of them (the
/// trait's default) and the registry's empty list.
fn declared_list(
    name: TokenStream,
    item: TokenStream,
    body: Option<TokenStream>,
) -> (TokenStream, TokenStream, TokenStream) {
    let Some(body) = body else {
        return (quote!(), quote!(), quote!(::odm::__private::empty_vec));
    };
    (
        quote! {
            fn #name() -> ::odm::__private::Vec<#item> {
                #body
            }
        },
        quote! {
            #[inline]
            fn #name() -> ::odm::__private::Vec<#item> {
                #name()
            }
        },
        name,
    )
}

fn embed_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let (paths_struct, paths_ident) = paths::embed_paths(cont);
    let embed_checks = embed_check::embed_attribute_checks(cont);
    let summary_type = paths::summary_type_impl(cont, &paths_ident);
    let names = paths::names_consts(cont);
    let stored = paths::stored_const(cont);
    quote! {
        #paths_struct
        #embed_checks

        #[automatically_derived]
        impl ::odm::__private::Embed for #ident {
            type Paths<__Root, __W, __M, __S> = #paths_ident<__Root, __W, __M, __S>;
            #names
            #stored

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

    fn errors_in(out: &proc_macro2::TokenStream) -> usize {
        out.to_string().matches("compile_error").count()
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let out = super::model(&parse_quote! {
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
        let out = super::model(&parse_quote! {
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
        let out = super::model(&parse_quote! {
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
        let out = super::model(&parse_quote! {
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
        let out = super::model(&parse_quote! {
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
            let out = super::model(&parse_quote! {
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
            let out = super::model(&parse_quote! {
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
            let out = super::model(&parse_quote! {
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
