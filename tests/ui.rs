//! Compile-fail tests: each file under `ui/<category>/` is one misuse of the derives or of the
//! typed paths, and its `.stderr` is the error the user sees. Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p odm-tests --test ui`, then read every changed file.
//! `UI_GLOB=ui/index/*.rs` runs one category only.

use std::path::{Path, PathBuf};

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail(std::env::var("UI_GLOB").as_deref().unwrap_or("ui/**/*.rs"));
}

/// No committed message shows what the user never wrote and cannot name: the generated code's
/// hidden module (`__private`) and every item declared in it, the generated code's `__` names,
/// and the types the derives generate (`PublisherPaths`, `PartFields`). The rules the messages
/// name instead live in the documented `odm::rules`.
#[test]
fn messages_show_no_internal_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let private = private_item_names(&root.join("../odm/src/lib.rs"));
    assert!(private.len() >= 3, "parsed {private:?}");
    let mut leaks = Vec::new();
    for file in stderr_files(&root.join("ui")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for word in words(line) {
                let generated = ["Fields", "Paths"].iter().any(|suffix| {
                    word.len() > suffix.len()
                        && word.ends_with(suffix)
                        && word.starts_with(|c: char| c.is_ascii_uppercase())
                });
                if word.starts_with("__") || generated || private.contains(&word.to_owned()) {
                    leaks.push(format!("{}:{}: `{word}` in {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "internal names in messages:\n{}",
        leaks.join("\n")
    );
}

/// The names of the items declared in `pub mod __private { ... }` (re-exports aside).
fn private_item_names(lib: &Path) -> Vec<String> {
    let source = std::fs::read_to_string(lib).unwrap();
    let start = source.find("pub mod __private").expect("the hidden module");
    let mut names = vec!["__private".to_owned()];
    for line in source[start..].lines().skip(1) {
        if line.starts_with('}') {
            break;
        }
        // Items of the module itself, not of its impls.
        let Some(line) = line.strip_prefix("    ").filter(|l| !l.starts_with(' ')) else {
            continue;
        };
        for kind in [
            "pub trait ",
            "pub fn ",
            "pub struct ",
            "pub enum ",
            "pub const ",
        ] {
            if let Some(rest) = line.strip_prefix(kind) {
                names.push(words(rest).next().unwrap_or_default().to_owned());
            }
        }
    }
    names
}

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

fn stderr_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(stderr_files(&path));
        } else if path.extension().is_some_and(|e| e == "stderr") {
            out.push(path);
        }
    }
    out.sort();
    out
}
