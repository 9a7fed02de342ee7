//! The `Model` impl of a struct, and the description (`ModelEntry`) it registers.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::{
    bucket, counters, denormalize, embed_check, indexes, kinds, paths, references, shard,
    soft_delete, subset, tree, validators, versioning,
};
use crate::model::Container;

pub(super) fn model_impl(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let accessors = paths::model_accessors(cont);
    let bucket = bucket::bucket_impl(cont);
    let collection = cont.collection_expr();
    let id = cont
        .id_field()
        .expect("checked: a model has an `_id` field");
    let (id_ty, id_expr) = paths::id_type_and_getter(id);
    let every_model = every_model_methods(&id_ty, &id_expr);
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
    let shard = shard::shard_items(cont);
    let indexes = index_list(cont, tree.as_ref().map(|t| &t.indexes), shard.is_some());
    let (tree_const, tree_items) = tree.map(|t| (t.model_const, t.items)).unzip();
    let (shard_const, shard_items) = shard.map(|s| (s.model_const, s.items)).unzip();
    let (stamp_const, stamp_items) = versioning::stamp_items(cont)
        .map(|s| (s.model_items, s.items))
        .unzip();
    let kind_const = kinds::kind_const(cont);
    let kind_items = kinds::kind_items(cont);
    let counters = counters::counters_impl(cont);

    let subset = subset::subset_items(cont);
    let soft_delete = soft_delete::checks(cont);
    let version = version_const(cont);
    let (kind, indexes, copies, references) =
        kind_scoped(kind_const.is_some(), indexes, copies, references);
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
        #soft_delete
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

            #every_model

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
    soft_delete: TokenStream,
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
            soft_delete: quote!(::odm::__private::Option::None),
        }
    }
}

/// The `Model` methods every model has: its id, its indexes (the free function `indexes`), its
/// entry (`__ODM_ENTRY`), the id generated for a document without one.
fn every_model_methods(id_ty: &TokenStream, id_expr: &TokenStream) -> TokenStream {
    quote! {
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
    }
}

/// The model's index list: those it declares, then its bucket's, its tree's (`tree`) and its
/// shard key's (when `sharded`).
fn index_list(cont: &Container<'_>, tree: Option<&TokenStream>, sharded: bool) -> TokenStream {
    let declared = indexes::index_specs(cont);
    let indexes = match bucket::index(cont) {
        Some(index) => quote! {{
            let mut specs: ::odm::__private::Vec<::odm::__private::IndexSpec> = #declared;
            specs.push(#index);
            specs
        }},
        None => declared,
    };
    let indexes = match tree {
        Some(added) => quote! {{
            let mut specs: ::odm::__private::Vec<::odm::__private::IndexSpec> = #indexes;
            ::std::iter::Extend::extend(&mut specs, [#added]);
            specs
        }},
        None => indexes,
    };
    if sharded {
        quote! {
            ::odm::__private::with_shard_index({ #indexes }, __SHARD_KEY)
        }
    } else {
        indexes
    }
}

/// `SCHEMA_VERSION`: a kind's documents are versioned by its enum of kinds, through which they
/// are also read.
fn version_const(cont: &Container<'_>) -> TokenStream {
    match &cont.kind_of {
        Some((base, _)) => quote! {
            const SCHEMA_VERSION: ::odm::__private::Option<::odm::__private::SchemaVersion> =
                <#base as ::odm::__private::Model>::SCHEMA_VERSION;
        },
        None => validators::version_const(&cont.versions),
    }
}

/// For a kind (`is_kind`: a struct of an enum of kinds): its `KIND` constant, and its indexes,
/// copies and references restricted to its documents; otherwise no constant, and the lists as
/// they are.
fn kind_scoped(
    is_kind: bool,
    indexes: TokenStream,
    copies: Option<TokenStream>,
    references: Option<TokenStream>,
) -> (
    TokenStream,
    TokenStream,
    Option<TokenStream>,
    Option<TokenStream>,
) {
    if !is_kind {
        return (quote!(), indexes, copies, references);
    }
    (
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
    )
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
        soft_delete,
    } = parts;
    quote! {
        const __ODM_ENTRY: ::odm::__private::ModelEntry = ::odm::__private::ModelEntry {
            type_name: #type_name,
            module: ::odm::__private::module_path!(),
            collection: #collection,
            indexes,
            references: #references,
            copies: #copies,
            validator: #validator,
            shard_key: #shard_key,
            time_series: #time_series,
            soft_delete: #soft_delete,
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
        soft_delete: soft_delete::entry(cont),
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
