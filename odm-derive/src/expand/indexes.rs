//! The generated `Model::indexes()`.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::model::{Container, Shape};

pub fn index_specs(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let mut specs = Vec::new();
    for f in cont.stored_fields() {
        // References are queried by their field (delete rules, children, two-way checks):
        // they get an index without being asked.
        // A declared compound index that starts with the field serves those queries already.
        let covered = cont.compound_indexes.iter().any(|idx| {
            idx.text.is_none()
                && idx
                    .keys
                    .first()
                    .is_some_and(|k| k.segments.len() == 1 && *f.ident == k.segments[0])
        });
        if let (Some(_), None, false, false) = (&f.reference, &f.index, f.is_id(), covered) {
            let stored = &f.stored;
            specs.push(
                quote!(::odm::__private::IndexSpec::on(#stored, ::odm::__private::IndexKey::Asc)),
            );
        }
        let Some(index) = &f.index else { continue };
        let stored = &f.stored;
        let key = if index.text.is_some() {
            quote!(::odm::__private::IndexKey::Text)
        } else if index.desc.is_some() {
            quote!(::odm::__private::IndexKey::Desc)
        } else {
            quote!(::odm::__private::IndexKey::Asc)
        };
        let mut spec = quote!(::odm::__private::IndexSpec::on(#stored, #key));
        if index.unique.is_some() {
            spec = quote!(#spec.unique());
            if matches!(f.shape, Shape::Option(_)) {
                spec = quote!(#spec.only_present(#stored));
            }
        }
        if index.sparse.is_some() {
            spec = quote!(#spec.sparse());
        }
        if let Some((secs, _)) = index.expire_after_secs {
            spec = quote!(#spec.expire_after_secs(#secs));
        }
        if let Some(name) = &index.name {
            spec = quote!(#spec.named(#name));
        }
        specs.push(spec);
    }
    specs.extend(super::denormalize::copy_indexes(cont));
    for idx in &cont.compound_indexes {
        let Some(lit) = &idx.keys_lit else { continue };
        let mut spec: Option<TokenStream> = None;
        for key in &idx.keys {
            let Some(first) = cont.field_named(&key.segments[0]) else {
                continue;
            };
            let path = if key.segments.len() == 1 {
                let stored = &first.stored;
                quote!(#stored)
            } else {
                // The accessor chain makes the compiler check each segment against the
                // embedded types; errors point at the attribute's string. The span keeps the
                // macro's context so that rustc does not offer to rewrite the string as code.
                let span = Span::call_site().located_at(lit.span());
                let first_ident = first.ident;
                let rest = key.segments[1..].iter().map(|s| segment_ident(s, span));
                // `Field::path` by path: the last segment may be an embedded type with a field
                // named `path`, whose accessor would win over the method.
                quote_spanned! {span=>
                    ::odm::__private::Field::path(&#ident::#first_ident()#(.#rest())*)
                }
            };
            let dir = if idx.text.is_some() {
                quote!(::odm::__private::IndexKey::Text)
            } else if key.desc {
                quote!(::odm::__private::IndexKey::Desc)
            } else {
                quote!(::odm::__private::IndexKey::Asc)
            };
            spec = Some(match spec {
                None => quote!(::odm::__private::IndexSpec::on(#path, #dir)),
                Some(s) => quote!(#s.then(#path, #dir)),
            });
        }
        let Some(mut spec) = spec else { continue };
        if idx.unique.is_some() {
            spec = quote!(#spec.unique());
        }
        if idx.sparse.is_some() {
            spec = quote!(#spec.sparse());
        }
        if let Some(name) = &idx.name {
            spec = quote!(#spec.named(#name));
        }
        specs.push(spec);
    }
    quote! {
        ::std::vec![#(#specs),*]
    }
}

/// The accessor for one segment of a dotted key: a raw identifier when the field name is a
/// keyword (`r#type`). Segments were checked to be identifiers when the keys were parsed.
fn segment_ident(segment: &str, span: Span) -> Ident {
    match syn::parse_str::<Ident>(segment) {
        Ok(_) => Ident::new(segment, span),
        Err(_) => Ident::new_raw(segment, span),
    }
}
