//! The declaration a derive reads ([`Declaration`]): a struct and its fields, an enum of kinds,
//! or a polymorphic reference, and what their attributes ask for. Reading reports the problems
//! of reading only (a malformed attribute); the rules are `check`'s.

pub mod attr;
pub mod bucket;
pub mod case;
pub mod check;
pub mod kinds;
pub mod poly;
pub mod resolved;
mod shape;
pub mod shard;
pub mod soft_delete;
mod syntax;
pub use shape::{ref_inner, shape_of, Shape};
pub mod tree;
pub mod types;
pub mod versioning;

use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type, Visibility};

use syn::ext::IdentExt;

use crate::ctxt::Ctxt;
pub use attr::Derive;

/// Which derive runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Macro {
    /// `#[derive(Model)]`, on a struct or an enum of kinds.
    Model,
    /// `#[derive(Embed)]`.
    Embed,
    /// `#[derive(PolyRef)]`.
    PolyRef,
}

/// What a derive was given, read: the one model every derive's rules check and its
/// expansion generates from (as serde's `ast::Container` is for its derives).
pub enum Declaration<'a> {
    /// A struct deriving `Model` or `Embed`.
    Struct(Container<'a>),
    /// An enum deriving `Model`: the base of a polymorphic model.
    Kinds(kinds::EnumOfKinds<'a>),
    /// An enum deriving `PolyRef`: a reference to one of several models.
    Poly(poly::PolyRef<'a>),
}

impl<'a> Declaration<'a> {
    /// Reads `input` for `which`, recording every problem of reading in `cx`; `None` only when
    /// nothing sensible can be generated (a struct without named fields).
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput, which: Macro) -> Option<Self> {
        Some(match (which, &input.data) {
            (Macro::Model, Data::Enum(_)) => Declaration::Kinds(kinds::resolve(cx, input)),
            (Macro::Model, _) => {
                Declaration::Struct(Container::from_ast(cx, input, Derive::Model)?)
            }
            (Macro::Embed, _) => {
                Declaration::Struct(Container::from_ast(cx, input, Derive::Embed)?)
            }
            (Macro::PolyRef, _) => Declaration::Poly(poly::PolyRef::from_ast(input)),
        })
    }
}

pub struct Container<'a> {
    pub derive: Derive,
    pub ident: &'a Ident,
    pub vis: &'a Visibility,
    pub collection: Option<LitStr>,
    /// `#[odm(kind_of = "Book")]`: the base enum and the attribute's string.
    pub kind_of: Option<(Type, LitStr)>,
    pub compound_indexes: Vec<attr::CompoundIndex>,
    pub bucket: Option<attr::BucketAttr>,
    pub fields: Vec<Field<'a>>,
    /// `#[allow(deprecated)]` on the struct: its copies may take `#[frequently_updated]` fields.
    pub allow_deprecated: bool,
    pub counters: Option<attr::CountersAttr>,
    pub time_series: Option<attr::TimeSeriesAttr>,
    /// `#[odm(tree(...))]`: the model is a tree of documents.
    pub tree: Option<attr::TreeAttr>,
    /// `#[odm(shard_key(...))]`: the collection is sharded.
    pub shard_key: Option<attr::ShardAttr>,
    /// `#[odm(subset_of = "Movie")]`: the main model whose details this one holds.
    pub subset_of: Option<(Type, LitStr)>,
    /// `#[odm(schema_version = N, upgrade = "...")]`.
    pub versions: attr::VersionAttrs,
    /// `#[odm(soft_delete)]`.
    pub soft_delete: Option<attr::SoftDeleteAttr>,
    /// `#[odm(read_preference = ..., write_concern = ...)]`.
    pub defaults: attr::DefaultsAttr,
    /// `#[serde(into)]` or `#[serde(remote)]`: the document's keys are another type's.
    pub serde_opaque: bool,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub vis: &'a Visibility,
    /// The key serde stores the field under.
    pub stored: String,
    pub shape: Shape<'a>,
    /// `#[serde(skip)]` (or skipped both ways): not stored, no path.
    pub skipped: bool,
    pub embed: Option<attr::EmbedAttr>,
    pub index: Option<attr::FieldIndex>,
    pub reference: Option<attr::ReferenceAttr>,
    pub denormalize: Option<attr::DenormalizeAttr>,
    /// `#[frequently_updated]` (rule of thumb 5): copying this field is a warning.
    pub frequently_updated: Option<proc_macro2::TokenStream>,
    /// `#[allow(deprecated)]` on the field: its copy may take `#[frequently_updated]` fields.
    pub allow_deprecated: bool,
    /// `#[serde(with = "odm::dbref")]`: the reference is stored as DBRefs.
    pub dbref: Option<proc_macro2::Span>,
    /// `#[serde(with)]` or `#[serde(serialize_with)]`: written by a function of the
    /// application.
    pub custom_serde: bool,
    /// `#[serde(skip_serializing_if = ...)]`: serde may leave the field out of a stored
    /// document, so a validator does not require it.
    pub maybe_absent: bool,
    /// `#[odm(version)]`, `#[odm(created_at)]` or `#[odm(updated_at)]`, at its key.
    pub stamp: Option<(attr::Stamp, proc_macro2::Span)>,
}

impl<'a> Field<'a> {
    pub fn is_id(&self) -> bool {
        self.stored == "_id"
    }

    /// Whether the field gets typed paths into an embedded type: it is `#[embed]`, not the id,
    /// and its type can be embedded as far as the syntax tells.
    pub fn has_embed_paths(&self) -> bool {
        let summary = self
            .denormalize
            .as_ref()
            .is_some_and(|d| d.kind() != attr::CopyKind::Flat);
        (self.embed.is_some() || summary)
            && !self.is_id()
            && types::embed_type_problem(self.ty).is_none()
    }

    /// The referenced model: `T` in `Ref<T>`, `Option<Ref<T>>` and `Vec<Ref<T>>`.
    pub fn ref_target(&self) -> Option<&'a Type> {
        ref_inner(self.inner_ty())
    }

    /// `#[reference(poly)]`: the field holds polymorphic references.
    pub fn is_poly(&self) -> bool {
        self.reference.as_ref().is_some_and(|r| r.poly.is_some())
    }

    /// The declared array bound (of `#[embed]` or `#[reference(many)]`).
    pub fn bound(&self) -> Option<&attr::Bound> {
        self.embed
            .as_ref()
            .map(|e| &e.bound)
            .or_else(|| self.reference.as_ref().map(|r| &r.bound))
            .or_else(|| self.denormalize.as_ref().map(|d| &d.bound))
    }

    /// The embedded type (`Publisher` for `Publisher`, `Option<Publisher>` and `Vec<Publisher>`).
    pub fn inner_ty(&self) -> &'a Type {
        match self.shape {
            Shape::Plain => self.ty,
            Shape::Option(t) | Shape::Vec(t) => t,
        }
    }
}

impl<'a> Container<'a> {
    /// Parses the input, recording every problem in `cx`. Returns `None` only when the item
    /// is not a struct with named fields (nothing sensible can be generated then).
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput, derive: Derive) -> Option<Container<'a>> {
        let fields = named_fields(cx, input, derive)?;
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                format!("`{}` cannot be derived for a generic struct: the stored shape must be known at compile time", derive.name()),
            );
        }
        let container_attrs = attr::ContainerAttrs::parse(cx, &input.attrs, derive);
        if let (Some(_), Some(lit)) = (&container_attrs.kind_of, &container_attrs.collection) {
            cx.error_spanned_by(
                lit,
                "a kind is stored in the collection of its base: remove `collection` here and declare it on the enum of kinds",
            );
        }
        if let Some(lit) = &container_attrs.common {
            cx.error_spanned_by(
                lit,
                "`common` lists the fields every kind has, on the enum of kinds; a struct's fields are its own",
            );
        }
        let fields = fields
            .iter()
            .map(|f| Field::from_ast(cx, f, derive, container_attrs.rename_all))
            .collect();
        Some(Container {
            derive,
            ident: &input.ident,
            vis: &input.vis,
            collection: container_attrs.collection,
            kind_of: container_attrs.kind_of,
            compound_indexes: container_attrs.indexes,
            bucket: container_attrs.bucket,
            fields,
            allow_deprecated: container_attrs.allow_deprecated,
            counters: container_attrs.counters,
            time_series: container_attrs.time_series,
            tree: container_attrs.tree,
            shard_key: container_attrs.shard_key,
            subset_of: container_attrs.subset_of,
            versions: container_attrs.versions,
            soft_delete: container_attrs.soft_delete,
            defaults: container_attrs.defaults,
            serde_opaque: container_attrs.serde_opaque,
        })
    }

    /// The collection name as an expression: the base's for a kind, else [`Self::collection_name`].
    pub fn collection_expr(&self) -> proc_macro2::TokenStream {
        match &self.kind_of {
            Some((base, lit)) => {
                quote::quote_spanned!(lit.span()=> <#base as ::odm::__private::Model>::COLLECTION)
            }
            None => {
                let name = self.collection_name();
                quote::quote!(#name)
            }
        }
    }

    /// The collection name: declared, or the snake-cased type name plus `s`.
    pub fn collection_name(&self) -> String {
        match &self.collection {
            Some(lit) => lit.value(),
            None => format!("{}s", case::snake_case(&self.ident.to_string())),
        }
    }

    pub fn id_field(&self) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.is_id() && !f.skipped)
    }

    pub fn field_named(&self, name: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.ident.unraw() == name)
    }

    pub fn stored_fields(&self) -> impl Iterator<Item = &Field<'a>> {
        self.fields.iter().filter(|f| !f.skipped)
    }

    /// Whether a field is `#[odm(version)]`, `#[odm(created_at)]` or `#[odm(updated_at)]`.
    pub fn keeps_stamps(&self) -> bool {
        self.fields.iter().any(|f| f.stamp.is_some())
    }
}

/// The named fields of a derive's struct; an error at the struct otherwise.
fn named_fields<'a>(
    cx: &Ctxt,
    input: &'a DeriveInput,
    derive: Derive,
) -> Option<&'a syn::punctuated::Punctuated<syn::Field, syn::token::Comma>> {
    Some(match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => &named.named,
            Fields::Unnamed(_) | Fields::Unit => {
                cx.error_spanned_by(
                    &input.ident,
                    format!(
                        "`{}` can only be derived for structs with named fields: a document is a set of named fields",
                        derive.name()
                    ),
                );
                return None;
            }
        },
        Data::Enum(e) => {
            cx.error_at(
                e.enum_token.span,
                format!(
                    "`{}` cannot be derived for an enum; use a struct with named fields",
                    derive.name()
                ),
            );
            return None;
        }
        Data::Union(u) => {
            cx.error_at(
                u.union_token.span,
                format!(
                    "`{}` cannot be derived for a union; use a struct with named fields",
                    derive.name()
                ),
            );
            return None;
        }
    })
}

impl<'a> Field<'a> {
    /// A field of the derive's struct, its attributes parsed (errors reported to `cx`), its
    /// stored name from `serde(rename)` or the container's `rename_all`.
    fn from_ast(
        cx: &Ctxt,
        f: &'a syn::Field,
        derive: Derive,
        rename_all: Option<case::RenameRule>,
    ) -> Field<'a> {
        let ident = f.ident.as_ref().expect("named field");
        let attrs = attr::FieldAttrs::parse(cx, &f.attrs, derive);
        let stored = match &attrs.serde_rename {
            Some(name) => name.clone(),
            None => {
                let name = ident.unraw().to_string();
                match rename_all {
                    Some(rule) => rule.apply_to_field(&name),
                    None => name,
                }
            }
        };
        if let Some(flatten) = attrs.serde_flatten {
            cx.error_at(
                flatten,
                "`#[serde(flatten)]` is not supported on odm documents: field paths must be known; use `#[embed]` on a nested struct instead",
            );
        }
        Field {
            ident,
            ty: &f.ty,
            vis: &f.vis,
            stored,
            shape: shape_of(&f.ty),
            skipped: attrs.serde_skip,
            embed: attrs.embed,
            index: attrs.index,
            reference: attrs.reference,
            denormalize: attrs.denormalize,
            frequently_updated: attrs.frequently_updated,
            allow_deprecated: attrs.allow_deprecated,
            dbref: attrs.serde_dbref,
            custom_serde: attrs.serde_custom,
            maybe_absent: attrs.serde_maybe_absent,
            stamp: attrs.stamp,
        }
    }
}
