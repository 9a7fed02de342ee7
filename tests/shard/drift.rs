//! The routing report cannot drift from what is sent: every generated operation of the sharded
//! models (fills and settles, cascades, delete rules, latest-N, two-way moves, trees, the
//! subset pair, the background worker, writes of loaded documents, populate) runs with the
//! commands captured, and each command on a sharded collection must be a route of the
//! reports, naming exactly the fields the route says it names. The verdict of a route is
//! computed from those fields, so a listed command goes where its route says.

use super::*;
use odm::shard::{filters_of, named_fields, Route};

/// The reports of every sharded model of this test file and of the models writing into them.
fn reports() -> Vec<RoutingReport> {
    let catalog = common::catalog();
    vec![
        RoutingReport::in_catalog::<Part>(&catalog),
        RoutingReport::in_catalog::<Product>(&catalog),
        RoutingReport::in_catalog::<Host>(&catalog),
        RoutingReport::in_catalog::<LogMsg>(&catalog),
        RoutingReport::in_catalog::<Event>(&catalog),
        RoutingReport::in_catalog::<Region>(&catalog),
        RoutingReport::in_catalog::<Maker>(&catalog),
        RoutingReport::in_catalog::<Gadget>(&catalog),
        RoutingReport::in_catalog::<Listing>(&catalog),
        RoutingReport::of_subset_in::<FilmDetails>(&catalog),
        RoutingReport::in_catalog::<FilmDetails>(&catalog),
        RoutingReport::in_catalog::<Crew>(&catalog),
        RoutingReport::in_catalog::<Chore>(&catalog),
    ]
}

/// Whether `route` is a line of the operation `op`: its operation is `op`, or `op` followed by
/// what of it the line describes (`update_by_id of Gadget: its shard key read`).
fn of_operation(route: &Route, op: &str) -> bool {
    route.operation == op
        || route
            .operation
            .strip_prefix(op)
            .is_some_and(|rest| rest.starts_with(": "))
}

/// The commands sent since the last step, the first `skip` of them (the caller's own reads)
/// left out, checked against the lines of the operations the step ran: each command on a
/// sharded collection must be one of them (so it goes where the line says), and each of them
/// on a sharded collection must have been sent (so the report says nothing the step did not do).
struct Steps<'d> {
    db: &'d TestDb,
    reports: Vec<RoutingReport>,
    disagreements: Vec<String>,
    checked: usize,
}

impl Steps<'_> {
    fn check(&mut self, step: &str, skip: usize, ops: &[&str]) {
        let log = self.db.commands().take();
        let log = log.get(skip..).unwrap_or_default();
        self.compare(step, log, ops);
    }

    fn compare(&mut self, step: &str, log: &[odm::monitor::SentCommand], ops: &[&str]) {
        let db = self.db;
        let catalog = db.odm().catalog();
        let lines: Vec<&Route> = self
            .reports
            .iter()
            .flat_map(|r| &r.routes)
            .filter(|r| ops.iter().any(|op| of_operation(r, op)))
            .collect();
        for op in ops
            .iter()
            .filter(|op| !lines.iter().any(|r| of_operation(r, op)))
        {
            self.disagreements.push(format!(
                "{step}: no line of the reports is an operation `{op}`"
            ));
        }
        let mut seen = vec![false; lines.len()];
        for sent in log {
            let Some((verb, collection, filters)) = sent.command.as_ref().and_then(filters_of)
            else {
                continue;
            };
            if catalog.shard_key_of(&collection).is_none() {
                continue;
            }
            for filter in filters {
                self.checked += 1;
                let named = named_fields(&filter);
                let names: Vec<&str> = named.iter().map(String::as_str).collect();
                let verdict = odm::shard::verdict_in(catalog, &collection, &names);
                // The line naming the most of the command's fields: a line whose filter
                // holds the caller's has a twin for a caller's filter naming the key.
                let best = lines
                    .iter()
                    .filter(|line| line.describes(&verb, &collection, &named))
                    .map(|line| line.named.len())
                    .max();
                let mut line = None;
                for (l, seen) in lines.iter().zip(&mut seen) {
                    if Some(l.named.len()) == best && l.describes(&verb, &collection, &named) {
                        *seen = true;
                        line = Some(l);
                    }
                }
                match line {
                    Some(line) => {
                        if line.verdict != verdict {
                            self.disagreements.push(format!(
                                "{step}: {line}, but {verb} {collection} {filter} {}",
                                verdict.explain(&collection)
                            ));
                        }
                    }
                    None => self.disagreements.push(format!(
                        "{step}: sent and not reported: {verb} {collection} {filter} {}",
                        verdict.explain(&collection)
                    )),
                }
            }
        }
        // An open line and its twin for a caller's filter naming the key: one of them is sent.
        let sent_commands: Vec<&str> = lines
            .iter()
            .zip(&seen)
            .filter(|(_, seen)| **seen)
            .map(|(line, _)| line.command.as_str())
            .collect();
        for (line, seen) in lines.iter().zip(seen) {
            let twin_sent = line.open && sent_commands.contains(&line.command.as_str());
            // An insert has no filter: nothing to compare.
            let filtered = line.verb != "insert";
            if !seen && !twin_sent && filtered && catalog.shard_key_of(&line.collection).is_some() {
                self.disagreements.push(format!(
                    "{step}: reported and not sent: {line}: {}",
                    line.command
                ));
            }
        }
    }
}

#[tokio::test]
async fn every_generated_command_on_a_sharded_collection_is_its_line_of_the_report(
) -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    let odm = db.odm().clone();
    db.commands().clear();
    let mut steps = Steps {
        db: &db,
        reports: reports(),
        disagreements: Vec::new(),
        checked: 0,
    };

    // Parts copied into products, sharded by category.
    let parts: Vec<Part> = (1..=3)
        .map(|id| Part {
            id,
            partno: format!("p-{id}"),
            name: format!("part {id}"),
        })
        .collect();
    odm.insert_many(&parts).await?;
    steps.check("insert parts", 0, &["insert into parts"]);
    const FILL: &str = "fill of products.parts from parts on insert or replace";
    odm.insert_one(&product(1, "tools", 1, &[&parts[0], &parts[1]]))
        .await?;
    steps.check("insert a product", 0, &["insert into products", FILL]);
    odm.insert_many(&[
        product(2, "toys", 2, &[&parts[1]]),
        product(3, "tools", 3, &[&parts[2]]),
    ])
    .await?;
    steps.check("insert products", 0, &["insert into products", FILL]);
    let mut loaded = odm.get::<Product>(1).await?.expect("stored");
    steps.check("get a product", 0, &["get of Product"]);
    odm.update_by_id::<Product>(2, Product::name().set("kite".to_owned()))
        .await?;
    steps.check("update_by_id of a product", 0, &["update_by_id of Product"]);
    const PART_CASCADE: &str = "cascade of Part.name into products.parts";
    odm.update_by_id::<Part>(1, Part::name().set("washer".to_owned()))
        .await?;
    steps.check(
        "rename a part",
        0,
        &[
            "update_by_id of a Part whose fields are copied",
            PART_CASCADE,
        ],
    );
    odm.update_many::<Part>(
        Part::partno().ne("none"),
        Part::name().set("bolt".to_owned()),
    )
    .await?;
    steps.check(
        "rename every part",
        0,
        &["update_many of Parts whose fields are copied", PART_CASCADE],
    );
    loaded.name = "smoke shifter".into();
    odm.replace_one(&loaded).await?;
    steps.check(
        "replace a loaded product (its copies filled)",
        0,
        &["replace_one (save) of a loaded Product", FILL],
    );
    odm.update_document(&loaded, Product::name().set("shifter".to_owned()))
        .await?;
    steps.check(
        "update a loaded product",
        0,
        &["update_document of a loaded Product"],
    );
    odm.delete_one::<Part>(Part::id_field().eq(3)).await?;
    steps.check(
        "delete a part (summaries pulled)",
        0,
        &["delete_one / delete_many of Parts", "delete of a Part"],
    );
    odm.delete_document(&loaded).await?;
    steps.check(
        "delete a loaded product",
        0,
        &["delete_document of a loaded Product"],
    );

    // Hosts, sharded by `_id`, keeping their latest log messages, sharded by `{host, time}`.
    for id in 1..=2 {
        odm.insert_one(&Host {
            id,
            name: format!("host {id}"),
            logmsgs: Vec::new(),
        })
        .await?;
    }
    steps.check("insert hosts", 0, &["insert into hosts"]);
    let msgs: Vec<LogMsg> = (1..=5)
        .map(|id| LogMsg {
            id,
            host: Ref::new(1 + id % 2),
            time: DateTime::from_millis(1000 * id as i64),
            message: format!("message {id}"),
        })
        .collect();
    const PUSH: &str = "push of a LogMsg onto hosts.logmsgs";
    odm.insert_many(&msgs).await?;
    steps.check("insert log messages", 0, &["insert into logmsg", PUSH]);
    odm.find::<LogMsg>(LogMsg::id_field().lte(2))
        .populate(LogMsg::host())
        .await?;
    steps.check(
        "populate log messages' hosts",
        1,
        &["populate of LogMsg.host"],
    );
    let msg = odm.get::<LogMsg>(1).await?.expect("stored");
    steps.check("get a log message", 0, &["get of LogMsg"]);
    const RECOMPUTE: &str = "recompute of hosts.logmsgs (the latest logmsg)";
    odm.delete_document(&msg).await?;
    steps.check(
        "delete a log message (latest recomputed)",
        0,
        &[
            "delete_document of a loaded LogMsg",
            "delete of LogMsgs",
            RECOMPUTE,
        ],
    );
    odm.delete_many::<LogMsg>(LogMsg::id_field().eq(2)).await?;
    steps.check(
        "delete log messages by filter",
        0,
        &[
            "delete_one / delete_many of LogMsgs",
            "delete of LogMsgs",
            RECOMPUTE,
        ],
    );
    let host = odm.get::<Host>(1).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&host).await?;
    steps.check(
        "delete a host (its messages cascade)",
        0,
        &["delete_document of a loaded Host", "delete of a Host"],
    );

    // Events, sharded by a dotted key.
    let event = Event {
        id: 1,
        source: Source {
            host: "db1".into(),
            application: "api".into(),
        },
        at: DateTime::from_millis(5),
        message: "up".into(),
    };
    odm.insert_one(&event).await?;
    odm.replace_one(&event).await?;
    odm.delete_document(&event).await?;
    steps.check(
        "insert, save and delete an event",
        0,
        &[
            "insert into events",
            "replace_one (save) of a loaded Event",
            "delete_document of a loaded Event",
        ],
    );

    // A tree of regions, sharded by zone.
    let region = |id: i32, zone: &str, parent: Option<i32>| Region {
        id,
        zone: zone.to_owned(),
        parent: parent.map(Ref::new),
        ancestors: Vec::new(),
    };
    odm.insert_one(&region(1, "eu", None)).await?;
    odm.insert_one(&region(3, "us", None)).await?;
    steps.check("insert roots", 0, &["insert into regions"]);
    odm.insert_one(&region(2, "eu", Some(1))).await?;
    steps.check(
        "insert a region under a parent",
        0,
        &[
            "insert into regions",
            "tree insert of a Region under a parent",
        ],
    );
    odm.insert_many(&[region(4, "us", Some(3)), region(5, "eu", Some(1))])
        .await?;
    steps.check(
        "insert regions under several parents",
        0,
        &[
            "insert into regions",
            "tree insert of Regions under several parents",
        ],
    );
    odm.tree::<Region>().move_under(2, 3).await?;
    steps.check("move a leaf region", 0, &["tree move of a Region"]);
    odm.tree::<Region>().move_under(3, 1).await?;
    steps.check(
        "move a region with its subtree",
        0,
        &["tree move of a Region"],
    );
    odm.tree::<Region>().children(3).await?;
    steps.check("children of a region", 0, &["tree children of a Region"]);
    let root = odm.get::<Region>(3).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&root).await?;
    steps.check(
        "delete a region (its subtree cascades)",
        0,
        &["tree delete of Regions"],
    );

    // Gadgets, sharded by category, copying their maker's name in the background; listings
    // copy a gadget's name.
    gadgets(&db).await?;
    const INTENT: &str = "background cascade of Maker.name into gadgets.maker_name: the intent";
    odm.update_by_id::<Maker>(1, Maker::name().set("Acme Corp".to_owned()))
        .await?;
    steps.check(
        "rename a maker (intent)",
        0,
        &["update_by_id of Maker", INTENT],
    );
    odm.cascade_worker().run_until_idle().await?;
    steps.check(
        "the cascade worker",
        0,
        &[
            "background cascade of Maker.name into gadgets.maker_name: the worker's walk",
            "background cascade of Maker.name into gadgets.maker_name: each batch",
        ],
    );
    const GADGET_CASCADE: &str = "cascade of Gadget.name into listings.gadget_name";
    odm.update_by_id::<Gadget>(2, Gadget::name().set("kite".to_owned()))
        .await?;
    steps.check(
        "update_by_id of a copied gadget",
        0,
        &[
            "update_by_id of a Gadget whose fields are copied",
            GADGET_CASCADE,
        ],
    );
    odm.update_many::<Gadget>(
        Gadget::maker().refers_to(1),
        Gadget::name().set("recalled".to_owned()),
    )
    .await?;
    steps.check(
        "update_many of gadgets without the key",
        0,
        &[
            "update_many of Gadgets whose fields are copied",
            GADGET_CASCADE,
        ],
    );
    odm.update_many::<Gadget>(
        Gadget::category().eq("tools"),
        Gadget::name().set("hammer".to_owned()),
    )
    .await?;
    steps.check(
        "update_many of gadgets with the key",
        0,
        &[
            "update_many of Gadgets whose fields are copied",
            GADGET_CASCADE,
        ],
    );
    const LISTING_FILL: &str = "fill of listings.gadget_name from gadgets on insert or replace";
    odm.insert_one(&Listing {
        id: 9,
        gadget: Ref::new(3),
        gadget_name: String::new(),
    })
    .await?;
    steps.check(
        "insert a listing (its copy filled)",
        0,
        &["insert into listings", LISTING_FILL],
    );
    let listing = odm.get::<Listing>(9).await?.expect("stored");
    db.commands().clear();
    odm.replace_one(&listing).await?;
    steps.check(
        "replace a listing (its copy filled)",
        0,
        &["replace_one (save) of a loaded Listing", LISTING_FILL],
    );

    // A subset pair: films sharded by genre, their details by `_id`.
    for (id, genre) in [(1, "noir"), (2, "comedy")] {
        odm.subset::<FilmDetails>()
            .insert(
                &Film {
                    id,
                    genre: genre.into(),
                    title: format!("film {id}"),
                },
                &FilmDetails {
                    id,
                    plot: format!("plot {id}"),
                },
            )
            .await?;
    }
    steps.check(
        "insert films and details",
        0,
        &["subset insert of a Film and its FilmDetails"],
    );
    let films = odm.find::<Film>(Film::id_field().lte(2)).await?;
    db.commands().clear();
    odm.subset::<FilmDetails>().details_of(&films).await?;
    steps.check("details of films", 0, &["details_of Films"]);
    odm.subset::<FilmDetails>()
        .delete(Film::id_field().eq(1))
        .await?;
    steps.check(
        "delete a film with its details",
        0,
        &["subset delete of Films"],
    );

    // Chores, sharded by team, owned two-way by crew members.
    crew_and_chore(&odm).await?;
    steps.check(
        "insert a chore (two-way)",
        0,
        &["insert into crew", "insert into chores"],
    );
    odm.reassign(Chore::owner(), 7, 2).await?;
    steps.check("reassign a chore", 0, &["two-way move of Chore.owner"]);
    let kate = odm.get::<Crew>(1).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&kate).await?;
    steps.check(
        "delete a crew member (restricted by chores)",
        0,
        &["delete_document of a loaded Crew", "delete of a Crew"],
    );

    // An insert whose part is renamed between its read and its write corrects its copy.
    let (logged, armed, log) =
        common::act_after_next_find_pooled(&db, None, |database| async move {
            Odm::new(database)
                .with_catalog(common::catalog())
                .update_by_id::<Part>(2, Part::name().set("gear".to_owned()))
                .await
                .expect("the concurrent rename");
        })
        .await?;
    armed.store(true, std::sync::atomic::Ordering::SeqCst);
    logged
        .insert_one(&product(9, "garden", 9, &[&parts[1]]))
        .await?;
    assert!(!armed.load(std::sync::atomic::Ordering::SeqCst), "renamed");
    let sent = std::mem::take(&mut *log.lock().unwrap());
    let settled = sent.iter().filter(|c| c.name == "update").count();
    assert_eq!(settled, 1, "the insert corrected its copy");
    steps.compare(
        "settle after a rename",
        &sent,
        &[
            "insert into products",
            FILL,
            "settle of products.parts after an insert or replacement whose source in parts changed meanwhile",
        ],
    );
    assert_eq!(
        common::stored_one(&db, "products", 9)
            .await
            .unwrap()
            .get_array("parts")
            .unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("name")
            .unwrap(),
        "gear"
    );

    assert!(steps.checked > 40, "{} commands checked", steps.checked);
    assert!(
        steps.disagreements.is_empty(),
        "{} disagreements between the routing report and the {} commands on sharded collections:\n{}",
        steps.disagreements.len(),
        steps.checked,
        steps.disagreements.join("\n")
    );
    Ok(())
}
