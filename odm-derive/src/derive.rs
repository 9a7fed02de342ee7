//! The stages of each derive, in order: the attributes parsed into the model (`model`, its
//! `attr` parsers), the rules checked (`model::check`, which returns what they resolve), then
//! the code generated from the resolved model (`expand`), around the errors when there are
//! any. The one context of errors (`Ctxt`) is made here, so that every error of a declaration
//! is reported at once, and `expand` never reports one of its own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ctxt::Ctxt;
use crate::expand;
use crate::model::{check, Container, Derive};

/// `#[derive(Model)]`: a struct, or an enum of kinds.
pub fn model(input: &DeriveInput) -> TokenStream {
    if let syn::Data::Enum(_) = &input.data {
        return enum_of_kinds(input);
    }
    structure(input, Derive::Model)
}

/// `#[derive(Embed)]`.
pub fn embed(input: &DeriveInput) -> TokenStream {
    structure(input, Derive::Embed)
}

/// `#[derive(PolyRef)]`.
pub fn poly_ref(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let targets = crate::model::poly::parse(input, &cx);
    let errors = cx.check().err().map(|e| e.to_compile_error());
    expand::poly::expand(input, targets.as_deref(), errors)
}

fn structure(input: &DeriveInput, derive: Derive) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input, derive);
    let checked = cont.as_ref().map(|cont| check::check(&cx, cont));
    match (cx.check(), &cont, &checked) {
        (Ok(()), Some(cont), Some(checked)) => expand::generate(cont, checked, input, derive),
        (Err(errors), cont, _) => {
            let errors = errors.to_compile_error();
            let around = expand::around_errors(cont.as_ref(), input, derive);
            quote! { #errors #around }
        }
        (Ok(()), _, _) => unreachable!("a container that failed to parse always records an error"),
    }
}

fn enum_of_kinds(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let attrs = crate::model::kinds::attributes(&cx, input);
    let resolved = crate::model::check::check_enum_attributes(&cx, input, &attrs).then(|| {
        let resolved = crate::model::kinds::resolve(&cx, input, attrs);
        crate::model::check::check_kinds(&cx, input, &resolved);
        resolved
    });
    let errors = cx.check().err().map(|e| e.to_compile_error());
    match resolved {
        Some(resolved) => expand::kinds::model_enum(input, &resolved, errors),
        None => errors.unwrap_or_default(),
    }
}
