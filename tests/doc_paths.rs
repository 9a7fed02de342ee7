//! Every source path the README, CONTRIBUTING, the benchmarks' README and the guide name
//! exists: a file moved or removed cannot leave the documentation pointing at it.
//!
//! A path is an inline code span or a link target made of path characters with a `/` in it and
//! a file's extension (`ops/insert.rs`, `book/src/models.md`) or a trailing `/` (`expand/`).
//! It may be written from the repository's root, from the document's own folder, or, as the
//! architecture page and CONTRIBUTING do, from the source folder of a crate (`odm/src`,
//! `odm-derive/src`) or another top folder of the repository.

use std::path::{Path, PathBuf};

/// Where a path may be written from, besides the repository's root and the document's folder.
const BASES: [&str; 8] = [
    "odm/src",
    "odm-derive/src",
    "tests",
    "examples",
    "bench",
    "book",
    "book/app",
    "xtask/src",
];

/// Paths that name a file of the reader's own project, not of this repository.
const THE_READERS: [&str; 1] = ["src/main.rs"];

const EXTENSIONS: [&str; 9] = [
    ".rs", ".md", ".toml", ".txt", ".sh", ".yml", ".json", ".stderr", ".mmd",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests live in the workspace")
        .to_path_buf()
}

/// The documents checked, as paths from the root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "bench/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join("book/src"))
        .expect("book/src")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root).expect("under the root").to_path_buf())
        .collect();
    chapters.sort();
    docs.extend(chapters);
    docs
}

/// The inline code spans and link targets of a Markdown text, fenced blocks left out.
fn spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        let mut inside = true;
        for part in parts {
            if inside {
                out.push(part.to_owned());
            }
            inside = !inside;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// The path a span names, if it names one.
fn as_path(span: &str) -> Option<&str> {
    let span = span.trim().split(['#', ':']).next()?;
    let path_chars = span
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    let file_like = EXTENSIONS.iter().any(|x| span.ends_with(x)) || span.ends_with('/');
    (path_chars && file_like && span.contains('/') && !span.starts_with('/')).then_some(span)
}

#[test]
fn every_path_the_documentation_names_exists() {
    let root = root();
    let mut stale = Vec::new();
    for doc in documents(&root) {
        let text = std::fs::read_to_string(root.join(&doc)).expect("a document");
        let folder = doc.parent().unwrap_or(Path::new("")).to_path_buf();
        for span in spans(&text) {
            let Some(path) = as_path(&span) else { continue };
            if THE_READERS.contains(&path) {
                continue;
            }
            let found = root.join(&folder).join(path).exists()
                || root.join(path).exists()
                || BASES.iter().any(|base| root.join(base).join(path).exists());
            if !found {
                stale.push(format!("{}: `{path}`", doc.display()));
            }
        }
    }
    stale.sort();
    stale.dedup();
    assert!(
        stale.is_empty(),
        "the documentation names paths that do not exist:\n  {}",
        stale.join("\n  ")
    );
}

#[test]
fn a_path_is_told_from_other_code() {
    assert_eq!(as_path("ops/insert.rs"), Some("ops/insert.rs"));
    assert_eq!(as_path("expand/"), Some("expand/"));
    assert_eq!(
        as_path("book/src/models.md#embedding"),
        Some("book/src/models.md")
    );
    assert_eq!(as_path("tests/ui/x.rs:12"), Some("tests/ui/x.rs"));
    assert_eq!(as_path("../app/Cargo.toml"), Some("../app/Cargo.toml"));
    assert_eq!(as_path("Book::title()"), None);
    assert_eq!(as_path("https://example.invalid/a.md"), None);
    assert_eq!(as_path("a / b"), None);
    assert_eq!(as_path("cargo test -p odm-tests"), None);
    assert_eq!(as_path("$[e0]"), None);
}
