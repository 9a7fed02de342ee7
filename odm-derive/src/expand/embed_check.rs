//! A field whose type derives `Embed` but lacks `#[embed]` would get no typed paths below it,
//! and the mistake would surface far away, at the first `Book::publisher().name()`. The
//! derive of one type cannot see another type's derives, so the generated code asks the
//! compiler: for each field that could be an embedded document, a method call that resolves
//! (autoref specialization) to a method with an unsatisfiable bound when the type implements
//! `Embed`, and to a harmless one otherwise. The error is spanned at the field's type.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

use crate::model::types::embed_type_problem_of;
use crate::model::{Container, Field};

pub fn embed_attribute_checks(cont: &Container<'_>) -> TokenStream {
    let checks = cont.stored_fields().filter(|f| needs_check(f)).map(|f| {
        let inner = f.inner_ty();
        quote_spanned! {inner.span()=>
            const _: fn() = || {
                #[allow(unused_imports)]
                use ::odm::__private::{EmbedNeedsAttributeProbe as _, NotEmbedProbe as _};
                (&::odm::__private::EmbedProbe::<#inner>::NEW).probe();
            };
        }
    });
    quote::quote!(#(#checks)*)
}

/// A field without `#[embed]` whose type the syntax does not rule out as an embedded
/// document: not the id, not a reference or a copy (their rules name their own types).
fn needs_check(f: &Field<'_>) -> bool {
    f.embed.is_none()
        && f.reference.is_none()
        && f.denormalize.is_none()
        && !f.is_id()
        && f.ref_target().is_none()
        && embed_type_problem_of(f.inner_ty()).is_none()
}
