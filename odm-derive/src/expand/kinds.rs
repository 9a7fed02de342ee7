//! Single-collection inheritance: the enum of kinds (`enum Book { Single(SingleBook), .. }`)
//! and what each kind (`#[odm(kind_of = "Book")]`) adds to its own model code.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr, Type};

use crate::model::attr;
use crate::model::kinds::{EnumOfKinds, Variant};
use crate::model::{case, Container, Shape};

/// The FNV-1a hash of a field name, which `KindField` is keyed by (the same as
/// `odm::rules::name_hash`).
fn name_hash(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The kind's discriminator, named once so that a missing variant is one error.
pub fn kind_const(cont: &Container<'_>) -> Option<TokenStream> {
    let (base, lit) = cont.kind_of.as_ref()?;
    let ident = cont.ident;
    Some(quote_spanned! {lit.span()=>
        const __KIND: ::odm::__private::Kind =
            <#ident as ::odm::__private::KindOf<#base>>::KIND;
    })
}

/// For a kind: the discriminator check and one `KindField` impl per stored field, through
/// which the base reaches the common fields.
pub fn kind_items(cont: &Container<'_>) -> TokenStream {
    if cont.kind_of.is_none() {
        return TokenStream::new();
    }
    let ident = cont.ident;
    let name = ident.unraw().to_string();
    let stored: Vec<&str> = cont.stored_fields().map(|f| f.stored.as_str()).collect();
    let fields = cont.stored_fields().map(|f| {
        let hash = name_hash(&f.ident.unraw().to_string());
        let ty = f.ty;
        let name = f.ident;
        let stored = &f.stored;
        let root = quote!(__R);
        let slots_ty = |target: &TokenStream| {
            quote!(fn(&mut __R) -> ::odm::__private::RefSlots<'_, #target>)
        };
        match f.ref_target().filter(|_| f.reference.is_some() && !f.is_poly()) {
            // A reference: from the base, a `RefPath` whose references the base finds in each
            // kind (`slots`), so that a mixed result is populated.
            Some(target) => {
                let target = quote!(#target);
                let mut field = quote!(::odm::__private::Field::top(#stored));
                if let Some((max, _)) = f.bound().and_then(|b| b.max) {
                    field = quote!(#field.bounded(#max));
                }
                let (w, path) = match (f.dbref.is_some(), f.shape) {
                    (false, _) => (quote!(#ty), quote!(::odm::__private::RefPath::new(#field, slots))),
                    (true, shape) => {
                        let stored_ref = quote!(::odm::__private::Stored<::odm::__private::Ref<#target>>);
                        let (w, many) = match shape {
                            Shape::Plain => (stored_ref, false),
                            Shape::Option(_) => (quote!(::odm::__private::Option<#stored_ref>), false),
                            Shape::Vec(_) => (quote!(::odm::__private::Vec<#stored_ref>), true),
                        };
                        (w, quote!(::odm::__private::RefPath::stored_as_dbref(#field, slots, #many)))
                    }
                };
                let slots = slots_ty(&target);
                quote! {
                    impl ::odm::__private::KindField<#hash> for #ident {
                        type Value = #ty;
                        type Target = #target;
                        type Paths<__R: 'static> = ::odm::__private::RefPath<__R, #w, #target>;
                        fn paths<__R: 'static>(slots: #slots) -> Self::Paths<__R> {
                            #path
                        }
                        fn slots(&mut self) -> ::odm::__private::RefSlots<'_, #target> {
                            ::odm::__private::RefContainer::<#target>::slots(&mut self.#name)
                        }
                    }
                }
            }
            None => {
                let (ret, body) = if f.reference.is_some() || f.ref_target().is_some() {
                    (
                        quote!(::odm::__private::Field<__R, #ty, ::odm::__private::Single>),
                        quote!(::odm::__private::Field::top(#stored)),
                    )
                } else {
                    super::paths::accessor_parts_from(cont, f, &root)
                };
                let target = quote!(::odm::__private::NotAModel);
                let slots = slots_ty(&target);
                quote! {
                    impl ::odm::__private::KindField<#hash> for #ident {
                        type Value = #ty;
                        type Target = #target;
                        type Paths<__R: 'static> = #ret;
                        fn paths<__R: 'static>(_: #slots) -> #ret {
                            #body
                        }
                        fn slots(&mut self) -> ::odm::__private::RefSlots<'_, #target> {
                            ::odm::__private::RefSlots::Maybe(::odm::__private::Option::None)
                        }
                    }
                }
            }
        }
    });
    quote! {
        const _: () = ::odm::__private::kind_field_free(#name, &[#(#stored),*], __KIND.field);
        #(#fields)*
    }
}

/// `#[derive(Model)]` on an enum: the base of a polymorphic model, from its resolved
/// declaration, around the `errors` its resolution reported (generated all the same, so that
/// the kinds are not reported on top).
pub fn model_enum(
    input: &DeriveInput,
    resolved: &EnumOfKinds<'_>,
    errors: Option<TokenStream>,
) -> TokenStream {
    let kinds: Vec<&Variant<'_>> = resolved
        .variants
        .iter()
        .filter(|v| v.ty.is_some())
        .collect();
    if kinds.is_empty() {
        return errors.unwrap_or_default();
    }
    let EnumOfKinds {
        attrs,
        tag,
        variants,
        common,
        ..
    } = resolved;
    let ident = &input.ident;
    let collection = collection_name(attrs, ident);
    let first = kinds[0].ty.expect("a kind");
    let values: Vec<&str> = kinds.iter().map(|v| v.value.as_str()).collect();
    let other = variants.iter().any(|v| v.ty.is_none());
    let (kind_of, same_ids) = kind_impls(ident, tag, first, &kinds);
    let kind_types: Vec<&Type> = kinds.iter().filter_map(|v| v.ty).collect();
    let variant_types: Vec<(&Ident, Option<&Type>)> =
        variants.iter().map(|v| (v.ident, v.ty)).collect();
    let (accessors, common_checks) = common_fields(ident, &kind_types, &variant_types, common);
    let common_names: Vec<String> = common.iter().map(|(n, _)| n.clone()).collect();
    let type_name = ident.unraw().to_string();
    let indexes = enum_indexes(base_indexes(ident, &attrs.indexes, common), &kind_types);
    let copy_source = copy_source(input, common);
    let validator = validator_items(ident, tag, other, &kinds);
    let version = super::validators::version_const(&attrs.versions);
    let (version_impl, version_entry) = super::validators::version_parts(&version);
    let model_impl = base_model_impl(
        ident,
        first,
        &collection,
        (version, version_impl),
        &kind_types,
        variants,
        attrs.defaults.entry(),
    );
    let schema = quote!(&<#ident as ::odm::__private::Validated>::SCHEMA);
    let mut parts = super::EntryParts::plain(quote!(::odm::__private::Option::Some(#schema)));
    parts.stamps = quote!(__ODM_STAMPS);
    parts.schema_version = version_entry;
    parts.kinds = quote! {
        ::odm::__private::Option::Some(::odm::__private::Kinds {
            field: #tag,
            values: &[#(#values),*],
            other: #other,
        })
    };
    parts.bounds = quote!(bounded_arrays);
    parts.defaults = attrs.defaults.entry();
    let registration = super::registration(&type_name, &collection, parts);
    let body = quote! {
        impl ::odm::__private::KindBase for #ident {}
        #(#kind_of)*

        #model_impl

        impl ::odm::__private::ModelOrEmbedNotBoth for #ident {}

        impl ::odm::__private::ReferenceTarget for #ident {
            const COLLECTION: &'static str = #collection;
            const NAME: &'static str = #type_name;
            const FIELDS: &'static [&'static str] = &[#(#common_names),*];
        }

        #accessors
        #copy_source
        #validator

        #indexes

        #registration

        #[allow(dead_code)]
        fn __kinds_share_one_id() {
            #(#same_ids)*
        }
    };
    quote! {
        #errors
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #body
        };
        #common_checks
    }
}

/// The free function `indexes` of an enum of kinds, which its entry names: its own indexes
/// (`own`, on common fields: over every kind), then those of every kind (each partial on its
/// kind), the whole collection's.
fn enum_indexes(own: TokenStream, kind_types: &[&Type]) -> TokenStream {
    quote! {
        fn own_indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
            #own
        }

        fn indexes() -> ::odm::__private::Vec<::odm::__private::IndexSpec> {
            let mut all = own_indexes();
            #(all.extend((<#kind_types as ::odm::__private::Model>::entry().indexes)());)*
            all
        }
    }
}

/// The base's `impl Model`: its kinds' id type and collection, and each per-document method
/// answered by the document's kind (its discriminator and kinds are in its entry). Before it,
/// the constants its entry names too: `version` (the schema version, and the impl's constant
/// naming it, `(free, in_impl)`) and the kept fields common to its kinds (`__ODM_STAMPS`).
fn base_model_impl(
    ident: &Ident,
    first: &Type,
    collection: &str,
    version: (TokenStream, TokenStream),
    kind_types: &[&Type],
    variants: &[Variant<'_>],
    defaults: TokenStream,
) -> TokenStream {
    let arm = |body: TokenStream, none: TokenStream| per_kind(ident, variants, &body, &none);
    // Through `kind_id`, so that kinds with different ids are one error, `same_kind_id`'s.
    let document_id = arm(
        quote!(::odm::__private::kind_id(
            ::odm::__private::Model::document_id(__kind)
        )),
        quote!(::odm::__private::Option::None),
    );
    let bound_violation = arm(
        quote!(::odm::__private::Model::bound_violation(__kind)),
        quote!(::odm::__private::Option::None),
    );
    let document_version = arm(
        quote!(::odm::__private::Model::document_version(__kind)),
        quote!(::odm::__private::Option::None),
    );
    // The kept fields of a document are its kind's; the enum's own are the kinds' when they
    // all keep the same ones (see `Stamps::common`).
    let stamps = arm(
        quote!(::odm::__private::Model::stamps(__kind)),
        quote!(::odm::__private::Stamps::NONE),
    );
    let (version, version_impl) = version;
    quote! {
    #version
    const __ODM_STAMPS: ::odm::__private::Stamps = ::odm::__private::Stamps::common(&[
        #(<#kind_types as ::odm::__private::Model>::STAMPS),*
    ]);
    #[automatically_derived]
    impl ::odm::__private::Model for #ident {
        type Id = <#first as ::odm::__private::Model>::Id;
        const COLLECTION: &'static str = #collection;
        #version_impl
        const STAMPS: ::odm::__private::Stamps = __ODM_STAMPS;
        const DEFAULTS: ::odm::__private::Defaults = #defaults;

        fn document_version(&self) -> ::odm::__private::Option<i64> {
            #document_version
        }

        fn stamps(&self) -> ::odm::__private::Stamps {
            #stamps
        }

        fn document_id(&self) -> ::odm::__private::Option<&Self::Id> {
            #document_id
        }

        fn entry() -> &'static ::odm::__private::ModelEntry {
            &__ODM_ENTRY
        }

        fn generate_id() -> ::odm::__private::Option<Self::Id> {
            <#first as ::odm::__private::Model>::generate_id()
        }

        fn bound_violation(&self) -> ::odm::__private::Option<(&'static str, usize, u32)> {
            #bound_violation
        }
    }

    /// The bounded arrays of every kind.
    fn bounded_arrays() -> &'static [(&'static str, u32)] {
        static ALL: ::std::sync::OnceLock<::odm::__private::Vec<(&'static str, u32)>> =
            ::std::sync::OnceLock::new();
        ALL.get_or_init(|| {
            ::odm::__private::merge_bounds(&[
                #((<#kind_types as ::odm::__private::Model>::entry().bounds)()),*
            ])
        })
    }
    }
}

/// The collection: declared, or the enum's name in snake case with an `s`.
fn collection_name(attrs: &attr::ContainerAttrs, ident: &Ident) -> String {
    attrs.collection.as_ref().map_or_else(
        || format!("{}s", case::snake_case(&ident.to_string())),
        LitStr::value,
    )
}

/// The base's validator: one schema per kind, told apart by the discriminator.
fn validator_items(ident: &Ident, tag: &str, other: bool, kinds: &[&Variant<'_>]) -> TokenStream {
    let kind_schemas: Vec<(&str, &Type)> = kinds
        .iter()
        .filter_map(|v| Some((v.value.as_str(), v.ty?)))
        .collect();
    super::validators::kinds_items(ident, tag, other, &kind_schemas)
}

/// Each kind's `KindOf` impl (its discriminator value), and the checks that the kinds share
/// the first one's id type.
fn kind_impls(
    ident: &Ident,
    tag: &str,
    first: &Type,
    kinds: &[&Variant<'_>],
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let kind_of: Vec<TokenStream> = kinds
        .iter()
        .map(|v| {
            let ty = v.ty.expect("a kind");
            let value = &v.value;
            quote_spanned! {v.span=>
                impl ::odm::__private::KindOf<#ident> for #ty {
                    const KIND: ::odm::__private::Kind = ::odm::__private::Kind {
                        field: #tag,
                        value: #value,
                    };
                }
            }
        })
        .collect();
    let same_ids: Vec<TokenStream> = kinds
        .iter()
        .skip(1)
        .map(|v| {
            let ty = v.ty.expect("a kind");
            quote_spanned! {ty.span()=> ::odm::__private::same_kind_id::<#first, #ty>(); }
        })
        .collect();
    (kind_of, same_ids)
}

/// `match self` with one arm per variant: `body` for a kind (bound as `__kind`), `none` for the
/// catch-all.
fn per_kind(
    ident: &Ident,
    variants: &[Variant<'_>],
    body: &TokenStream,
    none: &TokenStream,
) -> TokenStream {
    let arms = variants.iter().map(|v| {
        let name = v.ident;
        match v.ty {
            Some(_) => quote!(#ident::#name(__kind) => #body,),
            None => quote!(#ident::#name => #none,),
        }
    });
    // Variants that are not kinds were reported; they have none either.
    quote! {
        #[allow(unreachable_patterns)]
        match self {
            #(#arms)*
            _ => #none,
        }
    }
}

/// The base's accessor of each common field (the first kind's path, from the base), and the
/// checks that every kind has the field with the same type.
fn common_fields(
    ident: &Ident,
    kinds: &[&Type],
    variants: &[(&Ident, Option<&Type>)],
    common: &[(String, Span)],
) -> (TokenStream, TokenStream) {
    let first = kinds[0];
    let mut fns = Vec::new();
    let mut checks = Vec::new();
    for (name, span) in common {
        let hash = name_hash(name);
        let method = Ident::new(name, *span);
        let doc = format!("Typed path to `{name}`, a field every kind stores.");
        let slots = format_ident!("__slots_{}", name);
        // Each kind through `kind_slots`, which is also the check that the kind has the field
        // with the first kind's type: one error per kind that does not.
        let arms = variants.iter().map(|(v, ty)| match ty {
            Some(ty) => quote_spanned! {*span=>
                #ident::#v(__kind) => ::odm::__private::kind_slots::<#hash, #first, #ty>(__kind),
            },
            None => quote!(#ident::#v => ::odm::__private::RefSlots::Maybe(::odm::__private::Option::None),),
        });
        fns.push(quote_spanned! {*span=>
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #method() -> <#first as ::odm::__private::KindField<#hash>>::Paths<#ident> {
                <#first as ::odm::__private::KindField<#hash>>::paths::<#ident>(#ident::#slots)
            }
        });
        // The references of the field in a document of any kind (none in the catch-all).
        fns.push(quote_spanned! {*span=>
            #[doc(hidden)]
            #[allow(unreachable_patterns)]
            fn #slots(
                doc: &mut #ident,
            ) -> ::odm::__private::RefSlots<'_, <#first as ::odm::__private::KindField<#hash>>::Target> {
                match doc {
                    #(#arms)*
                    _ => ::odm::__private::RefSlots::Maybe(::odm::__private::Option::None),
                }
            }
        });
        for kind in kinds {
            let kind_name = quote!(#kind).to_string().replace(' ', "");
            checks.push(quote_spanned! {*span=>
                const _: () = ::odm::__private::common_field(
                    #kind_name,
                    <#kind as ::odm::__private::ReferenceTarget>::FIELDS,
                    #name,
                );
            });
        }
    }
    let accessors = quote! {
        #[automatically_derived]
        impl #ident {
            #(#fns)*
        }

    };
    (accessors, quote!(#(#checks)*))
}

/// The base's `#[odm(index(...))]` specs: paths read from the common fields' accessors, so that
/// serde renames in the kinds apply.
fn base_indexes(
    ident: &Ident,
    indexes: &[attr::CompoundIndex],
    common: &[(String, Span)],
) -> TokenStream {
    let specs = indexes.iter().filter_map(|idx| {
        let lit = idx.keys_lit.as_ref()?;
        // A key that is not common was reported.
        if !idx
            .keys
            .iter()
            .all(|k| common.iter().any(|(n, _)| *n == k.segments[0]))
        {
            return None;
        }
        let span = Span::call_site().located_at(lit.span());
        let mut spec: Option<TokenStream> = None;
        for key in &idx.keys {
            let mut segments = key.segments.iter().map(|s| match syn::parse_str::<Ident>(s) {
                Ok(_) => Ident::new(s, span),
                Err(_) => Ident::new_raw(s, span),
            });
            let first = segments.next()?;
            let path = quote_spanned! {span=>
                ::std::borrow::ToOwned::to_owned(::odm::__private::Field::path(&#ident::#first() #(.#segments())*))
            };
            spec = Some(super::indexes::compound_key(idx, key, spec, path));
        }
        Some(super::indexes::compound_options(idx, spec?))
    });
    quote!(::std::vec![#(#specs),*])
}

/// The base as a copy source: its common fields (`#[denormalize(from = "Book", fields =
/// "title")]` copies a field every kind has), reached through the enum's accessors.
fn copy_source(input: &DeriveInput, common: &[(String, Span)]) -> TokenStream {
    let ident = &input.ident;
    let vis = &input.vis;
    let hidden = format_ident!("{}Fields", ident.unraw());
    let names: Vec<&str> = common.iter().map(|(n, _)| n.as_str()).collect();
    let type_name = ident.unraw().to_string();
    let def = quote_spanned! {ident.span()=>
        #vis struct #hidden;
    };
    let names = quote! {
        const NAME: &'static str = #type_name;
        const FIELDS: &'static [&'static str] = &[#(#names),*];
    };
    super::denormalize::source_impl(ident, &hidden, def, names)
}

#[cfg(test)]
mod tests {
    /// `odm::rules::name_hash` gives the same value (its own test checks it).
    #[test]
    fn names_hash_as_the_runtime_hashes_them() {
        assert_eq!(super::name_hash("title"), 15_722_393_318_163_439_657);
    }
}
