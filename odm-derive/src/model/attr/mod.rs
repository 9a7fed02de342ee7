//! Attribute parsing. Parsing never stops at the first problem: every error goes into the
//! context and parsing goes on, so the user sees all of them at once.

mod background;
mod bound;
mod bucket;
mod counters;
mod defaults;
mod denormalize;
mod index;
mod reference;
mod shard;
mod soft_delete;
mod subset;
mod tree;
mod versioning;
mod versions;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr, Token};

use super::case::RenameRule;
pub use super::syntax::is_field_name;
pub(super) use super::syntax::{key_name, skip_value, string_value};
use crate::ctxt::Ctxt;

pub use background::Cascade;
pub use bound::Bound;
use bound::{parse_bound_key, BoundKey};
pub use bucket::BucketAttr;
pub use counters::{CountersAttr, Granularity, TimeSeriesAttr};
pub use defaults::DefaultsAttr;
pub use denormalize::{CopyKind, DenormalizeAttr};
pub use index::{CompoundIndex, FieldIndex, IndexKeyPath};
pub use index::{IndexKind, IndexOptions};
pub use reference::{OnDelete, ReferenceAttr};
pub use shard::ShardAttr;
pub use soft_delete::SoftDeleteAttr;
pub use tree::{TreeAttr, TreeDelete};
pub use versioning::Stamp;
pub use versions::{VersionAttrs, UPGRADE_WITHOUT_VERSION, VERSION_FIELD};

/// Which derive is running.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Derive {
    Model,
    Embed,
}

impl Derive {
    pub fn name(self) -> &'static str {
        match self {
            Derive::Model => "Model",
            Derive::Embed => "Embed",
        }
    }
}

const CONTAINER_KEYS: &str =
    "`collection`, `index`, `kind_of`, `common`, `bucket`, `counters`, `time_series`, `tree`, `shard_key`, `subset_of`, `schema_version`, `upgrade`, `soft_delete`, `read_preference`, `write_concern`";
const FIELD_INDEX_KEYS: &str = "`unique`, `sparse`, `desc`, `text`, `name`, `expire_after_secs`, `kind`, `collation`, `hidden`, `partial`, `forever`";
const COMPOUND_INDEX_KEYS: &str =
    "`keys`, `unique`, `sparse`, `text`, `name`, `collation`, `hidden`, `partial`, `forever`";

/// `#[odm(...)]` on the struct, plus the serde container attributes that change paths.
#[derive(Default)]
pub struct ContainerAttrs {
    pub collection: Option<LitStr>,
    /// `kind_of = "Book"`: the struct is a kind of the polymorphic model `Book`.
    pub kind_of: Option<(syn::Type, LitStr)>,
    /// `common = "title, isbn"` on an enum of kinds: the fields every kind has.
    pub common: Option<LitStr>,
    /// `#[serde(tag = "type")]`: the discriminator of an enum of kinds.
    pub serde_tag: Option<LitStr>,
    /// `#[serde(content = "...")]` or `#[serde(untagged)]`: a representation that is not
    /// internally tagged.
    pub serde_not_internal: Option<Span>,
    /// `#[serde(into = "...")]` or `#[serde(remote = "...")]`: another type's `Serialize`
    /// writes the document, whose keys the derive cannot know.
    pub serde_opaque: bool,
    pub indexes: Vec<CompoundIndex>,
    /// `bucket(...)`: the documents are buckets of a key's items, one per period.
    pub bucket: Option<BucketAttr>,
    pub rename_all: Option<RenameRule>,
    /// `#[allow(deprecated)]` on the struct: copying a `#[frequently_updated]` field is
    /// accepted without a warning.
    pub allow_deprecated: bool,
    pub counters: Option<CountersAttr>,
    pub time_series: Option<TimeSeriesAttr>,
    /// `tree(...)`: the model is a tree of documents.
    pub tree: Option<TreeAttr>,
    /// `shard_key(...)`: the collection is sharded by these fields.
    pub shard_key: Option<ShardAttr>,
    /// `subset_of = "Movie"`: the model holds the details of `Movie` (the subset pattern).
    pub subset_of: Option<(syn::Type, LitStr)>,
    /// `schema_version = N`, `upgrade = "..."`.
    pub versions: VersionAttrs,
    /// `soft_delete` (`= "field"`): deletes set the field instead of removing the document.
    pub soft_delete: Option<SoftDeleteAttr>,
    /// `read_preference = "..."`, `write_concern = ...`: the model's defaults.
    pub defaults: DefaultsAttr,
}

/// `#[embed]` or `#[embed(max = N, allow_large = "reason")]` on a field.
pub struct EmbedAttr {
    /// The whole attribute, where errors about it point.
    pub tokens: TokenStream,
    pub bound: Bound,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks are not checked, since the user meant something else.
    pub malformed: bool,
}

const EMBED_KEYS: &str = "`max`, `allow_large`";

/// Everything a field's attributes say.
#[derive(Default)]
pub struct FieldAttrs {
    pub serde_rename: Option<String>,
    pub serde_skip: bool,
    /// `#[serde(skip_serializing_if = ...)]` (or `skip_serializing`): serde may leave the field
    /// out of a stored document.
    pub serde_maybe_absent: bool,
    pub serde_flatten: Option<Span>,
    /// `#[serde(with = "odm::dbref")]`: a reference stored as DBRefs.
    pub serde_dbref: Option<Span>,
    /// `#[serde(with = ...)]` or `#[serde(serialize_with = ...)]`: a function of the
    /// application writes the value, whose keys the derive cannot know.
    pub serde_custom: bool,
    pub embed: Option<EmbedAttr>,
    pub index: Option<FieldIndex>,
    pub reference: Option<ReferenceAttr>,
    pub denormalize: Option<DenormalizeAttr>,
    /// `#[frequently_updated]`: the attribute, where errors about it point.
    pub frequently_updated: Option<TokenStream>,
    /// `#[allow(deprecated)]` on the field (see [`ContainerAttrs::allow_deprecated`]).
    pub allow_deprecated: bool,
    /// `#[odm(version)]`, `#[odm(created_at)]`, `#[odm(updated_at)]`: a field the ODM keeps.
    pub stamp: Option<(Stamp, Span)>,
}

/// Sets a flag, reporting a repeated one at its second occurrence.
fn set_flag(
    cx: &Ctxt,
    slot: &mut Option<Span>,
    meta: &ParseNestedMeta<'_>,
    what: &str,
) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{what}` takes no value: write `{what}` alone"),
        );
        skip_value(meta)?;
    }
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate `{what}`"));
    }
    *slot = Some(meta.path.span());
    Ok(())
}

impl ContainerAttrs {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute], derive: Derive) -> Self {
        let mut out = ContainerAttrs::default();
        for attr in attrs {
            if attr.path().is_ident("serde") {
                parse_serde_container(attr, &mut out);
            } else if allows_deprecated(attr) {
                out.allow_deprecated = true;
            } else if attr.path().is_ident("odm") {
                if derive == Derive::Embed {
                    cx.error_spanned_by(
                        attr,
                        "`#[odm(...)]` configures a Model; an Embed type has no collection and no indexes of its own (declare indexes on the model: `#[odm(index(keys = \"field.sub\"))]`)",
                    );
                    continue;
                }
                let result = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("collection") {
                        let lit = string_value(cx, &meta, "collection", "books")?;
                        if out.collection.is_some() {
                            cx.error_spanned_by(&meta.path, "duplicate odm attribute `collection`");
                        } else if let Some(lit) = lit {
                            out.collection = Some(lit);
                        }
                    } else if meta.path.is_ident("index") {
                        out.indexes.push(CompoundIndex::parse(cx, &meta)?);
                    } else if meta.path.is_ident("kind_of") {
                        if let Some(lit) = string_value(cx, &meta, "kind_of", "Book")? {
                            match lit.parse::<syn::Type>() {
                                Ok(ty) if out.kind_of.is_none() => out.kind_of = Some((ty, lit)),
                                Ok(_) => cx.error_spanned_by(&meta.path, "duplicate odm attribute `kind_of`"),
                                Err(_) => cx.error_spanned_by(&lit, "`kind_of` names the enum of kinds this struct is one of: `kind_of = \"Book\"`"),
                            }
                        }
                    } else if meta.path.is_ident("bucket") {
                        let bucket = BucketAttr::parse(cx, &meta)?;
                        if out.bucket.is_some() {
                            cx.error_spanned_by(&meta.path, "duplicate odm attribute `bucket`");
                        }
                        out.bucket.get_or_insert(bucket);
                    } else if meta.path.is_ident("tree") {
                        TreeAttr::parse(cx, &meta, &mut out.tree)?;
                    } else if meta.path.is_ident("shard_key") {
                        ShardAttr::parse(cx, &meta, &mut out.shard_key)?;
                    } else if meta.path.is_ident("schema_version") {
                        out.versions.parse_version(cx, &meta)?;
                    } else if meta.path.is_ident("upgrade") {
                        out.versions.parse_upgrade(cx, &meta)?;
                    } else if meta.path.is_ident("subset_of") {
                        subset::parse(cx, &meta, &mut out.subset_of)?;
                    } else if meta.path.is_ident("soft_delete") {
                        soft_delete::parse(cx, &meta, &mut out.soft_delete)?;
                    } else if meta.path.is_ident("read_preference") {
                        out.defaults.parse_read_preference(cx, &meta)?;
                    } else if meta.path.is_ident("write_concern") {
                        out.defaults.parse_write_concern(cx, &meta)?;
                    } else if meta.path.is_ident("common") {
                        if let Some(lit) = string_value(cx, &meta, "common", "title, isbn")? {
                            if out.common.is_some() {
                                cx.error_spanned_by(&meta.path, "duplicate odm attribute `common`");
                            }
                            out.common = Some(lit);
                        }
                    } else if meta.path.is_ident("counters") {
                        let parsed = CountersAttr::parse(cx, &meta)?;
                        match out.counters {
                            Some(_) => cx.error_spanned_by(&meta.path, "duplicate odm attribute `counters`"),
                            None => out.counters = Some(parsed),
                        }
                    } else if meta.path.is_ident("time_series") {
                        let parsed = TimeSeriesAttr::parse(cx, &meta)?;
                        match out.time_series {
                            Some(_) => cx.error_spanned_by(&meta.path, "duplicate odm attribute `time_series`"),
                            None => out.time_series = Some(parsed),
                        }
                    } else {
                        cx.error_spanned_by(
                            &meta.path,
                            format!("unknown odm container attribute `{}`, expected one of {CONTAINER_KEYS}", key_name(&meta)),
                        );
                        skip_value(&meta)?;
                    }
                    Ok(())
                });
                if let Err(e) = result {
                    cx.syn_error(e);
                }
            }
        }
        out
    }
}

fn parse_serde_container(attr: &Attribute, out: &mut ContainerAttrs) {
    // Only `rename_all` changes stored names; every other serde key is serde's business.
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("rename_all") {
            let lit = if meta.input.peek(Token![=]) {
                Some(meta.value()?.parse::<LitStr>()?)
            } else {
                let mut ser = None;
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("serialize") {
                        ser = Some(inner.value()?.parse::<LitStr>()?);
                    } else {
                        skip_value(&inner)?;
                    }
                    Ok(())
                })?;
                ser
            };
            // An unknown rule is serde's error to report; reporting it twice would not help.
            if let Some(rule) = lit.and_then(|lit| RenameRule::from_str(&lit.value())) {
                out.rename_all = Some(rule);
            }
        } else if meta.path.is_ident("tag") {
            out.serde_tag = Some(meta.value()?.parse::<LitStr>()?);
        } else if meta.path.is_ident("content") || meta.path.is_ident("untagged") {
            out.serde_not_internal = Some(meta.path.span());
            skip_value(&meta)?;
        } else if meta.path.is_ident("into") || meta.path.is_ident("remote") {
            out.serde_opaque = true;
            skip_value(&meta)?;
        } else {
            skip_value(&meta)?;
        }
        Ok(())
    });
}

impl FieldAttrs {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute], derive: Derive) -> Self {
        let mut out = FieldAttrs::default();
        for attr in attrs {
            let path = attr.path();
            if path.is_ident("serde") {
                parse_serde_field(attr, &mut out);
            } else if allows_deprecated(attr) {
                out.allow_deprecated = true;
            } else if path.is_ident("frequently_updated") {
                if derive == Derive::Embed {
                    cx.error_spanned_by(attr, "`#[frequently_updated]` marks a field of a model, the source of copies; mark the model's field that holds this type");
                    continue;
                }
                if !matches!(attr.meta, syn::Meta::Path(_)) {
                    cx.error_spanned_by(
                        attr,
                        "`#[frequently_updated]` takes no options: write `#[frequently_updated]`",
                    );
                }
                if out.frequently_updated.is_some() {
                    cx.error_spanned_by(attr, "duplicate `#[frequently_updated]`");
                }
                out.frequently_updated = Some(attr.to_token_stream());
            } else if path.is_ident("embed") {
                let embed = EmbedAttr::parse(cx, attr);
                if out.embed.is_some() {
                    cx.error_spanned_by(attr, "duplicate `#[embed]`");
                }
                out.embed = Some(embed);
            } else if path.is_ident("denormalize") {
                if derive == Derive::Embed {
                    cx.error_spanned_by(attr, "copies live on models: declare `#[denormalize]` on the model's field that holds this type");
                    continue;
                }
                let parsed = DenormalizeAttr::parse(cx, attr);
                if out.denormalize.is_some() {
                    cx.error_spanned_by(attr, "duplicate `#[denormalize]` on one field");
                } else {
                    out.denormalize = Some(parsed);
                }
            } else if path.is_ident("reference") || path.is_ident("parent") {
                if derive == Derive::Embed {
                    cx.error_spanned_by(
                        attr,
                        "references inside embedded documents are not supported: declare the reference on the model",
                    );
                    continue;
                }
                let parsed = ReferenceAttr::parse(cx, attr, path.is_ident("parent"));
                if out.reference.is_some() {
                    cx.error_spanned_by(attr, "a field holds one reference declaration: `#[reference(...)]` or `#[parent(...)]`, once");
                } else {
                    out.reference = Some(parsed);
                }
            } else if path.is_ident("index") {
                if derive == Derive::Embed {
                    cx.error_spanned_by(
                        attr,
                        "indexes belong to the model: declare this one on the model that embeds this type, e.g. `#[odm(index(keys = \"publisher.name\"))]`",
                    );
                    continue;
                }
                let index = FieldIndex::parse(cx, attr);
                if out.index.is_some() {
                    cx.error_spanned_by(attr, "duplicate `#[index]` on one field; for several indexes use `#[odm(index(keys = ...))]` on the struct");
                } else {
                    out.index = Some(index);
                }
            } else if path.is_ident("odm") {
                versioning::parse_field(cx, attr, derive, &mut out.stamp);
            }
        }
        out
    }
}

/// `#[allow(deprecated)]`, alone or among other lints.
fn allows_deprecated(attr: &Attribute) -> bool {
    if !attr.path().is_ident("allow") {
        return false;
    }
    let mut found = false;
    // A malformed `allow` is rustc's error to report.
    let _ = attr.parse_nested_meta(|meta| {
        found |= meta.path.is_ident("deprecated");
        Ok(())
    });
    found
}

impl EmbedAttr {
    /// `#[embed]` or `#[embed(max = N, allow_large = "...")]`; every problem reported.
    fn parse(cx: &Ctxt, attr: &Attribute) -> Self {
        let mut bound = Bound::default();
        let mut malformed = false;
        if !matches!(attr.meta, syn::Meta::Path(_)) {
            let result = attr.parse_nested_meta(|meta| {
                match parse_bound_key(cx, &meta, &mut bound)? {
                    BoundKey::Valid => {}
                    BoundKey::Invalid => malformed = true,
                    BoundKey::Other => {
                        malformed = true;
                        cx.error_spanned_by(
                            &meta.path,
                            format!(
                                "unknown embed option `{}`, expected one of {EMBED_KEYS}",
                                key_name(&meta)
                            ),
                        );
                        skip_value(&meta)?;
                    }
                }
                Ok(())
            });
            if let Err(e) = result {
                malformed = true;
                cx.syn_error(e);
            }
        }
        EmbedAttr {
            tokens: attr.to_token_stream(),
            bound,
            malformed,
        }
    }
}

fn parse_serde_field(attr: &Attribute, out: &mut FieldAttrs) {
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("rename") {
            if meta.input.peek(Token![=]) {
                out.serde_rename = Some(meta.value()?.parse::<LitStr>()?.value());
            } else {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("serialize") {
                        out.serde_rename = Some(inner.value()?.parse::<LitStr>()?.value());
                    } else {
                        skip_value(&inner)?;
                    }
                    Ok(())
                })?;
            }
        } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_serializing") {
            out.serde_skip = true;
            out.serde_maybe_absent |= meta.path.is_ident("skip_serializing");
            skip_value(&meta)?;
        } else if meta.path.is_ident("skip_serializing_if") {
            out.serde_maybe_absent = true;
            skip_value(&meta)?;
        } else if meta.path.is_ident("flatten") {
            out.serde_flatten = Some(meta.path.span());
        } else if meta.path.is_ident("with") {
            let lit = meta.value()?.parse::<LitStr>()?;
            out.serde_custom = true;
            if lit.value().replace(' ', "").ends_with("::dbref") || lit.value() == "dbref" {
                out.serde_dbref = Some(lit.span());
            }
        } else if meta.path.is_ident("serialize_with") {
            out.serde_custom = true;
            skip_value(&meta)?;
        } else {
            skip_value(&meta)?;
        }
        Ok(())
    });
}

/// `sort = "-time"`: the direction (1 or -1) and the field name.
pub fn sort_key(value: &str) -> (i32, &str) {
    match value.strip_prefix('-') {
        Some(name) => (-1, name),
        None => (1, value),
    }
}

/// The identifier of a field named in a string (`r#type` for `type`), at `span`.
pub fn field_ident(name: &str, span: Span) -> syn::Ident {
    match syn::parse_str::<syn::Ident>(name) {
        Ok(_) => syn::Ident::new(name, span),
        Err(_) => syn::Ident::new_raw(name, span),
    }
}
