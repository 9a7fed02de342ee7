//! Matching strings by part: a prefix or a piece of user text, matched literally, and a
//! regular expression the program itself wrote.
//!
//! A user's text never becomes a pattern: [`Field::starts_with`] and [`Field::contains_text`]
//! escape every character a regular expression gives a meaning to (`.*`, `(a+)+$`, `\` and
//! `$` are matched as themselves), and a regular expression is only sent from a [`Pattern`],
//! whose text is a `&'static str`: a constant of the program, not a value read at run time.
//! A prefix is anchored (`^`) and case-sensitive, the one form of `$regex` the server answers
//! from an index on the field, reading only the keys that start with it.

use bson::raw::CString;
use bson::{doc, Bson, Regex};

use crate::path::Field;
use crate::query::{Deferred, Filter};

/// A regular expression written by the program: `Pattern::new(r"^[A-Z]{2}-\d+$")`, with the
/// server's options (`i` without case, `m` multiline, `s` dot matches newlines, `x` extended)
/// added by [`Pattern::options`].
///
/// Its text is a `&'static str` so that no user input becomes a pattern by accident (a pattern
/// the user chose could take the server's CPU for as long as the query's time bound): for
/// text from a user, use [`Field::starts_with`] or [`Field::contains_text`], which match it
/// literally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pattern: &'static str,
    options: &'static str,
}

impl Pattern {
    /// The regular expression `pattern` (PCRE syntax, as the server reads it).
    pub const fn new(pattern: &'static str) -> Self {
        Pattern {
            pattern,
            options: "",
        }
    }

    /// The same pattern with the server's `options` (any of `i`, `m`, `s`, `x`).
    pub const fn options(self, options: &'static str) -> Self {
        Pattern { options, ..self }
    }
}

/// `{path: {$regex: pattern}}` with the server's `options` (kept in the alphabetical order BSON
/// requires): the one way odm sends a pattern. A pattern holding a NUL, or an option the
/// server does not know, is the filter's error when it is sent, naming the field.
fn regex<Root>(path: &str, pattern: &str, options: &str) -> Filter<Root> {
    let mut sorted: Vec<char> = options.chars().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let what = || format!("pattern for `{path}`");
    if let Some(bad) = sorted.iter().find(|c| !"imsx".contains(**c)) {
        let message = format!("`{bad}` is not an option of the server's: use `i`, `m`, `s`, `x`");
        return Filter::from_parts(bson::Document::new(), Some(Deferred::new(what(), message)));
    }
    let options: String = sorted.into_iter().collect();
    match (CString::try_from(pattern), CString::try_from(options)) {
        (Ok(pattern), Ok(options)) => {
            let regex = Bson::RegularExpression(Regex { pattern, options });
            Filter::from_parts(doc! { path: { "$regex": regex } }, None)
        }
        (Err(e), _) | (_, Err(e)) => Filter::from_parts(
            bson::Document::new(),
            Some(Deferred::new(what(), e.to_string())),
        ),
    }
}

/// `text` with every character a regular expression reads as more than itself escaped, so that
/// the pattern matches `text` exactly where it appears; a NUL (which a BSON pattern cannot
/// hold) as `\x00`.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' | '^' | '$' | '.' | '|' | '?' | '*' | '+' | '(' | ')' | '[' | ']' | '{' | '}'
            | '#' | '-' | '/' => {
                out.push('\\');
                out.push(c);
            }
            '\0' => out.push_str("\\x00"),
            // `x` mode aside, whitespace is itself; escaped, it stays so in every mode.
            c if c.is_whitespace() => {
                out.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// The matches of a string field (`String`, or `Option<String>`, whose `None` matches none).
macro_rules! string_matches {
    ($ty:ty) => {
        impl<Root, M> Field<Root, $ty, M> {
            /// Starts with `prefix`, matched literally and with case (`{path: {$regex:
            /// "^escaped"}}`): the form an index on the field serves, reading only the keys
            /// with that prefix. An empty prefix matches every string.
            pub fn starts_with(&self, prefix: &str) -> Filter<Root> {
                regex(self.path(), &format!("^{}", escape(prefix)), "")
            }

            /// Holds `text` somewhere, matched literally (`{path: {$regex: "escaped"}}`); with
            /// `ignore_case`, whatever the case of its letters (the `i` option). An index
            /// cannot narrow it: every key of the field, or every document, is read.
            pub fn contains_text(&self, text: &str, ignore_case: bool) -> Filter<Root> {
                let options = if ignore_case { "i" } else { "" };
                regex(self.path(), &escape(text), options)
            }

            /// Matches the program's regular expression `pattern` (`{path: {$regex: ...}}`).
            pub fn matches(&self, pattern: &Pattern) -> Filter<Root> {
                regex(self.path(), pattern.pattern, pattern.options)
            }
        }
    };
}

string_matches!(String);
string_matches!(Option<String>);

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn every_character_with_a_meaning_is_escaped() {
        assert_eq!(escape(".*"), r"\.\*");
        assert_eq!(escape("(a+)+$"), r"\(a\+\)\+\$");
        assert_eq!(escape(r"a\b"), r"a\\b");
        assert_eq!(escape("a b"), r"a\x{20}b");
        assert_eq!(escape("x\0y"), r"x\x00y");
        assert_eq!(escape("café"), "café");
    }
}
