//! The runtime's modules form layers: what the derive emits (`catalog`) at the bottom, the
//! behaviour above it, and no module reaching back, through others, to one that reaches it.
//! This test reads the sources of `odm/src`, finds every `crate::...` and `super::...` path a
//! module names (outside comments and unit tests), and fails on any cycle, naming it; and on
//! any import that goes up the layers the book's architecture page states, but those listed
//! (which may go, never come back). The derive's modules (`odm-derive/src`) may not import
//! each other in a loop either.
//!
//! And the sizes: no file of `odm/src` or `odm-derive/src` past 600 lines, no function past
//! 100, but those listed with the size they had, which may shrink and never grow.

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

/// The modules of `odm/src` and, for each, the other modules it names (its own ancestors and
/// descendants aside).
fn import_edges() -> (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>) {
    let (modules, edges) = import_edges_in("odm/src");
    assert!(modules.contains("catalog") && modules.contains("denormalize::fill"));
    (modules, edges)
}

/// The modules of the crate whose sources are in `dir` (from the workspace root) and, for
/// each, the other modules it names.
fn import_edges_in(dir: &str) -> (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
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
    (modules, edges)
}

#[test]
fn no_runtime_module_reaches_back_to_itself() {
    let (modules, edges) = import_edges();
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

/// The modules that can reach themselves through the imports of `edges`.
fn in_loops(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = edges
            .get(from)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        while let Some(m) = todo.pop() {
            if seen.insert(m.to_owned()) {
                todo.extend(edges.get(m).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    edges
        .keys()
        .filter(|m| reaches(m).contains(*m))
        .cloned()
        .collect()
}

/// The derive's modules import each other without loops: the attribute parsers
/// (`model::attr`) use the small parsers of `model::syntax`, the checks (`model::check`) read
/// what the parsers made, and neither reaches back.
#[test]
fn the_derive_has_no_import_loop() {
    let (modules, edges) = import_edges_in("odm-derive/src");
    assert!(modules.contains("model::check") && modules.contains("model::syntax"));
    assert!(
        edges
            .get("model::check::bucket")
            .is_some_and(|e| e.contains("model::attr")),
        "the test sees the imports: {edges:?}"
    );
    let found = in_loops(&edges);
    assert!(
        found.is_empty(),
        "odm-derive modules that import each other in a loop: {found:?}"
    );
}

/// The derive resolves, then generates: `derive.rs` makes the one context of errors, the
/// model parses and `model::check` runs the rules (returning what they resolve), and no module
/// of `expand/` reports an error or runs a rule.
#[test]
fn the_derive_generates_only_from_what_it_resolved() {
    let (modules, edges) = import_edges_in("odm-derive/src");
    assert!(modules.contains("derive") && modules.contains("expand::bucket"));
    let mut found = Vec::new();
    for (from, tos) in edges.iter().filter(|(m, _)| m.starts_with("expand")) {
        for to in tos {
            if to == "ctxt" || to.starts_with("model::check") {
                found.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "code generation that reports errors or runs rules itself: {found:?}"
    );
    assert!(
        edges
            .get("derive")
            .is_some_and(|e| e.contains("ctxt") && e.contains("model::check")),
        "the test sees the stages: {:?}",
        edges.get("derive")
    );
}

/// The layers of `odm/src`, from the bottom (see the architecture page of the book): a module
/// uses what is in its layer or below.
const LAYERS: &[(usize, &[&str])] = &[
    (
        1,
        &[
            "path",
            "operators",
            "pattern",
            "query",
            "update",
            "positional",
            "array_filters",
            "literal",
            "key_check",
            "keyed",
            "error",
            "refusal",
            "document",
        ],
    ),
    (2, &["batch", "monitor", "trace", "progress"]),
    (3, &["model", "catalog", "rules", "kind", "reference"]),
    (
        4,
        &["engine", "decode", "sweep", "transaction", "contention"],
    ),
    (
        5,
        &[
            "denormalize",
            "bounds",
            "relations",
            "populate",
            "tree",
            "shard",
            "subset",
            "bucket",
            "counters",
            "aggregate",
            "index",
            "validator",
            "migrations",
            "versioning",
            "reference::dbref",
            "soft_delete",
            "geo",
            "search",
            "diagram",
        ],
    ),
    (
        6,
        &["pipeline", "ops", "paging", "handle", "follower", "console"],
    ),
    (7, &["testing"]),
];

/// The imports that still go up a layer, `(from, to)` by top-level module: they may go (then
/// remove the line), never come back, and no other may join them.
const UPWARD: &[(&str, &str)] = &[];

#[test]
fn no_import_goes_up_a_layer() {
    let (modules, edges) = import_edges();
    // The layer of a module is its own entry's, else its nearest ancestor's.
    let placed = |module: &str| {
        let mut name = module;
        loop {
            if let Some((layer, _)) = LAYERS.iter().find(|(_, names)| names.contains(&name)) {
                return Some((*layer, name.to_owned()));
            }
            name = name.rsplit_once("::")?.0;
        }
    };
    let layer_of = |module: &str| placed(module).map(|(layer, _)| layer);
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| *m != "crate" && layer_of(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "give these a layer in LAYERS: {unplaced:?}"
    );
    let mut upward = BTreeSet::new();
    for (from, tos) in &edges {
        for to in tos {
            if let (Some((a, from)), Some((b, to))) = (placed(from), placed(to)) {
                if b > a {
                    upward.insert((from, to));
                }
            }
        }
    }
    ratchet(&upward, UPWARD, "imports that go up a layer", "UPWARD");
}

/// Fails unless `found` is exactly the pairs of `listed` (the list named `name`): a pair found
/// and not listed is new, which may not be; one listed and not found is gone, and its line
/// goes too.
fn ratchet(found: &BTreeSet<(String, String)>, listed: &[(&str, &str)], what: &str, name: &str) {
    let listed: BTreeSet<(String, String)> = listed
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let new: Vec<_> = found.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "{what}, not listed in {name}: {new:?}; listed but gone (remove them): {gone:?}"
    );
}

/// The features (layer 5) that the operation files of `ops/` still call by name, `(file,
/// feature)`; none may join. The writes name none: they offer their calls to the maintainers
/// of `pipeline.rs`. The reads name none either: a read builder holds what it loads after its
/// documents as the engine's `Loads`, given by the feature (populate) through what the engine
/// defines (`engine::IntoPopulate`, which populate's paths implement).
const OPS_NAME: &[(&str, &str)] = &[];

#[test]
fn the_operations_name_no_feature_but_those_listed() {
    let (_, edges) = import_edges();
    let features: BTreeSet<&str> = LAYERS
        .iter()
        .find(|(layer, _)| *layer == 5)
        .map(|(_, names)| names.iter().copied().collect())
        .unwrap_or_default();
    let mut named = BTreeSet::new();
    for (from, tos) in edges.iter().filter(|(m, _)| m.starts_with("ops::")) {
        for to in tos {
            let top = to.split("::").next().unwrap_or(to);
            if features.contains(top) {
                named.insert((from.clone(), top.to_owned()));
            }
        }
    }
    ratchet(&named, OPS_NAME, "operations naming a feature", "OPS_NAME");
}

/// Which feature (layer 5) uses which, `(user, used, why)`: the catalog and the engine serve
/// every feature, and a feature uses another only as listed here, never both ways. A pair may
/// go (then remove its line); a new one is added with its reason, and never the reverse of one
/// listed.
const FEATURE_USES: &[(&str, &str, &str)] = &[
    (
        "aggregate",
        "populate",
        "a `$lookup` stage follows a typed reference path",
    ),
    (
        "index",
        "counters",
        "sync_indexes creates a time series' collection",
    ),
    (
        "index",
        "reference::dbref",
        "explain matches a polymorphic reference's shape",
    ),
    (
        "index",
        "shard",
        "sync_indexes shards the collections after their key's index",
    ),
    (
        "populate",
        "reference::dbref",
        "polymorphic references are populated by their DBRefs",
    ),
    (
        "relations",
        "denormalize",
        "a delete or a reassign keeps the copies and latest-N arrays it touches; the two-way sweep",
    ),
    (
        "relations",
        "populate",
        "reassign and verify_inverse take typed reference paths",
    ),
    (
        "relations",
        "reference::dbref",
        "delete rules find the holders of polymorphic references",
    ),
    (
        "shard",
        "denormalize",
        "the routing report lists the cascades and their worker's intents",
    ),
    (
        "shard",
        "relations",
        "the routing report lists the delete rules' writes",
    ),
    (
        "shard",
        "soft_delete",
        "the routing report lists the holders a soft delete marks",
    ),
    (
        "tree",
        "relations",
        "a node's delete runs the delete rules of the references into it",
    ),
];

#[test]
fn features_use_each_other_only_as_listed_and_never_both_ways() {
    let (_, edges) = import_edges();
    let features: Vec<&str> = LAYERS
        .iter()
        .find(|(layer, _)| *layer == 5)
        .map(|(_, names)| names.to_vec())
        .unwrap_or_default();
    // The feature a module belongs to: the longest feature name it is or is under.
    let feature_of = |module: &str| {
        features
            .iter()
            .filter(|f| module == **f || module.starts_with(&format!("{f}::")))
            .max_by_key(|f| f.len())
            .map(|f| (*f).to_owned())
    };
    let mut found = BTreeSet::new();
    for (from, tos) in &edges {
        let Some(a) = feature_of(from) else { continue };
        for to in tos {
            if let Some(b) = feature_of(to) {
                if a != b {
                    found.insert((a.clone(), b));
                }
            }
        }
    }
    let both: Vec<_> = found
        .iter()
        .filter(|(a, b)| a < b && found.contains(&(b.clone(), a.clone())))
        .collect();
    assert!(
        both.is_empty(),
        "features that use each other both ways: {both:?}"
    );
    let listed: Vec<(&str, &str)> = FEATURE_USES.iter().map(|(a, b, _)| (*a, *b)).collect();
    assert!(FEATURE_USES.iter().all(|(_, _, why)| !why.is_empty()));
    ratchet(&found, &listed, "a feature using another", "FEATURE_USES");
    eprintln!("{} feature-to-feature uses, none both ways", found.len());
}

// Sizes.

/// Files past 600 lines and functions past 100, with the size each had when this test was
/// written: they may shrink (then lower the figure), never grow, and no other may join them.
/// Data tables (a function that is one list) are not exempt: none is this long.
const TOO_LONG: &[(&str, usize)] = &[];

const MAX_FILE_LINES: usize = 600;
const MAX_FUNCTION_LINES: usize = 100;

/// The functions of `source` and their length in lines, from the `fn` line to the brace that
/// closes the body at the same indentation (a signature ending in `;` has no body).
fn functions(source: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let after_vis = trimmed
            .strip_prefix("pub(crate) ")
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .or_else(|| trimmed.strip_prefix("pub "))
            .unwrap_or(trimmed);
        let mut after_kw = after_vis;
        for keyword in ["const ", "async ", "unsafe "] {
            after_kw = after_kw.strip_prefix(keyword).unwrap_or(after_kw);
        }
        let Some(rest) = after_kw.strip_prefix("fn ") else {
            i += 1;
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut open = i;
        while open < lines.len()
            && !lines[open].trim_end().ends_with('{')
            && !lines[open].trim_end().ends_with(';')
        {
            open += 1;
        }
        if open >= lines.len() || lines[open].trim_end().ends_with(';') {
            i = open + 1;
            continue;
        }
        let close = format!("{indent}}}");
        let mut end = open + 1;
        while end < lines.len() && lines[end].trim_end() != close {
            end += 1;
        }
        out.push((name, end - i + 1));
        i = open + 1;
    }
    out
}

#[test]
fn no_file_or_function_grows_past_its_size() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["odm/src", "odm-derive/src"] {
        sources(&workspace.join(krate), &mut files);
    }
    let known: BTreeMap<&str, usize> = TOO_LONG.iter().copied().collect();
    let mut over = Vec::new();
    let mut seen = BTreeSet::new();
    let (mut long_files, mut long_functions) = (0, 0);
    for file in &files {
        let name = file
            .strip_prefix(&workspace)
            .expect("in the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        let source = std::fs::read_to_string(file).expect("read source");
        let mut check = |what: String, size: usize, limit: usize| {
            if size <= limit {
                return false;
            }
            match known.get(what.as_str()) {
                Some(&recorded) if size <= recorded => {}
                Some(&recorded) => over.push(format!("{what}: {size} lines, was {recorded}")),
                None => over.push(format!("{what}: {size} lines, the limit is {limit}")),
            }
            seen.insert(what);
            true
        };
        long_files += usize::from(check(name.clone(), source.lines().count(), MAX_FILE_LINES));
        for (function, size) in functions(&source) {
            long_functions += usize::from(check(
                format!("{name}::{function}"),
                size,
                MAX_FUNCTION_LINES,
            ));
        }
    }
    assert!(
        over.is_empty(),
        "split these by job before they grow further:\n{}",
        over.join("\n")
    );
    let shrunk: Vec<&&str> = known.keys().filter(|k| !seen.contains(**k)).collect();
    assert!(
        shrunk.is_empty(),
        "now within the limits: take them out of TOO_LONG: {shrunk:?}"
    );
    eprintln!("{long_files} files past {MAX_FILE_LINES} lines, {long_functions} functions past {MAX_FUNCTION_LINES}");
}

/// One module file style: a module with submodules is a folder with a `mod.rs`, never a file
/// `x.rs` beside a folder `x/`.
#[test]
fn one_module_file_style() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut mixed = Vec::new();
    for dir in ["odm/src", "odm-derive/src"] {
        let mut files = Vec::new();
        sources(&root.join(dir), &mut files);
        for file in files {
            if file.with_extension("").is_dir() {
                mixed.push(file.display().to_string());
            }
        }
    }
    assert!(
        mixed.is_empty(),
        "files beside a folder of their submodules (move each to the folder's mod.rs): {mixed:?}"
    );
}

/// One public path per item: the crate root re-exports only from private modules (a public
/// module's items are reached through it), besides the prelude and the generated code's
/// hidden module.
#[test]
fn one_public_path_per_item() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../odm/src/lib.rs");
    let lib = std::fs::read_to_string(root).expect("read lib.rs");
    let public: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').trim_end_matches(" {"))
        .collect();
    let twice: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub use "))
        .filter(|l| {
            let module = l.split("::").next().unwrap_or("");
            public.contains(module)
        })
        .collect();
    assert!(
        twice.is_empty(),
        "items re-exported at the root from a public module, so reachable by two paths: {twice:?}"
    );
}

/// The driver's writes a module outside `engine/` still sends itself, `(module, call)`, each
/// with its reason; none may join. Every other write of the ODM's, for the user or for itself,
/// is sent by the engine: the user's through the maintainers (`pipeline`), the ODM's own as an
/// `engine::Own` (one write, several as statements, or one that returns what it found), which
/// the maintainers of the model written prepare first.
const RAW_WRITES: &[(&str, &str)] = &[
    // A user's `find_one_and_update` of a source with copies cascaded in the background, in
    // the transaction that records its intent: the user's options (sort, hint, collation,
    // what is returned) go as the user gave them.
    ("denormalize::background::record", "find_one_and_update"),
];

#[test]
fn the_engine_sends_every_write_but_those_listed() {
    const CALLS: &[&str] = &[
        "insert_one",
        "insert_many",
        "update_one",
        "update_many",
        "replace_one",
        "delete_one",
        "delete_many",
        "find_one_and_update",
        "find_one_and_replace",
        "find_one_and_delete",
        "bulk_write",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../odm/src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found = BTreeSet::new();
    for file in &files {
        let module = module_of(&root, file);
        if module == "engine" || module.starts_with("engine::") || module.starts_with("testing") {
            continue;
        }
        let code = code(&std::fs::read_to_string(file).expect("read"));
        // A driver call is a method call on a collection: `.update_one(` after a line break or
        // a name (the ODM's own `odm.update_one(..)` goes through the maintainers).
        let mut previous = "";
        for line in code.lines() {
            let line = line.trim_start();
            for call in CALLS {
                let method = format!(".{call}(");
                let Some(at) = line.find(&method) else {
                    continue;
                };
                // What the call is on: the line's start, or the line before (a chain).
                let before = match &line[..at] {
                    "" => previous.trim_end(),
                    before => before,
                };
                let on_odm = before.ends_with("odm") || before.ends_with("self");
                if !on_odm {
                    found.insert((module.clone(), (*call).to_owned()));
                }
            }
            if !line.is_empty() {
                previous = line;
            }
        }
        // And the raw `update`/`delete`/`insert` commands (`run_command`).
        for command in ["\"update\": ", "\"delete\": ", "\"insert\": "] {
            // An `explain` of a write runs nothing.
            let runs = code.contains("run_command") && !code.contains("\"explain\"");
            if code.contains(command) && runs {
                found.insert((
                    module.clone(),
                    command.trim_matches([' ', ':', '"']).to_owned(),
                ));
            }
        }
    }
    ratchet(
        &found,
        RAW_WRITES,
        "driver writes sent outside the engine",
        "RAW_WRITES",
    );
}
