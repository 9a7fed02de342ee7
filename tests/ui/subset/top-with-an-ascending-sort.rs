use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct TopComment {
    #[serde(rename = "_id")]
    id: Ref<Comment>,
    rating: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[denormalize(from = "Comment", via = "post", fields = "rating", top = 3, sort = "rating")]
    top_comments: Vec<TopComment>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[parent]
    post: Ref<Post>,
    rating: i64,
}

fn main() {}
