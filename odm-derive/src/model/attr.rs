//! Attribute parsing. Parsing never stops at the first problem: every error goes into the
//! context and parsing goes on, so the user sees all of them at once.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Lit, LitStr, Token};

use super::case::RenameRule;
use super::Derive;
use crate::ctxt::Ctxt;

const CONTAINER_KEYS: &str =
    "`collection`, `index`, `kind_of`, `common`, `bucket`, `counters`, `time_series`, `tree`, `shard_key`, `subset_of`, `schema_version`, `upgrade`";
const FIELD_INDEX_KEYS: &str = "`unique`, `sparse`, `desc`, `text`, `name`, `expire_after_secs`";
const COMPOUND_INDEX_KEYS: &str = "`keys`, `unique`, `sparse`, `text`, `name`";

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
    pub indexes: Vec<CompoundIndex>,
    /// `bucket(...)`: the documents are buckets of a key's items, one per period.
    pub bucket: Option<super::bucket::BucketAttr>,
    pub rename_all: Option<RenameRule>,
    /// `#[allow(deprecated)]` on the struct: copying a `#[frequently_updated]` field is
    /// accepted without a warning.
    pub allow_deprecated: bool,
    pub counters: Option<super::counters::CountersAttr>,
    pub time_series: Option<super::counters::TimeSeriesAttr>,
    /// `tree(...)`: the model is a tree of documents.
    pub tree: Option<super::tree::TreeAttr>,
    /// `shard_key(...)`: the collection is sharded by these fields.
    pub shard_key: Option<super::shard::ShardAttr>,
    /// `subset_of = "Movie"`: the model holds the details of `Movie` (the subset pattern).
    pub subset_of: Option<(syn::Type, LitStr)>,
    /// `schema_version = N`, `upgrade = "..."`.
    pub versions: super::versions::VersionAttrs,
}

/// One key of a compound index: a field path (dotted into `#[embed]` fields), maybe descending.
pub struct IndexKeyPath {
    pub segments: Vec<String>,
    pub desc: bool,
}

/// `#[odm(index(keys = "book, -user", unique))]`.
pub struct CompoundIndex {
    pub span: Span,
    pub keys_lit: Option<LitStr>,
    pub keys: Vec<IndexKeyPath>,
    pub unique: Option<Span>,
    pub sparse: Option<Span>,
    pub text: Option<Span>,
    pub name: Option<LitStr>,
}

/// `#[index(...)]` on a field.
pub struct FieldIndex {
    /// The whole attribute, where errors about the index as a whole point.
    pub tokens: TokenStream,
    pub unique: Option<Span>,
    pub sparse: Option<Span>,
    pub desc: Option<Span>,
    pub text: Option<Span>,
    pub name: Option<LitStr>,
    pub expire_after_secs: Option<(u64, Span)>,
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

/// A declared array bound: `max = N`, and the stated reason for a large one.
#[derive(Default)]
pub struct Bound {
    pub max: Option<(u32, Span)>,
    pub allow_large: Option<LitStr>,
}

/// What deleting a referenced document does to the referencing ones.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OnDelete {
    Restrict,
    Nullify,
    Pull,
    Cascade,
}

pub const ON_DELETE_VALUES: &str = "\"restrict\", \"nullify\", \"pull\", \"cascade\"";

/// `#[reference(...)]` or `#[parent(...)]` on a field.
pub struct ReferenceAttr {
    /// The whole attribute, where errors about it point.
    pub tokens: TokenStream,
    /// `#[parent]` rather than `#[reference]`.
    pub parent: bool,
    pub many: Option<Span>,
    /// `poly`: the field holds polymorphic references (an enum deriving `PolyRef`).
    pub poly: Option<Span>,
    pub bound: Bound,
    pub inverse: Option<LitStr>,
    pub on_delete: Option<(OnDelete, Span)>,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks, and about the field's type, are not checked.
    pub malformed: bool,
}

const REFERENCE_KEYS: &str = "`many`, `poly`, `max`, `allow_large`, `inverse`, `on_delete`";
const PARENT_KEYS: &str = "`inverse`, `on_delete`";
const EMBED_KEYS: &str = "`max`, `allow_large`";

/// Everything a field's attributes say.
#[derive(Default)]
pub struct FieldAttrs {
    pub serde_rename: Option<String>,
    pub serde_skip: bool,
    pub serde_flatten: Option<Span>,
    /// `#[serde(with = "odm::dbref")]`: a reference stored as DBRefs.
    pub serde_dbref: Option<Span>,
    pub embed: Option<EmbedAttr>,
    pub index: Option<FieldIndex>,
    pub reference: Option<ReferenceAttr>,
    pub denormalize: Option<DenormalizeAttr>,
    /// `#[frequently_updated]`: the attribute, where errors about it point.
    pub frequently_updated: Option<TokenStream>,
    /// `#[allow(deprecated)]` on the field (see [`ContainerAttrs::allow_deprecated`]).
    pub allow_deprecated: bool,
    /// `#[odm(version)]`, `#[odm(created_at)]`, `#[odm(updated_at)]`: a field the ODM keeps.
    pub stamp: Option<(super::versioning::Stamp, Span)>,
}

/// `#[denormalize(from = "Part", fields = "name", ...)]` on a field: a copy of fields of
/// another model, kept up to date by the ODM.
pub struct DenormalizeAttr {
    /// The whole attribute, where errors about it point.
    pub tokens: TokenStream,
    /// The source model.
    pub from: Option<(syn::Path, LitStr)>,
    /// The copied fields of the source, by Rust name, and the literal they came from.
    pub fields: Vec<String>,
    pub fields_lit: Option<LitStr>,
    /// The reference that links the two models: on this model (a copy of one source into
    /// many), or on the source for `latest` (the last N sources of this model).
    pub via: Option<LitStr>,
    /// Keep only the last N sources, ordered by `sort` (a field of the source): N, the span
    /// of the key and of the number.
    pub latest: Option<(u32, Span, Span)>,
    /// `top = N` rather than `latest = N`: the N first by a descending `sort` (the
    /// highest-rated comments), kept as `latest` keeps them; the span of the key.
    pub top: Option<Span>,
    pub sort: Option<LitStr>,
    pub bound: Bound,
    /// `cascade = "background"`: the mode and the span of the key.
    pub cascade: Option<(super::background::Cascade, Span)>,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks are not checked, since the user meant something else.
    pub malformed: bool,
}

const DENORMALIZE_KEYS: &str =
    "`from`, `fields`, `via`, `latest`, `top`, `sort`, `cascade`, `max`, `allow_large`";

/// Skips the value of a key we report as unknown, so parsing can go on after it.
pub(super) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

pub(super) fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string().replace(' ', "")
        })
}

/// Parses `= "string"`, reporting a value of another kind at the value.
pub(super) fn string_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
) -> syn::Result<Option<LitStr>> {
    let lit: Lit = meta.value()?.parse()?;
    match lit {
        Lit::Str(s) => Ok(Some(s)),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected a string literal: `{key} = \"{example}\"`"),
            );
            Ok(None)
        }
    }
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
                        let bucket = super::bucket::BucketAttr::parse(cx, &meta)?;
                        if out.bucket.is_some() {
                            cx.error_spanned_by(&meta.path, "duplicate odm attribute `bucket`");
                        }
                        out.bucket.get_or_insert(bucket);
                    } else if meta.path.is_ident("tree") {
                        super::tree::TreeAttr::parse(cx, &meta, &mut out.tree)?;
                    } else if meta.path.is_ident("shard_key") {
                        super::shard::ShardAttr::parse(cx, &meta, &mut out.shard_key)?;
                    } else if meta.path.is_ident("schema_version") {
                        out.versions.parse_version(cx, &meta)?;
                    } else if meta.path.is_ident("upgrade") {
                        out.versions.parse_upgrade(cx, &meta)?;
                    } else if meta.path.is_ident("subset_of") {
                        super::subset::parse(cx, &meta, &mut out.subset_of)?;
                    } else if meta.path.is_ident("common") {
                        if let Some(lit) = string_value(cx, &meta, "common", "title, isbn")? {
                            if out.common.is_some() {
                                cx.error_spanned_by(&meta.path, "duplicate odm attribute `common`");
                            }
                            out.common = Some(lit);
                        }
                    } else if meta.path.is_ident("counters") {
                        let parsed = super::counters::CountersAttr::parse(cx, &meta)?;
                        match out.counters {
                            Some(_) => cx.error_spanned_by(&meta.path, "duplicate odm attribute `counters`"),
                            None => out.counters = Some(parsed),
                        }
                    } else if meta.path.is_ident("time_series") {
                        let parsed = super::counters::TimeSeriesAttr::parse(cx, &meta)?;
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
        } else {
            skip_value(&meta)?;
        }
        Ok(())
    });
}

impl CompoundIndex {
    fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Self> {
        let mut out = CompoundIndex {
            span: meta.path.span(),
            keys_lit: None,
            keys: Vec::new(),
            unique: None,
            sparse: None,
            text: None,
            name: None,
        };
        if !meta.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &meta.path,
                "expected `index(keys = \"field, -other\", ...)`",
            );
            skip_value(meta)?;
            return Ok(out);
        }
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("keys") {
                let lit = string_value(cx, &inner, "keys", "book, -user")?;
                if out.keys_lit.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `keys`");
                } else if let Some(lit) = lit {
                    out.keys = parse_keys(cx, &lit);
                    out.keys_lit = Some(lit);
                }
            } else if inner.path.is_ident("unique") {
                set_flag(cx, &mut out.unique, &inner, "unique")?;
            } else if inner.path.is_ident("sparse") {
                set_flag(cx, &mut out.sparse, &inner, "sparse")?;
            } else if inner.path.is_ident("text") {
                set_flag(cx, &mut out.text, &inner, "text")?;
            } else if inner.path.is_ident("name") {
                let lit = string_value(cx, &inner, "name", "book_user")?;
                if out.name.is_some() {
                    cx.error_spanned_by(&inner.path, "duplicate `name`");
                }
                out.name = lit;
            } else {
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown index option `{}`, expected one of {COMPOUND_INDEX_KEYS}",
                        key_name(&inner)
                    ),
                );
                skip_value(&inner)?;
            }
            Ok(())
        })?;
        if out.keys_lit.is_none() {
            cx.error_at(
                out.span,
                "`index(...)` needs its keys: `index(keys = \"field, -other\")`",
            );
        }
        Ok(out)
    }
}

fn parse_keys(cx: &Ctxt, lit: &LitStr) -> Vec<IndexKeyPath> {
    let value = lit.value();
    let mut keys = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let (desc, path) = match part.strip_prefix('-') {
            Some(rest) => (true, rest.trim()),
            None => (false, part),
        };
        if part.is_empty() {
            cx.error_spanned_by(
                lit,
                "empty index key: expected field names separated by commas (\"book, -user\")",
            );
            continue;
        }
        let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
        // Each segment becomes an accessor call, so it must be a Rust identifier.
        let valid = segments
            .iter()
            .all(|s| syn::parse_str::<syn::Ident>(&format!("r#{s}")).is_ok());
        if !valid {
            cx.error_spanned_by(
                lit,
                format!("invalid index key `{part}`: expected field names separated by commas, `-` before a descending key, `.` into embedded fields (\"book, -user\")"),
            );
            continue;
        }
        keys.push(IndexKeyPath { segments, desc });
    }
    keys
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
                if out.embed.is_some() {
                    cx.error_spanned_by(attr, "duplicate `#[embed]`");
                }
                out.embed = Some(EmbedAttr {
                    tokens: attr.to_token_stream(),
                    bound,
                    malformed,
                });
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
                super::versioning::parse_field(cx, attr, derive, &mut out.stamp);
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
            skip_value(&meta)?;
        } else if meta.path.is_ident("flatten") {
            out.serde_flatten = Some(meta.path.span());
        } else if meta.path.is_ident("with") {
            let lit = meta.value()?.parse::<LitStr>()?;
            if lit.value().replace(' ', "").ends_with("::dbref") || lit.value() == "dbref" {
                out.serde_dbref = Some(lit.span());
            }
        } else {
            skip_value(&meta)?;
        }
        Ok(())
    });
}

impl FieldIndex {
    fn parse(cx: &Ctxt, attr: &Attribute) -> Self {
        let mut out = FieldIndex {
            tokens: attr.to_token_stream(),
            unique: None,
            sparse: None,
            desc: None,
            text: None,
            name: None,
            expire_after_secs: None,
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return out;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("unique") {
                set_flag(cx, &mut out.unique, &meta, "unique")?;
            } else if meta.path.is_ident("sparse") {
                set_flag(cx, &mut out.sparse, &meta, "sparse")?;
            } else if meta.path.is_ident("desc") {
                set_flag(cx, &mut out.desc, &meta, "desc")?;
            } else if meta.path.is_ident("text") {
                set_flag(cx, &mut out.text, &meta, "text")?;
            } else if meta.path.is_ident("name") {
                let lit = string_value(cx, &meta, "name", "by_isbn")?;
                if out.name.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `name`");
                }
                out.name = lit;
            } else if meta.path.is_ident("expire_after_secs") {
                let lit: Lit = meta.value()?.parse()?;
                match &lit {
                    // MongoDB takes a 32-bit signed number of seconds (about 68 years).
                    Lit::Int(i) => match i.base10_parse::<u64>() {
                        Ok(v) if v <= i32::MAX as u64 => {
                            out.expire_after_secs = Some((v, i.span()))
                        }
                        _ => cx.error_spanned_by(
                            i,
                            format!(
                                "`expire_after_secs` is at most {} seconds (about 68 years)",
                                i32::MAX
                            ),
                        ),
                    },
                    other => cx.error_spanned_by(
                        other,
                        "expected a whole number of seconds: `expire_after_secs = 3600`",
                    ),
                }
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown index option `{}`, expected one of {FIELD_INDEX_KEYS}",
                        key_name(&meta)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
        out
    }
}

/// What [`parse_bound_key`] made of a key.
#[derive(PartialEq, Eq)]
enum BoundKey {
    /// `max` or `allow_large`, with a good value.
    Valid,
    /// `max` or `allow_large` with a bad value, already reported.
    Invalid,
    /// Another key, left to the caller.
    Other,
}

/// Parses `max = N` or `allow_large = "reason"`.
fn parse_bound_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    bound: &mut Bound,
) -> syn::Result<BoundKey> {
    if meta.path.is_ident("max") {
        let lit: Lit = meta.value()?.parse()?;
        let max = match &lit {
            Lit::Int(i) => match i.base10_parse::<u32>() {
                Ok(v) if v > 0 => Some((v, i.span())),
                _ => {
                    cx.error_spanned_by(i, "`max` is a whole number of elements, at least 1");
                    None
                }
            },
            other => {
                cx.error_spanned_by(other, "expected a whole number: `max = 100`");
                None
            }
        };
        if bound.max.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `max`");
        }
        match max {
            Some(max) => {
                bound.max = Some(max);
                Ok(BoundKey::Valid)
            }
            None => Ok(BoundKey::Invalid),
        }
    } else if meta.path.is_ident("allow_large") {
        let lit = string_value(cx, meta, "allow_large", "why this array stays manageable")?;
        if bound.allow_large.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `allow_large`");
        }
        match lit {
            Some(lit) if lit.value().trim().is_empty() => {
                cx.error_spanned_by(&lit, "`allow_large` needs a reason: say why this array stays manageable, e.g. `allow_large = \"one entry per country\"`");
                Ok(BoundKey::Invalid)
            }
            Some(lit) => {
                bound.allow_large = Some(lit);
                Ok(BoundKey::Valid)
            }
            None => Ok(BoundKey::Invalid),
        }
    } else {
        Ok(BoundKey::Other)
    }
}

impl ReferenceAttr {
    fn parse(cx: &Ctxt, attr: &Attribute, parent: bool) -> Self {
        let mut out = ReferenceAttr {
            tokens: attr.to_token_stream(),
            parent,
            many: None,
            poly: None,
            bound: Bound::default(),
            inverse: None,
            on_delete: None,
            malformed: false,
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return out;
        }
        let (what, keys) = if parent {
            ("parent", PARENT_KEYS)
        } else {
            ("reference", REFERENCE_KEYS)
        };
        let result = attr.parse_nested_meta(|meta| {
            if parent && ["many", "max", "allow_large"].iter().any(|k| meta.path.is_ident(k)) {
                out.malformed = true;
                cx.error_spanned_by(
                    &meta.path,
                    format!("`{}` is not a `#[parent]` option: a `#[parent]` holds one reference to the parent; an array of references is `#[reference(many, max = N)]`", key_name(&meta)),
                );
                skip_value(&meta)?;
            } else if !parent && meta.path.is_ident("many") {
                set_flag(cx, &mut out.many, &meta, "many")?;
            } else if !parent && meta.path.is_ident("poly") {
                set_flag(cx, &mut out.poly, &meta, "poly")?;
            } else if !parent && (meta.path.is_ident("max") || meta.path.is_ident("allow_large")) {
                if let BoundKey::Invalid = parse_bound_key(cx, &meta, &mut out.bound)? {
                    out.malformed = true;
                }
            } else if meta.path.is_ident("inverse") {
                let lit = string_value(cx, &meta, "inverse", "owner")?;
                if out.inverse.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `inverse`");
                }
                // Only a field name is kept: the generated code turns it into an accessor call.
                out.inverse = lit.filter(|lit| {
                    let name = lit.value();
                    let is_ident = syn::parse_str::<syn::Ident>(&name).is_ok_and(|i| i == name);
                    if !is_ident {
                        cx.error_spanned_by(lit, format!("`inverse` names one field of the referenced model, e.g. `inverse = \"owner\"`; `{name}` is not a field name"));
                    }
                    is_ident
                });
            } else if meta.path.is_ident("on_delete") {
                let lit = string_value(cx, &meta, "on_delete", "restrict")?;
                if let Some(lit) = lit {
                    let rule = match lit.value().as_str() {
                        "restrict" => Some(OnDelete::Restrict),
                        "nullify" => Some(OnDelete::Nullify),
                        "pull" => Some(OnDelete::Pull),
                        "cascade" => Some(OnDelete::Cascade),
                        _ => None,
                    };
                    match rule {
                        Some(rule) => {
                            if out.on_delete.is_some() {
                                cx.error_spanned_by(&meta.path, "duplicate `on_delete`");
                            }
                            out.on_delete = Some((rule, lit.span()));
                        }
                        None => cx.error_spanned_by(
                            &lit,
                            format!("unknown delete rule `{}`, expected one of {ON_DELETE_VALUES}", lit.value()),
                        ),
                    }
                }
            } else {
                out.malformed = true;
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown {what} option `{}`, expected one of {keys}", key_name(&meta)),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            out.malformed = true;
            cx.syn_error(e);
        }
        out
    }
}

impl DenormalizeAttr {
    fn parse(cx: &Ctxt, attr: &Attribute) -> Self {
        let mut out = DenormalizeAttr {
            tokens: attr.to_token_stream(),
            from: None,
            fields: Vec::new(),
            fields_lit: None,
            via: None,
            latest: None,
            top: None,
            sort: None,
            bound: Bound::default(),
            cascade: None,
            malformed: false,
        };
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("from") {
                let lit = string_value(cx, &meta, "from", "Part")?;
                if out.from.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `from`");
                }
                match lit.as_ref().map(|lit| (lit, lit.parse::<syn::Path>())) {
                    Some((lit, Ok(path))) => out.from = Some((path, lit.clone())),
                    Some((lit, Err(_))) => {
                        out.malformed = true;
                        cx.error_spanned_by(lit, "`from` names the source model: `from = \"Part\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("fields") {
                let lit = string_value(cx, &meta, "fields", "name")?;
                if out.fields_lit.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `fields`");
                }
                let Some(lit) = lit else {
                    out.malformed = true;
                    return Ok(());
                };
                out.fields.clear();
                for name in lit.value().split(',').map(str::trim) {
                    if !is_field_name(name) {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, format!("`{name}` is not a field name: `fields` lists the copied fields of the source, separated by commas (\"name, catalog_number\")"));
                    } else if out.fields.iter().any(|f| f == name) {
                        cx.error_spanned_by(&lit, format!("`{name}` is listed twice"));
                    } else {
                        out.fields.push(name.to_owned());
                    }
                }
                out.fields_lit = Some(lit);
            } else if meta.path.is_ident("via") {
                let lit = string_value(cx, &meta, "via", "product")?;
                if out.via.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `via`");
                }
                match lit {
                    Some(lit) if is_field_name(&lit.value()) => out.via = Some(lit),
                    Some(lit) => {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, "`via` names one reference field: `via = \"product\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("latest") || meta.path.is_ident("top") {
                let key = meta.path.span();
                let name = key_name(&meta);
                let lit: Lit = meta.value()?.parse()?;
                if out.latest.is_some() {
                    cx.error_spanned_by(&meta.path, format!("duplicate `{name}`: `latest` and `top` both give the number of summaries kept"));
                }
                if name == "top" {
                    out.top = Some(key);
                }
                match &lit {
                    Lit::Int(i) => match i.base10_parse::<u32>() {
                        Ok(v) if v > 0 => out.latest = Some((v, key, i.span())),
                        _ => {
                            out.malformed = true;
                            cx.error_spanned_by(i, format!("`{name}` is a whole number of documents, at least 1"));
                        }
                    },
                    other => {
                        out.malformed = true;
                        cx.error_spanned_by(other, format!("expected a whole number: `{name} = 100`"));
                    }
                }
            } else if meta.path.is_ident("sort") {
                let lit = string_value(cx, &meta, "sort", "time")?;
                if out.sort.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `sort`");
                }
                match lit {
                    Some(lit) if is_field_name(sort_key(&lit.value()).1) => out.sort = Some(lit),
                    Some(lit) => {
                        out.malformed = true;
                        cx.error_spanned_by(&lit, "`sort` names one field of the source, `-` before it for descending: `sort = \"time\"`");
                    }
                    None => out.malformed = true,
                }
            } else if meta.path.is_ident("cascade") {
                if !super::background::parse(cx, &meta, &mut out.cascade)? {
                    out.malformed = true;
                }
            } else {
                match parse_bound_key(cx, &meta, &mut out.bound)? {
                    BoundKey::Valid => {}
                    BoundKey::Invalid => out.malformed = true,
                    BoundKey::Other => {
                        out.malformed = true;
                        cx.error_spanned_by(
                            &meta.path,
                            format!("unknown denormalize option `{}`, expected one of {DENORMALIZE_KEYS}", key_name(&meta)),
                        );
                        skip_value(&meta)?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            out.malformed = true;
            cx.syn_error(e);
        }
        out
    }
}

/// Whether `name` can name a field: an identifier, a keyword only as a raw identifier
/// (`type` for `r#type`).
pub fn is_field_name(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(&format!("r#{name}")).is_ok()
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
