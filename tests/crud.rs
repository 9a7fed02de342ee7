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
