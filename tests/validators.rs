mod common;
use odm::bson::doc;
use odm::testing::TestDb;

#[tokio::test]
async fn probe() {
    let db = TestDb::new().await.unwrap();
    let v = doc! {"$jsonSchema": {"bsonType": "object", "required": ["title"], "properties": {"title": {"bsonType": "string"}, "n": {"bsonType": ["int", "long"]}, "tags": {"bsonType": "array", "maxItems": 2i64, "items": {"bsonType": "string"}}, "o": {"anyOf": [{"bsonType": "null"}, {"bsonType": "object", "required": ["a"], "properties": {"a": {"bsonType": "int"}}}]}}, "oneOf": [{"properties": {"type": {"enum": ["a"]}}, "required": ["type"]}, {"properties": {"type": {"enum": ["b"]}}}]}};
    let r = db
        .raw()
        .run_command(doc! {"create": "c1", "validator": v.clone()})
        .await;
    println!("create: {r:?}");
    let r = db
        .raw()
        .run_command(doc! {"listCollections": 1, "filter": {"name": "c1"}})
        .await;
    println!("list: {r:?}");
    for d in [
        doc! {"_id": 1, "title": 5},
        doc! {"_id": 2, "title": "x", "type": "a"},
        doc! {"_id": 3, "title": "x", "tags": ["a","b","c"], "type": "a"},
        doc! {"_id": 4, "title": "x", "type": "c"},
        doc! {"_id": 5, "type": "a"},
        doc! {"_id": 6, "title": "x", "type": "a", "o": {"a": "s"}},
    ] {
        let r = db
            .raw()
            .collection::<odm::bson::Document>("c1")
            .insert_one(d.clone())
            .await;
        println!(
            "insert {d}: {:?}",
            r.map(|_| ()).map_err(|e| format!("{:?}", e.kind))
        );
    }
    db.raw().run_command(doc! {"create": "c2"}).await.unwrap();
    let r = db
        .raw()
        .run_command(doc! {"collMod": "c2", "validator": v})
        .await;
    println!("collMod: {r:?}");
    let r = db
        .raw()
        .run_command(doc! {"listCollections": 1, "filter": {"name": "c2"}})
        .await;
    println!("list2: {r:?}");
    let r = db
        .raw()
        .collection::<odm::bson::Document>("c2")
        .insert_one(doc! {"_id": 1, "title": 5})
        .await;
    println!(
        "insert c2: {:?}",
        r.map(|_| ()).map_err(|e| format!("{:?}", e.kind))
    );
}
