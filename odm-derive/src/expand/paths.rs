//! Typed path accessors: `Book::title()` on models, `.name()` below embedded fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::Ident;

use crate::model::{Container, Field, Shape};

/// `(type Id, body of document_id)` for the `_id` field; an `Option<X>` id has type `X`.
pub fn id_type_and_getter(id: &Field<'_>) -> (TokenStream, TokenStream) {
    let ident = id.ident;
    // A reference as `_id` is reported by its own rule; the stub then gets the unit id, so
    // that the bounds of `Model::Id` (which `Ref<T>` may miss) are not reported on top of it.
    if id.reference.is_some() || id.ref_target().is_some() {
        return (quote!(()), quote!(::odm::__private::Option::None));
    }
    match id.shape {
        Shape::Option(inner) => (quote!(#inner), quote!(self.#ident.as_ref())),
        _ => {
            let ty = id.ty;
            (
                quote!(#ty),
                quote!(::odm::__private::Option::Some(&self.#ident)),
            )
        }
    }
}

/// The type an accessor returns and the expression that builds it, given the field path
/// expression of type `Field<Root, FieldTy, M>`, the root type, and the marker for paths below.
fn accessor_parts(
    f: &Field<'_>,
    root: &TokenStream,
    outer: &TokenStream,
    field_expr: TokenStream,
) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    let field_expr = match f.bound().and_then(|b| b.max) {
        Some((max, _)) => quote!(#field_expr.bounded(#max)),
        None => field_expr,
    };
    // (`poly` on a `Ref` was reported: it gets the `Ref`'s accessor.)
    if f.is_poly() && f.ref_target().is_none() {
        return poly_parts(f, root, field_expr);
    }
    if let (Some(r), Some(target)) = (&f.reference, f.ref_target()) {
        return reference_parts(f, r, target, root, field_expr);
    }
    if f.is_id() {
        let (id_ty, _) = id_type_and_getter(f);
        return (
            quote!(::odm::__private::Field<#root, #id_ty, #outer>),
            field_expr,
        );
    }
    if !f.has_embed_paths() {
        return (
            quote!(::odm::__private::Field<#root, #ty, #outer>),
            field_expr,
        );
    }
    let inner = f.inner_ty();
    // The fields of a single summary are copies the ODM keeps, like a copy `via` a reference:
    // they can be queried, not written (the summary as a whole is set, and the ODM fills it).
    let summary = f.denormalize.is_some();
    let below = match f.shape {
        Shape::Vec(_) => quote!(::odm::__private::Each),
        _ if summary => quote!(::odm::__private::Copied),
        _ => outer.clone(),
    };
    // At the embedded type, so that a type without `Embed` is reported there; a summary's
    // type through the rule that names summaries.
    let span = inner.span();
    let embed = if summary {
        quote_spanned!(span=> SummaryType)
    } else {
        quote_spanned!(span=> Embed)
    };
    (
        quote_spanned!(span=> <#inner as ::odm::__private::#embed>::Paths<#root, #ty, #outer, #below>),
        quote_spanned!(span=> <#inner as ::odm::__private::#embed>::paths(#field_expr)),
    )
}

/// A polymorphic reference field's accessor: a `PolyPath` that populate takes.
fn poly_parts(
    f: &Field<'_>,
    root: &TokenStream,
    field_expr: TokenStream,
) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    let name = f.ident;
    let poly = f.inner_ty();
    let ret = quote_spanned!(poly.span()=> ::odm::__private::PolyPath<#root, #ty, #poly>);
    let body = quote! {
        fn slots(doc: &mut #root) -> ::odm::__private::PolySlots<'_, #poly> {
            ::odm::__private::PolyContainer::<#poly>::slots(&mut doc.#name)
        }
        ::odm::__private::PolyPath::new(#field_expr, slots)
    };
    (ret, body)
}

/// A reference field's accessor: a `RefPath` that populate, `children` and `reassign` take.
fn reference_parts(
    f: &Field<'_>,
    r: &crate::model::attr::ReferenceAttr,
    target: &syn::Type,
    root: &TokenStream,
    field_expr: TokenStream,
) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    let name = f.ident;
    // (With `inverse` or on a `#[parent]`, DBRef storage was reported: the plain path keeps
    // the other side's checks quiet.)
    if f.dbref.is_some() && r.inverse.is_none() && !r.parent {
        // The typed path holds `Stored<Ref<T>>`, whose values are encoded as DBRefs.
        let stored = quote!(::odm::__private::Stored<::odm::__private::Ref<#target>>);
        let (w, many) = match f.shape {
            Shape::Plain => (stored, false),
            Shape::Option(_) => (quote!(::odm::__private::Option<#stored>), false),
            Shape::Vec(_) => (quote!(::odm::__private::Vec<#stored>), true),
        };
        let ret = quote_spanned!(target.span()=> ::odm::__private::RefPath<#root, #w, #target>);
        let body = quote! {
            fn slots(doc: &mut #root) -> ::odm::__private::RefSlots<'_, #target> {
                ::odm::__private::RefContainer::<#target>::slots(&mut doc.#name)
            }
            ::odm::__private::RefPath::stored_as_dbref(#field_expr, slots, #many)
        };
        return (ret, body);
    }
    let ret = quote_spanned!(target.span()=> ::odm::__private::RefPath<#root, #ty, #target>);
    // The slots by the field's shape, which the derive read from its type.
    let (many, variant) = match f.shape {
        Shape::Plain => (false, quote!(One)),
        Shape::Option(_) => (false, quote!(Optional)),
        Shape::Vec(_) => (true, quote!(Many)),
    };
    let mut body = quote! {
        ::odm::__private::RefPath::of_field(#field_expr, #many, |doc: &mut #root| {
            ::odm::__private::RefSlots::#variant(&mut doc.#name)
        })
    };
    if let Some(inv) = &r.inverse {
        // Through `Field` (a `RefPath` derefs to it), so that an inverse of the wrong kind is
        // reported once, by the inverse check, and not again here.
        let model = syn::parse2::<Ident>(root.clone()).expect("a model's root is its name");
        let field = super::references::inverse_field(&model, target, inv, r.parent);
        body = quote_spanned! {inv.span()=>
            #body.with_inverse(|| {
                let __inverse = #field;
                ::odm::__private::Inverse::of_field(&__inverse)
            })
        };
    }
    (ret, body)
}

fn doc_for(f: &Field<'_>) -> String {
    format!("Typed path to `{}` (stored as `{}`).", f.ident, f.stored)
}

/// The return type and the body of a model's accessor for the stored field `f`.
pub fn model_accessor_parts(cont: &Container<'_>, f: &Field<'_>) -> (TokenStream, TokenStream) {
    let ident = cont.ident;
    accessor_parts_from(cont, f, &quote!(#ident))
}

/// [`model_accessor_parts`] with the path starting at another model, `root` (the base of a
/// kind, for a common field).
pub fn accessor_parts_from(
    cont: &Container<'_>,
    f: &Field<'_>,
    root: &TokenStream,
) -> (TokenStream, TokenStream) {
    let stored = &f.stored;
    // A copy taken through a reference, or a latest-N array, is written by odm only.
    let copied = f
        .denormalize
        .as_ref()
        .is_some_and(|d| d.kind() != crate::model::attr::CopyKind::Summary);
    let mode = if copied {
        quote!(::odm::__private::Copied)
    } else if crate::model::tree::is_tree_field(cont, f) {
        // A tree's parent and ancestors are written by its moves only.
        quote!(::odm::__private::Kept)
    } else if f.stamp.is_some() {
        // A version or timestamp is written by every write of odm, never by hand.
        quote!(::odm::__private::Stamped)
    } else if crate::model::shard::is_fixed_key_field(cont, f) {
        // Writing a shard key field moves the document to another shard.
        quote!(::odm::__private::ShardKeyed)
    } else {
        quote!(::odm::__private::Single)
    };
    accessor_parts(
        f,
        root,
        &mode,
        quote!(::odm::__private::Field::top(#stored)),
    )
}

pub fn model_accessors(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let fns = cont.stored_fields().map(|f| {
        let name = f.ident;
        let vis = f.vis;
        let doc = doc_for(f);
        let (ret, body) = model_accessor_parts(cont, f);
        quote! {
            #[doc = #doc]
            #[inline]
            #vis fn #name() -> #ret {
                #body
            }
        }
    });
    quote! {
        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            #(#fns)*
        }
    }
}

/// The paths struct of an embedded type and its name.
pub fn embed_paths(cont: &Container<'_>) -> (TokenStream, Ident) {
    let ident = cont.ident;
    let paths_ident = format_ident!("{}Paths", cont.ident);
    // A type with an `id` field can summarize the model that `id` references
    // (`#[denormalize]`); the copies of a source are found by the stored `id`.
    let summary = cont
        .stored_fields()
        .find(|f| f.ident.unraw() == "id")
        .map(|id| {
            let ty = id.ty;
            let stored = &id.stored;
            // At the `id` field's type, where "required for `Summary` to implement
            // `SummaryOf<Source>`" (an `id` of the wrong type) points.
            quote_spanned! {ty.span()=>
                impl<__Source> ::odm::__private::SummaryOf<__Source> for #ident
                where
                    #ty: ::odm::__private::SummaryId<__Source>,
                {
                    const ID: &'static str = #stored;
                }
            }
        });
    let root = quote!(__Root);
    let below = quote!(__S);
    let fns = cont.stored_fields().map(|f| {
        let name = f.ident;
        let vis = f.vis;
        let stored = &f.stored;
        let doc = doc_for(f);
        let (ret, body) = accessor_parts(f, &root, &below, quote!(self.field.child(#stored)));
        quote! {
            #[doc = #doc]
            #[inline]
            #vis fn #name(&self) -> #ret {
                #body
            }
        }
    });
    let doc = format!(
        "Typed paths into an embedded `{}`; dereferences to the field that holds it.",
        cont.ident
    );
    // Spanned at the type's name, so "method not found for this struct" (a misspelt field in
    // a path) points at the embedded struct rather than at its derive list.
    let def = quote_spanned! {cont.ident.span()=>
        pub struct #paths_ident<__Root, __W, __M, __S> {
            field: ::odm::__private::Field<__Root, __W, __M>,
            _below: ::odm::__private::PhantomData<fn() -> __S>,
        }
    };
    let tokens = quote! {
        #[doc = #doc]
        #def

        impl<__Root, __W, __M, __S> ::std::fmt::Debug for #paths_ident<__Root, __W, __M, __S> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Debug::fmt(&self.field, f)
            }
        }

        impl<__Root, __W, __M, __S> ::odm::__private::Deref for #paths_ident<__Root, __W, __M, __S> {
            type Target = ::odm::__private::Field<__Root, __W, __M>;
            fn deref(&self) -> &Self::Target {
                &self.field
            }
        }

        impl<__Root, __W, __M, __S> ::std::convert::AsRef<::odm::__private::Field<__Root, __W, __M>> for #paths_ident<__Root, __W, __M, __S> {
            fn as_ref(&self) -> &::odm::__private::Field<__Root, __W, __M> {
                &self.field
            }
        }

        #[allow(dead_code)]
        impl<__Root, __W, __M, __S> #paths_ident<__Root, __W, __M, __S> {
            #(#fns)*
        }

        impl<__Root, __W, __M, __S> ::odm::__private::PathsOf<#ident> for #paths_ident<__Root, __W, __M, __S> {}

        #summary
    };
    (tokens, paths_ident)
}

/// An embedded type can hold summaries: the rule a summary's type is checked by (its own, so
/// that the message speaks of summaries rather than of `#[embed]`).
pub fn summary_type_impl(cont: &Container<'_>, paths_ident: &Ident) -> TokenStream {
    let ident = cont.ident;
    let names = names_consts(cont);
    quote! {
        #[automatically_derived]
        impl ::odm::__private::SummaryType for #ident {
            type Paths<__Root, __W, __M, __S> = #paths_ident<__Root, __W, __M, __S>;
            #names

            fn paths<__Root, __W, __M, __S>(
                field: ::odm::__private::Field<__Root, __W, __M>,
            ) -> #paths_ident<__Root, __W, __M, __S> {
                <#ident as ::odm::__private::Embed>::paths(field)
            }
        }
    }
}

/// `const STORED` of an embedded type (the stored names of its fields, in the order of
/// `FIELDS`), when serde renames any of them; otherwise the trait's default, `FIELDS`.
pub fn stored_const(cont: &Container<'_>) -> TokenStream {
    let renamed = cont
        .stored_fields()
        .any(|f| f.ident.unraw() != f.stored.as_str());
    if !renamed {
        return TokenStream::new();
    }
    let stored = cont.stored_fields().map(|f| &f.stored);
    quote! {
        const STORED: &'static [&'static str] = &[#(#stored),*];
    }
}

/// `const NAME` and `const FIELDS` (the Rust names of the stored fields), which the checks of
/// another type's derive compare names with, at compile time.
pub fn names_consts(cont: &Container<'_>) -> TokenStream {
    let name = cont.ident.unraw().to_string();
    let fields = cont.stored_fields().map(|f| f.ident.unraw().to_string());
    quote! {
        const NAME: &'static str = #name;
        const FIELDS: &'static [&'static str] = &[#(#fields),*];
    }
}
