//! Error accumulation: every attribute error is collected and reported at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// Collects errors while the input is parsed and checked. Must be consumed with
/// [`Ctxt::check`]; dropping it unchecked is a bug in the macro and panics.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error at `span`.
    pub fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records a `syn` error (from attribute parsing).
    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// Consumes the context: all errors combined into one, or `Ok`.
    pub fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut iter = errors.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in iter {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("odm-derive: Ctxt dropped without being checked");
        }
    }
}
