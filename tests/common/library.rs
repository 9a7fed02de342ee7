#![allow(dead_code)]
use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "authors")]
pub struct Author {
    #[serde(rename = "_id")]
    pub id: i32,
    pub first_name: String,
    pub last_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: i32,
    #[index(unique)]
    pub username: String,
    pub password: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Publisher {
    pub name: String,
    pub date: DateTime,
    pub city: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Review {
    pub user: i32,
    pub text: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books", index(keys = "publisher.name"))]
pub struct Book {
    #[serde(rename = "_id")]
    pub id: i32,
    pub title: String,
    #[index]
    pub slug: String,
    pub author: i32,
    pub available: bool,
    #[index(unique)]
    pub isbn: String,
    pub pages: i32,
    #[embed]
    pub publisher: Publisher,
    #[index]
    pub subjects: Vec<String>,
    pub language: String,
    #[embed(max = 100)]
    pub reviews: Vec<Review>,
}

pub fn gatsby() -> Book {
    Book {
        id: 1,
        title: "The Great Gatsby".into(),
        slug: "9781857150193-the-great-gatsby".into(),
        author: 1,
        available: true,
        isbn: "9781857150193".into(),
        pages: 176,
        publisher: Publisher {
            name: "Everyman's Library".into(),
            date: DateTime::parse_rfc3339_str("1991-09-19T00:00:00Z").expect("valid date"),
            city: "London".into(),
        },
        subjects: vec!["Love stories".into(), "1920s".into(), "Jazz Age".into()],
        language: "English".into(),
        reviews: vec![
            Review {
                user: 1,
                text: "One of the best…".into(),
            },
            Review {
                user: 2,
                text: "It's hard to…".into(),
            },
        ],
    }
}

/// Seed exercise 3: a loan request, keyed by borrower and book.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct LoanId {
    pub borrower: String,
    pub book: i32,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "loans")]
pub struct Loan {
    #[serde(rename = "_id")]
    pub id: LoanId,
    pub pending: bool,
    pub approved: bool,
    pub priority: i32,
    pub started: Option<DateTime>,
}

/// Seed exercise 4: users can recommend each book only once.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "recommendations", index(keys = "book, user", unique))]
pub struct Recommendation {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub book: i32,
    pub user: i32,
}

/// A view of a book with just its title, for projections.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct BookTitle {
    pub title: String,
}

/// A few books with distinct ids, titles, isbns and page counts.
pub fn shelf() -> Vec<Book> {
    let titles = [
        ("This Side of Paradise", 305, vec!["1920s"]),
        ("The Beautiful and Damned", 449, vec!["1920s", "Jazz Age"]),
        ("Tender Is the Night", 317, vec!["Riviera"]),
        ("The Last Tycoon", 168, vec!["Hollywood"]),
    ];
    let mut books = vec![gatsby()];
    for (i, (title, pages, subjects)) in titles.into_iter().enumerate() {
        let id = i as i32 + 2;
        let mut b = gatsby();
        b.id = id;
        b.title = title.into();
        b.slug = format!("slug-{id}");
        b.isbn = format!("isbn-{id}");
        b.pages = pages;
        b.subjects = subjects.into_iter().map(String::from).collect();
        b.reviews = vec![];
        if id % 2 == 0 {
            b.publisher.name = "Scribner".into();
        }
        books.push(b);
    }
    books
}
