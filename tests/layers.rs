//! The runtime's modules form layers: what the derive emits (`schema`) at the bottom, the
//! behaviour above it, and no module reaching back, through others, to one that reaches it.
//! This test reads the sources of `odm/src`, finds every `crate::...` and `super::...` path a
//! module names (outside comments and unit tests), and fails on any cycle, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read odm/src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `denormalize/cascade.rs` -> `denormalize::cascade`; `lib.rs` -> `crate`.
fn module_of(root: &Path, file: &Path) -> String {
    let rel = file
        .strip_prefix(root)
        .expect("under odm/src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    if parts.is_empty() {
        "crate".to_owned()
    } else {
        parts.join("::")
    }
}

/// The source without comment lines and without the unit tests at the end of a file.
fn code(source: &str) -> String {
    let source = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    source
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b` / `super::x` path in `code`, as its segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            let segments: Vec<String> = code[at..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            // `use crate::{a, b::C}`: each item of the group.
            if code[end..].starts_with('{') {
                let group = &code[end + 1..end + code[end..].find('}').unwrap_or(1)];
                for item in group.split(',') {
                    let mut path = segments.clone();
                    path.extend(item.trim().split("::").map(str::to_owned));
                    out.push(path);
                }
            } else {
                out.push(segments);
            }
        }
    }
    out
}

/// The module a path names: the longest known module prefix, or what the crate root
/// re-exports (`crate::Odm` is `handle`).
fn target(
    current: &str,
    path: &[String],
    modules: &BTreeSet<String>,
    root_items: &BTreeMap<String, String>,
) -> Option<String> {
    let (mut base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super") => {
            let mut base: Vec<String> = current.split("::").map(str::to_owned).collect();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => return None,
    };
    if base.is_empty() {
        if let Some(module) = rest.first().and_then(|item| root_items.get(item)) {
            return Some(module.clone());
        }
    }
    let mut found = None;
    for segment in rest {
        base.push(segment.clone());
        let name = base.join("::");
        if modules.contains(&name) {
            found = Some(name);
        }
    }
    found
}

#[test]
fn no_runtime_module_reaches_back_to_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../odm/src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let code_of: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            let source = std::fs::read_to_string(f).expect("read source");
            (module_of(&root, f), code(&source))
        })
        .collect();
    let modules: BTreeSet<String> = code_of.keys().cloned().collect();
    assert!(modules.contains("schema") && modules.contains("denormalize::fill"));

    // `pub use module::{A, B};` at the crate root.
    let mut root_items = BTreeMap::new();
    for line in code_of["crate"].lines() {
        let Some(rest) = line.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        if !modules.contains(module) {
            continue;
        }
        for item in items
            .trim_end_matches(';')
            .trim_matches(['{', '}'])
            .split(',')
        {
            root_items.insert(item.trim().to_owned(), module.to_owned());
        }
    }

    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &code_of {
        for path in paths(code) {
            let Some(to) = target(module, &path, &modules, &root_items) else {
                continue;
            };
            // A module may use its own descendants and ancestors (re-exports, `super::x`).
            let related = to == *module
                || to == "crate"
                || module.starts_with(&format!("{to}::"))
                || to.starts_with(&format!("{module}::"));
            if !related {
                edges.entry(module.clone()).or_default().insert(to);
            }
        }
    }

    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == m) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(m.to_owned());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for module in &modules {
        if let Some(cycle) = visit(module, &edges, &mut Vec::new(), &mut done) {
            panic!(
                "odm/src modules import each other in a loop: {}",
                cycle.join(" -> ")
            );
        }
    }
    assert!(
        edges
            .get("denormalize::fill")
            .is_some_and(|e| !e.is_empty()),
        "the test sees the imports: {edges:?}"
    );
}
