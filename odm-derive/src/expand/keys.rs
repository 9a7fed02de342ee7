//! `plain_keys` of a model or an embedded type: whether every key a value of it is written
//! with is known while compiling (its fields' stored names, and those of the embedded types it
//! holds), so that writing it needs no check of its keys at run time. A function rather than a
//! constant, because embedded types may hold each other (a question's answers hold questions),
//! which constants cannot express; a model works it out once per process.
//!
//! It is `true` only when each stored field is a scalar (numbers, `bool`, `char`, `String`,
//! `ObjectId`, `DateTime`), an `#[embed]` type whose own answer is `true`, or an `Option`,
//! `Vec` or `Box` of those, and no serde attribute hands the writing to other code (`with`,
//! `serialize_with` on a field; `into`, `remote` on the type). Anything else (a map, a
//! `Document`, a `serde_json::Value`, a generic or unknown type, a reference, a summary of
//! copies) keeps the check:
//! the rule only ever errs towards checking.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{GenericArgument, PathArguments, Type};

use crate::model::{Container, Field};

/// Types written as one value, never as a document, by the last segment of their path (and
/// with no generic arguments).
const SCALARS: &[&str] = &[
    "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize", "f32", "f64", "String", "ObjectId", "DateTime",
];

/// The wrappers a value passes through unchanged (its keys are the inner type's).
const WRAPPERS: &[&str] = &["Option", "Vec", "Box"];

/// `fn plain_keys` of the `Model` impl of `cont`: worked out on its first call.
pub fn model_plain_keys(cont: &Container<'_>) -> TokenStream {
    let plain = plain_expr(cont);
    quote! {
        fn plain_keys() -> bool {
            static PLAIN: ::std::sync::OnceLock<bool> = ::std::sync::OnceLock::new();
            *PLAIN.get_or_init(|| {
                let __visiting: &mut ::odm::__private::Vec<&'static str> =
                    &mut ::odm::__private::Vec::new();
                #plain
            })
        }
    }
}

/// `fn plain_keys` of the `Embed` impl of `cont`: a type met again inside itself adds no key
/// of its own.
pub fn embed_plain_keys(cont: &Container<'_>) -> TokenStream {
    let plain = plain_expr(cont);
    quote! {
        fn plain_keys(__visiting: &mut ::odm::__private::Vec<&'static str>) -> bool {
            let __me = ::std::any::type_name::<Self>();
            if __visiting.contains(&__me) {
                return true;
            }
            __visiting.push(__me);
            let __plain = #plain;
            __visiting.pop();
            __plain
        }
    }
}

fn plain_expr(cont: &Container<'_>) -> TokenStream {
    if cont.serde_opaque {
        return quote!(false);
    }
    let fields = cont.stored_fields().map(field_plain);
    quote!(true #(&& #fields)*)
}

fn field_plain(f: &Field<'_>) -> TokenStream {
    let odd_name = f.stored.starts_with('$') || f.stored.contains('.') || f.stored.contains('\0');
    if f.custom_serde || f.dbref.is_some() || odd_name {
        return quote!(false);
    }
    // A summary (`#[denormalize]` into an embedded type) is checked: its type's own check
    // reports a type that is not embedded, and this one would add a second error.
    if f.embed.is_none() && f.denormalize.is_some() {
        return quote!(false);
    }
    type_plain(f.ty, f.has_embed_paths())
}

/// Whether `ty` is written with plain keys: a constant, or the embedded type's answer when the
/// field holds an embedded type (`embedded`).
fn type_plain(ty: &Type, embedded: bool) -> TokenStream {
    let ty = match ty {
        Type::Group(g) => return type_plain(&g.elem, embedded),
        Type::Paren(p) => return type_plain(&p.elem, embedded),
        Type::Path(p) if p.qself.is_none() => p,
        _ => return quote!(false),
    };
    let Some(last) = ty.path.segments.last() else {
        return quote!(false);
    };
    let name = last.ident.to_string();
    match &last.arguments {
        PathArguments::None if embedded => {
            quote!(<#ty as ::odm::__private::Embed>::plain_keys(__visiting))
        }
        PathArguments::None if SCALARS.contains(&name.as_str()) => quote!(true),
        PathArguments::AngleBracketed(args)
            if WRAPPERS.contains(&name.as_str()) && args.args.len() == 1 =>
        {
            match &args.args[0] {
                GenericArgument::Type(inner) => type_plain(inner, embedded),
                _ => quote!(false),
            }
        }
        _ => quote!(false),
    }
}
