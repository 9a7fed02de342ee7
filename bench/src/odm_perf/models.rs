//! The specification's models, as serde types shared by odm and the driver: field names and
//! types as in its datasets; `unique_id` added to every embedded document, as the specification
//! asks of the nested tasks.

use odm::bson::oid::ObjectId;
use odm::prelude::*;

/// `small_doc.json`: seven strings and six integers.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "small_doc")]
pub struct SmallDoc {
    #[serde(rename = "_id", default = "ObjectId::new")]
    pub id: ObjectId,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: i32,
    pub field9: i32,
    pub field10: i32,
    pub field11: i32,
    pub field12: i32,
    pub field13: i32,
}

/// [`SmallDoc`] with its id left to the library (`None` until inserted).
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "small_doc_auto_id")]
pub struct SmallDocAutoId {
    #[serde(rename = "_id", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: i32,
    pub field9: i32,
    pub field10: i32,
    pub field11: i32,
    pub field12: i32,
    pub field13: i32,
}

/// The specification's FOREIGN_KEY model: a `name`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "foreign_key")]
pub struct ForeignKey {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
}

/// [`SmallDoc`] with `field_fk` referencing a [`ForeignKey`].
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "small_doc_fk")]
pub struct SmallDocFk {
    #[serde(rename = "_id", default = "ObjectId::new")]
    pub id: ObjectId,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: i32,
    pub field9: i32,
    pub field10: i32,
    pub field11: i32,
    pub field12: i32,
    pub field13: i32,
    #[reference]
    pub field_fk: Ref<ForeignKey>,
}

/// What hand-written driver code reads for [`SmallDocFk`]: the same fields, the reference as
/// its id.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SmallDocFkRow {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: i32,
    pub field9: i32,
    pub field10: i32,
    pub field11: i32,
    pub field12: i32,
    pub field13: i32,
    pub field_fk: ObjectId,
}

/// `large_doc.json`: 125 strings and 125 integers.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "large_doc")]
pub struct LargeDoc {
    #[serde(rename = "_id", default = "ObjectId::new")]
    pub id: ObjectId,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: String,
    pub field9: String,
    pub field10: String,
    pub field11: String,
    pub field12: String,
    pub field13: String,
    pub field14: String,
    pub field15: String,
    pub field16: String,
    pub field17: String,
    pub field18: String,
    pub field19: String,
    pub field20: String,
    pub field21: String,
    pub field22: String,
    pub field23: String,
    pub field24: String,
    pub field25: String,
    pub field26: String,
    pub field27: String,
    pub field28: String,
    pub field29: String,
    pub field30: String,
    pub field31: String,
    pub field32: String,
    pub field33: String,
    pub field34: String,
    pub field35: String,
    pub field36: String,
    pub field37: String,
    pub field38: String,
    pub field39: String,
    pub field40: String,
    pub field41: String,
    pub field42: String,
    pub field43: String,
    pub field44: String,
    pub field45: String,
    pub field46: String,
    pub field47: String,
    pub field48: String,
    pub field49: String,
    pub field50: String,
    pub field51: String,
    pub field52: String,
    pub field53: String,
    pub field54: String,
    pub field55: String,
    pub field56: String,
    pub field57: String,
    pub field58: String,
    pub field59: String,
    pub field60: String,
    pub field61: String,
    pub field62: String,
    pub field63: String,
    pub field64: String,
    pub field65: String,
    pub field66: String,
    pub field67: String,
    pub field68: String,
    pub field69: String,
    pub field70: String,
    pub field71: String,
    pub field72: String,
    pub field73: String,
    pub field74: String,
    pub field75: String,
    pub field76: String,
    pub field77: String,
    pub field78: String,
    pub field79: String,
    pub field80: String,
    pub field81: String,
    pub field82: String,
    pub field83: String,
    pub field84: String,
    pub field85: String,
    pub field86: String,
    pub field87: String,
    pub field88: String,
    pub field89: String,
    pub field90: String,
    pub field91: String,
    pub field92: String,
    pub field93: String,
    pub field94: String,
    pub field95: String,
    pub field96: String,
    pub field97: String,
    pub field98: String,
    pub field99: String,
    pub field100: String,
    pub field101: String,
    pub field102: String,
    pub field103: String,
    pub field104: String,
    pub field105: String,
    pub field106: String,
    pub field107: String,
    pub field108: String,
    pub field109: String,
    pub field110: String,
    pub field111: String,
    pub field112: String,
    pub field113: String,
    pub field114: String,
    pub field115: String,
    pub field116: String,
    pub field117: String,
    pub field118: String,
    pub field119: String,
    pub field120: String,
    pub field121: String,
    pub field122: String,
    pub field123: String,
    pub field124: String,
    pub field125: String,
    pub field126: i32,
    pub field127: i32,
    pub field128: i32,
    pub field129: i32,
    pub field130: i32,
    pub field131: i32,
    pub field132: i32,
    pub field133: i32,
    pub field134: i32,
    pub field135: i32,
    pub field136: i32,
    pub field137: i32,
    pub field138: i32,
    pub field139: i32,
    pub field140: i32,
    pub field141: i32,
    pub field142: i32,
    pub field143: i32,
    pub field144: i32,
    pub field145: i32,
    pub field146: i32,
    pub field147: i32,
    pub field148: i32,
    pub field149: i32,
    pub field150: i32,
    pub field151: i32,
    pub field152: i32,
    pub field153: i32,
    pub field154: i32,
    pub field155: i32,
    pub field156: i32,
    pub field157: i32,
    pub field158: i32,
    pub field159: i32,
    pub field160: i32,
    pub field161: i32,
    pub field162: i32,
    pub field163: i32,
    pub field164: i32,
    pub field165: i32,
    pub field166: i32,
    pub field167: i32,
    pub field168: i32,
    pub field169: i32,
    pub field170: i32,
    pub field171: i32,
    pub field172: i32,
    pub field173: i32,
    pub field174: i32,
    pub field175: i32,
    pub field176: i32,
    pub field177: i32,
    pub field178: i32,
    pub field179: i32,
    pub field180: i32,
    pub field181: i32,
    pub field182: i32,
    pub field183: i32,
    pub field184: i32,
    pub field185: i32,
    pub field186: i32,
    pub field187: i32,
    pub field188: i32,
    pub field189: i32,
    pub field190: i32,
    pub field191: i32,
    pub field192: i32,
    pub field193: i32,
    pub field194: i32,
    pub field195: i32,
    pub field196: i32,
    pub field197: i32,
    pub field198: i32,
    pub field199: i32,
    pub field200: i32,
    pub field201: i32,
    pub field202: i32,
    pub field203: i32,
    pub field204: i32,
    pub field205: i32,
    pub field206: i32,
    pub field207: i32,
    pub field208: i32,
    pub field209: i32,
    pub field210: i32,
    pub field211: i32,
    pub field212: i32,
    pub field213: i32,
    pub field214: i32,
    pub field215: i32,
    pub field216: i32,
    pub field217: i32,
    pub field218: i32,
    pub field219: i32,
    pub field220: i32,
    pub field221: i32,
    pub field222: i32,
    pub field223: i32,
    pub field224: i32,
    pub field225: i32,
    pub field226: i32,
    pub field227: i32,
    pub field228: i32,
    pub field229: i32,
    pub field230: i32,
    pub field231: i32,
    pub field232: i32,
    pub field233: i32,
    pub field234: i32,
    pub field235: i32,
    pub field236: i32,
    pub field237: i32,
    pub field238: i32,
    pub field239: i32,
    pub field240: i32,
    pub field241: i32,
    pub field242: i32,
    pub field243: i32,
    pub field244: i32,
    pub field245: i32,
    pub field246: i32,
    pub field247: i32,
    pub field248: i32,
    pub field249: i32,
    pub field250: i32,
}

/// An embedded document of strings in `large_doc_nested.json`.
#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
pub struct StrDoc {
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub field4: String,
    pub field5: String,
    pub field6: String,
    pub field7: String,
    pub field8: String,
    pub field9: String,
    pub field10: String,
    pub field11: String,
    pub field12: String,
    pub field13: String,
    pub field14: String,
    pub field15: String,
    #[serde(default = "ObjectId::new")]
    pub unique_id: ObjectId,
}

/// An embedded document of integers in `large_doc_nested.json`.
#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
pub struct IntDoc {
    pub field1: i32,
    pub field2: i32,
    pub field3: i32,
    pub field4: i32,
    pub field5: i32,
    pub field6: i32,
    pub field7: i32,
    pub field8: i32,
    pub field9: i32,
    pub field10: i32,
    pub field11: i32,
    pub field12: i32,
    pub field13: i32,
    pub field14: i32,
    pub field15: i32,
    #[serde(default = "ObjectId::new")]
    pub unique_id: ObjectId,
}

/// `large_doc_nested.json`: five embedded documents of strings, an array of them, and seven of
/// integers. The two `unique_id`s the tasks search by are indexed.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "large_doc_nested")]
#[odm(index(keys = "embedded_str_doc_1.unique_id"))]
#[odm(index(keys = "embedded_str_doc_array.unique_id"))]
pub struct LargeDocNested {
    #[serde(rename = "_id", default = "ObjectId::new")]
    pub id: ObjectId,
    #[embed]
    pub embedded_str_doc_1: StrDoc,
    #[embed]
    pub embedded_str_doc_2: StrDoc,
    #[embed]
    pub embedded_str_doc_3: StrDoc,
    #[embed]
    pub embedded_str_doc_4: StrDoc,
    #[embed]
    pub embedded_str_doc_5: StrDoc,
    #[embed(max = 100)]
    pub embedded_str_doc_array: Vec<StrDoc>,
    #[embed]
    pub embedded_int_doc_8: IntDoc,
    #[embed]
    pub embedded_int_doc_9: IntDoc,
    #[embed]
    pub embedded_int_doc_10: IntDoc,
    #[embed]
    pub embedded_int_doc_11: IntDoc,
    #[embed]
    pub embedded_int_doc_12: IntDoc,
    #[embed]
    pub embedded_int_doc_13: IntDoc,
    #[embed]
    pub embedded_int_doc_14: IntDoc,
}

impl LargeDocNested {
    /// A copy with a new `_id` and new `unique_id`s, as the specification's setup makes them.
    pub fn renewed(&self) -> Self {
        let mut copy = self.clone();
        copy.id = ObjectId::new();
        for s in [
            &mut copy.embedded_str_doc_1,
            &mut copy.embedded_str_doc_2,
            &mut copy.embedded_str_doc_3,
            &mut copy.embedded_str_doc_4,
            &mut copy.embedded_str_doc_5,
        ] {
            s.unique_id = ObjectId::new();
        }
        for s in &mut copy.embedded_str_doc_array {
            s.unique_id = ObjectId::new();
        }
        for i in [
            &mut copy.embedded_int_doc_8,
            &mut copy.embedded_int_doc_9,
            &mut copy.embedded_int_doc_10,
            &mut copy.embedded_int_doc_11,
            &mut copy.embedded_int_doc_12,
            &mut copy.embedded_int_doc_13,
            &mut copy.embedded_int_doc_14,
        ] {
            i.unique_id = ObjectId::new();
        }
        copy
    }
}
