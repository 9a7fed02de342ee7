//! The subset pattern of the workshop's slides: a movie's listing fields in `movies`, the rest
//! (the plots, the credits, the viewers' reviews) in `movie_details` under the same `_id`; and
//! "only embed the most frequently used data": a post that keeps its three highest-rated
//! comments, exact whatever ratings change.
//!
//! Both sides of a movie are inserted and deleted together (in a transaction here, the
//! development server having them), the details of a whole listing load with one `$in`, a
//! write interrupted between its two sides is found and repaired, and a field moves from one
//! side to the other with two commands. Every step prints what it did and the commands it
//! sent.
//!
//! Run it with `cargo run -p odm-examples --example movies`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say, say_lines};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;

// ANCHOR: movie
/// What the listing shows: one small document per movie.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "movies")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    year: i32,
    runtime: i32,
    genres: Vec<String>,
    #[embed]
    imdb: Imdb,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Imdb {
    rating: f64,
    votes: i64,
}

/// The rest, read on the movie's own page: the same `_id` as its movie.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "movie_details", subset_of = "Movie")]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    plot: String,
    fullplot: String,
    directors: Vec<String>,
    countries: Vec<String>,
    #[embed]
    viewer: Viewer,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Viewer {
    rating: f64,
    #[serde(rename = "numReviews")]
    num_reviews: i64,
}
// ANCHOR_END: movie

// ANCHOR: post
/// A post and the three highest-rated of its comments, kept by the ODM.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: ObjectId,
    title: String,
    #[denormalize(
        from = "Comment",
        via = "post",
        fields = "author, text, rating",
        top = 3,
        sort = "-rating"
    )]
    #[serde(default)]
    top_comments: Vec<TopComment>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct TopComment {
    #[serde(rename = "_id")]
    id: Ref<Comment>,
    author: String,
    text: String,
    rating: i64,
}

/// Every comment, in a collection of its own (one post may have thousands).
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[parent(on_delete = "cascade")]
    post: Ref<Post>,
    author: String,
    text: String,
    rating: i64,
}
// ANCHOR_END: post

#[allow(clippy::too_many_arguments)]
fn movie(
    id: i64,
    title: &str,
    year: i32,
    runtime: i32,
    genre: &str,
    imdb: (f64, i64),
    plot: &str,
    directors: &[&str],
    country: &str,
    viewer: (f64, i64),
) -> (Movie, MovieDetails) {
    (
        Movie {
            id,
            title: title.to_owned(),
            year,
            runtime,
            genres: vec![genre.to_owned()],
            imdb: Imdb {
                rating: imdb.0,
                votes: imdb.1,
            },
        },
        MovieDetails {
            id,
            plot: plot.to_owned(),
            fullplot: format!("{plot} (The full plot.)"),
            directors: directors.iter().map(|d| (*d).to_owned()).collect(),
            countries: vec![country.to_owned()],
            viewer: Viewer {
                rating: viewer.0,
                num_reviews: viewer.1,
            },
        },
    )
}

fn titles(movies: &[Movie]) -> Vec<&str> {
    movies.iter().map(|m| m.title.as_str()).collect()
}

/// The ratings in a post's stored summary, read with the raw driver.
async fn top_ratings(odm: &Odm, post: ObjectId) -> odm::Result<Vec<i64>> {
    let stored = odm
        .database()
        .collection::<Document>("posts")
        .find_one(doc! { "_id": post })
        .await?
        .expect("stored");
    Ok(stored
        .get_array("top_comments")
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_document()?.get_i64("rating").ok())
                .collect()
        })
        .unwrap_or_default())
}

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
    let (odm, steps) = common::connect("movies").await?;
    let raw_movies = odm.database().collection::<Document>("movies");
    let raw_details = odm.database().collection::<Document>("movie_details");
    // Asked once, before the steps: whether the deployment has transactions.
    let transactions = odm.supports_transactions().await?;

    steps.start("Create the indexes (the comments' reference to their post)");
    say_lines(odm.sync_indexes().await?);
    steps.sent();

    let (mains, details): (Vec<Movie>, Vec<MovieDetails>) = [
        movie(
            1,
            "Arrival of Train",
            1896,
            1,
            "Documentary",
            (7.3, 5043),
            "A train arrives at a station.",
            &["Auguste Lumière", "Louis Lumière"],
            "France",
            (3.7, 59),
        ),
        movie(
            2,
            "A Trip to the Moon",
            1902,
            13,
            "Fantasy",
            (8.2, 48_000),
            "Astronomers fly to the Moon in a capsule shot from a cannon.",
            &["Georges Méliès"],
            "France",
            (3.9, 1_210),
        ),
        movie(
            3,
            "The Great Train Robbery",
            1903,
            11,
            "Western",
            (7.4, 18_000),
            "Bandits rob a train and are chased by a posse.",
            &["Edwin S. Porter"],
            "USA",
            (3.6, 411),
        ),
    ]
    .into_iter()
    .unzip();

    steps.start("Insert three movies and their details, both sides together");
    // ANCHOR: insert
    let pair = odm.subset::<MovieDetails>();
    pair.insert_many(&mains, &details).await?;
    // ANCHOR_END: insert
    say(format_args!("in a transaction: {transactions}"));
    steps.sent();
    let stored = raw_movies
        .find_one(doc! { "_id": 1_i64 })
        .await?
        .expect("stored");
    say("movies, as stored:");
    say(steps.show(&Bson::Document(stored.clone())));
    let stored_details = raw_details
        .find_one(doc! { "_id": 1_i64 })
        .await?
        .expect("stored");
    say("movie_details, as stored:");
    say(steps.show(&Bson::Document(stored_details.clone())));
    assert_eq!(stored.get_str("title").ok(), Some("Arrival of Train"));
    assert_eq!(
        stored_details.get_str("plot").ok(),
        Some("A train arrives at a station.")
    );

    steps.start("The listing reads the small documents only");
    // ANCHOR: listing
    let listing = odm
        .find(Movie::year().gte(1900))
        .sort(Movie::imdb().rating().desc())
        .await?;
    // ANCHOR_END: listing
    list("listing", titles(&listing));
    assert_eq!(
        titles(&listing),
        ["A Trip to the Moon", "The Great Train Robbery"]
    );
    steps.sent();

    steps.start("The details of every movie listed: one $in");
    // ANCHOR: details
    let pages: Vec<Option<MovieDetails>> = pair.details_of(&listing).await?;
    // ANCHOR_END: details
    for (movie, page) in listing.iter().zip(&pages) {
        let page = page.as_ref().expect("every movie has its details");
        say(format_args!(
            "{}: {}",
            movie.title,
            page.directors.join(", ")
        ));
    }
    steps.sent();

    steps.start("Delete a movie: its details go with it");
    // ANCHOR: delete
    let deleted = pair
        .delete(Movie::title().eq("The Great Train Robbery"))
        .await?;
    // ANCHOR_END: delete
    say(format_args!("movies deleted: {deleted}"));
    assert_eq!(deleted, 1);
    steps.sent();
    assert!(raw_details.find_one(doc! { "_id": 3_i64 }).await?.is_none());

    steps.start("An insert that stopped after the details: verify finds them, repair deletes them");
    // What a crash between the two writes of an insert without a transaction leaves: the
    // details, which no listing shows.
    let (_, orphan) = movie(
        4,
        "Le Voyage à travers l'impossible",
        1904,
        20,
        "Fantasy",
        (7.0, 2_000),
        "Travellers take a train to the Sun.",
        &["Georges Méliès"],
        "France",
        (3.5, 90),
    );
    odm.insert_one(&orphan).await?;
    steps.log().clear();
    // ANCHOR: repair
    let report = pair.verify().await?;
    // ANCHOR_END: repair
    say(&report);
    assert_eq!(report.details_without_main, [Bson::Int64(4)]);
    let repaired = pair.repair().await?;
    say(&repaired);
    assert_eq!(repaired.deleted, 1);
    steps.sent();

    steps.start("Schema change: move `plot` to the listing side");
    // ANCHOR: move_field
    // 1. Copy `plot` from each details document into its movie: one `aggregate` with `$merge`
    //    on `_id` (a details document without its movie is left out).
    raw_details
        .aggregate([
            doc! { "$project": { "_id": 1, "plot": 1 } },
            doc! { "$merge": { "into": "movies", "on": "_id", "whenMatched": "merge", "whenNotMatched": "discard" } },
        ])
        .await?;
    // 2. Once every reader takes `plot` from `movies`, remove it from the details.
    raw_details
        .update_many(doc! {}, doc! { "$unset": { "plot": "" } })
        .await?;
    // ANCHOR_END: move_field
    steps.sent();
    let moved = raw_movies
        .find_one(doc! { "_id": 2_i64 })
        .await?
        .expect("stored");
    say("movies, as stored:");
    say(steps.show(&Bson::Document(moved.clone())));
    assert_eq!(
        moved.get_str("plot").ok(),
        Some("Astronomers fly to the Moon in a capsule shot from a cannon.")
    );

    steps.start("A post and six comments: the post keeps the three highest-rated");
    let post = Post {
        id: ObjectId::new(),
        title: "Subset pattern".into(),
        top_comments: Vec::new(),
    };
    steps.name(post.id, "post");
    odm.insert_one(&post).await?;
    let comments: Vec<Comment> = [
        ("ann", "Clear.", 4),
        ("bob", "Which data is used most?", 9),
        ("cid", "Nice slides.", 1),
        ("dee", "What about writes?", 7),
        ("eve", "Typo on slide 3.", 2),
        ("fay", "Thanks!", 5),
    ]
    .into_iter()
    .map(|(author, text, rating)| Comment {
        id: ObjectId::new(),
        post: Ref::new(post.id),
        author: author.into(),
        text: text.into(),
        rating,
    })
    .collect();
    for c in &comments {
        steps.name(c.id, &c.author);
    }
    odm.insert_many(&comments).await?;
    steps.sent();
    let top = top_ratings(&odm, post.id).await?;
    list("top ratings", &top);
    assert_eq!(top, [9, 7, 5]);

    steps.start("ann's comment rises into the top three: the post's summary is recomputed");
    // ANCHOR: rate
    odm.update_by_id::<Comment>(comments[0].id, Comment::rating().set(8))
        .await?;
    // ANCHOR_END: rate
    steps.sent();
    let top = top_ratings(&odm, post.id).await?;
    list("top ratings", &top);
    assert_eq!(top, [9, 8, 7]);

    steps.start("bob's comment falls out of it: the fourth comes in");
    odm.update_by_id::<Comment>(comments[1].id, Comment::rating().set(0))
        .await?;
    steps.sent();
    let stored = odm
        .database()
        .collection::<Document>("posts")
        .find_one(doc! { "_id": post.id })
        .await?
        .expect("stored");
    say("posts, as stored:");
    say(steps.show(&Bson::Document(stored)));
    let top = top_ratings(&odm, post.id).await?;
    assert_eq!(top, [8, 7, 5]);

    common::drop_database(&odm).await
}
