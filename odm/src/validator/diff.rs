//! Comparing a declared validator with the one stored, path by path.

use bson::Bson;

/// The differences between the declared and the found validator, one line per path
/// (`$jsonSchema.properties.title.bsonType: declared "string", found "int"`); empty when they
/// match. Numbers compare by value (`2` and `2.0` are equal: the server may store either), and
/// a document's keys in any order.
pub(crate) fn differences(declared: &Bson, found: &Bson) -> Vec<String> {
    let mut out = Vec::new();
    walk("", declared, found, &mut out);
    out
}

fn number(b: &Bson) -> Option<f64> {
    match b {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

fn walk(path: &str, declared: &Bson, found: &Bson, out: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (declared, found) {
        (Bson::Document(d), Bson::Document(f)) => {
            for (k, v) in d {
                match f.get(k) {
                    Some(w) => walk(&at(k), v, w, out),
                    None => out.push(format!("{}: declared {v}, found none", at(k))),
                }
            }
            for (k, w) in f {
                if !d.contains_key(k) {
                    out.push(format!("{}: declared none, found {w}", at(k)));
                }
            }
        }
        (Bson::Array(d), Bson::Array(f)) if d.len() == f.len() => {
            for (i, (v, w)) in d.iter().zip(f).enumerate() {
                walk(&at(&i.to_string()), v, w, out);
            }
        }
        (d, f) => {
            let same = match (number(d), number(f)) {
                (Some(a), Some(b)) => a == b,
                _ => d == f,
            };
            if !same {
                out.push(format!("{path}: declared {d}, found {f}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::differences;
    use bson::{bson, doc, Bson};

    #[test]
    fn numbers_compare_by_value_and_keys_in_any_order() {
        let a = Bson::Document(doc! {"a": 1, "b": {"maxItems": 2i64, "x": "y"}});
        let b = Bson::Document(doc! {"b": {"x": "y", "maxItems": 2.0}, "a": 1i64});
        assert!(differences(&a, &b).is_empty());
    }

    #[test]
    fn each_difference_names_its_path() {
        let a = bson!({"properties": {"title": {"bsonType": "string"}, "n": {"bsonType": "int"}}});
        let b = bson!({"properties": {"title": {"bsonType": "int"}, "m": {}}});
        assert_eq!(
            differences(&a, &b),
            vec![
                "properties.title.bsonType: declared \"string\", found \"int\"".to_owned(),
                "properties.n: declared { \"bsonType\": \"int\" }, found none".to_owned(),
                "properties.m: declared none, found {}".to_owned(),
            ]
        );
    }
}
