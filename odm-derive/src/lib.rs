//! Derive macros for `odm`. Use them through the `odm` crate (`odm::Model`, `odm::Embed`),
//! whose documentation describes every attribute.

#![deny(missing_docs)]

mod ctxt;
mod derive;
mod expand;
mod model;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `odm::Model`; see the `odm` crate for the attributes.
#[proc_macro_derive(
    Model,
    attributes(odm, index, embed, reference, parent, denormalize, frequently_updated)
)]
pub fn derive_model(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive::derive(&input, derive::Macro::Model).into()
}

/// Derives `odm::Embed`; see the `odm` crate for the attributes.
#[proc_macro_derive(
    Embed,
    attributes(odm, index, embed, reference, parent, denormalize, frequently_updated)
)]
pub fn derive_embed(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive::derive(&input, derive::Macro::Embed).into()
}

/// Derives `odm::PolyRef`; see the `odm` crate.
#[proc_macro_derive(PolyRef)]
pub fn derive_poly_ref(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive::derive(&input, derive::Macro::PolyRef).into()
}
