//! The routes of a model's report, section by section: what each generated operation sends.

use crate::catalog::Catalog;
use crate::model::Model;

use super::routing::{Route, RoutingReport};

mod copies;
mod own;
mod relations;

use copies::{copies_held, copies_taken, written_by_others};
use own::own_operations;
use relations::{deletes, references};

impl RoutingReport {
    /// The report of model `T` among every linked model ([`RoutingReport::in_catalog`] for
    /// a handle's [`Catalog`]).
    pub fn of<T: Model>() -> RoutingReport {
        Self::in_catalog::<T>(&Catalog::linked())
    }

    /// The report of model `T` among the models of `catalog`.
    pub fn in_catalog<T: Model>(catalog: &Catalog) -> RoutingReport {
        let c = T::COLLECTION;
        let model = std::any::type_name::<T>()
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        let key = T::entry().shard_key.or_else(|| catalog.shard_key_of(c));
        let key_names: Vec<&'static str> = key.map(|k| k.names()).unwrap_or_default();
        let mut with_id = vec!["_id"];
        with_id.extend(key_names.iter().copied());
        let routes = routes_of::<T>(catalog, c, &model, key_names, with_id);
        RoutingReport {
            model,
            collection: c,
            key: key.map(|k| k.show()),
            routes,
        }
    }

    /// The report of the main model of the subset pair whose details model is `D`, with the
    /// pair's own commands: the deletes of both sides and the read of the details.
    pub fn of_subset<D: crate::rules::Subset>() -> RoutingReport {
        Self::of_subset_in::<D>(&Catalog::linked())
    }

    /// [`RoutingReport::of_subset`] among the models of `catalog`.
    pub fn of_subset_in<D: crate::rules::Subset>(catalog: &Catalog) -> RoutingReport {
        let mut report = RoutingReport::in_catalog::<D::Main>(catalog);
        let main = report.model.clone();
        let (m, d) = (<D::Main as Model>::COLLECTION, D::COLLECTION);
        let details = std::any::type_name::<D>()
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        let mut with_id = vec!["_id"];
        with_id.extend(
            catalog
                .shard_key_of(m)
                .map(|k| k.names())
                .unwrap_or_default(),
        );
        let mut add = |operation: String, collection: &str, command: String, named: &[&str]| {
            report
                .routes
                .push(Route::new(catalog, operation, collection, command, named));
        };
        add(
            format!("subset insert of a {main} and its {details}"),
            d,
            format!("insert {m}, insert {d} (each document holds its key)"),
            &catalog
                .shard_key_of(d)
                .map(|k| k.names())
                .unwrap_or_default(),
        );
        let key = catalog.shard_key_of(m);
        if let Some(key) = key.filter(|k| k.names() != ["_id"]) {
            add(
                format!(
                    "subset delete of {main}s: the ids read (with their shard key), by a filter naming {}",
                    key.show()
                ),
                m,
                format!("find {m} <filter>"),
                &key.names(),
            );
        }
        add(
            format!("subset delete of {main}s: the ids read (with their shard key)"),
            m,
            format!("find {m} <filter>"),
            &[],
        );
        add(
            format!("subset delete of {main}s: each chunk of the main documents"),
            m,
            format!("delete {m} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
            &with_id,
        );
        add(
            format!("subset delete of {main}s: the {details} of each chunk"),
            d,
            format!("delete {d} {{ _id: {{ $in: <ids> }} }}"),
            &["_id"],
        );
        add(
            format!("details_of {main}s"),
            d,
            format!("find {d} {{ _id: {{ $in: <ids> }} }}"),
            &["_id"],
        );
        report
    }
}

/// Every route of model `T` (collection `c`, named `model`, whose shard key has the fields
/// `key_names`; `with_id` is `_id` and them).
pub(super) fn routes_of<T: Model>(
    catalog: &Catalog,
    c: &'static str,
    model: &str,
    key_names: Vec<&'static str>,
    with_id: Vec<&'static str>,
) -> Vec<Route> {
    let mut out = Routes {
        catalog,
        c,
        model: model.to_owned(),
        key_names,
        with_id,
        routes: Vec::new(),
    };
    own_operations::<T>(&mut out);
    copies_held(&mut out);
    copies_taken(&mut out);
    references::<T>(&mut out);
    deletes(&mut out);
    written_by_others(&mut out);
    out.routes
}

/// The routes of one report as they are gathered, with what every section needs.
pub(super) struct Routes<'a> {
    catalog: &'a Catalog,
    c: &'static str,
    model: String,
    key_names: Vec<&'static str>,
    with_id: Vec<&'static str>,
    routes: Vec<Route>,
}

impl Routes<'_> {
    /// A command whose filter holds the caller's (`<filter>` in `command`): where it goes
    /// depends on that filter. Two lines: naming `named` alone, and, when `collection` is
    /// sharded by fields `named` lacks, the same command of a caller's filter naming them
    /// with equality (routed).
    pub(super) fn add_open(
        &mut self,
        operation: String,
        collection: &str,
        command: String,
        named: &[&str],
    ) {
        let key = self.catalog.shard_key_of(collection);
        let keyed = key.map(|k| k.names()).unwrap_or_default();
        if keyed.iter().any(|f| !named.contains(f)) {
            let mut with_key = named.to_vec();
            with_key.extend(keyed.iter().copied());
            let shown = key.map(|k| k.show()).unwrap_or_default();
            self.add(
                format!("{operation}, by a filter naming {shown}"),
                collection,
                command.clone(),
                &with_key,
            );
        }
        self.add(operation, collection, command, named);
    }

    pub(super) fn add(
        &mut self,
        operation: String,
        collection: &str,
        command: String,
        named: &[&str],
    ) {
        self.routes.push(Route::new(
            self.catalog,
            operation,
            collection,
            command,
            named,
        ));
    }
}
