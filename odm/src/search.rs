//! Text search with its score: [`Odm::search`] returns the documents matching a text search,
//! best first, each with the relevance score the server computed.
//!
//! [`Filter::text`] filters by the same search without the score. Both need a text index
//! (`#[index(text)]` on each field searched): a model that declares none does not compile.

use bson::{doc, Document, RawDocument};
use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use crate::decode::Reading;
use crate::query::Filter;
use crate::{Odm, Result};

pub use crate::query::TextIndexed;

/// The field the score is projected into, taken out of each document before it is decoded.
const SCORE: &str = "_odm_score";

/// A document and how well it matches the search (the server's `textScore`: higher is better).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<T> {
    /// The document.
    pub document: T,
    /// Its score.
    pub score: f64,
}

/// Builder returned by [`Odm::search`]. Sends one `find`: `{$text: {$search: terms}}` (with the
/// filter, the model's kind and soft-delete scope), projecting `{$meta: "textScore"}` and
/// sorting by it, then the `getMore`s of a large result. Takes the options of every read
/// (`comment`, `max_time`, `read_concern`, `read_preference`).
#[must_use = "the search runs when awaited"]
pub struct Search<'a, T> {
    odm: &'a Odm,
    text: Document,
    filter: Filter<T>,
    options: FindOptions,
    session: Option<&'a mut ClientSession>,
}

impl<T> std::fmt::Debug for Search<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Search")
            .field("text", &self.text)
            .field("filter", &self.filter)
            .finish()
    }
}

impl Odm {
    /// The documents of `T` matching the text search `terms` (the server's syntax: words,
    /// `"phrases"`, `-excluded`), best first, each with its score.
    pub fn search<T: TextIndexed + crate::Model>(&self, terms: &str) -> Search<'_, T> {
        Search {
            odm: self,
            text: doc! { "$search": terms },
            filter: Filter::all(),
            options: FindOptions::default(),
            session: None,
        }
    }
}

impl<'a, T: TextIndexed + crate::Model> Search<'a, T> {
    /// Only the documents matching `filter` too.
    pub fn filter(mut self, filter: Filter<T>) -> Self {
        self.filter = filter;
        self
    }

    /// At most `n` documents, the best ones.
    pub fn limit(mut self, n: u32) -> Self {
        self.options.limit = Some(i64::from(n));
        self
    }

    /// The language whose stop words and stems the search uses (`"en"`, `"fr"`, `"none"`),
    /// the index's otherwise.
    pub fn language(mut self, language: &str) -> Self {
        self.text.insert("$language", language);
        self
    }

    /// Whether letters must match in case (`$caseSensitive`; not by default).
    pub fn case_sensitive(mut self, yes: bool) -> Self {
        self.text.insert("$caseSensitive", yes);
        self
    }

    /// Whether accents must match (`$diacriticSensitive`; not by default).
    pub fn diacritic_sensitive(mut self, yes: bool) -> Self {
        self.text.insert("$diacriticSensitive", yes);
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }
}

impl<'a, T: TextIndexed + crate::Model + DeserializeOwned + Send + 'a> Search<'a, T> {
    async fn run(mut self) -> Result<Vec<Scored<T>>> {
        let mut filter = doc! { "$text": std::mem::take(&mut self.text) };
        filter.extend(crate::engine::model_filter(self.filter)?);
        let score = doc! { SCORE: { "$meta": "textScore" } };
        self.options.projection = Some(score.clone());
        self.options.sort = Some(score);
        let coll = self.odm.raw_collection::<T>();
        let action = coll.find(filter).with_options(self.options);
        let from = Reading::of::<T>(self.odm);
        crate::engine::decoded!(@each action, self.session, |raw: &RawDocument| scored(&from, raw), T)
    }
}

fn scored<T: DeserializeOwned>(from: &Reading<'_>, raw: &RawDocument) -> Result<Scored<T>> {
    let (document, score) = crate::decode::with_number(from, raw, SCORE)?;
    Ok(Scored { document, score })
}

impl<'a, T: TextIndexed + crate::Model + DeserializeOwned + Send + 'a> std::future::IntoFuture
    for Search<'a, T>
{
    type Output = Result<Vec<Scored<T>>>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

crate::engine::read_options!(@every Search, options);
