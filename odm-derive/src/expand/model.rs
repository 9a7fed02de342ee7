//! The `Model` impl of a struct, and the description (`ModelEntry`) it registers.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::{
    bucket, counters, denormalize, embed_check, indexes, kinds, paths, references, shard,
    soft_delete, subset, tree, validators, versioning,
};
use crate::model::resolved::Checked;
use crate::model::Container;

pub(super) fn model_impl(cont: &Container<'_>, checked: &Checked<'_, '_>) -> TokenStream {
    let ident = cont.ident;
    let collection = cont.collection_expr();
    let id = cont
        .id_field()
        .expect("checked: a model has an `_id` field");
    let (id_ty, id_expr) = paths::id_type_and_getter(id);
    let every_model = every_model_methods(&id_ty, &id_expr);
    let references = references::reference_infos(cont);
    let bounds = references::bound_checks(cont);
    let bounded_arrays = references::bounded_arrays(cont);
    let copies = denormalize::copy_infos(cont);
    let names = paths::names_consts(cont);
    let plain_keys = super::keys::model_plain_keys(cont);
    let validator = validators::registered(cont);
    let tree = tree::tree_items(cont, &id_ty);
    let shard = shard::shard_items(cont);
    let tree_indexes = tree.as_ref().map(|t| &t.indexes);
    let indexes = index_list(cont, checked, tree_indexes, shard.is_some());
    let (tree_entry, tree_items) = tree.map(|t| (t.entry, t.items)).unzip();
    let shard_items = shard.map(|s| s.items);
    let (stamp_const, stamp_items) = versioning::stamp_items(cont)
        .map(|s| (s.model_items, s.items))
        .unzip();
    let stamps_entry = match stamp_items {
        Some(_) => quote!(__ODM_STAMPS),
        None => quote!(::odm::__private::Stamps::NONE),
    };
    let kind_const = kinds::kind_const(cont);
    let kind_items = kinds::kind_items(cont);
    let beside = beside_impl(cont, checked);

    let (defaults_item, defaults_const) = defaults_items(cont).unzip();
    let version_item = version_const(cont);
    let (version, version_entry) = validators::version_parts(&version_item);
    let (kind, indexes, copies, references) =
        kind_scoped(kind_const.is_some(), indexes, copies, references);
    // A model without copies, references or bounded arrays keeps the trait's defaults, and its
    // entry lists nothing: no function is generated for what it does not declare.
    let (copies_fn, copies_entry) =
        declared_list(quote!(copies), quote!(::odm::__private::CopyInfo), copies);
    let (references_fn, references_entry) = declared_list(
        quote!(references),
        quote!(::odm::__private::ReferenceInfo),
        references,
    );
    let (bounds, bounds_fn, bounds_entry) = bound_methods(bounds, bounded_arrays);
    let lists = Lists {
        references: references_entry,
        copies: copies_entry,
        bounds: bounds_entry,
    };
    let mut registration = EntryParts::plain(validator);
    registration.kind = kind;
    registration.stamps = stamps_entry;
    registration.schema_version = version_entry;
    let registration = model_registration(cont, lists, registration, tree_entry);
    quote! {
        #kind_const
        #kind_items
        #beside

        #copies_fn
        #references_fn
        #bounds_fn

        // A free function, so that registering the model does not go through the `Model`
        // impl: a type whose serde derive is missing gets one error, at the impl.
        fn indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
            #indexes
        }

        #tree_items
        #shard_items
        #stamp_items
        #version_item #defaults_item

        #[automatically_derived]
        impl ::odm::__private::Model for #ident {
            type Id = #id_ty;
            const COLLECTION: &'static str = #collection;
            #stamp_const
            #version
            #plain_keys #defaults_const

            #every_model

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

/// The items beside the `Model` impl that each feature adds: counters, the subset's pair,
/// the soft delete's check, the searches its indexes allow, the typed paths, the checks of embedded types, inverse references
/// and copied fields, the bucket.
fn beside_impl(cont: &Container<'_>, checked: &Checked<'_, '_>) -> TokenStream {
    let counters = counters::counters_impl(cont);
    let subset = subset::subset_items(cont);
    let soft_delete = soft_delete::checks(cont);
    let searchable = indexes::searchable(cont);
    let accessors = paths::model_accessors(cont);
    let embed_checks = embed_check::embed_attribute_checks(cont);
    let inverse_checks = references::inverse_checks(cont);
    let source_fields = denormalize::source_fields(cont);
    let bucket = bucket::bucket_impl(cont, checked.bucket.as_ref());
    quote! {
        #counters
        #subset
        #soft_delete
        #searchable
        #accessors
        #embed_checks
        #inverse_checks
        #source_fields
        #bucket
    }
}

/// What a model's entry says besides its name, collection and indexes.
pub(crate) struct EntryParts {
    /// Its kept fields and schema version: the constants its `Model` impl names too (never
    /// that impl, which fails when serde's derive is missing).
    pub(crate) stamps: TokenStream,
    pub(crate) schema_version: TokenStream,
    pub(crate) references: TokenStream,
    pub(crate) copies: TokenStream,
    pub(crate) bounds: TokenStream,
    pub(crate) validator: TokenStream,
    pub(crate) shard_key: TokenStream,
    pub(crate) time_series: TokenStream,
    pub(crate) soft_delete: TokenStream,
    pub(crate) kind: TokenStream,
    pub(crate) kinds: TokenStream,
    pub(crate) tree: TokenStream,
    pub(crate) subset_of: TokenStream,
    pub(crate) defaults: TokenStream,
}

impl EntryParts {
    /// An entry with no lists nor declarations, and `validator`.
    pub(crate) fn plain(validator: TokenStream) -> Self {
        let none = quote!(::odm::__private::Option::None);
        EntryParts {
            stamps: quote!(::odm::__private::Stamps::NONE),
            schema_version: none.clone(),
            references: quote!(::odm::__private::Vec::new),
            copies: quote!(::odm::__private::Vec::new),
            bounds: quote!(::odm::__private::ModelEntry::NO_BOUNDS),
            validator,
            shard_key: none.clone(),
            time_series: none.clone(),
            soft_delete: none.clone(),
            kind: none.clone(),
            kinds: none.clone(),
            tree: none.clone(),
            subset_of: none,
            defaults: quote!(::odm::__private::Defaults::NONE),
        }
    }
}

/// The lists a model's entry names: functions, or the empty list.
struct Lists {
    references: TokenStream,
    copies: TokenStream,
    bounds: TokenStream,
}

/// The `Model` methods every model has: its id, its
/// entry (`__ODM_ENTRY`), the id generated for a document without one.
fn every_model_methods(id_ty: &TokenStream, id_expr: &TokenStream) -> TokenStream {
    quote! {
        #[inline]
        fn document_id(&self) -> ::odm::__private::Option<&#id_ty> {
            #id_expr
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

/// The model's index list: those it declares, then its bucket's (from the fields its rule
/// resolved), its tree's (`tree`) and its shard key's (when `sharded`).
fn index_list(
    cont: &Container<'_>,
    checked: &Checked<'_, '_>,
    tree: Option<&TokenStream>,
    sharded: bool,
) -> TokenStream {
    let declared = indexes::index_specs(cont);
    let indexes = match checked.bucket.as_ref().map(|f| bucket::index(cont, f)) {
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

/// `__ODM_DEFAULTS`, the defaults the `Model` impl and the entry both name, and the impl's
/// constant: a kind's are its enum of kinds'; a model that declares none has neither.
fn defaults_items(cont: &Container<'_>) -> Option<(TokenStream, TokenStream)> {
    let value = match &cont.kind_of {
        Some((base, _)) => quote!(<#base as ::odm::__private::Model>::DEFAULTS),
        None if cont.defaults.declared() => cont.defaults.entry(),
        None => return None,
    };
    Some((
        quote!(const __ODM_DEFAULTS: ::odm::__private::Defaults = #value;),
        quote!(
            const DEFAULTS: ::odm::__private::Defaults = __ODM_DEFAULTS;
        ),
    ))
}

/// `__ODM_SCHEMA_VERSION`, the schema version the `Model` impl and the entry both name: a
/// kind's documents are versioned by its enum of kinds, through which they are also read.
fn version_const(cont: &Container<'_>) -> TokenStream {
    match &cont.kind_of {
        Some((base, _)) => quote! {
            const __ODM_SCHEMA_VERSION: ::odm::__private::Option<::odm::__private::SchemaVersion> =
                <#base as ::odm::__private::Model>::SCHEMA_VERSION;
        },
        None => validators::version_const(&cont.versions),
    }
}

/// For a kind (`is_kind`: a struct of an enum of kinds): its discriminator (the entry's
/// `kind`), and its indexes, copies and references restricted to its documents; otherwise
/// none, and the lists as they are.
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
        return (
            quote!(::odm::__private::Option::None),
            indexes,
            copies,
            references,
        );
    }
    (
        quote!(::odm::__private::Option::Some(__KIND)),
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
        stamps,
        schema_version,
        references,
        copies,
        bounds,
        validator,
        shard_key,
        time_series,
        soft_delete,
        kind,
        kinds,
        tree,
        subset_of,
        defaults,
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
            kind: #kind,
            kinds: #kinds,
            tree: #tree,
            subset_of: #subset_of,
            stamps: #stamps,
            schema_version: #schema_version,
            bounds: #bounds,
            defaults: #defaults,
        };

        ::odm::__private::inventory::submit! { __ODM_ENTRY }
    }
}

/// A model's entry (see [`registration`]).
fn model_registration(
    cont: &Container<'_>,
    lists: Lists,
    mut parts: EntryParts,
    tree: Option<TokenStream>,
) -> TokenStream {
    parts.references = lists.references;
    parts.copies = lists.copies;
    parts.bounds = lists.bounds;
    if cont.shard_key.is_some() {
        parts.shard_key = quote!(::odm::__private::Option::Some(__SHARD_KEY));
    }
    parts.time_series = counters::time_series(cont);
    parts.soft_delete = soft_delete::entry(cont);
    if cont.kind_of.is_some() || cont.defaults.declared() {
        parts.defaults = quote!(__ODM_DEFAULTS);
    }
    if let Some(tree) = tree {
        parts.tree = tree;
    }
    if let Some((_, main)) = &cont.subset_of {
        // The main model's type name, as its entry records it (the last segment of the path).
        let value = main.value();
        let name = value
            .rsplit("::")
            .next()
            .unwrap_or(&value)
            .trim()
            .to_owned();
        parts.subset_of = quote!(::odm::__private::Option::Some(#name));
    }
    registration(&cont.ident.to_string(), &cont.collection_expr(), parts)
}

/// The `Model` method of a model with bounded arrays (the first array past its bound), the
/// free function listing the bounds, and what the entry names: that function, or no bounds.
fn bound_methods(
    bounds: Option<TokenStream>,
    bounded_arrays: TokenStream,
) -> (Option<TokenStream>, Option<TokenStream>, TokenStream) {
    match bounds {
        Some(bounds) => (
            Some(quote! {
                #[inline]
                fn bound_violation(&self) -> ::odm::__private::Option<(&'static str, usize, u32)> {
                    #bounds
                    ::odm::__private::Option::None
                }
            }),
            Some(quote! {
                fn bounded_arrays() -> &'static [(&'static str, u32)] {
                    #bounded_arrays
                }
            }),
            quote!(bounded_arrays),
        ),
        None => (None, None, quote!(::odm::__private::ModelEntry::NO_BOUNDS)),
    }
}

/// For a list a model declares (`copies`, `references`): the free function building it and
/// what its entry names (that function); without one, no function and the empty list.
fn declared_list(
    name: TokenStream,
    item: TokenStream,
    body: Option<TokenStream>,
) -> (TokenStream, TokenStream) {
    let Some(body) = body else {
        return (quote!(), quote!(::odm::__private::empty_vec));
    };
    (
        quote! {
            fn #name() -> ::odm::__private::Vec<#item> {
                #body
            }
        },
        name,
    )
}
