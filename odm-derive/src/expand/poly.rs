//! `#[derive(PolyRef)]`: an enum of references to several models, stored as DBRefs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Type};

use crate::model::poly::Target;

/// `#[derive(PolyRef)]` from its resolved targets, after the `errors` their resolution
/// reported; nothing but the errors without a model among the targets.
pub fn expand(
    input: &DeriveInput,
    targets: Option<&[Target<'_>]>,
    errors: Option<TokenStream>,
) -> TokenStream {
    match targets {
        Some(targets) if targets.iter().any(|t| matches!(t, Target::Model(..))) => {
            let impls = generate(&input.ident, targets);
            quote!(#errors #impls)
        }
        _ => errors.unwrap_or_default(),
    }
}

/// A model target: its variant, the type naming it (`TargetOf<Enum, i>`) and its index.
type ModelTarget<'a> = (&'a Ident, TokenStream, usize);

/// The impls of a polymorphic reference whose targets include one model or more.
fn generate(ident: &Ident, targets: &[Target<'_>]) -> TokenStream {
    let typed: Vec<(&Ident, &Type)> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Model(v, ty) => Some((*v, *ty)),
            Target::Other(_) => None,
        })
        .collect();
    let other = targets.iter().find_map(|t| match t {
        Target::Other(v) => Some(*v),
        Target::Model(..) => None,
    });
    let name = ident.unraw().to_string();
    // Each target through `PolyTarget<I>`, whose impl (at the variant's type) is where a target
    // that is not a model is reported, once.
    let target_impls = typed.iter().enumerate().map(|(i, (_, ty))| {
        quote_spanned! {ty.span()=>
            impl ::odm::dbref::PolyTarget<#i> for #ident {
                type Model = #ty;
            }
        }
    });
    let models: Vec<ModelTarget<'_>> = typed
        .iter()
        .enumerate()
        .map(|(i, (v, _))| (*v, quote!(::odm::__private::TargetOf<#ident, #i>), i))
        .collect();
    let collections: Vec<TokenStream> = models
        .iter()
        .map(|(_, _, i)| quote!(::odm::__private::target_collection::<#ident, #i>()))
        .collect();
    let serialize = serialize_impl(ident, targets, &models);
    let decode = decode_impls(ident, &models, &collections, other);
    let poly_ref = poly_ref_impl(ident, &name, targets, &models, &collections);
    let populates = populate_impls(ident, &models);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #(#target_impls)*
            #serialize
            #decode
            #poly_ref
            #populates

            const _: () = ::odm::__private::distinct_targets(
                #name,
                <#ident as ::odm::__private::PolyRef>::TARGETS,
            );
        };
    }
}

/// The index of the model target held by variant `v`.
fn index_of(models: &[ModelTarget<'_>], v: &Ident) -> usize {
    models.iter().find(|m| m.0 == v).map_or(0, |m| m.2)
}

/// `Serialize`: each target as a DBRef, the catch-all as it is.
fn serialize_impl(
    ident: &Ident,
    targets: &[Target<'_>],
    models: &[ModelTarget<'_>],
) -> TokenStream {
    let arms = targets.iter().map(|t| match t {
        Target::Model(v, _) => {
            let i = index_of(models, v);
            quote!(#ident::#v(r) => ::odm::__private::serialize_target::<#ident, #i, __S>(r, serializer),)
        }
        Target::Other(v) => {
            quote!(#ident::#v(r) => ::odm::serde::Serialize::serialize(r, serializer),)
        }
    });
    quote! {
        #[automatically_derived]
        impl ::odm::serde::Serialize for #ident {
            fn serialize<__S: ::odm::serde::Serializer>(
                &self,
                serializer: __S,
            ) -> ::std::result::Result<__S::Ok, __S::Error> {
                #[allow(unreachable_patterns)]
                match self {
                    #(#arms)*
                    // Variants that are not targets were reported.
                    _ => ::std::unreachable!(),
                }
            }
        }
    }
}

/// `Deserialize` and `PolyDecode`: the variant from the DBRef's collection, the catch-all (or
/// an error naming the targets) for any other.
fn decode_impls(
    ident: &Ident,
    models: &[ModelTarget<'_>],
    collections: &[TokenStream],
    other: Option<&Ident>,
) -> TokenStream {
    let decode = models
        .iter()
        .zip(collections)
        .map(|((v, _, i), collection)| {
            quote! {
                if found.collection == #collection {
                    return ::odm::__private::typed_target::<#ident, #i, __E>(found)
                        .map(#ident::#v);
                }
            }
        });
    let variant_of = collections
        .iter()
        .enumerate()
        .map(|(i, c)| quote!(if collection == #c { return ::odm::__private::Option::Some(#i); }));
    let collection_of = collections
        .iter()
        .enumerate()
        .map(|(i, c)| quote!(#i => #c,));
    let read_id = models.iter().map(|(v, _, i)| {
        quote! {
            #i => ::odm::__private::read_target::<#ident, #i, __D>(deserializer).map(#ident::#v),
        }
    });
    let fallback = match other {
        Some(v) => quote!(::std::result::Result::Ok(#ident::#v(found))),
        None => quote! {
            ::std::result::Result::Err(::odm::__private::unknown_collection(
                &found,
                <#ident as ::odm::__private::PolyRef>::TARGETS,
            ))
        },
    };
    // A DBRef naming another database goes to the catch-all, if there is one.
    let elsewhere = other.map(|v| {
        quote! {
            if found.is_elsewhere() {
                return ::std::result::Result::Ok(#ident::#v(found));
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl<'de> ::odm::serde::Deserialize<'de> for #ident {
            fn deserialize<__D: ::odm::serde::Deserializer<'de>>(
                deserializer: __D,
            ) -> ::std::result::Result<Self, __D::Error> {
                ::odm::__private::poly_deserialize::<Self, __D>(deserializer)
            }
        }

        #[automatically_derived]
        impl ::odm::__private::PolyDecode for #ident {
            fn variant_of(collection: &str) -> ::odm::__private::Option<usize> {
                #(#variant_of)*
                ::odm::__private::Option::None
            }

            fn collection_of(variant: usize) -> &'static str {
                match variant {
                    #(#collection_of)*
                    _ => "",
                }
            }

            fn read_id<'de, __D: ::odm::serde::Deserializer<'de>>(
                variant: usize,
                deserializer: __D,
            ) -> ::std::result::Result<Self, __D::Error> {
                match variant {
                    #(#read_id)*
                    _ => ::std::result::Result::Err(<__D::Error as ::odm::serde::de::Error>::custom(
                        "no such target",
                    )),
                }
            }

            fn from_dbref<__E: ::odm::serde::de::Error>(
                found: ::odm::__private::DbRef,
            ) -> ::std::result::Result<Self, __E> {
                #elsewhere
                #(#decode)*
                #fallback
            }

            fn dbref(&self) -> ::odm::__private::DbRef {
                <Self as ::odm::__private::PolyRef>::to_dbref(self)
            }
        }
    }
}

/// `PolyRef`: the name, the targets' collections, the DBRef of a value.
fn poly_ref_impl(
    ident: &Ident,
    name: &str,
    targets: &[Target<'_>],
    models: &[ModelTarget<'_>],
    collections: &[TokenStream],
) -> TokenStream {
    let to_dbref = targets.iter().map(|t| match t {
        Target::Model(v, _) => {
            let i = index_of(models, v);
            quote!(#ident::#v(r) => ::odm::__private::dbref_of_target::<#ident, #i>(r),)
        }
        Target::Other(v) => quote!(#ident::#v(r) => ::std::clone::Clone::clone(r),),
    });
    quote! {
        #[automatically_derived]
        impl ::odm::__private::PolyRef for #ident {
            const NAME: &'static str = #name;
            const TARGETS: &'static [&'static str] = &[#(#collections),*];

            fn to_dbref(&self) -> ::odm::__private::DbRef {
                #[allow(unreachable_patterns)]
                match self {
                    #(#to_dbref)*
                    _ => ::std::unreachable!(),
                }
            }
        }
    }
}

/// `PolyTargets` (a populate step per target) and `PolyHas` for each target model.
fn populate_impls(ident: &Ident, models: &[ModelTarget<'_>]) -> TokenStream {
    let picks = models.iter().map(|(v, ty, i)| {
        let pick = format_ident!("__pick_{}", i);
        quote! {
            fn #pick(e: &mut #ident) -> ::odm::__private::Option<&mut ::odm::__private::Ref<#ty>> {
                #[allow(unreachable_patterns)]
                match e {
                    #ident::#v(r) => ::odm::__private::Option::Some(r),
                    _ => ::odm::__private::Option::None,
                }
            }
            parts.push(::odm::__private::PolyPart::of_target::<#ident, #i>(path, slots, #pick));
        }
    });
    let has = models
        .iter()
        .map(|(_, ty, _)| quote!(impl ::odm::__private::PolyHas<#ty> for #ident {}));
    quote! {
        #[automatically_derived]
        impl ::odm::__private::PolyTargets for #ident {
            fn populates<__Root: ::odm::__private::Model>(
                path: &str,
                slots: fn(&mut __Root) -> ::odm::__private::PolySlots<'_, Self>,
            ) -> ::odm::__private::Vec<::odm::__private::PolyPart<__Root>> {
                let mut parts = ::odm::__private::Vec::new();
                #(#picks)*
                parts
            }
        }

        #(#has)*
    }
}
