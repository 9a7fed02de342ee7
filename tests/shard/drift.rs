//! The routing report cannot drift from what is sent: every generated operation of the sharded
//! models (fills and settles, cascades, delete rules, latest-N, two-way moves, trees, the
//! subset pair, the background worker, writes of loaded documents, populate) runs with the
//! commands captured, and each command on a sharded collection must be a route of the
//! reports, naming exactly the fields the route says it names. The verdict of a route is
//! computed from those fields, so a listed command goes where its route says.

use super::*;
use odm::shard::unlisted_in;

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

/// The commands sent since the last step, the first `skip` of them (the caller's own reads)
/// left out, checked against the reports.
struct Steps<'d> {
    db: &'d TestDb,
    reports: Vec<RoutingReport>,
    unlisted: Vec<String>,
    checked: usize,
}

impl Steps<'_> {
    fn check(&mut self, step: &str, skip: usize) {
        let log = self.db.commands().take();
        let log = log.get(skip..).unwrap_or_default();
        self.checked += log
            .iter()
            .filter_map(|c| c.command.as_ref())
            .filter_map(odm::shard::filters_of)
            .filter(|(_, c, _)| self.db.odm().catalog().shard_key_of(c).is_some())
            .count();
        for u in unlisted_in(self.db.odm().catalog(), &self.reports, log) {
            self.unlisted.push(format!("{step}: {u}"));
        }
    }
}

#[tokio::test]
async fn every_generated_command_on_a_sharded_collection_is_a_route_of_the_report(
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
        unlisted: Vec::new(),
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
    steps.check("insert parts", 0);
    odm.insert_one(&product(1, "tools", 1, &[&parts[0], &parts[1]]))
        .await?;
    steps.check("insert a product (fill, settle)", 0);
    odm.insert_many(&[
        product(2, "toys", 2, &[&parts[1]]),
        product(3, "tools", 3, &[&parts[2]]),
    ])
    .await?;
    steps.check("insert products", 0);
    let mut loaded = odm.get::<Product>(1).await?.expect("stored");
    steps.check("get a product", 0);
    odm.update_by_id::<Product>(2, Product::name().set("kite".to_owned()))
        .await?;
    steps.check("update_by_id of a product", 0);
    odm.update_by_id::<Part>(1, Part::name().set("washer".to_owned()))
        .await?;
    steps.check("rename a part (cascade)", 0);
    odm.update_many::<Part>(
        Part::partno().ne("none"),
        Part::name().set("bolt".to_owned()),
    )
    .await?;
    steps.check("rename every part (cascade)", 0);
    loaded.name = "smoke shifter".into();
    odm.replace_one(&loaded).await?;
    steps.check("replace a loaded product", 0);
    odm.update_document(&loaded, Product::name().set("shifter".to_owned()))
        .await?;
    steps.check("update a loaded product", 0);
    odm.delete_one::<Part>(Part::id_field().eq(3)).await?;
    steps.check("delete a part (summaries pulled)", 0);
    odm.delete_document(&loaded).await?;
    steps.check("delete a loaded product", 0);

    // Hosts, sharded by `_id`, keeping their latest log messages, sharded by `{host, time}`.
    for id in 1..=2 {
        odm.insert_one(&Host {
            id,
            name: format!("host {id}"),
            logmsgs: Vec::new(),
        })
        .await?;
    }
    let msgs: Vec<LogMsg> = (1..=5)
        .map(|id| LogMsg {
            id,
            host: Ref::new(1 + id % 2),
            time: DateTime::from_millis(1000 * id as i64),
            message: format!("message {id}"),
        })
        .collect();
    odm.insert_many(&msgs).await?;
    steps.check("insert log messages (latest pushed)", 0);
    odm.find::<LogMsg>(LogMsg::id_field().lte(2))
        .populate(LogMsg::host())
        .await?;
    steps.check("populate log messages' hosts", 1);
    let msg = odm.get::<LogMsg>(1).await?.expect("stored");
    steps.check("get a log message", 0);
    odm.delete_document(&msg).await?;
    steps.check("delete a log message (latest recomputed)", 0);
    odm.delete_many::<LogMsg>(LogMsg::id_field().eq(2)).await?;
    steps.check("delete log messages by filter", 0);
    let host = odm.get::<Host>(1).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&host).await?;
    steps.check("delete a host (its messages cascade)", 0);

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
    steps.check("insert, save and delete an event", 0);

    // A tree of regions, sharded by zone.
    let region = |id: i32, zone: &str, parent: Option<i32>| Region {
        id,
        zone: zone.to_owned(),
        parent: parent.map(Ref::new),
        ancestors: Vec::new(),
    };
    odm.insert_one(&region(1, "eu", None)).await?;
    odm.insert_one(&region(2, "eu", Some(1))).await?;
    odm.insert_one(&region(3, "us", None)).await?;
    steps.check("insert regions under a parent", 0);
    odm.insert_many(&[region(4, "us", Some(3)), region(5, "eu", Some(1))])
        .await?;
    steps.check("insert regions under several parents", 0);
    odm.tree::<Region>().move_under(2, 3).await?;
    steps.check("move a region", 0);
    odm.tree::<Region>().children(3).await?;
    steps.check("children of a region", 0);
    let root = odm.get::<Region>(3).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&root).await?;
    steps.check("delete a region (its subtree cascades)", 0);

    // Gadgets, sharded by category, copying their maker's name in the background; listings
    // copy a gadget's name.
    gadgets(&db).await?;
    odm.update_by_id::<Maker>(1, Maker::name().set("Acme Corp".to_owned()))
        .await?;
    steps.check("rename a maker (intent)", 0);
    odm.cascade_worker().run_until_idle().await?;
    steps.check("the cascade worker", 0);
    odm.update_by_id::<Gadget>(2, Gadget::name().set("kite".to_owned()))
        .await?;
    steps.check("rename a gadget", 0);
    odm.update_many::<Gadget>(
        Gadget::maker().refers_to(1),
        Gadget::name().set("recalled".to_owned()),
    )
    .await?;
    steps.check("rename a maker's gadgets", 0);

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
    steps.check("insert films and details", 0);
    let films = odm.find::<Film>(Film::id_field().lte(2)).await?;
    db.commands().clear();
    odm.subset::<FilmDetails>().details_of(&films).await?;
    steps.check("details of films", 0);
    odm.subset::<FilmDetails>()
        .delete(Film::id_field().eq(1))
        .await?;
    steps.check("delete a film with its details", 0);

    // Chores, sharded by team, owned two-way by crew members.
    crew_and_chore(&odm).await?;
    steps.check("insert a chore (two-way)", 0);
    odm.reassign(Chore::owner(), 7, 2).await?;
    steps.check("reassign a chore", 0);
    let kate = odm.get::<Crew>(1).await?.expect("stored");
    db.commands().clear();
    odm.delete_document(&kate).await?;
    steps.check("delete a crew member (restricted by chores)", 0);

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
    steps.checked += sent.len();
    for u in unlisted_in(db.odm().catalog(), &steps.reports, &sent) {
        steps.unlisted.push(format!("settle after a rename: {u}"));
    }
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
        steps.unlisted.is_empty(),
        "{} of {} commands on sharded collections are not in the routing report:\n{}",
        steps.unlisted.len(),
        steps.checked,
        steps.unlisted.join("\n")
    );
    Ok(())
}
