//! Splitting the id lists the ODM sends under the server's limits.
//!
//! MongoDB refuses a command larger than 16 MB (plus a little room for the envelope) and a write
//! command with more than `maxWriteBatchSize` (100,000) statements. Every `$in` the ODM builds
//! from a list of ids it did not choose (the ids a delete reaches, the sources a cascade
//! updates, the summaries an insert copies, the documents a sweep reads) goes through
//! `chunks`, so that one command carries at most [`MAX_IDS_BYTES`] of ids and at most
//! [`MAX_IDS`] of them; a statement that repeats its ids (a filter and an array filter, a
//! filter and a `$pull`) uses `chunks_within` with a share of the budget.

use bson::Bson;

/// The server's largest command (`maxBsonObjectSize`, 16 MiB).
pub const MAX_COMMAND_BYTES: usize = 16 * 1024 * 1024;

/// The server's largest write batch (`maxWriteBatchSize`).
pub const MAX_WRITE_BATCH: usize = 100_000;

/// Bytes of ids one command carries at most: half the command limit, leaving the other half to
/// whatever else the command holds (the update, the projection, the other clauses).
pub const MAX_IDS_BYTES: usize = MAX_COMMAND_BYTES / 2;

/// Ids one command carries at most, whatever their size.
pub const MAX_IDS: usize = MAX_WRITE_BATCH;

/// Bytes `value` adds as element `index` of a BSON array: type byte, index key and its NUL,
/// the value.
pub(crate) fn element_size(index: usize, value: &Bson) -> usize {
    let key = index.checked_ilog10().map_or(1, |d| d as usize + 1) + 1;
    let body = match value {
        Bson::ObjectId(_) => 12,
        Bson::Int32(_) => 4,
        Bson::Int64(_) | Bson::Double(_) | Bson::DateTime(_) | Bson::Timestamp(_) => 8,
        Bson::Boolean(_) => 1,
        Bson::Null => 0,
        // Length prefix, bytes, NUL.
        Bson::String(s) => s.len() + 5,
        other => bson::serialize_to_vec(&bson::doc! { "": other.clone() })
            // The wrapper document adds its length, the empty key's NUL, the type byte and
            // its own NUL.
            .map_or(64, |v| v.len().saturating_sub(7)),
    };
    1 + key + body
}

/// `ids` in order, split so that each chunk encodes to at most [`MAX_IDS_BYTES`] as a BSON
/// array and holds at most [`MAX_IDS`] ids. No chunk is empty; an empty list gives none.
pub(crate) fn chunks(ids: Vec<Bson>) -> Vec<Vec<Bson>> {
    chunks_within(ids, MAX_IDS_BYTES, MAX_IDS)
}

/// `ids` in order, split so that each chunk encodes to at most `bytes` as a BSON array and
/// holds at most `count` ids. An id larger than `bytes` on its own gets a chunk of its own.
pub(crate) fn chunks_within(ids: Vec<Bson>, bytes: usize, count: usize) -> Vec<Vec<Bson>> {
    let mut out = Vec::new();
    let mut current: Vec<Bson> = Vec::new();
    let mut size = 0;
    for id in ids {
        let mut add = element_size(current.len(), &id);
        if !current.is_empty() && (current.len() >= count || size + add > bytes) {
            out.push(std::mem::take(&mut current));
            size = 0;
            add = element_size(0, &id);
        }
        size += add;
        current.push(id);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// [`chunks`] of borrowed ids.
pub(crate) fn chunks_of(ids: &[Bson]) -> Vec<Vec<Bson>> {
    chunks(ids.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(ids: &[Bson]) -> usize {
        // An array document: length (4) + elements + NUL (1).
        bson::serialize_to_vec(&bson::doc! { "a": ids.to_vec() })
            .unwrap()
            .len()
            - 4
            - 1
            - 3
    }

    #[test]
    fn sizes_match_the_encoding() {
        let ids: Vec<Bson> = (0..1500)
            .map(|i| match i % 4 {
                0 => Bson::Int32(i),
                1 => Bson::String("x".repeat(i as usize % 37)),
                2 => Bson::ObjectId(bson::oid::ObjectId::new()),
                _ => Bson::Document(bson::doc! { "k": i, "s": "v" }),
            })
            .collect();
        let computed: usize = ids
            .iter()
            .enumerate()
            .map(|(i, v)| element_size(i, v))
            .sum();
        assert_eq!(computed + 5, encoded(&ids));
    }

    #[test]
    fn splits_by_bytes_and_by_count() {
        let ids: Vec<Bson> = (0..40_000)
            .map(|i| Bson::String(format!("{i:0>500}")))
            .collect();
        let out = chunks(ids.clone());
        assert!(out.len() >= 3, "{}", out.len());
        for c in &out {
            assert!(encoded(c) <= MAX_IDS_BYTES + 5);
        }
        assert_eq!(out.concat(), ids);
        let small: Vec<Bson> = (0..250_001).map(Bson::Int32).collect();
        let out = chunks(small);
        assert_eq!(
            out.iter().map(Vec::len).collect::<Vec<_>>(),
            [100_000, 100_000, 50_001]
        );
        assert!(chunks(Vec::new()).is_empty());
        assert_eq!(chunks_within(vec![Bson::Int32(1); 3], 1, 10).len(), 3);
    }
}
