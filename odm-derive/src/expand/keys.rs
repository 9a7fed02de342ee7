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

/// What the derive knows of whether a value is written with plain keys.
enum Plain {
    /// Known while expanding.
    Known(bool),
    /// The answer of the embedded types it holds, all `true` (`<Address as Embed>::plain_keys`).
    Asks(Vec<TokenStream>),
}

impl Plain {
    /// Both: known `false` when either is, else the questions of both.
    fn and(self, other: Plain) -> Plain {
        match (self, other) {
            (Plain::Known(false), _) | (_, Plain::Known(false)) => Plain::Known(false),
            (Plain::Known(true), p) | (p, Plain::Known(true)) => p,
            (Plain::Asks(mut a), Plain::Asks(b)) => {
                a.extend(b);
                Plain::Asks(a)
            }
        }
    }
}

/// `fn plain_keys` of the `Model` impl of `cont`: none when the answer is `false` (the trait's
/// default), a constant when it is known, otherwise worked out on its first call.
pub fn model_plain_keys(cont: &Container<'_>) -> TokenStream {
    match plain(cont) {
        Plain::Known(false) => quote!(),
        Plain::Known(true) => quote! {
            fn plain_keys() -> bool {
                true
            }
        },
        Plain::Asks(asks) => quote! {
            fn plain_keys() -> bool {
                static PLAIN: ::std::sync::OnceLock<bool> = ::std::sync::OnceLock::new();
                *PLAIN.get_or_init(|| {
                    let __visiting: &mut ::odm::__private::Vec<&'static str> =
                        &mut ::odm::__private::Vec::new();
                    #(#asks)&&*
                })
            }
        },
    }
}

/// `fn plain_keys` of the `Embed` impl of `cont`, as for a model; a type met again inside
/// itself adds no key of its own.
pub fn embed_plain_keys(cont: &Container<'_>) -> TokenStream {
    match plain(cont) {
        Plain::Known(false) => quote!(),
        Plain::Known(true) => quote! {
            fn plain_keys(_: &mut ::odm::__private::Vec<&'static str>) -> bool {
                true
            }
        },
        Plain::Asks(asks) => quote! {
            fn plain_keys(__visiting: &mut ::odm::__private::Vec<&'static str>) -> bool {
                let __me = ::std::any::type_name::<Self>();
                if __visiting.contains(&__me) {
                    return true;
                }
                __visiting.push(__me);
                let __plain = #(#asks)&&*;
                __visiting.pop();
                __plain
            }
        },
    }
}

fn plain(cont: &Container<'_>) -> Plain {
    if cont.serde_opaque {
        return Plain::Known(false);
    }
    cont.stored_fields()
        .map(field_plain)
        .fold(Plain::Known(true), Plain::and)
}

fn field_plain(f: &Field<'_>) -> Plain {
    let odd_name = f.stored.starts_with('$') || f.stored.contains('.') || f.stored.contains('\0');
    if f.custom_serde || f.dbref.is_some() || odd_name {
        return Plain::Known(false);
    }
    // A summary (`#[denormalize]` into an embedded type) is checked: its type's own check
    // reports a type that is not embedded, and this one would add a second error.
    if f.embed.is_none() && f.denormalize.is_some() {
        return Plain::Known(false);
    }
    type_plain(f.ty, f.has_embed_paths())
}

/// Whether `ty` is written with plain keys: known, or the embedded type's answer when the field
/// holds an embedded type (`embedded`).
fn type_plain(ty: &Type, embedded: bool) -> Plain {
    let ty = match ty {
        Type::Group(g) => return type_plain(&g.elem, embedded),
        Type::Paren(p) => return type_plain(&p.elem, embedded),
        Type::Path(p) if p.qself.is_none() => p,
        _ => return Plain::Known(false),
    };
    let Some(last) = ty.path.segments.last() else {
        return Plain::Known(false);
    };
    let name = last.ident.to_string();
    match &last.arguments {
        PathArguments::None if embedded => Plain::Asks(vec![
            quote!(<#ty as ::odm::__private::Embed>::plain_keys(__visiting)),
        ]),
        PathArguments::None if SCALARS.contains(&name.as_str()) => Plain::Known(true),
        PathArguments::AngleBracketed(args)
            if WRAPPERS.contains(&name.as_str()) && args.args.len() == 1 =>
        {
            match &args.args[0] {
                GenericArgument::Type(inner) => type_plain(inner, embedded),
                _ => Plain::Known(false),
            }
        }
        _ => Plain::Known(false),
    }
}
