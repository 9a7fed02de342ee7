//! What the syntax of a field's type tells: whether it can hold an embedded document. The rules
//! of `check` and the code of `expand` read it, so that neither asks the other.

use syn::Type;

use super::shape::{shape_of, Shape};

/// Why the type `ty` of a field cannot hold an embedded document, when that is certain from the
/// syntax: the type to point at and the message. Also used by the stub, which gives such a
/// field a plain accessor so that the error is not repeated by the compiler.
pub fn embed_type_problem(ty: &Type) -> Option<(&Type, String)> {
    let inner = match shape_of(ty) {
        Shape::Plain => ty,
        Shape::Option(t) | Shape::Vec(t) => t,
    };
    if !matches!(shape_of(inner), Shape::Plain) {
        return Some((
            ty,
            "`#[embed]` supports `T`, `Option<T>` and `Vec<T>` where `T` derives `Embed`, not a wrapper inside another; remove `#[embed]` to store the field without typed paths below it".to_owned(),
        ));
    }
    embed_type_problem_of(inner).map(|what| (
        inner,
        format!("`#[embed]` is for a struct that derives `Embed`, and {what}: remove `#[embed]` (plain values need no attribute)"),
    ))
}

/// What a type is, when the syntax shows it cannot be an embedded document: a plain value, a
/// tuple, an array, a reference, or a wrapper (`Option`, `Vec`) of another wrapper.
pub fn embed_type_problem_of(ty: &Type) -> Option<String> {
    if !matches!(shape_of(ty), Shape::Plain) {
        return Some("a wrapper inside another is not a struct".to_owned());
    }
    plain_value_type(ty)
}

/// What a type is, when it is certainly not an embedded document: a primitive, a string, a
/// BSON value, a collection other than `Vec`, a tuple, array or reference.
pub fn plain_value_type(ty: &Type) -> Option<String> {
    const PLAIN: &[&str] = &[
        "bool",
        "char",
        "str",
        "String",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "f32",
        "f64",
        "ObjectId",
        "DateTime",
        "Document",
        "Bson",
        "Uuid",
        "Decimal128",
        "Binary",
        "Timestamp",
        "Regex",
        "HashMap",
        "BTreeMap",
        "HashSet",
        "BTreeSet",
        "VecDeque",
    ];
    match ty {
        Type::Path(tp) if tp.qself.is_none() => {
            let name = tp.path.segments.last()?.ident.to_string();
            PLAIN
                .contains(&name.as_str())
                .then(|| format!("`{name}` is a plain value"))
        }
        Type::Paren(p) => plain_value_type(&p.elem),
        Type::Group(g) => plain_value_type(&g.elem),
        Type::Tuple(_) => Some("a tuple is not a struct".to_owned()),
        Type::Array(_) | Type::Slice(_) => Some("an array is not a struct".to_owned()),
        Type::Reference(_) | Type::Ptr(_) => Some("a reference is not a struct".to_owned()),
        _ => None,
    }
}
