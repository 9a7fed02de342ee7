//! `#[derive(PolyRef)]`: an enum of references to several models, stored as DBRefs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::ctxt::Ctxt;
use crate::model::ref_inner;

enum Target<'a> {
    /// `Book(Ref<Book>)`
    Model(&'a Ident, &'a Type),
    /// `Other(DbRef)`: DBRefs to any other collection.
    Other(&'a Ident),
}

pub fn expand(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let ident = &input.ident;
    let Data::Enum(data) = &input.data else {
        cx.error_spanned_by(
            ident,
            "`PolyRef` is derived for an enum whose variants each hold a `Ref` to one model: `enum Subject { Book(Ref<Book>), Author(Ref<Author>) }`",
        );
        return cx
            .check()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`PolyRef` cannot be derived for a generic enum: its targets must be known",
        );
        // Nothing is generated: impls without the parameters would only add errors.
        return cx
            .check()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    }
    let mut targets = Vec::new();
    for v in &data.variants {
        let ty = match &v.fields {
            Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0].ty,
            _ => {
                cx.error_spanned_by(
                    &v.ident,
                    format!(
                        "each variant of a polymorphic reference holds a reference to one model, `{0}(Ref<{0}>)`, or is the catch-all `Other(DbRef)`",
                        v.ident
                    ),
                );
                continue;
            }
        };
        if let Some(model) = ref_inner(ty) {
            targets.push(Target::Model(&v.ident, model));
        } else if is_dbref(ty) {
            if targets.iter().any(|t| matches!(t, Target::Other(_))) {
                cx.error_spanned_by(
                    &v.ident,
                    "a polymorphic reference has at most one catch-all variant holding `DbRef`",
                );
            }
            targets.push(Target::Other(&v.ident));
        } else {
            cx.error_spanned_by(
                ty,
                "a variant of a polymorphic reference holds `Ref<Model>` (or `DbRef`, the catch-all for DBRefs to other collections)",
            );
        }
    }
    if data.variants.is_empty() {
        cx.error_spanned_by(
            ident,
            "a polymorphic reference has at least one target: a variant holding `Ref<Model>`",
        );
    }
    let errors = cx.check().err().map(|e| e.to_compile_error());
    let models: Vec<(&Ident, &Type)> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Model(v, ty) => Some((*v, *ty)),
            Target::Other(_) => None,
        })
        .collect();
    if models.is_empty() {
        return errors.unwrap_or_default();
    }
    let other = targets.iter().find_map(|t| match t {
        Target::Other(v) => Some(*v),
        Target::Model(..) => None,
    });
    let name = ident.unraw().to_string();
    // Each target through `PolyTarget<I>`, whose impl (at the variant's type) is where a target
    // that is not a model is reported, once.
    let target_impls = models.iter().enumerate().map(|(i, (_, ty))| {
        quote_spanned! {ty.span()=>
            impl ::odm::dbref::PolyTarget<#i> for #ident {
                type Model = #ty;
            }
        }
    });
    let models: Vec<(&Ident, TokenStream, usize)> = models
        .iter()
        .enumerate()
        .map(|(i, (v, _))| (*v, quote!(::odm::__private::TargetOf<#ident, #i>), i))
        .collect();
    let collections: Vec<TokenStream> = models
        .iter()
        .map(|(_, _, i)| quote!(::odm::__private::target_collection::<#ident, #i>()))
        .collect();
    let index = |v: &Ident| models.iter().find(|m| m.0 == v).map_or(0, |m| m.2);
    let serialize_arms = targets.iter().map(|t| match t {
        Target::Model(v, _) => {
            let i = index(v);
            quote!(#ident::#v(r) => ::odm::__private::serialize_target::<#ident, #i, __S>(r, serializer),)
        }
        Target::Other(v) => {
            quote!(#ident::#v(r) => ::odm::serde::Serialize::serialize(r, serializer),)
        }
    });
    let decode = models
        .iter()
        .zip(&collections)
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
    let to_dbref = targets.iter().map(|t| match t {
        Target::Model(v, _) => {
            let i = index(v);
            quote!(#ident::#v(r) => ::odm::__private::dbref_of_target::<#ident, #i>(r),)
        }
        Target::Other(v) => quote!(#ident::#v(r) => ::std::clone::Clone::clone(r),),
    });
    let has = models
        .iter()
        .map(|(_, ty, _)| quote!(impl ::odm::__private::PolyHas<#ty> for #ident {}));
    quote! {
        #errors
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #(#target_impls)*

            #[automatically_derived]
            impl ::odm::serde::Serialize for #ident {
                fn serialize<__S: ::odm::serde::Serializer>(
                    &self,
                    serializer: __S,
                ) -> ::std::result::Result<__S::Ok, __S::Error> {
                    #[allow(unreachable_patterns)]
                    match self {
                        #(#serialize_arms)*
                        // Variants that are not targets were reported.
                        _ => ::std::unreachable!(),
                    }
                }
            }

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

            const _: () = ::odm::__private::distinct_targets(
                #name,
                <#ident as ::odm::__private::PolyRef>::TARGETS,
            );
        };
    }
}

/// `DbRef` by its last path segment.
fn is_dbref(ty: &Type) -> bool {
    matches!(ty, Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == "DbRef" && s.arguments.is_empty()))
}
