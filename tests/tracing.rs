//! Tracing: every operation is a span of target `odm` with its collection, the commands it
//! sent (the command log's count), the documents and its duration; the work it generates
//! (copies filled, cascades, latest-N arrays, delete rules, populate levels) nests under it;
//! errors are recorded on the span. Spans are captured by a small subscriber written here.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::stored_one;
use denorm::logs::{Host, LogMsg};
use denorm::parts::Part;
use denorm::products::Product;
use odm::bson::DateTime;
use odm::prelude::*;
use tracing::field::{Field as TraceField, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span as the subscriber saw it: its name, its parent's index and its fields as text.
#[derive(Debug, Clone)]
struct Captured {
    name: &'static str,
    parent: Option<usize>,
    fields: BTreeMap<&'static str, String>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    fn number(&self, name: &str) -> u64 {
        self.field(name)
            .unwrap_or_else(|| panic!("span `{}` has no `{name}`: {:?}", self.name, self.fields))
            .parse()
            .unwrap_or_else(|_| panic!("`{name}` of `{}` is not a number", self.name))
    }
}

struct Fields<'a>(&'a mut BTreeMap<&'static str, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &TraceField, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &TraceField, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
    fn record_u64(&mut self, field: &TraceField, value: u64) {
        self.0.insert(field.name(), value.to_string());
    }
}

thread_local! {
    /// The spans entered on this thread, innermost last: a new span's contextual parent.
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Held by each test for its whole run. A subscriber set with `set_default` is registered with
/// every callsite of the process, and a test that registers or drops one while another test's
/// operation meets a callsite for the first time can leave that callsite disabled for a moment
/// (the first operation span of a test went missing once): the tests of this file run one at
/// a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Sets `capture` as this thread's subscriber, then has every callsite of the process ask the
/// subscribers again: a callsite that another test's operation met first, while `capture` was
/// being registered, could otherwise stay disabled (the suite's tests share one process).
fn watch(capture: &Capture) -> tracing::subscriber::DefaultGuard {
    let guard = tracing::subscriber::set_default(capture.clone());
    tracing_core::callsite::rebuild_interest_cache();
    guard
}

/// Records every span of target `odm`; ids are indexes into `spans` plus one.
#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<Vec<Captured>>>,
}

impl Capture {
    fn spans(&self) -> Vec<Captured> {
        self.spans.lock().unwrap().clone()
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "odm"
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let parent = match attrs.parent() {
            Some(id) => Some(id.into_u64()),
            None if attrs.is_contextual() => ENTERED.with(|e| e.borrow().last().copied()),
            None => None,
        };
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().unwrap();
        spans.push(Captured {
            name: attrs.metadata().name(),
            parent: parent.map(|p| p as usize - 1),
            fields,
        });
        Id::from_u64(spans.len() as u64)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        values.record(&mut Fields(&mut spans[span.into_u64() as usize - 1].fields));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        ENTERED.with(|e| e.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, _: &Id) {
        ENTERED.with(|e| e.borrow_mut().pop());
    }
}

fn product(name: &str) -> Product {
    Product {
        id: ObjectId::new(),
        name: name.into(),
        manufacturer: "Acme".into(),
        catalog_number: 1234,
        parts: vec![],
    }
}

fn part(n: usize, product: Option<ObjectId>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("P-{n}"),
        name: format!("part {n}"),
        qty: 1,
        product: product.map(Ref::new),
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

/// The operation spans (those without a parent) and the children of each, by index.
fn children_of(spans: &[Captured], parent: usize) -> Vec<&Captured> {
    spans.iter().filter(|s| s.parent == Some(parent)).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn an_update_with_a_cascade_is_one_span_with_the_cascade_under_it() -> odm::Result<()> {
    let _serial = SERIAL.lock().await;
    let db = common::db().await?;
    let odm = db.odm();
    let screws = product("Screws");
    odm.insert_one(&screws).await?;
    let parts: Vec<Part> = (0..3).map(|n| part(n, Some(screws.id))).collect();
    odm.insert_many(&parts).await?;
    db.commands().clear();

    // ANCHOR: cascade
    let capture = Capture::default();
    let _guard = watch(&capture);
    odm.update_by_id(screws.id, Product::name().set("Bolts"))
        .await?;
    let sent = db.commands().count();

    let spans = capture.spans();
    let roots: Vec<usize> = (0..spans.len())
        .filter(|i| spans[*i].parent.is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one operation span: {spans:#?}");
    let update = &spans[roots[0]];
    assert_eq!(update.name, "update");
    assert_eq!(update.field("operation"), Some("update"));
    assert_eq!(update.field("collection"), Some("products"));
    assert_eq!(update.number("commands"), sent as u64, "{spans:#?}");
    assert!(sent >= 2, "the update and the cascade: {sent}");
    assert_eq!(update.number("documents"), 1);
    update.number("duration_us");
    assert_eq!(update.field("error"), None);

    let children = children_of(&spans, roots[0]);
    let cascade = children
        .iter()
        .find(|s| s.name == "cascade")
        .unwrap_or_else(|| panic!("a cascade under the update: {spans:#?}"));
    assert_eq!(cascade.field("collection"), Some("products"));
    // The copies' `update` and the re-read of the source: the source's own `findAndModify`
    // is the operation's, not the cascade's.
    assert_eq!(cascade.number("commands"), 2, "{cascade:?}");
    assert_eq!(cascade.number("commands"), update.number("commands") - 1);
    cascade.number("duration_us");
    // ANCHOR_END: cascade

    // What the cascade wrote.
    for p in &parts {
        let raw = stored_one(&db, "parts", p.id).await.expect("the part");
        assert_eq!(raw.get_str("product_name").unwrap(), "Bolts");
    }
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn an_insert_fills_its_copies_in_a_child_span_and_errors_are_recorded() -> odm::Result<()> {
    let _serial = SERIAL.lock().await;
    let db = common::db().await?;
    let odm = db.odm();
    let screws = product("Screws");
    odm.insert_one(&screws).await?;
    db.commands().clear();

    let capture = Capture::default();
    let _guard = watch(&capture);
    let good = part(1, Some(screws.id));
    odm.insert_one(&good).await?;
    let orphan = part(2, Some(ObjectId::new()));
    let err = odm.insert_one(&orphan).await.expect_err("no such product");
    let sent = db.commands().count();

    let spans = capture.spans();
    let roots: Vec<usize> = (0..spans.len())
        .filter(|i| spans[*i].parent.is_none())
        .collect();
    assert_eq!(roots.len(), 2, "{spans:#?}");
    let (ok, failed) = (&spans[roots[0]], &spans[roots[1]]);
    assert_eq!((ok.name, failed.name), ("insert_one", "insert_one"));
    assert_eq!(ok.field("collection"), Some("parts"));
    assert_eq!(ok.number("documents"), 1);
    assert_eq!(ok.field("error"), None);
    assert_eq!(
        (ok.number("commands") + failed.number("commands")) as usize,
        sent,
        "{spans:#?}"
    );
    let fill = children_of(&spans, roots[0]);
    assert!(fill.iter().any(|s| s.name == "fill"), "{spans:#?}");

    // The failure: the message on the operation, no documents; its fill ran (one `find`,
    // which found no product) and did not fail itself.
    let message = err.to_string();
    assert!(matches!(err, odm::Error::DanglingReference { .. }), "{err}");
    assert_eq!(failed.field("error"), Some(message.as_str()), "{spans:#?}");
    assert_eq!(failed.field("documents"), None);
    assert_eq!(failed.number("commands"), 1);
    let failed_fill = children_of(&spans, roots[1]);
    let step = failed_fill.iter().find(|s| s.name == "fill").expect("fill");
    assert_eq!((step.number("commands"), step.field("error")), (1, None));
    assert!(stored_one(&db, "parts", orphan.id).await.is_none());
    assert!(stored_one(&db, "parts", good.id).await.is_some());
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn latest_n_delete_rules_and_populate_nest_under_their_operation() -> odm::Result<()> {
    let _serial = SERIAL.lock().await;
    let db = common::db().await?;
    let odm = db.odm();
    let host = Host {
        id: ObjectId::new(),
        name: "www".into(),
        ipaddr: "10.0.0.1".into(),
        logmsgs: vec![],
    };
    odm.insert_one(&host).await?;
    let screws = product("Screws");
    odm.insert_one(&screws).await?;
    odm.insert_one(&part(1, Some(screws.id))).await?;
    // Every callsite met once before the capture is set (see the test below): a message
    // pushed to a host of its own, the populate, and that host's delete.
    let spare = Host {
        id: ObjectId::new(),
        name: "spare".into(),
        ipaddr: "10.0.0.2".into(),
        logmsgs: vec![],
    };
    odm.insert_one(&spare).await?;
    let warm = LogMsg {
        id: ObjectId::new(),
        time: DateTime::now(),
        message: "warm".into(),
        host: Ref::new(spare.id),
        ipaddr: String::new(),
    };
    odm.insert_one(&warm).await?;
    odm.find(Part::partno().eq("P-1"))
        .populate(Part::product())
        .await?;
    odm.delete_one(Host::id_field().eq(spare.id)).await?;
    db.commands().clear();

    let capture = Capture::default();
    let _guard = watch(&capture);
    let msg = LogMsg {
        id: ObjectId::new(),
        time: DateTime::now(),
        message: "up".into(),
        host: Ref::new(host.id),
        ipaddr: String::new(),
    };
    odm.insert_one(&msg).await?;
    let found = odm
        .find(Part::partno().eq("P-1"))
        .populate(Part::product())
        .await?;
    assert_eq!(found.len(), 1);
    let deleted = odm.delete_one(Host::id_field().eq(host.id)).await?;
    assert_eq!(deleted, 1);
    let sent = db.commands().count();

    let spans = capture.spans();
    let roots: Vec<usize> = (0..spans.len())
        .filter(|i| spans[*i].parent.is_none())
        .collect();
    let names: Vec<&str> = roots.iter().map(|i| spans[*i].name).collect();
    assert_eq!(names, ["insert_one", "find", "delete"], "{spans:#?}");
    let total: u64 = roots.iter().map(|i| spans[*i].number("commands")).sum();
    assert_eq!(total as usize, sent, "{spans:#?}");
    let steps = |i: usize| -> Vec<&str> {
        children_of(&spans, roots[i])
            .iter()
            .map(|s| s.name)
            .collect()
    };
    assert!(steps(0).contains(&"latest"), "{spans:#?}");
    // The `$in` plan's populate is a step of its own; the lookup plan's is inside the find's
    // one `aggregate`.
    if common::lookup_plan() {
        assert!(steps(1).is_empty(), "{spans:#?}");
    } else {
        assert_eq!(steps(1), ["populate"], "{spans:#?}");
    }
    assert_eq!(spans[roots[1]].number("documents"), 1);
    assert_eq!(steps(2), ["delete_rules"], "{spans:#?}");
    assert_eq!(spans[roots[2]].field("collection"), Some("hosts"));
    // The cascade of the host's delete removed its message.
    assert!(stored_one(&db, "logmsg", msg.id).await.is_none());
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_built_by_hand_counts_commands_and_keeps_its_own_handler() -> odm::Result<()> {
    let _serial = SERIAL.lock().await;
    use odm::mongodb::options::ClientOptions;
    use odm::mongodb::Client;
    use odm::monitor::CommandLog;

    let db = common::db().await?;
    let theirs = CommandLog::new();
    // ANCHOR: count_commands
    let mut options = ClientOptions::parse(odm::testing::test_uri()?).await?;
    // The application's own handler (here a log of command names) stays.
    theirs.attach(&mut options);
    odm::trace::count_commands(&mut options);
    let odm = Odm::new(Client::with_options(options)?.database(db.name()));
    // ANCHOR_END: count_commands
    // This test's models only (the suite links every test's).
    let odm = odm.with_catalog(common::catalog());

    // The callsites met once before the capture is set: a callsite met for the first time
    // by another test's thread while the capture is being registered can stay disabled for
    // it (the suite's tests share one process), and `watch` asks the registered ones again.
    let warm = product("Warm-up");
    odm.insert_one(&warm).await?;
    odm.insert_one(&part(0, Some(warm.id))).await?;
    odm.get::<Part>(ObjectId::new()).await?;

    // A callsite another test's thread meets while the capture is registered can still miss
    // it (see above): the three operations run again, at most twice, until all three are seen.
    let mut attempt = 0;
    let spans = loop {
        attempt += 1;
        theirs.clear();
        let capture = Capture::default();
        let guard = watch(&capture);
        let screws = product(&format!("Screws {attempt}"));
        odm.insert_one(&screws).await?;
        odm.insert_one(&part(attempt, Some(screws.id))).await?;
        odm.get::<Part>(ObjectId::new()).await?;
        drop(guard);
        let spans = capture.spans();
        let roots = spans.iter().filter(|s| s.parent.is_none()).count();
        if roots == 3 || attempt == 3 {
            break spans;
        }
    };
    let roots: Vec<&Captured> = spans.iter().filter(|s| s.parent.is_none()).collect();
    let commands: Vec<u64> = roots.iter().map(|s| s.number("commands")).collect();
    // The part's insert: the product read for its copies, the insert, the re-read.
    assert_eq!(commands, [1, 3, 1], "{spans:#?}");
    // The application's handler saw every command.
    assert_eq!(theirs.count(), 5);
    assert_eq!(
        roots.iter().map(|s| s.name).collect::<Vec<_>>(),
        ["insert_one", "insert_one", "find_one"]
    );
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn streams_pages_syncs_and_sweeps_are_spans_of_their_own() -> odm::Result<()> {
    let _serial = SERIAL.lock().await;
    use futures_util::TryStreamExt;
    let db = common::db().await?;
    let odm = db.odm();
    for n in 0..3 {
        odm.insert_one(&part(n, None)).await?;
    }
    db.commands().clear();

    let capture = Capture::default();
    let _guard = watch(&capture);
    let streamed: Vec<Part> = odm
        .find(Part::qty().eq(1))
        .batch_size(2)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(streamed.len(), 3);
    let page = odm.find(Part::qty().eq(1)).page(2).await?;
    assert_eq!(page.items.len(), 2);
    odm.sync_indexes_of::<Part>().await?;
    odm.verify_copies().await?;
    let sent = db.commands().count();

    let spans = capture.spans();
    let roots: Vec<&Captured> = spans.iter().filter(|s| s.parent.is_none()).collect();
    let names: Vec<&str> = roots.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["stream", "page", "sync_indexes", "verify_copies"],
        "{spans:#?}"
    );
    // The stream: a `find` and a `getMore` for three documents in batches of two.
    assert_eq!(roots[0].number("commands"), 2, "{spans:#?}");
    assert_eq!(roots[0].number("documents"), 3);
    assert_eq!(roots[0].field("collection"), Some("parts"));
    assert_eq!(roots[1].number("documents"), 2);
    assert_eq!(roots[2].field("collection"), Some("*"));
    // Every command sent is counted by exactly one operation.
    let total: u64 = roots.iter().map(|s| s.number("commands")).sum();
    assert_eq!(total as usize, sent, "{spans:#?}");
    Ok(())
}
