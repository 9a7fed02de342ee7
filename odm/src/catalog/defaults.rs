//! A model's defaults for its operations (`#[odm(read_preference = "secondaryPreferred",
//! write_concern = "majority")]`): between the handle's and the operation's, the narrowest
//! that says something wins. Kept as plain values the derive can write in a `const`, turned
//! into the driver's types when the handle makes the model's collection.

use mongodb::options::{
    Acknowledgment, CollectionOptions, ReadPreference, SelectionCriteria, WriteConcern,
};

/// Where a model's queries go (the five modes of a read preference).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    Primary,
    PrimaryPreferred,
    Secondary,
    SecondaryPreferred,
    Nearest,
}

/// Who acknowledges a model's writes (the `w` of a write concern; `0`, unacknowledged, is
/// refused by the derive).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acknowledged {
    Majority,
    Nodes(u32),
}

/// A model's declared defaults; [`Defaults::NONE`] when it declares none.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    pub read_preference: Option<ReadMode>,
    pub write_concern: Option<Acknowledged>,
}

impl Defaults {
    /// No default of the model's own: the handle's apply.
    pub const NONE: Defaults = Defaults {
        read_preference: None,
        write_concern: None,
    };

    /// The model declares one.
    pub(crate) fn any(&self) -> bool {
        *self != Defaults::NONE
    }

    /// The read preference, as the driver takes it.
    pub(crate) fn read_preference(&self) -> Option<ReadPreference> {
        let options = Default::default();
        Some(match self.read_preference? {
            ReadMode::Primary => ReadPreference::Primary,
            ReadMode::PrimaryPreferred => ReadPreference::PrimaryPreferred { options },
            ReadMode::Secondary => ReadPreference::Secondary { options },
            ReadMode::SecondaryPreferred => ReadPreference::SecondaryPreferred { options },
            ReadMode::Nearest => ReadPreference::Nearest { options },
        })
    }

    /// The write concern, as the driver takes it.
    pub(crate) fn write_concern(&self) -> Option<WriteConcern> {
        let w = match self.write_concern? {
            Acknowledged::Majority => Acknowledgment::Majority,
            Acknowledged::Nodes(n) => Acknowledgment::Nodes(n),
        };
        Some(WriteConcern::builder().w(w).build())
    }

    /// The options of the model's collection in the caller's database: its own defaults, the
    /// database's where it has none (`None` on a field inherits it).
    pub(crate) fn collection_options(&self) -> CollectionOptions {
        CollectionOptions::builder()
            .selection_criteria(
                self.read_preference()
                    .map(SelectionCriteria::ReadPreference),
            )
            .write_concern(self.write_concern())
            .build()
    }
}
