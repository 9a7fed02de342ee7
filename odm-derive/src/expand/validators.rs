//! The generated side of validators and schema versions: the object schema of a struct (for a
//! model, `Validated` and its registration; for an embedded type, `BsonSchema`), and the
//! model's `SCHEMA_VERSION`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use crate::model::{Container, Derive, Shape};

/// The struct's schema as a constant expression (a `Schema::Object`): its stored fields, each
/// `required` unless serde may leave it out, typed by its Rust type where that has a schema,
/// bounded by its `max`.
fn object_schema(cont: &Container<'_>) -> TokenStream {
    let fields = cont.fields.iter().filter(|f| !f.skipped).map(|f| {
        let name = &f.stored;
        let required = !matches!(f.shape, Shape::Option(_)) && !f.maybe_absent;
        // A reference's schema is its target's id's, named without `Ref<T>`'s bound.
        let ty = match f.ref_target() {
            Some(target) => {
                let id = quote!(::odm::__private::RefIdOf<#target>);
                match f.shape {
                    Shape::Plain => id,
                    Shape::Option(_) => quote!(::odm::__private::Option<#id>),
                    Shape::Vec(_) => quote!(::odm::__private::Vec<#id>),
                }
            }
            None => f.ty.to_token_stream(),
        };
        // DBRefs (polymorphic references, `odm::dbref`) are objects the id's schema is not.
        let schema = if f.is_poly() || f.dbref.is_some() {
            quote!(::odm::__private::Option::None)
        } else {
            quote_spanned! {f.ty.span()=>
                ::odm::__private::SchemaOf::<#ty>::SCHEMA
            }
        };
        let max = f.bound().and_then(|b| b.max.map(|(n, _)| n)).or_else(|| {
            f.denormalize
                .as_ref()
                .and_then(|d| d.latest.map(|(n, _, _)| n))
        });
        let field = if required {
            quote!(::odm::__private::FieldSchema::req(#name, #schema))
        } else {
            quote!(::odm::__private::FieldSchema::opt(#name, #schema))
        };
        match (f.shape, max) {
            (Shape::Vec(_), Some(n)) => quote! { #field.bounded(#n), },
            _ => quote! { #field, },
        }
    });
    let version = cont.versions.schema_version.map(|(n, _)| {
        let n = n as i32;
        // Not required: documents written before the model had a version have none.
        quote! {
            ::odm::__private::FieldSchema::opt("_v", ::odm::__private::Option::Some(
                &::odm::__private::Schema::WholeNumber { minimum: 1i32, maximum: #n },
            )),
        }
    });
    quote! {
        ::odm::__private::Schema::Object(&[#(#fields)* #version])
    }
}

/// The validator items of a struct deriving `Model` or `Embed`: its schema as a constant (the
/// trait that names "no schema" imported for `SchemaOf`'s fallback).
pub fn items(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let schema = object_schema(cont);
    let fallback = quote! {
        #[allow(unused_imports)]
        use ::odm::__private::UnknownSchema as _;
    };
    if cont.derive == Derive::Embed {
        return quote! {
            #fallback
            impl ::odm::__private::BsonSchema for #ident {
                // Through a function, so that types holding each other are no constant
                // holding itself.
                const SCHEMA: ::odm::__private::Schema = ::odm::__private::Schema::Of(|| {
                    const SCHEMA: ::odm::__private::Schema = #schema;
                    &SCHEMA
                });
            }
        };
    }
    // A kind's collection holds every kind: its validator is its enum's.
    let validator = cont.kind_of.as_ref().map(|(base, _)| {
        quote! {
            fn validator() -> ::odm::bson::Document {
                <#base as ::odm::__private::Validated>::validator()
            }
        }
    });
    quote! {
        #fallback
        impl ::odm::__private::Validated for #ident {
            const SCHEMA: ::odm::__private::Schema = #schema;
            #validator
        }
    }
}

/// The validator a model registers with its entry (an `Option<fn() -> Document>`): none for a
/// kind (its enum registers the collection's), nor for the collections whose documents are not
/// written whole. Time-series collections take no validator, and the documents of buckets and
/// counters are built by upserts, field by field, which a schema requiring every field would
/// refuse half-built: `sync_validators_of` still installs theirs when asked.
pub fn registered(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let upserted = cont.time_series.is_some() || cont.bucket.is_some() || cont.counters.is_some();
    if cont.kind_of.is_some() || upserted {
        return quote!(::odm::__private::Option::None);
    }
    quote!(::odm::__private::Option::Some(&<#ident as ::odm::__private::Validated>::SCHEMA))
}

/// `const SCHEMA_VERSION` in the `Model` impl, when the model (or the enum of kinds) declares
/// one.
pub fn version_const(versions: &crate::model::attr::VersionAttrs) -> TokenStream {
    let Some((n, _)) = versions.schema_version else {
        return TokenStream::new();
    };
    let upgrade = match &versions.upgrade {
        Some((path, lit)) => quote_spanned! {lit.span()=>
            ::odm::__private::Option::Some(#path)
        },
        None => quote!(::odm::__private::Option::None),
    };
    quote! {
        const __ODM_SCHEMA_VERSION: ::odm::__private::Option<::odm::__private::SchemaVersion> =
            ::odm::__private::Option::Some(::odm::__private::SchemaVersion {
                current: #n,
                upgrade: #upgrade,
            });
    }
}

/// The enum of kinds' validator: a `oneOf` over its kinds, keyed by the discriminator.
pub fn kinds_items(
    ident: &syn::Ident,
    tag: &str,
    other: bool,
    kinds: &[(&str, &syn::Type)],
) -> TokenStream {
    let values = kinds.iter().map(|(v, _)| v);
    let types = kinds.iter().map(|(_, t)| t);
    quote! {
        impl ::odm::__private::Validated for #ident {
            const SCHEMA: ::odm::__private::Schema = ::odm::__private::Schema::Custom(|| {
                ::odm::__private::kinds_schema(#tag, #other, &[
                    #((#values, <#types as ::odm::__private::Validated>::json_schema as fn() -> ::odm::bson::Document)),*
                ])
            });
        }
    }
}

/// The `Model` constant and the entry's value of a schema version whose constant `item` is
/// (nothing and none without one).
pub(crate) fn version_parts(item: &TokenStream) -> (TokenStream, TokenStream) {
    if item.is_empty() {
        return (TokenStream::new(), quote!(::odm::__private::Option::None));
    }
    (
        quote! {
            const SCHEMA_VERSION: ::odm::__private::Option<::odm::__private::SchemaVersion> =
                __ODM_SCHEMA_VERSION;
        },
        quote!(__ODM_SCHEMA_VERSION),
    )
}
