//! The stages of every derive, in order: the declaration read (`model::Declaration`, with its
//! `attr` parsers), the rules checked (`model::check`, which returns what they resolve), then
//! the code generated from what was read and resolved (`expand`), around the errors when
//! there are any. Structs, enums of kinds and polymorphic references take the same three
//! stages. The one context of errors (`Ctxt`) is made here, so that every error of a
//! declaration is reported at once, and `expand` never reports one of its own.

use proc_macro2::TokenStream;
use syn::DeriveInput;

use crate::ctxt::Ctxt;
use crate::expand;
pub use crate::model::Macro;
use crate::model::{check, Declaration};

/// The derive `which` on `input`: read, checked, then generated from what was read and what
/// the rules resolved, around the errors when there are any.
pub fn derive(input: &DeriveInput, which: Macro) -> TokenStream {
    let cx = Ctxt::new();
    let declaration = Declaration::from_ast(&cx, input, which);
    let checked = declaration
        .as_ref()
        .map(|decl| check::check(&cx, input, decl));
    let errors = cx.check().err();
    expand::generate(input, which, declaration.as_ref(), checked.as_ref(), errors)
}
