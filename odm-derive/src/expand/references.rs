//! What the runtime is told about reference fields: the registry entries (delete rules, two-way
//! references), the compile-time check that an `inverse` points back, and the array bounds.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Type};

use crate::model::attr::OnDelete;
use crate::model::{Container, Shape};

/// The body that lists the `ReferenceInfo` of every reference field; `None` without any.
pub fn reference_infos(cont: &Container<'_>) -> Option<TokenStream> {
    let ident = cont.ident;
    let type_name = ident.to_string();
    let collection = cont.collection_expr();
    // The kept fields of the holder, which a delete rule's write of a reference updates too.
    let stamped = cont
        .keeps_stamps()
        .then(|| quote!(.stamped(<#ident as ::odm::__private::Model>::STAMPS)));
    let infos = cont.stored_fields().filter_map(|f| {
        let r = f.reference.as_ref()?;
        let stored = &f.stored;
        let max = match f.bound().and_then(|b| b.max) {
            Some((max, _)) => quote!(::odm::__private::Option::Some(#max)),
            None => quote!(::odm::__private::Option::None),
        };
        let kind = match f.shape {
            Shape::Plain => quote!(::odm::__private::RefKind::One),
            Shape::Option(_) => quote!(::odm::__private::RefKind::Optional),
            Shape::Vec(_) => quote!(::odm::__private::RefKind::Many),
        };
        let rule = match r.on_delete.map(|(rule, _)| rule) {
            None | Some(OnDelete::Restrict) => quote!(::odm::__private::OnDelete::Restrict),
            Some(OnDelete::Nullify) => quote!(::odm::__private::OnDelete::Nullify),
            Some(OnDelete::Pull) => quote!(::odm::__private::OnDelete::Pull),
            Some(OnDelete::Cascade) => quote!(::odm::__private::OnDelete::Cascade),
        };
        let parent = r.parent;
        if r.poly.is_some() {
            let poly = f.inner_ty();
            let info = quote_spanned! {poly.span()=>
                ::odm::__private::ReferenceInfo::new(
                    #type_name,
                    #collection,
                    #stored,
                    "",
                    #kind,
                    #rule,
                    false,
                    ::odm::__private::Option::None,
                )
                .bounded(#max)
                #stamped
                .per_target(<#poly as ::odm::__private::PolyRef>::TARGETS)
            };
            return Some(quote!(all.extend(#info);));
        }
        let target = f.ref_target()?;
        let inverse = match &r.inverse {
            Some(inv) => {
                let path = inverse_path(ident, target, inv, r.parent);
                quote_spanned!(inv.span()=> ::odm::__private::Option::Some(#path))
            }
            None => quote!(::odm::__private::Option::None),
        };
        // At the target, through the rule that names what a reference targets: a `Ref` to an
        // embedded type or a plain value is this one error (`Ref` itself accepts them).
        let dbref = f.dbref.map(|_| quote!(.stored_as_dbref()));
        let marked =
            matches!(r.on_soft_delete, Some((true, _))).then(|| quote!(.marked_on_soft_delete()));
        let target_collection = quote_spanned! {target.span()=>
            <#target as ::odm::__private::ReferenceTarget>::COLLECTION
        };
        Some(quote! {
            all.push(::odm::__private::ReferenceInfo::new(
                #type_name,
                #collection,
                #stored,
                #target_collection,
                #kind,
                #rule,
                #parent,
                #inverse,
            )
            .bounded(#max)
            #stamped
            #dbref
            #marked);
        })
    });
    let infos: Vec<_> = infos.collect();
    if infos.is_empty() {
        return None;
    }
    Some(quote! {{
        let mut all = ::odm::__private::Vec::new();
        #(#infos)*
        all
    }})
}

/// The stored path of the field an `inverse` names, as a `String`. Read through `Field::path`,
/// which takes any accessor (a `RefPath` by deref), so that an inverse of the wrong kind is
/// reported once, by [`inverse_checks`], and not again here.
pub fn inverse_path(model: &Ident, target: &Type, inv: &LitStr, parent: bool) -> TokenStream {
    let field = inverse_field(model, target, inv, parent);
    quote_spanned! {inv.span()=>
        {
            let __inverse = #field;
            ::std::borrow::ToOwned::to_owned(::odm::__private::Field::path(&__inverse))
        }
    }
}

/// `<Task>::owner()`, the field an `inverse` names; a stand-in of the expected kind (a
/// reference back) when `Task` has no such field, which [`inverse_field_checks`] reports.
pub fn inverse_field(model: &Ident, target: &Type, inv: &LitStr, parent: bool) -> TokenStream {
    let inv_ident = format_ident!("{}", inv.value(), span = inv.span());
    let back = if parent {
        quote!(::odm::__private::Vec<::odm::__private::Ref<#model>>)
    } else {
        quote!(::odm::__private::Ref<#model>)
    };
    quote_spanned! {inv.span()=>
        {
            #[allow(non_camel_case_types, dead_code)]
            trait __NoSuchField {
                fn #inv_ident() -> ::odm::__private::Field<(), #back, ::odm::__private::Single> {
                    ::odm::__private::Field::top("")
                }
            }
            impl<T: ?::core::marker::Sized> __NoSuchField for T {}
            <#target>::#inv_ident()
        }
    }
}

/// For each `inverse`, a constant evaluated while compiling that fails when the referenced
/// model has no such field, suggesting the closest (`odm::rules::inverse_field`). The names
/// are read at the target type, as its collection is, so that a target that is not a model
/// is one error.
pub fn inverse_field_checks(cont: &Container<'_>) -> TokenStream {
    let checks = cont.stored_fields().filter_map(|f| {
        let inv = f.reference.as_ref()?.inverse.as_ref()?;
        let target = f.ref_target()?;
        let name =
            quote_spanned!(target.span()=> <#target as ::odm::__private::ReferenceTarget>::NAME);
        let fields =
            quote_spanned!(target.span()=> <#target as ::odm::__private::ReferenceTarget>::FIELDS);
        let value = inv.value();
        Some(quote_spanned! {inv.span()=>
            const _: () = ::odm::__private::inverse_field(#name, #fields, #value);
        })
    });
    quote!(#(#checks)*)
}

/// For each `inverse`, code that only compiles when the named field of the referenced model is
/// a reference back to this model with the other cardinality; errors point at the `inverse`
/// string. The field is taken as a plain `Field` (a `RefPath` derefs to one), so that a field
/// that is no reference at all, or a reference to a third model, is reported by the
/// cardinality trait (which names the expected type) rather than as a mismatch of two path
/// types.
pub fn inverse_checks(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let checks = cont.stored_fields().filter_map(|f| {
        let r = f.reference.as_ref()?;
        let inv = r.inverse.as_ref()?;
        let target = f.ref_target()?;
        let field = inverse_field(ident, target, inv, r.parent);
        let back = if r.parent {
            quote_spanned!(inv.span()=> ManyRefsTo)
        } else {
            quote_spanned!(inv.span()=> SingleRefTo)
        };
        Some(quote_spanned! {inv.span()=>
            const _: fn() = || {
                fn inverse<C, W: ::odm::__private::#back<#ident>, M>(
                    _: &::odm::__private::Field<C, W, M>,
                ) {
                }
                let __inverse = #field;
                inverse(&__inverse);
            };
        })
    });
    quote!(#(#checks)*)
}

/// `if self.field.len() > max { return Some(...) }` for every bounded array.
pub fn bound_checks(cont: &Container<'_>) -> Option<TokenStream> {
    let checks = cont.stored_fields().filter_map(|f| {
        let (max, _) = f.bound()?.max?;
        if !matches!(f.shape, Shape::Vec(_)) {
            return None;
        }
        let name = f.ident;
        let stored = &f.stored;
        Some(quote! {
            if self.#name.len() > #max as usize {
                return ::odm::__private::Option::Some((#stored, self.#name.len(), #max));
            }
        })
    });
    let checks: Vec<_> = checks.collect();
    (!checks.is_empty()).then(|| quote!(#(#checks)*))
}

/// The bounded arrays as `(stored name, bound)`, for the checks of updates.
pub fn bounded_arrays(cont: &Container<'_>) -> TokenStream {
    let arrays = cont.stored_fields().filter_map(|f| {
        let (max, _) = f.bound()?.max?;
        if !matches!(f.shape, Shape::Vec(_)) {
            return None;
        }
        let stored = &f.stored;
        Some(quote!((#stored, #max)))
    });
    quote!(&[#(#arrays),*])
}
