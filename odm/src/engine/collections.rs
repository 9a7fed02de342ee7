//! The driver's collection of each of the handle's models, made once per handle (on the first
//! write of the model) instead of once per write, with what the pipeline asks of the model's
//! collection on every write (whether a copy or a reference involves it): one lookup per
//! write, by the collection's name, in a table built from the catalog when the handle is.
//!
//! A write of a model outside the handle's catalog finds no slot and makes its collection on
//! the spot, as every write did before.

use std::any::Any;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use bson::RawDocumentBuf;
use mongodb::{Collection, Database};

use crate::catalog::{Catalog, Defaults};

/// One model's collection: made on first use, then shared by every write of the handle (and
/// of its clones).
#[derive(Debug)]
pub(crate) struct Slot {
    collection: OnceLock<Collection<RawDocumentBuf>>,
    /// The collection typed with the first model that asked for it (`Collection<T>`), for the
    /// writes the driver serializes itself.
    typed: OnceLock<Box<dyn Any + Send + Sync>>,
    /// A copy or a reference of the catalog's models involves the collection
    /// ([`Catalog::is_related`]).
    pub related: bool,
    /// Its documents are the children of a two-way reference
    /// ([`Catalog::holds_two_way_child`]).
    pub two_way: bool,
    /// The defaults its model declares (`#[odm(read_preference = ...)]`), which the collection
    /// is made with.
    defaults: Defaults,
    /// The handle with the write concern its model declares, for the model's writes (made on
    /// the first of them; see [`Odm::writing`](crate::Odm::writing)).
    concerned: OnceLock<crate::Odm>,
}

/// The slots of a catalog's collections, by name.
#[derive(Debug, Default)]
pub(crate) struct Collections {
    slots: HashMap<&'static str, Slot, BuildHasherDefault<NameHasher>>,
}

impl Collections {
    /// A slot per collection of `catalog`'s models; nothing is made yet.
    pub fn of(catalog: &Catalog) -> Self {
        let mut slots: HashMap<&'static str, Slot, _> = HashMap::default();
        for m in catalog.models() {
            let slot = slots.entry(m.collection).or_insert_with(|| Slot {
                collection: OnceLock::new(),
                typed: OnceLock::new(),
                related: catalog.is_related(m.collection),
                two_way: catalog.holds_two_way_child(m.collection),
                defaults: Defaults::NONE,
                concerned: OnceLock::new(),
            });
            // The defaults of the collection's model (a kind's are its enum's).
            if m.defaults.any() {
                slot.defaults = m.defaults;
            }
        }
        Collections { slots }
    }

    /// The slot of `collection`, when one of the catalog's models is stored there.
    pub fn slot(&self, collection: &str) -> Option<&Slot> {
        self.slots.get(collection)
    }
}

impl Slot {
    /// The collection named `name` in `db`, made on the first call.
    pub fn collection(&self, db: &Database, name: &str) -> &Collection<RawDocumentBuf> {
        self.collection
            .get_or_init(|| made(db, name, &self.defaults))
    }

    /// The handle its model's writes run on, made by `make` on the first call.
    pub fn concerned(&self, make: impl FnOnce() -> crate::Odm) -> &crate::Odm {
        self.concerned.get_or_init(make)
    }

    /// The collection named `name` in `db` typed with `T`, made on the first call; `None` when
    /// another model of the collection was first (two models of one collection: the second
    /// writes through [`Slot::collection`]).
    pub fn typed<T: Send + Sync + 'static>(
        &self,
        db: &Database,
        name: &str,
    ) -> Option<&Collection<T>> {
        self.typed
            .get_or_init(|| Box::new(made::<T>(db, name, &self.defaults)))
            .downcast_ref()
    }
}

/// The collection `name` of `db`, with the `defaults` of its model when it declares any.
pub(crate) fn made<T: Send + Sync>(
    db: &Database,
    name: &str,
    defaults: &Defaults,
) -> Collection<T> {
    match defaults.any() {
        false => db.collection(name),
        true => db.collection_with_options(name, defaults.collection_options()),
    }
}

/// A hasher for the short names of collections: a multiply-rotate over eight bytes at a time
/// (the shape of the Fx hash), a few instructions for a name where SipHash costs a hundred.
/// The keys are the catalog's own names, not input an attacker chooses.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last));
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(name: &str) -> u64 {
        BuildHasherDefault::<NameHasher>::default().hash_one(name)
    }

    #[test]
    fn names_that_share_a_prefix_hash_apart() {
        let names = [
            "parts",
            "parts_",
            "parts.x",
            "products",
            "p",
            "",
            "log_messages_2026",
        ];
        let hashes: std::collections::HashSet<u64> = names.iter().map(|n| hash(n)).collect();
        assert_eq!(hashes.len(), names.len());
    }
}
