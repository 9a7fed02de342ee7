//! A blog whose copies are themselves copied: the author's display name is copied into each
//! comment, and the comment's copy into the post's latest comments (level 2), into the replies
//! (level 2) and from a reply into the notifications about it (level 3).

#![allow(dead_code)]

use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub display_name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct CommentSummary {
    pub body: String,
    pub author_name: String,
    pub time: DateTime,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "posts")]
pub struct Post {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub title: String,
    /// Level 2: a copy of each comment's copy of its author's name.
    #[denormalize(
        from = "Comment",
        via = "post",
        fields = "body, author_name, time",
        latest = 5,
        sort = "time"
    )]
    #[serde(default)]
    pub latest_comments: Vec<CommentSummary>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "comments")]
pub struct Comment {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[reference(on_delete = "restrict")]
    pub author: Ref<User>,
    /// Level 1.
    #[denormalize(from = "User", via = "author", fields = "display_name")]
    #[serde(default)]
    pub author_name: String,
    #[parent(on_delete = "cascade")]
    pub post: Ref<Post>,
    pub body: String,
    pub time: DateTime,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "replies")]
pub struct Reply {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[reference(on_delete = "restrict")]
    pub comment: Ref<Comment>,
    /// Level 2, flat: the comment's copy of its author's name.
    #[denormalize(from = "Comment", via = "comment", fields = "author_name")]
    #[serde(default)]
    pub comment_author: String,
    pub body: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ReplyCard {
    pub id: Ref<Reply>,
    pub comment_author: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "notifications")]
pub struct Notification {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    /// Level 3: a summary holding the reply's copy of the comment's copy.
    #[denormalize(from = "Reply", fields = "comment_author")]
    pub reply: ReplyCard,
}
