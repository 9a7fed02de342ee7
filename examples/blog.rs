//! A blog whose copies are themselves copied: each comment keeps its author's display name
//! (`author_name`, copied from the user), and each post keeps its five latest comments with
//! their body and that copied name (`latest_comments`, a copy of the copy). Renaming a user
//! rewrites the comments, then the posts' summaries of those comments, in the same write: one
//! more `find` and one `update` for the second level, whatever the number of posts.
//!
//! Every step prints what it did and the commands it sent; ObjectIds are shown by the name of
//! their document (`ObjectId(ann)`).
//!
//! Run it with `cargo run -p odm-examples --example blog`: it uses `MONGODB_URI` when set, else
//! starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{say, say_lines};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::TransactionMode;

// ANCHOR: models
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: ObjectId,
    display_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[reference(on_delete = "restrict")]
    author: Ref<User>,
    /// Level 1: a copy of the author's display name.
    #[denormalize(from = "User", via = "author", fields = "display_name")]
    #[serde(default)]
    author_name: String,
    #[parent(on_delete = "cascade")]
    post: Ref<Post>,
    body: String,
    time: DateTime,
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct CommentSummary {
    body: String,
    author_name: String,
    time: DateTime,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: ObjectId,
    title: String,
    /// Level 2: the latest five comments, each with the comment's copy of its author's name.
    #[denormalize(
        from = "Comment",
        via = "post",
        fields = "body, author_name, time",
        latest = 5,
        sort = "time"
    )]
    #[serde(default)]
    latest_comments: Vec<CommentSummary>,
}
// ANCHOR_END: models

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("blog").await?;
    let posts_raw = odm.database().collection::<Document>("posts");

    steps.start("Insert two users, a post, and six comments alternately by each");
    let ann = User {
        id: ObjectId::new(),
        display_name: "Ann".into(),
    };
    let bob = User {
        id: ObjectId::new(),
        display_name: "Bob".into(),
    };
    odm.insert_many([&ann, &bob]).await?;
    steps.name(ann.id, "ann");
    steps.name(bob.id, "bob");
    let post = Post {
        id: ObjectId::new(),
        title: "Copies of copies".into(),
        latest_comments: Vec::new(),
    };
    odm.insert_one(&post).await?;
    steps.name(post.id, "post");
    let comments: Vec<Comment> = (0..6)
        .map(|n| Comment {
            id: ObjectId::new(),
            author: Ref::new(if n % 2 == 0 { ann.id } else { bob.id }),
            author_name: String::new(),
            post: Ref::new(post.id),
            body: format!("comment {n}"),
            time: DateTime::from_millis(1_790_000_000_000 + n * 60_000),
        })
        .collect();
    for (n, c) in comments.iter().enumerate() {
        steps.name(c.id, &format!("comment_{n}"));
    }
    odm.insert_many(&comments).await?;
    steps.sent();

    steps.start("The post as stored: the latest five comments, with their authors' names");
    let stored = posts_raw.find_one(doc! {}).await?.expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("Rename Ann: the comments, then the posts' summaries of them");
    // ANCHOR: rename
    odm.update_by_id::<User>(ann.id, User::display_name().set("Ann Smith"))
        .await?;
    // ANCHOR_END: rename
    steps.sent();

    steps.start("The post as stored: Ann's comments among the latest five say `Ann Smith`");
    let stored = posts_raw.find_one(doc! {}).await?.expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("Rename her again, in a transaction: the same levels, then the commit");
    odm.update_by_id::<User>(ann.id, User::display_name().set("Dr Ann Smith"))
        .transaction(TransactionMode::Auto)
        .await?;
    steps.sent();

    steps.start("The cascade plan of users: every level, with its commands");
    // ANCHOR: plan
    let plan = odm::denormalize::cascade_plan::<User>();
    // ANCHOR_END: plan
    say_lines(&plan);

    steps.start("The sweep: every copy, at every level, equals what it copies");
    let report = odm.verify_copies().await?;
    say_lines(&report);
    steps.sent();

    common::drop_database(&odm).await
}
