//! Labels with long string ids, copied into shelves (arrays of summaries) and tags (a flat copy
//! through an optional reference): enough of them, and long enough, that the id lists of one
//! operation pass MongoDB's 16 MB command limit.

#![allow(dead_code)]

pub mod labels {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "labels")]
    pub struct Label {
        #[serde(rename = "_id")]
        pub id: String,
        pub name: String,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct LabelCard {
        pub id: Ref<Label>,
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "shelves")]
    pub struct Shelf {
        #[serde(rename = "_id")]
        pub id: i32,
        #[denormalize(
            from = "Label",
            fields = "name",
            max = 1000,
            allow_large = "a shelf of labels is read whole, to test id lists past 16 MB"
        )]
        pub labels: Vec<LabelCard>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "tags")]
    pub struct Tag {
        #[serde(rename = "_id")]
        pub id: String,
        #[reference(on_delete = "nullify")]
        pub label: Option<Ref<Label>>,
        #[denormalize(from = "Label", via = "label", fields = "name")]
        #[serde(default)]
        pub label_name: String,
    }
}
