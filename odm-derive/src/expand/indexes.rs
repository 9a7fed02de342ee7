//! The generated `Model::indexes()`.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::model::attr::{CompoundIndex, IndexKeyPath, IndexKind, IndexOptions};
use crate::model::{Container, Field, Shape};

pub fn index_specs(cont: &Container<'_>) -> TokenStream {
    let mut specs = Vec::new();
    for f in cont.stored_fields() {
        specs.extend(reference_index(cont, f));
        specs.extend(field_index(cont, f));
    }
    specs.extend(super::denormalize::copy_indexes(cont));
    specs.extend(super::counters::indexes(cont));
    for idx in &cont.compound_indexes {
        specs.extend(compound_index(cont, idx));
    }
    if specs.is_empty() {
        return quote!(::odm::__private::Vec::new());
    }
    quote! {
        ::odm::__private::vec_of([#(#specs),*])
    }
}

/// The marks of the searches the model's indexes answer: `GeoIndexed` with a 2dsphere index
/// (`$near`, `$geoNear`), `TextIndexed` with a text index (`$text` with its score).
pub fn searchable(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let indexes = || cont.stored_fields().filter_map(|f| f.index.as_ref());
    let geo = indexes()
        .any(|i| matches!(i.kind, Some((IndexKind::Sphere, _))))
        .then(|| quote!(impl ::odm::__private::GeoIndexed for #ident {}));
    let text = (indexes().any(|i| i.text.is_some())
        || cont.compound_indexes.iter().any(|i| i.text.is_some()))
    .then(|| quote!(impl ::odm::__private::TextIndexed for #ident {}));
    quote!(#geo #text)
}

/// The index of a reference: references are queried by their field (delete rules, children,
/// two-way checks), so they get one without being asked, unless the field declares its own or
/// a declared compound index starts with it.
fn reference_index(cont: &Container<'_>, f: &Field<'_>) -> Option<TokenStream> {
    let covered = cont.compound_indexes.iter().any(|idx| {
        idx.text.is_none()
            && idx
                .keys
                .first()
                .is_some_and(|k| k.segments.len() == 1 && *f.ident == k.segments[0])
    });
    if f.reference.is_none() || f.index.is_some() || f.is_id() || covered {
        return None;
    }
    let stored = &f.stored;
    let asc = quote!(::odm::__private::IndexKey::Asc);
    // A DBRef, alone or in an array, is found by its fields (`$ref` and `$id`, in any order in
    // the stored element).
    let dbref = f.is_poly() || f.dbref.is_some();
    Some(if dbref {
        let (r, id) = (format!("{stored}.$ref"), format!("{stored}.$id"));
        quote!(::odm::__private::IndexSpec::on(#r, #asc).then(#id, #asc))
    } else {
        quote!(::odm::__private::IndexSpec::on(#stored, #asc))
    })
}

/// The index a field declares with `#[index(...)]`.
fn field_index(cont: &Container<'_>, f: &Field<'_>) -> Option<TokenStream> {
    let index = f.index.as_ref()?;
    let stored = &f.stored;
    let key = if let Some((kind, _)) = index.kind {
        match kind {
            IndexKind::Sphere => quote!(::odm::__private::IndexKey::Sphere),
            IndexKind::Hashed => quote!(::odm::__private::IndexKey::Hashed),
            IndexKind::Wildcard => quote!(::odm::__private::IndexKey::Wildcard),
        }
    } else if index.text.is_some() {
        quote!(::odm::__private::IndexKey::Text)
    } else if index.desc.is_some() {
        quote!(::odm::__private::IndexKey::Desc)
    } else {
        quote!(::odm::__private::IndexKey::Asc)
    };
    let mut spec = quote!(::odm::__private::IndexSpec::on(#stored, #key));
    if index.unique.is_some() {
        spec = quote!(#spec.unique());
        if matches!(f.shape, Shape::Option(_)) {
            spec = quote!(#spec.only_present(#stored));
        }
    }
    if index.sparse.is_some() {
        spec = quote!(#spec.sparse());
    }
    if let Some(soft) = live_only(cont, index.unique.is_some(), &index.more, &[stored]) {
        spec = quote!(#spec.then(#soft, ::odm::__private::IndexKey::Asc));
    }
    if let Some((secs, _)) = index.expire_after_secs {
        spec = quote!(#spec.expire_after_secs(#secs));
    }
    if let Some(name) = &index.name {
        spec = quote!(#spec.named(#name));
    }
    Some(with_options(cont, &index.more, spec))
}

/// `spec` with the options a field's index and a compound one share: its collation, hidden,
/// and its partial filter, built with the model's accessors so that a field it does not have,
/// or a value of another type than the field's, is a compile error at the attribute.
fn with_options(cont: &Container<'_>, more: &IndexOptions, mut spec: TokenStream) -> TokenStream {
    if let Some((locale, strength)) = &more.collation {
        spec = quote!(#spec.collation(#locale, #strength));
    }
    if more.hidden.is_some() {
        spec = quote!(#spec.hidden());
    }
    let conditions = more.partial.iter().map(|(field, value)| {
        // At the field: a field the model lacks is an error there, not at the whole struct.
        let mut model = cont.ident.clone();
        model.set_span(field.span());
        quote_spanned!(value.span()=> #model::#field().eq(#value))
    });
    let mut filter: Option<TokenStream> = None;
    for condition in conditions {
        filter = Some(match filter {
            None => condition,
            Some(f) => quote!(#f.and(#condition)),
        });
    }
    if let Some(filter) = filter {
        spec = quote!(#spec.partial(::odm::__private::partial_filter(#filter)));
    }
    spec
}

/// The stored field of the model's soft delete, as the last key of a unique index that
/// applies to live documents only (every live document has it `null`, a deleted one the time
/// of its delete): `None` for an index that is not unique, says `forever`, or has the field
/// among its `keys` already.
fn live_only(
    cont: &Container<'_>,
    unique: bool,
    more: &IndexOptions,
    keys: &[&String],
) -> Option<String> {
    let field = crate::model::soft_delete::field(cont)?;
    let free = keys.iter().all(|k| **k != field.stored);
    (unique && more.forever.is_none() && free).then(|| field.stored.clone())
}

/// A compound index the model declares (`#[odm(index(keys = "..."))]`).
fn compound_index(cont: &Container<'_>, idx: &CompoundIndex) -> Option<TokenStream> {
    let mut spec = compound_keys(cont, idx)?;
    let keys: Vec<&String> = idx
        .keys
        .iter()
        .filter_map(|k| {
            cont.field_named(&k.segments[0])
                .filter(|_| k.segments.len() == 1)
        })
        .map(|f| &f.stored)
        .collect();
    if let Some(soft) = live_only(cont, idx.unique.is_some(), &idx.more, &keys) {
        spec = quote!(#spec.then(#soft, ::odm::__private::IndexKey::Asc));
    }
    Some(with_options(cont, &idx.more, spec))
}

/// The keys and flags of a compound index.
fn compound_keys(cont: &Container<'_>, idx: &CompoundIndex) -> Option<TokenStream> {
    let lit = idx.keys_lit.as_ref()?;
    let mut spec: Option<TokenStream> = None;
    for key in &idx.keys {
        let Some(first) = cont.field_named(&key.segments[0]) else {
            continue;
        };
        let path = if key.segments.len() == 1 {
            let stored = &first.stored;
            quote!(#stored)
        } else {
            embedded_key_path(cont, first, key, lit.span())
        };
        spec = Some(compound_key(idx, key, spec, path));
    }
    Some(compound_options(idx, spec?))
}

/// The stored path of a compound index's key inside an embedded type (`address.city`).
///
/// The accessor chain makes the compiler check each segment against the embedded types;
/// errors point at the attribute's string (`lit`). The span keeps the macro's context so that
/// rustc does not offer to rewrite the string as code.
fn embedded_key_path(
    cont: &Container<'_>,
    first: &Field<'_>,
    key: &IndexKeyPath,
    lit: Span,
) -> TokenStream {
    let span = Span::call_site().located_at(lit);
    // The embedded field's accessor at its type, exactly as the accessor's own return type: a
    // type that is not `Embed` is then one error there, not again here.
    let embedded = first.inner_ty().span();
    let mut model = cont.ident.clone();
    model.set_span(embedded);
    let mut first_ident = first.ident.clone();
    first_ident.set_span(embedded);
    let first = quote_spanned!(embedded=> #model::#first_ident());
    let rest = key.segments[1..].iter().map(|s| segment_ident(s, span));
    if key.segments.len() == 2 {
        // The field of the embedded type is checked by `key_field_checks`, with a suggestion; a
        // stand-in keeps it from being reported a second time here.
        let below = segment_ident(&key.segments[1], span);
        quote_spanned! {span=>
            {
                #[allow(non_camel_case_types, dead_code)]
                trait __NoSuchField {
                    fn #below(&self) -> ::odm::__private::Field<(), (), ::odm::__private::Single> {
                        ::odm::__private::Field::top("")
                    }
                }
                impl<T: ?::core::marker::Sized> __NoSuchField for T {}
                ::std::borrow::ToOwned::to_owned(
                    ::odm::__private::Field::path(&#first.#below()),
                )
            }
        }
    } else {
        // `Field::path` by path: the last segment may be an embedded type with a field named
        // `path`, whose accessor would win over the method.
        quote_spanned! {span=>
            ::odm::__private::Field::path(&#first #(.#rest())*)
        }
    }
}

/// `IndexSpec::on(path, dir)` for the first key of a compound index, `.then(path, dir)` after.
pub fn compound_key(
    idx: &CompoundIndex,
    key: &IndexKeyPath,
    spec: Option<TokenStream>,
    path: TokenStream,
) -> TokenStream {
    let dir = if idx.text.is_some() {
        quote!(::odm::__private::IndexKey::Text)
    } else if key.desc {
        quote!(::odm::__private::IndexKey::Desc)
    } else {
        quote!(::odm::__private::IndexKey::Asc)
    };
    match spec {
        None => quote!(::odm::__private::IndexSpec::on(#path, #dir)),
        Some(s) => quote!(#s.then(#path, #dir)),
    }
}

/// A compound index's options (`unique`, `sparse`, `name`) applied to its keys.
pub fn compound_options(idx: &CompoundIndex, mut spec: TokenStream) -> TokenStream {
    if idx.unique.is_some() {
        spec = quote!(#spec.unique());
    }
    if idx.sparse.is_some() {
        spec = quote!(#spec.sparse());
    }
    if let Some(name) = &idx.name {
        spec = quote!(#spec.named(#name));
    }
    spec
}

/// The accessor for one segment of a dotted key: a raw identifier when the field name is a
/// keyword (`r#type`). Segments were checked to be identifiers when the keys were parsed.
fn segment_ident(segment: &str, span: Span) -> Ident {
    match syn::parse_str::<Ident>(segment) {
        Ok(_) => Ident::new(segment, span),
        Err(_) => Ident::new_raw(segment, span),
    }
}

/// For each dotted key of two segments (`publisher.name`), a constant evaluated while
/// compiling that fails when the embedded type has no such field, suggesting the closest one
/// (`odm::rules::key_field`). The embedded type's names are read at its type in the field, as
/// its accessor does, so that a type that is not `Embed` is one error. Deeper keys are
/// checked by their accessor chain.
pub fn key_field_checks(cont: &Container<'_>) -> TokenStream {
    let mut checks = Vec::new();
    for idx in &cont.compound_indexes {
        let Some(lit) = &idx.keys_lit else { continue };
        for key in &idx.keys {
            let Some(first) = cont.field_named(&key.segments[0]) else {
                continue;
            };
            if key.segments.len() != 2 || !first.has_embed_paths() {
                continue;
            }
            let inner = first.inner_ty();
            let span = Span::call_site().located_at(lit.span());
            let name = quote_spanned!(inner.span()=> <#inner as ::odm::__private::Embed>::NAME);
            let fields = quote_spanned!(inner.span()=> <#inner as ::odm::__private::Embed>::FIELDS);
            let below = &key.segments[1];
            let whole = key.segments.join(".");
            checks.push(quote_spanned! {span=>
                const _: () = ::odm::__private::key_field(#name, #fields, #below, #whole);
            });
        }
    }
    quote!(#(#checks)*)
}
