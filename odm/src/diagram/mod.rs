//! A picture of the schema: [`mermaid`] draws the models of a [`Catalog`] as a Mermaid class
//! diagram, and [`Odm::diagram`] draws a handle's.
//!
//! Each model is a class headed by its collection (and, for a kind, its discriminator), with
//! its stored fields as its validator schema describes them, and what the catalog says of
//! each: a reference's target (`Ref~Part~[]`, which Mermaid shows as `Ref<Part>[]`), a copy,
//! a latest-N array, a bound, the tree's fields, the shard key. The edges:
//!
//! - `*--` from a model to each embedded type its schema describes (a class named by the
//!   holder and the field, `Book.publisher`: the schema knows the fields, not the type's
//!   name), with its cardinality;
//! - `<|--` from an enum of kinds to each kind, with its discriminator;
//! - `-->` from a model to what each reference points at, with its cardinality (`1`, `0..1`,
//!   `*`, or `0..N` for a bounded array) and its delete rule; the reference a summary holds
//!   too (`parts.id`, marked `summary`, with the rule a delete of the source applies to the
//!   summaries), whose `id` the summary's class shows as `Ref~Part~`; a tree to itself;
//! - `..>` from the source of each copy to the model holding it, with the fields copied, the
//!   latest-N array's bound and order, and when the copies are updated (`in request` or
//!   `background`);
//! - `--` from a model to its subset.
//!
//! The text is deterministic (models in the catalog's order, edges sorted), and every name in
//! it is escaped (entity codes, `#60;`), so that no type, collection or path can break the
//! diagram. Nothing is sent to the server.

mod edges;
mod members;
mod names;

use crate::catalog::Catalog;
use crate::engine::Odm;

/// The models of `catalog` as a Mermaid class diagram (see the [module](self) for what it
/// draws), ready for a ` ```mermaid ` block or a `.mmd` file.
///
/// ```
/// # use odm::prelude::*;
/// #[derive(Model, Serialize, Deserialize)]
/// #[odm(collection = "parts")]
/// struct Part { #[serde(rename = "_id")] id: i32, name: String }
///
/// #[derive(Model, Serialize, Deserialize)]
/// #[odm(collection = "products")]
/// struct Product {
///     #[serde(rename = "_id")]
///     id: i32,
///     #[reference(many, max = 10, on_delete = "pull")]
///     parts: Vec<Ref<Part>>,
/// }
///
/// let catalog = odm::Catalog::new().with::<Product>().with::<Part>();
/// let diagram = odm::diagram::mermaid(&catalog);
/// assert!(diagram.starts_with("classDiagram\n"));
/// assert!(diagram.contains("Product --> \"0..10\" Part : parts, on delete pull"));
/// ```
pub fn mermaid(catalog: &Catalog) -> String {
    let nodes = names::Nodes::new(catalog.models());
    let mut classes = members::Classes::default();
    for (entry, id) in nodes.models() {
        classes.model(&nodes, entry, id);
    }
    let edges = edges::Edges::of(catalog, &nodes);
    // Only now are the collections outside the catalog known: those the edges named.
    for (id, collection) in nodes.outside() {
        classes.outside(&id, &collection);
    }
    let mut out = String::from("classDiagram\n");
    for class in &classes.classes {
        out.push_str(class);
    }
    classes.embedded.sort();
    let groups = std::iter::once(("embedded types", classes.embedded.as_slice()))
        .chain(edges.groups())
        .filter(|(_, lines)| !lines.is_empty());
    for (title, lines) in groups {
        out.push_str(&format!("  %% {title}\n"));
        for line in lines {
            out.push_str(line);
        }
    }
    out
}

impl Odm {
    /// The models this handle works with ([`Odm::catalog`]) as a Mermaid class diagram: see
    /// [`mermaid`]. Sends nothing.
    ///
    /// ```no_run
    /// # async fn run() -> odm::Result<()> {
    /// let odm = odm::Odm::connect("mongodb://127.0.0.1:27017", "shop").await?;
    /// std::fs::write("schema.mmd", odm.diagram()).expect("writable");
    /// # Ok(()) }
    /// ```
    pub fn diagram(&self) -> String {
        mermaid(self.catalog())
    }
}
