//! The guide's claims that can be checked mechanically: its table of errors lists exactly the
//! variants of `odm::Error`.

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The variants of `pub enum Error`, from its source.
fn error_variants() -> BTreeSet<String> {
    let source = read("odm/src/error/mod.rs");
    let body = source
        .split_once("pub enum Error {")
        .and_then(|(_, rest)| rest.split_once("\n}\n"))
        .map(|(body, _)| body)
        .expect("odm/src/error/mod.rs declares `pub enum Error`");
    body.lines()
        .filter_map(|line| line.strip_prefix("    "))
        .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|line| {
            line.split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// The variants named in the first column of the errors chapter's table.
fn documented_variants() -> BTreeSet<String> {
    read("book/src/errors.md")
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|cell| {
            cell.split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .filter(|name| name.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

#[test]
fn the_errors_chapter_lists_every_variant_of_error() {
    let variants = error_variants();
    assert!(variants.len() > 10, "parsed {variants:?}");
    let documented = documented_variants();
    let missing: Vec<_> = variants.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&variants).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "book/src/errors.md: variants missing from the table {missing:?}, rows naming no variant {stale:?}"
    );
}
