//! The small parsers every attribute uses (a string value, a key's name, an unknown key's
//! value skipped) and the suggestion of a near name: a leaf that the attribute parsers and the
//! checks of each feature use without reaching each other.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{Lit, LitStr, Token};

use crate::ctxt::Ctxt;

/// Skips the value of a key we report as unknown, so parsing can go on after it.
pub fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

pub fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string().replace(' ', "")
        })
}

/// Parses `= "string"`, reporting a value of another kind at the value.
pub fn string_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
) -> syn::Result<Option<LitStr>> {
    let lit: Lit = meta.value()?.parse()?;
    match lit {
        Lit::Str(s) => Ok(Some(s)),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected a string literal: `{key} = \"{example}\"`"),
            );
            Ok(None)
        }
    }
}

/// Whether `name` can name a field: an identifier, a keyword only as a raw identifier
/// (`type` for `r#type`).
pub fn is_field_name(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(&format!("r#{name}")).is_ok()
}

/// The candidate nearest to `name` by edit distance, when near enough to be a misspelling
/// (at most a third of the name's letters off, rounded up).
pub fn closest<'c>(name: &str, candidates: &'c [String]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= name.chars().count().div_ceil(3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.as_str())
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
