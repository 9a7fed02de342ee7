//! A ring of a hundred models, each referencing the next (the last the first): it compiles
//! (a model's `Send` and `Sync` do not follow its references from model to model, which would
//! overflow the compiler's recursion limit), and a reference across it is stored as an id and
//! populated.

mod common;

use common::stored_one;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_0")]
struct Ring0 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring1>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_1")]
struct Ring1 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring2>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_2")]
struct Ring2 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring3>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_3")]
struct Ring3 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring4>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_4")]
struct Ring4 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring5>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_5")]
struct Ring5 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring6>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_6")]
struct Ring6 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring7>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_7")]
struct Ring7 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring8>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_8")]
struct Ring8 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring9>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_9")]
struct Ring9 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring10>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_10")]
struct Ring10 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring11>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_11")]
struct Ring11 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring12>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_12")]
struct Ring12 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring13>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_13")]
struct Ring13 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring14>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_14")]
struct Ring14 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring15>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_15")]
struct Ring15 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring16>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_16")]
struct Ring16 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring17>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_17")]
struct Ring17 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring18>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_18")]
struct Ring18 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring19>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_19")]
struct Ring19 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring20>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_20")]
struct Ring20 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring21>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_21")]
struct Ring21 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring22>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_22")]
struct Ring22 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring23>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_23")]
struct Ring23 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring24>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_24")]
struct Ring24 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring25>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_25")]
struct Ring25 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring26>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_26")]
struct Ring26 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring27>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_27")]
struct Ring27 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring28>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_28")]
struct Ring28 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring29>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_29")]
struct Ring29 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring30>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_30")]
struct Ring30 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring31>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_31")]
struct Ring31 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring32>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_32")]
struct Ring32 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring33>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_33")]
struct Ring33 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring34>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_34")]
struct Ring34 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring35>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_35")]
struct Ring35 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring36>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_36")]
struct Ring36 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring37>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_37")]
struct Ring37 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring38>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_38")]
struct Ring38 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring39>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_39")]
struct Ring39 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring40>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_40")]
struct Ring40 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring41>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_41")]
struct Ring41 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring42>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_42")]
struct Ring42 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring43>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_43")]
struct Ring43 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring44>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_44")]
struct Ring44 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring45>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_45")]
struct Ring45 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring46>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_46")]
struct Ring46 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring47>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_47")]
struct Ring47 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring48>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_48")]
struct Ring48 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring49>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_49")]
struct Ring49 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring50>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_50")]
struct Ring50 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring51>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_51")]
struct Ring51 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring52>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_52")]
struct Ring52 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring53>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_53")]
struct Ring53 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring54>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_54")]
struct Ring54 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring55>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_55")]
struct Ring55 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring56>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_56")]
struct Ring56 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring57>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_57")]
struct Ring57 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring58>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_58")]
struct Ring58 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring59>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_59")]
struct Ring59 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring60>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_60")]
struct Ring60 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring61>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_61")]
struct Ring61 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring62>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_62")]
struct Ring62 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring63>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_63")]
struct Ring63 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring64>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_64")]
struct Ring64 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring65>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_65")]
struct Ring65 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring66>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_66")]
struct Ring66 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring67>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_67")]
struct Ring67 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring68>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_68")]
struct Ring68 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring69>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_69")]
struct Ring69 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring70>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_70")]
struct Ring70 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring71>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_71")]
struct Ring71 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring72>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_72")]
struct Ring72 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring73>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_73")]
struct Ring73 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring74>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_74")]
struct Ring74 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring75>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_75")]
struct Ring75 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring76>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_76")]
struct Ring76 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring77>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_77")]
struct Ring77 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring78>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_78")]
struct Ring78 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring79>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_79")]
struct Ring79 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring80>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_80")]
struct Ring80 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring81>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_81")]
struct Ring81 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring82>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_82")]
struct Ring82 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring83>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_83")]
struct Ring83 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring84>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_84")]
struct Ring84 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring85>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_85")]
struct Ring85 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring86>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_86")]
struct Ring86 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring87>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_87")]
struct Ring87 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring88>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_88")]
struct Ring88 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring89>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_89")]
struct Ring89 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring90>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_90")]
struct Ring90 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring91>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_91")]
struct Ring91 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring92>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_92")]
struct Ring92 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring93>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_93")]
struct Ring93 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring94>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_94")]
struct Ring94 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring95>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_95")]
struct Ring95 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring96>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_96")]
struct Ring96 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring97>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_97")]
struct Ring97 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring98>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_98")]
struct Ring98 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring99>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "ring_99")]
struct Ring99 {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    next: Option<Ref<Ring0>>,
}

#[tokio::test]
async fn a_reference_across_a_ring_of_a_hundred_models_is_an_id_and_populates() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Ring0 {
        id: 1,
        name: "first".into(),
        next: None,
    })
    .await?;
    odm.insert_one(&Ring99 {
        id: 99,
        name: "last".into(),
        next: Some(Ref::new(1)),
    })
    .await?;
    let stored = stored_one(&db, "ring_99", 99).await.expect("stored");
    assert_eq!(stored.get_i32("next").ok(), Some(1), "{stored}");
    let last = odm
        .find_one(Ring99::id_field().eq(99))
        .populate(Ring99::next())
        .await?
        .expect("found");
    let first = last.next.as_ref().and_then(Ref::get).expect("populated");
    assert_eq!(first.name, "first");
    Ok(())
}
