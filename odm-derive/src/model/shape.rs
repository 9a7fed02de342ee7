//! The syntax of a field's type, by its last path segment: how it holds its value (`T`,
//! `Option<T>`, `Vec<T>`) and the model a `Ref<T>` names. A leaf every stage reads.

use syn::{GenericArgument, PathArguments, Type};

/// How a field holds its value.
#[derive(Clone, Copy)]
pub enum Shape<'a> {
    Plain,
    Option(&'a Type),
    Vec(&'a Type),
}

/// `T` in `Ref<T>` (by the last path segment).
pub fn ref_inner(ty: &Type) -> Option<&Type> {
    match generic_arg(ty) {
        Some(("Ref", inner)) => Some(inner),
        _ => None,
    }
}

/// The last path segment's name and its single type argument: `("Vec", T)` for `Vec<T>`.
fn generic_arg(ty: &Type) -> Option<(&'static str, &Type)> {
    let Type::Path(tp) = ty else { return None };
    if tp.qself.is_some() {
        return None;
    }
    let last = tp.path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    if args.args.len() != 1 {
        return None;
    }
    let Some(GenericArgument::Type(inner)) = args.args.first() else {
        return None;
    };
    for name in ["Option", "Vec", "Ref"] {
        if last.ident == name {
            return Some((name, inner));
        }
    }
    None
}

/// `Option<T>` and `Vec<T>` by their last path segment (also `std::option::Option<T>`).
pub fn shape_of(ty: &Type) -> Shape<'_> {
    if let Type::Path(tp) = ty {
        if tp.qself.is_none() {
            if let Some(last) = tp.path.segments.last() {
                if let PathArguments::AngleBracketed(args) = &last.arguments {
                    if args.args.len() == 1 {
                        if let Some(GenericArgument::Type(inner)) = args.args.first() {
                            if last.ident == "Option" {
                                return Shape::Option(inner);
                            }
                            if last.ident == "Vec" {
                                return Shape::Vec(inner);
                            }
                        }
                    }
                }
            }
        }
    }
    Shape::Plain
}
