//! The picture of the schema (`odm::diagram::mermaid`, `Odm::diagram`): the exact Mermaid
//! text of a small catalog holding each thing the diagram draws, so that an edge dropped or
//! changed fails here; and the ids and escaping that keep any name from breaking it. Nothing
//! is sent to a server.

mod common;

use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference(on_delete = "nullify")]
    supplier: Option<Ref<Supplier>>,
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

/// Summaries of its parts, cascaded in the background; a flat copy of its supplier's name.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products", shard_key(keys = "maker"))]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    maker: String,
    #[denormalize(from = "Part", fields = "name", max = 4, cascade = "background")]
    parts: Vec<PartSummary>,
    #[reference(on_delete = "restrict")]
    supplier: Ref<Supplier>,
    #[denormalize(from = "Supplier", via = "supplier", fields = "name")]
    supplier_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct Recent {
    time: DateTime,
    text: String,
}

/// The latest three messages of a host, newest first.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(
        from = "Message",
        via = "host",
        fields = "time, text",
        latest = 3,
        sort = "-time"
    )]
    #[serde(default)]
    recent: Vec<Recent>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "messages")]
struct Message {
    #[serde(rename = "_id")]
    id: i32,
    time: DateTime,
    text: String,
    #[parent(on_delete = "cascade")]
    host: Ref<Host>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "catalog", common = "title")]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnyBook {
    Single(SingleBook),
    Series(SeriesBook),
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(kind_of = "AnyBook")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(kind_of = "AnyBook")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(on_delete = "cascade")]
    subject: Ref<Subject>,
}

/// Two models of one name, and names Mermaid would read as syntax: the ids tell the models
/// apart and the names are escaped.
mod odd {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug)]
    #[odm(collection = "old_parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        id: i32,
        #[serde(rename = "a}b\"c")]
        odd: String,
        #[reference(many, max = 10, on_delete = "pull")]
        replaced_by: Vec<Ref<super::Part>>,
    }
}

/// The models of this file but the odd ones.
fn shop() -> odm::Catalog {
    odm::Catalog::new()
        .with::<Supplier>()
        .with::<Part>()
        .with::<Product>()
        .with::<Subject>()
        .with::<Host>()
        .with::<Message>()
        .with::<AnyBook>()
        .with::<SingleBook>()
        .with::<SeriesBook>()
}

/// The diagram of [`shop`], line by line.
const SHOP: &str = r#"classDiagram
  class AnyBook {
    <<collection catalog, kinds by type>>
  }
  class SeriesBook {
    <<collection catalog, type = series>>
    subject: Ref~Subject~
  }
  class SingleBook {
    <<collection catalog, type = single>>
  }
  class Host {
    <<collection hosts>>
    _id: int or long
    recent: object[], latest 3
  }
  class Host__recent["Host.recent"] {
    <<embedded>>
    time: date
    text: string
  }
  class Message {
    <<collection messages>>
    _id: int or long
    time: date
    text: string
    host: Ref~Host~
  }
  class Part {
    <<collection parts>>
    _id: int or long
    name: string
    supplier: Ref~Supplier~?
  }
  class Product {
    <<collection products>>
    _id: int or long
    maker: string, shard key 1
    parts: object[], summary copy, max 4
    supplier: Ref~Supplier~
    supplier_name: string, copy
  }
  class Product__parts["Product.parts"] {
    <<embedded>>
    id: Ref~Part~
    name: string
  }
  class Subject {
    <<collection subjects>>
    _id: string
    parent: string?, tree parent
    ancestors: string[], tree ancestors
  }
  class Supplier {
    <<collection suppliers>>
    _id: int or long
    name: string
  }
  %% embedded types
  Host *-- "0..3" Host__recent : recent
  Product *-- "0..4" Product__parts : parts
  %% kinds of an enum of kinds
  AnyBook <|-- SeriesBook : type = series
  AnyBook <|-- SingleBook : type = single
  %% references, with their delete rules
  Message --> "1" Host : host, on delete cascade, parent
  Part --> "0..1" Supplier : supplier, on delete nullify
  Product --> "0..4" Part : parts.id, on delete pull, summary
  Product --> "1" Supplier : supplier, on delete restrict
  SeriesBook --> "1" Subject : subject, on delete cascade
  %% trees
  Subject --> "0..1" Subject : tree parent and ancestors, on delete lift
  %% copies, from the source to the copy
  Message ..> Host : copy time, text → recent[], latest 3 by time desc, in request
  Part ..> Product : copy name → parts[], background
  Supplier ..> Product : copy name → supplier_name via supplier, in request
"#;

#[test]
fn a_catalog_is_drawn_line_by_line() {
    assert_eq!(odm::diagram::mermaid(&shop()), SHOP);
}

/// The catalog sorts its models, and the diagram its edges: the order they were named in
/// changes nothing.
#[test]
fn the_diagram_does_not_depend_on_the_order_models_are_named_in() {
    let reversed = odm::Catalog::new()
        .with::<SeriesBook>()
        .with::<SingleBook>()
        .with::<AnyBook>()
        .with::<Message>()
        .with::<Host>()
        .with::<Subject>()
        .with::<Product>()
        .with::<Part>()
        .with::<Supplier>();
    assert_eq!(odm::diagram::mermaid(&reversed), SHOP);
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct SupplierSummary {
    id: Ref<Supplier>,
    name: String,
}

/// A single summary is a reference too: cleared with its source when it may be absent, the
/// source's delete refused while a required one holds it.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Supplier", fields = "name")]
    supplier: SupplierSummary,
    #[denormalize(from = "Supplier", fields = "name")]
    backup: Option<SupplierSummary>,
}

#[test]
fn the_reference_a_summary_holds_is_drawn_with_its_delete_rule() {
    let drawn = odm::diagram::mermaid(&odm::Catalog::new().with::<Order>().with::<Supplier>());
    for line in [
        "    id: Ref~Supplier~\n",
        "  Order --> \"1\" Supplier : supplier.id, on delete restrict, summary\n",
        "  Order --> \"0..1\" Supplier : backup.id, on delete nullify, summary\n",
        "  Supplier ..> Order : copy name → backup, in request\n",
    ] {
        assert!(drawn.contains(line), "no {line:?} in\n{drawn}");
    }
    assert!(
        !drawn.contains("int or long\n    name: string\n  }\n  class Supplier"),
        "{drawn}"
    );
}

/// A member of a soft-deleting team: its email unique without case among the live members,
/// its handle unique within its team, its home a place.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "members",
    soft_delete,
    index(keys = "team, handle", unique)
)]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, collation(locale = "en", strength = 2))]
    email: String,
    team: String,
    handle: String,
    #[index(kind = "2dsphere")]
    home: odm::geo::Point,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "badges", soft_delete)]
struct Badge {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade", on_soft_delete = "mark")]
    member: Ref<Member>,
    deleted_at: Option<odm::bson::DateTime>,
}

#[test]
fn unique_values_collations_places_and_mark_rules_are_drawn() {
    let drawn = odm::diagram::mermaid(&odm::Catalog::new().with::<Member>().with::<Badge>());
    for line in [
        "    email: string, unique in en without case\n",
        "    team: string, unique with handle\n",
        "    home: ",
        ", 2dsphere\n",
        "  Badge --> \"1\" Member : member, on delete cascade, marked on soft delete\n",
    ] {
        assert!(drawn.contains(line), "no {line:?} in\n{drawn}");
    }
    assert!(!drawn.contains("unique with handle, deleted_at"), "{drawn}");
}

/// A reference or a copy whose other end is not in the catalog points at a node standing for
/// its collection, whose model the catalog cannot name.
#[test]
fn a_collection_outside_the_catalog_is_a_node_of_its_own() {
    let drawn = odm::diagram::mermaid(&odm::Catalog::new().with::<Part>());
    assert_eq!(
        drawn,
        r#"classDiagram
  class Part {
    <<collection parts>>
    _id: int or long
    name: string
    supplier: Ref~suppliers~?
  }
  class collection_suppliers["suppliers"] {
    <<collection suppliers, outside the catalog>>
  }
  %% references, with their delete rules
  Part --> "0..1" collection_suppliers : supplier, on delete nullify
"#
    );
}

/// Two models named `Part` get ids of their own (followed by their collection); a stored name
/// holding `}` and `"` is written with entity codes, which Mermaid shows as the characters.
#[test]
fn ids_are_unique_and_names_are_escaped() {
    let catalog = odm::Catalog::new().with::<Part>().with::<odd::Part>();
    assert_eq!(
        odm::diagram::mermaid(&catalog),
        r#"classDiagram
  class Part_old_parts["Part"] {
    <<collection old_parts>>
    _id: int or long
    a#125;b#34;c: string
    replaced_by: Ref~Part~[], max 10
  }
  class Part_parts["Part"] {
    <<collection parts>>
    _id: int or long
    name: string
    supplier: Ref~suppliers~?
  }
  class collection_suppliers["suppliers"] {
    <<collection suppliers, outside the catalog>>
  }
  %% references, with their delete rules
  Part_old_parts --> "0..10" Part_parts : replaced_by, on delete pull
  Part_parts --> "0..1" collection_suppliers : supplier, on delete nullify
"#
    );
}

/// The handle draws the models it works with: those of this file.
#[tokio::test]
async fn a_handle_draws_its_catalog() -> odm::Result<()> {
    // The client connects on first use: nothing is sent.
    let client = odm::mongodb::Client::with_uri_str("mongodb://127.0.0.1:1").await?;
    let odm = Odm::new(client.database("diagram")).with_catalog(common::catalog());
    let drawn = odm.diagram();
    assert_eq!(drawn, odm::diagram::mermaid(&common::catalog()));
    assert!(drawn.contains("class Part_old_parts[\"Part\"]"), "{drawn}");
    assert!(
        drawn.contains("AnyBook <|-- SeriesBook : type = series"),
        "{drawn}"
    );
    Ok(())
}
