mod common;
use common::library::*;
use odm::prelude::*;
use odm::testing::TestDb;

#[tokio::test]
async fn smoke() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm();
    let b = gatsby();
    odm.insert_one(&b).await?;
    let got = odm.find(Book::publisher().name().eq("Everyman's Library")).await?;
    assert_eq!(got, vec![b]);
    println!("{:?}", db.commands().names());
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
#[odm(collection = "loans")]
struct Loan {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    borrower: String,
    due_date: Option<String>,
    priority: i32,
}

#[tokio::test]
async fn api_shapes() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm();
    let _ = Book::reviews().user().eq(1) & Book::subjects().contains("1920s");
    let _u = Book::pages().inc(1).and(Book::title().set("x"));
    assert_eq!(Loan::due_date().path(), "dueDate");
    let id = odm.insert_one(&Loan { id: None, borrower: "bob".into(), due_date: None, priority: 1 }).await?;
    let l = odm.get::<Loan>(id).await?.unwrap();
    assert_eq!(l.id, Some(id));
    let _ = odm.update_by_id::<Loan>(id, Loan::due_date().unset()).await?;
    Ok(())
}
