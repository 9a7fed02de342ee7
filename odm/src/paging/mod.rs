//! Keyset pagination: pages of a query in a typed sort, each page one `find` that starts
//! right after the last document of the previous page, continued with an opaque token.
//!
//! ```no_run
//! # use odm::prelude::*;
//! # #[derive(Model, Serialize, Deserialize, Debug)]
//! # #[odm(collection = "books")]
//! # struct Book { #[serde(rename = "_id")] id: i32, title: String }
//! # async fn run(odm: &Odm) -> odm::Result<()> {
//! let first = odm.find(Filter::all()).sort(Book::title().asc()).page(20).await?;
//! if let Some(token) = first.next {
//!     let second = odm
//!         .find(Filter::all())
//!         .sort(Book::title().asc())
//!         .page(20)
//!         .after(token)
//!         .await?;
//! }
//! # Ok(()) }
//! ```
//!
//! Unlike `skip`, a page starts at a position, not at a count: documents inserted or deleted
//! before it do not shift it, so that paging through a collection that changes meanwhile
//! returns no document twice and skips none that existed throughout.

mod keyset;
mod token;

use std::fmt;
use std::future::IntoFuture;

use bson::{doc, Bson};
use mongodb::options::FindOptions;

use crate::decode::{decode, Reading};
use crate::engine::BoxFuture;
use crate::ops::{Find, FindParts, Open};
use crate::{Model, Odm, Result};

pub use token::PageToken;

/// One page of results: its documents, in the sort's order, and the token of the next page,
/// `None` on the last one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Page<T> {
    /// The page's documents (populated when the query says so).
    pub items: Vec<T>,
    /// Where the next page starts; `None` when no document follows this page's.
    pub next: Option<PageToken>,
}

/// Builder returned by [`Find::page`]; `.await` it for a [`Page`]. Sends one `find`, plus
/// what [`Find::populate`] adds for the page's documents.
#[must_use = "the page is read when awaited"]
pub struct Paged<'a, T> {
    parts: FindParts<'a, T>,
    size: u32,
    after: Option<PageToken>,
}

impl<T> fmt::Debug for Paged<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paged")
            .field("filter", &self.parts.filter)
            .field("sort", &self.parts.options.sort)
            .field("size", &self.size)
            .field("after", &self.after)
            .finish()
    }
}

impl<'a, T: Model> Find<'a, T> {
    /// Reads the results a page of `size` documents at a time (at least 1), in this query's
    /// sort with `_id` as the tie-breaker (ascending, unless the sort names `_id`): keyset
    /// pagination. `.await` it for the first [`Page`]; give its [`Page::next`] token to
    /// [`Paged::after`] on the same query for the next.
    ///
    /// Commands: one `find` per page, with the query's filter and, after a token,
    /// `{$and: [filter, after]}` where `after` is `{$or: [{k1: {$gt: v1}}, {k1: v1, k2: {$gt:
    /// v2}}, ..., {k1: v1, ..., _id: {$gt: id}}]}` over the last document's values (`$lt` for
    /// a descending key; each `$gt`/`$lt` with `$or` the BSON types MongoDB sorts after or
    /// before the value's, since they compare values of one type only), sort `{k1, ..., _id}`, `limit` and `batchSize` `size + 1`: the one
    /// more document says whether a next page exists, and is not returned. With
    /// [`Find::populate`], one `find {_id: {$in: ids}}` per relation and level for the page.
    /// An index on the sort's keys then `_id` lets every page start without a scan.
    ///
    /// Missing values and `null` order as MongoDB orders them: equal, and before every other
    /// value (ascending; after them descending); so do values of other types and NaN. A sort
    /// key holding an array is refused
    /// ([`Error::Decode`](crate::Error::Decode) naming the document and field), as MongoDB
    /// orders a document by one of its elements. `skip` and `limit` set on the query are
    /// replaced; a projection keeps the sort's fields and `_id`.
    pub fn page(self, size: u32) -> Paged<'a, T> {
        Paged {
            parts: self.into_parts(),
            size: size.max(1),
            after: None,
        }
    }
}

impl<'a, T: Model> Paged<'a, T> {
    /// Starts the page right after the position `token` holds (from [`Page::next`] of the
    /// same query; `None`: the first page). A token altered, issued for another collection,
    /// filter or sort, or sealed with another key is [`Error::InvalidPageToken`](crate::Error::InvalidPageToken),
    /// before anything is sent: its values are only ever compared (`$eq`, `$gt`, `$lt`),
    /// never read as operators.
    pub fn after(mut self, token: impl Into<Option<PageToken>>) -> Self {
        self.after = token.into();
        self
    }

    async fn run(self) -> Result<Page<T>> {
        let FindParts {
            odm,
            filter,
            mut options,
            session,
            loading,
        } = self.parts;
        let base = crate::engine::model_filter(filter)?;
        let keys = keyset::keys(options.sort.as_ref());
        let sort = keyset::sort_document(&keys);
        let print = token::fingerprint(T::COLLECTION, &base, &sort);
        let key = odm.page_key.as_deref();
        let filter = match &self.after {
            None => base,
            Some(t) => {
                let values = token::open(key, t, print, keys.len(), T::COLLECTION)?;
                let after = keyset::after(&keys, &values);
                match base.is_empty() {
                    true => after,
                    false => doc! { "$and": [base, after] },
                }
            }
        };
        let size = self.size as usize;
        keep_sort_fields(&mut options, &keys);
        options.sort = Some(sort);
        options.skip = None;
        options.limit = Some(i64::from(self.size) + 1);
        options.batch_size = Some(self.size.saturating_add(1));

        let mut cursor = Open::find::<T>(odm, filter, options, session).await?;
        let from = Reading::of::<T>(odm);
        let mut items = Vec::with_capacity(size);
        let mut last = Vec::new();
        let mut more = false;
        while cursor.advance().await.map_err(Odm::driver_error::<T>)? {
            if items.len() == size {
                more = true;
                break;
            }
            items.push(decode::<T>(&from, cursor.current())?);
            if items.len() == size {
                last = keyset::values_of(T::COLLECTION, cursor.current(), &keys)?;
            }
        }
        crate::pipeline::read::<T>(odm, items.len());
        if let Some(loads) = loading.get() {
            loads.batch(odm, &mut items, cursor.session()).await?;
        }
        let next = match more {
            true => Some(token::seal(key, print, last, T::COLLECTION)?),
            false => None,
        };
        Ok(Page { items, next })
    }
}

/// A projection leaving out a sort field would make every page's last value `null`: the
/// sort's fields are added to an inclusion and taken out of an exclusion.
fn keep_sort_fields(options: &mut FindOptions, keys: &[keyset::Key]) {
    let Some(projection) = options.projection.as_mut() else {
        return;
    };
    let excluded = |v: &Bson| {
        matches!(v, Bson::Int32(0) | Bson::Int64(0) | Bson::Boolean(false))
            || matches!(v, Bson::Double(d) if *d == 0.0)
    };
    let inclusion = projection.iter().any(|(k, v)| k != "_id" && !excluded(v));
    let over = |key: &keyset::Key, p: &str| key.path == p || key.path.starts_with(&format!("{p}."));
    for key in keys {
        // An exclusion of a sort field goes, in either kind of projection: in an inclusion the
        // one exclusion allowed is `_id: 0`, and `_id` is the sort's tie-breaker.
        let left_out: Vec<String> = projection
            .iter()
            .filter(|(p, v)| excluded(v) && over(key, p))
            .map(|(p, _)| p.clone())
            .collect();
        for p in left_out {
            projection.remove(&p);
        }
        if inclusion && key.path != "_id" && !projection.keys().any(|p| over(key, p)) {
            projection.insert(key.path.clone(), 1);
        }
    }
}

impl<'a, T: Model> IntoFuture for Paged<'a, T> {
    type Output = Result<Page<T>>;
    type IntoFuture = BoxFuture<'a, Result<Page<T>>>;

    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("page", T::COLLECTION);
        crate::trace::boxed(span, self.run(), |p: &Page<T>| Some(p.items.len() as u64))
    }
}

impl Odm {
    /// The same handle, sealing and checking [page tokens](PageToken) with `key` (HMAC-SHA256)
    /// instead of the built-in key. Without a key of its own, a token still cannot be altered
    /// or used for another query or sort unnoticed, but one could be forged by someone who
    /// knows the built-in key: it would only start a page at a position of their choosing
    /// within the query's results, since the values are compared, never read as operators.
    /// With a secret key (32 random bytes, the same on every instance serving the tokens),
    /// only this application issues tokens. Sends no command.
    pub fn with_page_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.page_key = Some(key.as_ref().into());
        self
    }
}
