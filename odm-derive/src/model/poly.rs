//! `#[derive(PolyRef)]` read: an enum of references to several models, each variant holding a
//! `Ref` to one model or the catch-all `DbRef`. Reading reports nothing: its rules are
//! `check::poly`, which report each misuse at its token.

use syn::{Data, DeriveInput, Fields, Generics, Ident, Type};

use super::shape::ref_inner;

/// One target of a polymorphic reference.
pub enum Target<'a> {
    /// `Book(Ref<Book>)`
    Model(&'a Ident, &'a Type),
    /// `Other(DbRef)`: DBRefs to any other collection.
    Other(&'a Ident),
}

/// What one variant holds, as written.
pub enum Holds<'a> {
    /// `Ref<Book>`: the model `Book`.
    Ref(&'a Type),
    /// `DbRef`, the catch-all.
    DbRef,
    /// One value of another type.
    Other(&'a Type),
    /// No value, several, or named fields.
    NotOne,
}

/// One variant, as written.
pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub holds: Holds<'a>,
}

/// What the derive was given.
pub enum Shape<'a> {
    /// A struct or a union.
    NotEnum,
    /// A generic enum, whose targets cannot be known.
    Generic(&'a Generics),
    /// An enum: its variants in order.
    Enum(Vec<Variant<'a>>),
}

/// A polymorphic reference, resolved.
pub struct PolyRef<'a> {
    pub ident: &'a Ident,
    pub shape: Shape<'a>,
}

impl<'a> PolyRef<'a> {
    /// Reads `input`.
    pub fn from_ast(input: &'a DeriveInput) -> Self {
        let shape = match &input.data {
            Data::Enum(_) if !input.generics.params.is_empty() => Shape::Generic(&input.generics),
            Data::Enum(data) => Shape::Enum(
                data.variants
                    .iter()
                    .map(|v| Variant {
                        ident: &v.ident,
                        holds: holds(&v.fields),
                    })
                    .collect(),
            ),
            _ => Shape::NotEnum,
        };
        PolyRef {
            ident: &input.ident,
            shape,
        }
    }

    /// Its targets, in order (a second catch-all included, which its rule refuses); `None`
    /// when nothing can be generated (not an enum, or a generic one).
    pub fn targets(&self) -> Option<Vec<Target<'a>>> {
        let Shape::Enum(variants) = &self.shape else {
            return None;
        };
        let targets = variants.iter().filter_map(|v| match v.holds {
            Holds::Ref(model) => Some(Target::Model(v.ident, model)),
            Holds::DbRef => Some(Target::Other(v.ident)),
            Holds::Other(_) | Holds::NotOne => None,
        });
        Some(targets.collect())
    }
}

/// What the fields of a variant hold.
fn holds(fields: &Fields) -> Holds<'_> {
    let ty = match fields {
        Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0].ty,
        _ => return Holds::NotOne,
    };
    if let Some(model) = ref_inner(ty) {
        Holds::Ref(model)
    } else if is_dbref(ty) {
        Holds::DbRef
    } else {
        Holds::Other(ty)
    }
}

/// `DbRef` by its last path segment.
fn is_dbref(ty: &Type) -> bool {
    matches!(ty, Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == "DbRef" && s.arguments.is_empty()))
}
