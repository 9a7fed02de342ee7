//! Refusing keys that MongoDB would read as operators or paths.

use bson::raw::{RawBsonRef, RawDocument};
use bson::spec::ElementType;

use crate::{Error, Result};

/// Checks every key of `doc`, at any depth: a key must not start with `$` (except the DBRef
/// keys `$ref`, `$id`, `$db`) and must not contain `.`.
pub(crate) fn check_document(collection: &str, doc: &RawDocument) -> Result<()> {
    // The common case, every key plain, is read from the bytes alone; anything else (an
    // operator key, a DBRef, malformed bytes) is walked again to say where and why.
    if plain_keys(doc.as_bytes(), 0) {
        return Ok(());
    }
    check_level(collection, doc, &mut Vec::new())
}

/// How deep [`plain_keys`] follows documents before leaving the rest to the full walk (the
/// server nests at most 100 levels).
const MAX_DEPTH: usize = 128;

/// Whether the document in `bytes` is well formed as far as its element bounds go and no key at
/// any depth starts with `$` or contains `.`. Reads only the type bytes, the keys and the
/// lengths: no value is decoded, and a key is validated as UTF-8 only when it is not ASCII.
fn plain_keys(bytes: &[u8], depth: usize) -> bool {
    let n = bytes.len();
    if depth > MAX_DEPTH || n < 5 || read_len(bytes, 0) != Some(n) || bytes[n - 1] != 0 {
        return false;
    }
    let mut at = 4;
    // `at` stays below `n`: the last byte is the document's null, and an element ends before it.
    loop {
        let kind = bytes[at];
        if kind == 0 {
            return at == n - 1;
        }
        let key_start = at + 1;
        let mut i = key_start;
        let (mut dot, mut ascii) = (false, true);
        while i < n && bytes[i] != 0 {
            dot |= bytes[i] == b'.';
            ascii &= bytes[i] < 0x80;
            i += 1;
        }
        if i >= n || dot || bytes.get(key_start) == Some(&b'$') {
            return false;
        }
        if !ascii && std::str::from_utf8(&bytes[key_start..i]).is_err() {
            return false;
        }
        let start = i + 1;
        let Some(end) = value_len(kind, bytes, start).and_then(|len| start.checked_add(len)) else {
            return false;
        };
        if end >= n || !string_ends(kind, bytes, start, end) {
            return false;
        }
        // Documents and arrays: the keys of an array are its indexes, its documents are
        // checked like any other.
        if (kind == 0x03 || kind == 0x04) && !plain_keys(&bytes[start..end], depth + 1) {
            return false;
        }
        at = end;
    }
}

/// The length of the value of type `kind` starting at `start`; `None` for an unknown type or a
/// length that cannot be read.
fn value_len(kind: u8, bytes: &[u8], start: usize) -> Option<usize> {
    Some(match kind {
        0x06 | 0x0A | 0x7F | 0xFF => 0,
        0x08 => 1,
        0x10 => 4,
        0x01 | 0x09 | 0x11 | 0x12 => 8,
        0x07 => 12,
        0x13 => 16,
        // String, code, symbol: a length, then the bytes and their null.
        0x02 | 0x0D | 0x0E => 4 + read_len(bytes, start)?,
        // Document, array, code with scope: a length that counts itself.
        0x03 | 0x04 | 0x0F => read_len(bytes, start)?,
        // Binary: a length, a subtype, the bytes.
        0x05 => 5 + read_len(bytes, start)?,
        0x0B => {
            let first = bytes.get(start..)?.iter().position(|b| *b == 0)?;
            let second = bytes
                .get(start + first + 1..)?
                .iter()
                .position(|b| *b == 0)?;
            first + second + 2
        }
        0x0C => 4 + read_len(bytes, start)? + 12,
        _ => return None,
    })
}

/// A string, code or symbol value (`start..end`) ends with its null and holds at least that;
/// any other value passes.
fn string_ends(kind: u8, bytes: &[u8], start: usize, end: usize) -> bool {
    !matches!(kind, 0x02 | 0x0D | 0x0E) || (end - start >= 5 && bytes[end - 1] == 0)
}

/// The elements of a BSON document's bytes, as (type, key, value bytes); `None` for bytes that
/// do not hold a well-formed element, after which the iteration ends.
pub(crate) struct Elements<'a> {
    bytes: &'a [u8],
    at: usize,
    done: bool,
    ok: bool,
}

impl<'a> Elements<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let ok = bytes.len() >= 5
            && read_len(bytes, 0).is_some_and(|n| n == bytes.len())
            && bytes[bytes.len() - 1] == 0;
        Elements {
            bytes,
            at: 4,
            done: !ok,
            ok,
        }
    }

    /// Whether every element was read and the document ended where its length says.
    pub(crate) fn finished(&self) -> bool {
        self.ok && self.done && self.at == self.bytes.len() - 1
    }

    fn element(&mut self) -> Option<(u8, &'a [u8], &'a [u8])> {
        let bytes = self.bytes;
        let kind = bytes[self.at];
        let key_start = self.at + 1;
        let key_len = bytes[key_start..].iter().position(|b| *b == 0)?;
        let key = &bytes[key_start..key_start + key_len];
        let start = key_start + key_len + 1;
        let end = start.checked_add(value_len(kind, bytes, start)?)?;
        // The document's own terminating null stays after the last element.
        if end >= bytes.len() || !string_ends(kind, bytes, start, end) {
            return None;
        }
        self.at = end;
        Some((kind, key, &bytes[start..end]))
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Option<(u8, &'a [u8], &'a [u8])>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.bytes[self.at] == 0 {
            self.done = true;
            return None;
        }
        let element = self.element();
        if element.is_none() {
            self.done = true;
            self.ok = false;
        }
        Some(element)
    }
}

/// The little-endian, non-negative `i32` at `at`, as a length.
fn read_len(bytes: &[u8], at: usize) -> Option<usize> {
    let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    usize::try_from(i32::from_le_bytes(b)).ok()
}

/// Checks the keys of a value about to be written at `path` (an id written as a reference,
/// say): the same rule as [`check_document`], for a document or the documents of an array.
pub(crate) fn check_value(collection: &str, path: &str, value: &bson::Bson) -> Result<()> {
    let encode_error = |e: bson::error::Error| Error::Encode {
        collection: collection.to_owned(),
        what: format!("value for `{path}`"),
        message: e.to_string(),
    };
    let one = |d: &bson::Document, at: String| -> Result<()> {
        let raw = bson::RawDocumentBuf::try_from(d).map_err(encode_error)?;
        check_level(collection, &raw, &mut vec![Step::Key(&at)])
    };
    match value {
        bson::Bson::Document(d) => one(d, path.to_owned()),
        bson::Bson::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            item.as_document()
                .map_or(Ok(()), |d| one(d, format!("{path}.{i}")))
        }),
        _ => Ok(()),
    }
}

/// A step of the path to the level being checked, for error messages only: the hot path
/// builds no string.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn show_path(path: &[Step<'_>]) -> String {
    if path.is_empty() {
        return ".".to_owned();
    }
    let mut out = String::new();
    for (i, step) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        match step {
            Step::Key(k) => out.push_str(k),
            Step::Index(n) => out.push_str(&n.to_string()),
        }
    }
    out
}

/// Walks the elements of `doc` without decoding their values (no string is read, only the
/// keys and the bounds of each element), descending into documents and arrays.
fn check_level<'a>(collection: &str, doc: &'a RawDocument, path: &mut Vec<Step<'a>>) -> Result<()> {
    let malformed = |e: bson::error::Error| Error::Encode {
        collection: collection.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    };
    for element in doc.iter_elements() {
        let element = element.map_err(malformed)?;
        let key = element.key().as_str();
        if key.starts_with('$') || key.contains('.') {
            let dbref =
                matches!(key, "$ref" | "$id" | "$db") && doc.get("$ref").ok().flatten().is_some();
            if !dbref {
                return Err(Error::InvalidKey {
                    collection: collection.to_owned(),
                    path: show_path(path),
                    key: key.to_owned(),
                });
            }
        }
        match element.element_type() {
            ElementType::EmbeddedDocument => {
                if let RawBsonRef::Document(d) = element.value().map_err(malformed)? {
                    path.push(Step::Key(key));
                    check_level(collection, d, path)?;
                    path.pop();
                }
            }
            ElementType::Array => {
                if let RawBsonRef::Array(a) = element.value().map_err(malformed)? {
                    path.push(Step::Key(key));
                    for (i, item) in a.iter_elements().enumerate() {
                        let item = item.map_err(malformed)?;
                        if item.element_type() == ElementType::EmbeddedDocument {
                            if let RawBsonRef::Document(d) = item.value().map_err(malformed)? {
                                path.push(Step::Index(i));
                                check_level(collection, d, path)?;
                                path.pop();
                            }
                        }
                    }
                    path.pop();
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, Bson, RawDocumentBuf};

    fn check(d: bson::Document) -> Result<()> {
        let raw = RawDocumentBuf::try_from(&d).unwrap();
        check_document("c", &raw)
    }

    #[test]
    fn accepts_plain_documents_and_dbrefs() {
        check(doc! {"a": 1, "b": {"c": [ {"d": 1} ]}, "r": {"$ref": "x", "$id": 1}}).unwrap();
    }

    #[test]
    fn refuses_operator_keys_at_any_depth() {
        let err = check(doc! {"a": {"b": [ {"ok": 1}, {"$gt": 1} ]}}).unwrap_err();
        match err {
            Error::InvalidKey { path, key, .. } => {
                assert_eq!(path, "a.b.1");
                assert_eq!(key, "$gt");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// Every kind of element the walker skips, nested, with plain keys: read in one pass.
    fn every_type() -> bson::Document {
        use bson::spec::BinarySubtype;
        doc! {
            "double": 1.5, "string": "s", "doc": {"a": {"b": [1, {"c": 2}]}}, "array": [[1], {"x": 1}],
            "binary": bson::Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] },
            "undefined": Bson::Undefined, "oid": bson::oid::ObjectId::new(), "bool": true,
            "date": bson::DateTime::now(), "null": Bson::Null,
            "regex": bson::Regex { pattern: "a.b".try_into().unwrap(), options: "i".try_into().unwrap() },
            "code": Bson::JavaScriptCode("x".into()),
            "scope": Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope { code: "y".into(), scope: doc! {"$s": 1} }),
            "int32": 1_i32, "ts": bson::Timestamp { time: 1, increment: 2 }, "int64": 2_i64,
            "decimal": bson::Decimal128::from_bytes([0; 16]), "min": Bson::MinKey, "max": Bson::MaxKey,
            "symbol": Bson::Symbol("sym".into()),
        }
    }

    #[test]
    fn the_byte_walker_reads_every_element_type() {
        let raw = RawDocumentBuf::try_from(&every_type()).unwrap();
        assert!(plain_keys(raw.as_bytes(), 0));
        let mut n = 0;
        let mut elements = Elements::new(raw.as_bytes());
        for e in elements.by_ref() {
            let (_, key, _) = e.unwrap();
            let expected = raw.iter_elements().nth(n).unwrap().unwrap();
            assert_eq!(key, expected.key().as_str().as_bytes());
            n += 1;
        }
        assert!(elements.finished());
        assert_eq!(n, raw.iter_elements().count());
    }

    #[test]
    fn the_byte_walker_defers_to_the_full_walk_on_any_operator_key_or_dbref() {
        for d in [
            doc! {"a": [{"$gt": 1}]},
            doc! {"a": {"b.c": 1}},
            doc! {"r": {"$ref": "x", "$id": 1}},
        ] {
            let raw = RawDocumentBuf::try_from(&d).unwrap();
            assert!(!plain_keys(raw.as_bytes(), 0), "{d}");
        }
        // The DBRef is still accepted, by the full walk.
        check(doc! {"r": {"$ref": "x", "$id": 1}}).unwrap();
    }

    #[test]
    fn malformed_bytes_are_an_error_never_a_panic() {
        let raw = RawDocumentBuf::try_from(&every_type()).unwrap();
        let bytes = raw.as_bytes();
        // Every truncation, and every single byte changed to a few hostile values: never a
        // panic, and never a key the full walk refuses let through.
        for cut in 5..bytes.len() {
            let mut b = bytes[..cut].to_vec();
            let len = (b.len() as i32).to_le_bytes();
            b[..4].copy_from_slice(&len);
            *b.last_mut().unwrap() = 0;
            agree(&b);
        }
        for at in 4..bytes.len() {
            for v in [0x00, 0x01, 0x03, 0x04, 0x7F, 0xFF, b'$', b'.'] {
                let mut b = bytes.to_vec();
                b[at] = v;
                agree(&b);
            }
        }
    }

    /// The walker accepts no document in which the full walk finds a key it refuses. (Bytes
    /// the walker reads as well formed but that hold, say, a regular expression that is not
    /// UTF-8 are the server's to refuse: the walker looks at keys and bounds.)
    fn agree(bytes: &[u8]) {
        if !plain_keys(bytes, 0) {
            return;
        }
        if let Ok(d) = bson::RawDocument::from_bytes(bytes) {
            let full = check_level("c", d, &mut Vec::new());
            assert!(
                !matches!(full, Err(Error::InvalidKey { .. })),
                "the walker accepted a key the full walk refuses: {full:?}"
            );
        }
    }

    #[test]
    fn refuses_dotted_keys() {
        let err = check(doc! {"m": {"a.b": 1}}).unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey { ref key, .. } if key == "a.b"),
            "{err}"
        );
    }
}
