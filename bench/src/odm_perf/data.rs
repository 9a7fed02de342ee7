//! The datasets: `small_doc.json`, `large_doc.json` and `large_doc_nested.json`.
//!
//! The repository holds datasets of the specification's shapes (field names, types, string
//! lengths and integer ranges as in its own files, values drawn by [`generate`]), since the
//! specification's files are not under this project's licence. `ODM_PERF_DATA=<dir>` runs the
//! benchmark on another copy of the three files, the specification's own for instance; a file
//! holding a field the specification's model does not have is refused, naming the field, since
//! the task sizes are the files' sizes.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::Lcg;

/// One dataset: its document and its size in bytes (the file's, as the specification sizes
/// tasks).
#[derive(Debug, Clone)]
pub struct Dataset<T> {
    /// The document, with a fresh `_id`.
    pub doc: T,
    /// The file's size in bytes.
    pub bytes: u64,
    /// Where it was read.
    pub path: PathBuf,
}

/// The directory of the datasets: `ODM_PERF_DATA`, else the repository's `bench/data`.
pub fn dir() -> PathBuf {
    match std::env::var_os("ODM_PERF_DATA") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("data"),
    }
}

/// Reads `name` from `dir` into `T`, refusing fields `T` does not hold.
pub fn load<T: DeserializeOwned + Serialize>(dir: &Path, name: &str) -> Result<Dataset<T>, String> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("{}: {e}", path.display()))?;
    let back = serde_json::to_value(&doc).map_err(|e| e.to_string())?;
    let mut extra = Vec::new();
    unknown_fields(&value, &back, "", &mut extra);
    if !extra.is_empty() {
        return Err(format!(
            "{}: {} not in the specification's model; the task sizes are the file's size, so the file must hold the model's fields only",
            path.display(),
            extra.join(", ")
        ));
    }
    Ok(Dataset {
        doc,
        bytes: text.len() as u64,
        path,
    })
}

fn unknown_fields(file: &Value, model: &Value, at: &str, out: &mut Vec<String>) {
    match (file, model) {
        (Value::Object(f), Value::Object(m)) => {
            for (k, v) in f {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match m.get(k) {
                    None => out.push(format!("`{path}`")),
                    Some(mv) => unknown_fields(v, mv, &path, out),
                }
            }
        }
        (Value::Array(f), Value::Array(m)) => {
            for (i, (fv, mv)) in f.iter().zip(m).enumerate() {
                unknown_fields(fv, mv, &format!("{at}.{i}"), out);
            }
        }
        _ => {}
    }
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789$#@*&";

/// A JSON value written in the order it was built (the field order of the models).
enum Json {
    Str(String),
    Int(u64),
    Obj(Vec<(String, Json)>),
    Arr(Vec<Json>),
}

impl Json {
    /// `indent` spaces per level, or one line when `None`.
    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        let (nl, pad, inner, sep) = match indent {
            Some(n) => (
                "\n",
                " ".repeat(n * level),
                " ".repeat(n * (level + 1)),
                ": ",
            ),
            None => ("", String::new(), String::new(), ":"),
        };
        match self {
            // The alphabet needs no escaping.
            Json::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(if i == 0 { nl } else { "," });
                    if i > 0 {
                        out.push_str(nl);
                    }
                    out.push_str(&inner);
                    out.push('"');
                    out.push_str(k);
                    out.push('"');
                    out.push_str(sep);
                    v.write(out, indent, level + 1);
                }
                out.push_str(nl);
                out.push_str(&pad);
                out.push('}');
            }
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    out.push_str(if i == 0 { nl } else { "," });
                    if i > 0 {
                        out.push_str(nl);
                    }
                    out.push_str(&inner);
                    v.write(out, indent, level + 1);
                }
                out.push_str(nl);
                out.push_str(&pad);
                out.push(']');
            }
        }
    }
}

fn word(rng: &mut Lcg, len: usize) -> Json {
    Json::Str(
        (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char)
            .collect(),
    )
}

fn fields(
    rng: &mut Lcg,
    range: std::ops::RangeInclusive<usize>,
    value: impl Fn(&mut Lcg) -> Json,
) -> Vec<(String, Json)> {
    range.map(|i| (format!("field{i}"), value(rng))).collect()
}

/// Writes the three datasets into `dir`: the specification's shapes (small: seven strings of
/// 8 characters and six integers below 10^8, on one line; large: 125 strings of 26 to 34
/// characters and 125 integers below 1,000; nested: five objects of 15 such strings, an array
/// of two, and seven objects of 15 such integers; both indented by two spaces), with values
/// drawn from a fixed seed: the same files every time.
pub fn generate(dir: &Path) -> std::io::Result<()> {
    let mut rng = Lcg(0x0d3_2024);
    let text = |r: &mut Lcg| {
        let len = 26 + r.below(9) as usize;
        word(r, len)
    };
    let small_int = |r: &mut Lcg| Json::Int(r.below(100_000_000));
    let int = |r: &mut Lcg| Json::Int(r.below(1_000));

    let mut small = fields(&mut rng, 1..=7, |r| word(r, 8));
    small.extend(fields(&mut rng, 8..=13, small_int));
    let mut large = fields(&mut rng, 1..=125, text);
    large.extend(fields(&mut rng, 126..=250, int));
    let mut nested = Vec::new();
    for i in 1..=5 {
        nested.push((
            format!("embedded_str_doc_{i}"),
            Json::Obj(fields(&mut rng, 1..=15, text)),
        ));
    }
    nested.push((
        "embedded_str_doc_array".to_owned(),
        Json::Arr(
            (0..2)
                .map(|_| Json::Obj(fields(&mut rng, 1..=15, text)))
                .collect(),
        ),
    ));
    for i in 8..=14 {
        nested.push((
            format!("embedded_int_doc_{i}"),
            Json::Obj(fields(&mut rng, 1..=15, int)),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let write = |name: &str, json: Json, indent: Option<usize>| {
        let mut out = String::new();
        json.write(&mut out, indent, 0);
        out.push('\n');
        std::fs::write(dir.join(name), out)
    };
    write("small_doc.json", Json::Obj(small), None)?;
    write("large_doc.json", Json::Obj(large), Some(2))?;
    write("large_doc_nested.json", Json::Obj(nested), Some(2))?;
    Ok(())
}
