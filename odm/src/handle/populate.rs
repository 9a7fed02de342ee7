//! The read builders' methods that ask for a populate (`Find::populate`,
//! `Find::populate_plan`, and `FindOne`'s): they give the query populate's loads, which the
//! builders run without knowing what they are.

use crate::ops::{Find, FindOne};
use crate::populate::{IntoPopulate, Plan, QueryPopulate};
use crate::Model;
#[cfg(doc)]
use crate::Odm;

impl<T: Model> Find<'_, T> {
    /// Loads the documents a reference field points to, after the query: one more `find`
    /// (`{_id: {$in: ids}}`) per path and level, whatever the number of documents found.
    /// Several paths of one level are fetched concurrently. See [`crate::populate`].
    ///
    /// ```no_run
    /// use odm::prelude::*;
    ///
    /// #[derive(Model, Serialize, Deserialize, Debug)]
    /// #[odm(collection = "authors")]
    /// struct Author {
    ///     #[serde(rename = "_id")]
    ///     id: i32,
    ///     name: String,
    /// }
    ///
    /// #[derive(Model, Serialize, Deserialize, Debug)]
    /// #[odm(collection = "books")]
    /// struct Book {
    ///     #[serde(rename = "_id")]
    ///     id: i32,
    ///     title: String,
    ///     #[reference]
    ///     author: Ref<Author>,
    /// }
    ///
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// // One `find` of the books, then one `find {_id: {$in: [...]}}` of their authors.
    /// let books = odm
    ///     .find(Book::title().eq("The Great Gatsby"))
    ///     .populate(Book::author())
    ///     .await?;
    /// for book in &books {
    ///     println!("{} by {}", book.title, book.author.loaded()?.name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn populate(mut self, path: impl IntoPopulate<T>) -> Self {
        self.loading_mut()
            .get_or_default::<QueryPopulate<T>>()
            .add(path);
        self
    }

    /// How the populate loads the references (default: the handle's,
    /// [`Odm::with_populate_plan`], itself [`Plan::Auto`] by default). [`Plan::Lookup`] sends
    /// the query and every level as ONE `aggregate` (plus `getMore`s) instead of one `find` plus
    /// one `find` per relation and level; see [`crate::populate::Plan`] and the cost rule of
    /// [`crate::populate::choose`].
    ///
    /// A [stream](Find::stream) and a keyset [page](Find::page) populate each batch or page
    /// with the `$in` plan, whatever the plan: their documents come from a `find` cursor read a
    /// batch at a time.
    pub fn populate_plan(mut self, plan: Plan) -> Self {
        self.loading_mut()
            .get_or_default::<QueryPopulate<T>>()
            .set_plan(plan);
        self
    }
}

impl<T: Model> FindOne<'_, T> {
    /// Loads the documents a reference field points to; see [`Find::populate`].
    pub fn populate(mut self, path: impl IntoPopulate<T>) -> Self {
        self.loading_mut()
            .get_or_default::<QueryPopulate<T>>()
            .add(path);
        self
    }

    /// How the populate loads the references; see [`Find::populate_plan`].
    pub fn populate_plan(mut self, plan: Plan) -> Self {
        self.loading_mut()
            .get_or_default::<QueryPopulate<T>>()
            .set_plan(plan);
        self
    }
}
