//! Copies (`#[denormalize]`): what a model offers as a copy source, what the runtime is told
//! about each copy (the registry's copy entries), and the index that serves cascades.
//!
//! The entries are built by code that only compiles when the copy matches its source: `from`
//! is a model, each copied field exists on it with exactly the copy's type, a summary carries
//! the source id, and `via` is a reference between the two models. Every access to the source
//! goes through one value, `<Source as CopySource>::fields()`, so that a `from` that is not a
//! model is one error; errors point at the attribute's strings or at the copy's type.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::paths;
use crate::model::attr::CopyKind;
use crate::model::attr::{field_ident, sort_key, DenormalizeAttr};
use crate::model::{Container, Field, Shape};

/// The source side, for every model: a hidden type reached as `<Model as CopySource>::fields()`
/// (the source's collection and kind, and the checks of `via` and of a summary's id go through
/// it), and the names of the stored fields, which each copied field is checked against at
/// compile time. A copy reaches the source's fields through the model's own accessors
/// (`<Part>::name()`), so a model has no second set of them. A `#[frequently_updated]` field
/// `qty` also gets a deprecated constant `Part::qty_is_frequently_updated`, which a copy of it
/// names: a warning at the copy (rule of thumb 5), naming only the model.
pub fn source_fields(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let hidden = hidden_fields_name(cont);
    let vis = cont.vis;
    let names = paths::names_consts(cont);
    // At the model's name; as visible as the model, whose `CopySource` impl names it.
    let def = quote_spanned! {ident.span()=>
        #vis struct #hidden;
    };
    let body = source_impl(ident, &hidden, def, names);
    quote! {
        const _: () = {
            #body
        };
    }
}

/// The hidden type `hidden` (defined by `def`) and `ident`'s `CopySource` impl naming it with
/// `names`.
pub fn source_impl(
    ident: &Ident,
    hidden: &Ident,
    def: TokenStream,
    names: TokenStream,
) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(missing_debug_implementations)]
        #def

        impl ::odm::__private::CopySource for #ident {
            type Fields = #hidden;
            #names

            fn fields() -> #hidden {
                #hidden
            }
        }

        impl ::odm::__private::SourceAccessors for #hidden {
            type Model = #ident;
        }
    }
}

/// For each `#[frequently_updated]` field `qty`, the deprecated constant
/// `Part::qty_is_frequently_updated`, which a copy of the field names: a warning at the copy
/// (rule of thumb 5) whose message names the model and the field. Emitted next to the struct
/// rather than in the generated `const _` block, so that the message's path is `Part::...`.
pub fn frequently_updated_consts(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let vis = cont.vis;
    let deprecated = cont
        .stored_fields()
        .filter(|f| f.frequently_updated.is_some())
        .map(|f| {
            let field = f.ident.unraw();
            let note = format!(
                "`{ident}::{field}` is `#[frequently_updated]`, and copying it turns every update of it into an update of every copy (rule of thumb 5: denormalize only what is read much more often than it is written). Keep a `Ref<{ident}>` and populate it instead, or accept the cost with `#[allow(deprecated)]` on the copying struct",
            );
            let lint = frequently_updated_ident(&field.to_string(), field.span());
            quote! {
                #[doc(hidden)]
                #[deprecated(note = #note)]
                #vis const #lint: () = ();
            }
        })
        .collect::<Vec<_>>();
    if deprecated.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[automatically_derived]
        #[allow(non_upper_case_globals)]
        impl #ident {
            #(#deprecated)*
        }
    }
}

/// `PartFields` for `Part`: a name that no field type of the model mentions, since the hidden
/// type's methods return the field types and would otherwise see it instead of the user's.
fn hidden_fields_name(cont: &Container<'_>) -> Ident {
    let mut used = Vec::new();
    for f in &cont.fields {
        collect_idents(f.ty.to_token_stream(), &mut used);
    }
    let mut name = format!("{}Fields", cont.ident.unraw());
    while used.contains(&name) {
        name.push('_');
    }
    Ident::new(&name, cont.ident.span())
}

fn collect_idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => out.push(i.unraw().to_string()),
            TokenTree::Group(g) => collect_idents(g.stream(), out),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

/// A span at `lit` in the macro's context: errors point at the string, and rustc does not
/// offer to rewrite the string as code.
fn at(lit: &impl Spanned) -> Span {
    Span::call_site().located_at(lit.span())
}

fn respan(ident: &Ident, span: Span) -> Ident {
    let mut ident = ident.clone();
    ident.set_span(span);
    ident
}

/// `Product::parts()`, spanned at the summary type itself (its own context, not the macro's):
/// rustc reports an unsatisfied bound once per span and predicate, so a summary type that does
/// not derive `Embed` is one error, the accessor's, wherever the copy's code reaches it.
fn summary_accessor(cont: &Container<'_>, f: &Field<'_>) -> TokenStream {
    let span = f.inner_ty().span();
    let model = respan(cont.ident, span);
    let name = respan(f.ident, span);
    quote_spanned!(span=> #model::#name())
}

/// `qty_is_frequently_updated`: the deprecated constant of a `#[frequently_updated]` field
/// `qty`, named in the source's deprecation message.
fn frequently_updated_ident(field: &str, span: Span) -> Ident {
    Ident::new(&format!("{field}_is_frequently_updated"), span)
}

/// `const __BOTH: bool`: whether the copied field `name` exists on the source and (for a
/// summary) on the summary type, from the names their derives record. The names are read
/// with the spans of the rest of the generated code (`from`'s string, the summary type), so
/// that a `from` that is not a model, or a summary type that is not `Embed`, is one error.
fn copied_field_exists(
    from: &syn::Path,
    from_lit: &syn::LitStr,
    f: &Field<'_>,
    kind: CopyKind,
    name: &str,
) -> TokenStream {
    let source = quote_spanned!(from_lit.span()=> <#from as ::odm::__private::CopySource>::FIELDS);
    let summary = match kind {
        CopyKind::Flat => quote!(true),
        CopyKind::Summary | CopyKind::Latest => {
            let inner = f.inner_ty();
            let fields =
                quote_spanned!(inner.span()=> <#inner as ::odm::__private::SummaryType>::FIELDS);
            quote!(::odm::__private::has_field(#fields, #name))
        }
    };
    quote! {
        const __BOTH: bool = ::odm::__private::has_field(#source, #name) && #summary;
    }
}

/// For every copied field, a constant evaluated while compiling that fails when the field is
/// missing from the source or from the summary type, with the closest field of the source as
/// a suggestion (`odm::rules::copied_field`). Outside any function, so that the message names
/// no generated item. At the `fields` string.
pub fn copied_field_checks(cont: &Container<'_>) -> TokenStream {
    let checks = cont.stored_fields().flat_map(|f| {
        let d = f.denormalize.as_ref();
        let found = d.and_then(|d| Some((d, d.from.as_ref()?, d.fields_lit.as_ref()?)));
        let Some((d, (from, from_lit), fields_lit)) = found else {
            return Vec::new();
        };
        let kind = d.kind();
        d.fields
            .iter()
            .map(|name| {
                let span = at(fields_lit);
                let source_name =
                    quote_spanned!(from_lit.span()=> <#from as ::odm::__private::CopySource>::NAME);
                let source_fields =
                    quote_spanned!(from_lit.span()=> <#from as ::odm::__private::CopySource>::FIELDS);
                let (summary_name, summary_fields) = match kind {
                    CopyKind::Flat => (quote!(""), quote!(&[])),
                    CopyKind::Summary | CopyKind::Latest => {
                        let inner = f.inner_ty();
                        (
                            quote_spanned!(inner.span()=> <#inner as ::odm::__private::SummaryType>::NAME),
                            quote_spanned!(inner.span()=> <#inner as ::odm::__private::SummaryType>::FIELDS),
                        )
                    }
                };
                quote_spanned! {span=>
                    const _: () = ::odm::__private::copied_field(
                        #source_name,
                        #source_fields,
                        #summary_name,
                        #summary_fields,
                        #name,
                    );
                }
            })
            .collect::<Vec<_>>()
    });
    // A latest-N copy follows a reference of the source (`via`), which its derive checks.
    let vias = cont.stored_fields().filter_map(|f| {
        let d = f.denormalize.as_ref()?;
        if d.kind() != CopyKind::Latest {
            return None;
        }
        let ((from, from_lit), via) = (d.from.as_ref()?, d.via.as_ref()?);
        let source_name =
            quote_spanned!(from_lit.span()=> <#from as ::odm::__private::CopySource>::NAME);
        let source_fields =
            quote_spanned!(from_lit.span()=> <#from as ::odm::__private::CopySource>::FIELDS);
        let name = via.value();
        Some(quote_spanned! {at(via)=>
            const _: () = ::odm::__private::via_field(#source_name, #source_fields, #name);
        })
    });
    quote!(#(#checks)* #(#vias)*)
}

/// The list of the `CopyInfo` of every `#[denormalize]` field; `None` without any.
pub fn copy_infos(cont: &Container<'_>) -> Option<TokenStream> {
    let infos: Vec<_> = cont
        .stored_fields()
        .filter_map(|f| copy_info(cont, f, f.denormalize.as_ref()?))
        .collect();
    (!infos.is_empty()).then(|| quote!(::odm::__private::vec_of([#(#infos),*])))
}

fn copy_info(cont: &Container<'_>, f: &Field<'_>, d: &DenormalizeAttr) -> Option<TokenStream> {
    let type_name = cont.ident.to_string();
    let collection = cont.collection_expr();
    let stored = &f.stored;
    let (from, from_lit) = d.from.as_ref()?;
    d.fields_lit.as_ref()?; // a copy without its fields was reported
    let kind = d.kind();
    let background = d.in_background().then(|| quote!(.in_background(true)));

    // The generated locals are named at the call site, the same wherever they are used.
    let source_var = Ident::new("__source", Span::call_site());
    let source = quote_spanned! {from_lit.span()=>
        let #source_var = <#from as ::odm::__private::CopySource>::fields();
    };
    let fields = d
        .fields
        .iter()
        .map(|src| copied_pair(cont, f, d, kind, src))
        .collect::<Option<Vec<_>>>()?;
    let allow = (cont.allow_deprecated || f.allow_deprecated).then(|| quote!(#[allow(deprecated)]));
    let kind_tokens = match kind {
        CopyKind::Summary => summary_kind(cont, f, &source_var),
        CopyKind::Flat => flat_kind(cont, d, &source_var)?,
        CopyKind::Latest => latest_kind(cont, d)?,
    };
    Some(quote! {
        {
            #source
            #allow
            let (__fields, __checks) = ::odm::__private::copy_fields(::std::vec![#(#fields),*]);
            let __kind = #kind_tokens;
            ::odm::__private::CopyInfo::new(
                #type_name,
                #collection,
                #stored,
                ::odm::__private::source_collection(&#source_var),
                __kind,
                __fields,
            )
            .with_checks(__checks)
            .from_kind(::odm::__private::source_kind(&#source_var))
            #background
        }
    })
}

/// One copied field of a copy: `(source path, copy path, check)`, the source's field reached
/// through the source's accessor (a stand-in when it lacks the field, so that the one error is
/// `copied_field`'s, with its suggestion).
fn copied_pair(
    cont: &Container<'_>,
    f: &Field<'_>,
    d: &DenormalizeAttr,
    kind: CopyKind,
    src: &str,
) -> Option<TokenStream> {
    let (from, from_lit) = d.from.as_ref()?;
    let fields_lit = d.fields_lit.as_ref()?;
    let stored = &f.stored;
    let span = at(fields_lit);
    let model = respan(cont.ident, span);
    let name = respan(f.ident, span);
    let both = copied_field_exists(from, from_lit, f, kind, src);
    // A `#[frequently_updated]` field's model has a deprecated constant; the lint is only
    // reported at a span of the user's code, so the constant is named at the string itself.
    let lint = frequently_updated_ident(src, fields_lit.span());
    let from_ty = quote_spanned!(from_lit.span()=> <#from>);
    let src = field_ident(src, span);
    // The source's accessor when the field exists; otherwise a stand-in, so that the one
    // error is `copied_field`'s, with its suggestion. The stand-ins are in scope only here.
    let from = quote_spanned! {span=>
        use ::odm::__private::CopyIn as _;
        #both
        let __from = {
            #[allow(non_camel_case_types, non_upper_case_globals, dead_code)]
            trait __NoSuchField {
                fn #src() -> ::odm::__private::Field<(), (), ::odm::__private::Single> {
                    ::odm::__private::Field::top("")
                }
                const #lint: () = ();
            }
            impl<T: ?::core::marker::Sized> __NoSuchField for T {}
            let _ = #from_ty::#lint;
            #from_ty::#src()
        };
        // A tree's kept links are rewritten by moves, which no cascade follows.
        ::odm::__private::copyable(&__from);
    };
    Some(match kind {
        CopyKind::Flat => quote_spanned! {span=>
            {
                #from
                let __copy = #model::#name();
                (
                    ::odm::__private::copy_of(
                        <::odm::__private::Checked<{ __BOTH }> as ::odm::__private::Compared<_, _>>::source(&__from, &__copy),
                        &__copy,
                    )
                    .0,
                    ::odm::__private::String::new(),
                    ::odm::__private::copy_check(&__from),
                )
            }
        },
        // The copy's accessor is spanned at the summary type, exactly as the accessor's
        // own return type: a summary type without `Embed` is then one error there, not
        // once more at the string. A field the summary lacks is `copied_field`'s error.
        CopyKind::Summary | CopyKind::Latest => {
            let copy = summary_accessor(cont, f);
            quote_spanned! {span=>
            {
                #from
                // What the copy holds must decode as the source field's (the copy's) type.
                let __check = ::odm::__private::copy_check(&__from);
                let __copy = {
                    #[allow(non_camel_case_types, dead_code)]
                    trait __NoSuchCopy {
                        fn #src(&self) -> ::odm::__private::Field<(), (), ::odm::__private::Single> {
                            ::odm::__private::Field::top("")
                        }
                    }
                    impl<T: ?::core::marker::Sized> __NoSuchCopy for T {}
                    __from.__odm_copy_in(#copy).#src()
                };
                let (__from, __copy) =
                    ::odm::__private::copy_of(
                        <::odm::__private::Checked<{ __BOTH }> as ::odm::__private::Compared<_, _>>::source(&__from, &__copy),
                        &__copy,
                    );
                (__from, ::odm::__private::sub_path(#stored, &__copy), __check)
            }
            }
        }
    })
}

/// The kind of a summary copy: whether an array, the path of the source's id in it (at the
/// summary type, which is what lacks `id: Ref<Source>`), whether optional.
fn summary_kind(cont: &Container<'_>, f: &Field<'_>, source_var: &Ident) -> TokenStream {
    // At the summary type: it is what lacks `id: Ref<Source>`.
    let span = at(f.inner_ty());
    let source_var = respan(source_var, span);
    let copy = summary_accessor(cont, f);
    let array = matches!(f.shape, Shape::Vec(_));
    let id = quote_spanned! {span=>
        ::odm::__private::summary_id(&#source_var, &#copy)
    };
    let optional = matches!(f.shape, Shape::Option(_));
    quote!(::odm::__private::CopyKind::Summary {
        array: #array,
        id: #id,
        optional: #optional,
    })
}

/// The kind of a flat copy: the reference it is copied through (`via`).
fn flat_kind(cont: &Container<'_>, d: &DenormalizeAttr, source_var: &Ident) -> Option<TokenStream> {
    let via = d.via.as_ref()?;
    let span = at(via);
    let model = respan(cont.ident, span);
    let via_ident = field_ident(&via.value(), span);
    let source_var = respan(source_var, span);
    let via = quote_spanned! {span=>
        ::odm::__private::via_to_source(&#source_var, &#model::#via_ident())
    };
    Some(quote!(::odm::__private::CopyKind::Flat { via: #via }))
}

/// The kind of a latest-N copy: the source's reference to this model, N, the sort of the
/// source's documents (stand-ins when the source lacks a field, which `via_field` and
/// `copied_field` report).
fn latest_kind(cont: &Container<'_>, d: &DenormalizeAttr) -> Option<TokenStream> {
    let (from, _) = d.from.as_ref()?;
    let via = d.via.as_ref()?;
    let sort = d.sort.as_ref()?;
    let (n, _, _) = d.latest?;
    let via_span = at(via);
    let via_ident = field_ident(&via.value(), via_span);
    let model = respan(cont.ident, via_span);
    let sort_value = sort.value();
    let (dir, sort_name) = sort_key(&sort_value);
    let sort_ident = field_ident(sort_name, at(sort));
    // Following the reference and sorting are not copies: no deprecation warning.
    let via = quote_spanned! {via_span=>
        {
            #[allow(deprecated)]
            // A stand-in when the source lacks the field: `via_field` reports it.
            #[allow(non_camel_case_types, dead_code)]
            trait __NoSuchField {
                fn #via_ident() -> ::odm::__private::Field<(), ::odm::__private::Ref<#model>, ::odm::__private::Single> {
                    ::odm::__private::Field::top("")
                }
            }
            impl<T: ?::core::marker::Sized> __NoSuchField for T {}
            let __via = <#from>::#via_ident();
            ::odm::__private::via_from_source::<#model, _, _, _>(&__via)
        }
    };
    let sort = quote_spanned! {at(sort)=>
        {
            #[allow(deprecated)]
            // A stand-in when the source lacks the field: the sort key is a copied
            // field, which `copied_field` reports.
            #[allow(non_camel_case_types, dead_code)]
            trait __NoSuchField {
                fn #sort_ident() -> ::odm::__private::Field<(), (), ::odm::__private::Single> {
                    ::odm::__private::Field::top("")
                }
            }
            impl<T: ?::core::marker::Sized> __NoSuchField for T {}
            let __sort = <#from>::#sort_ident();
            ::std::borrow::ToOwned::to_owned(::odm::__private::Field::path(&__sort))
        }
    };
    Some(quote!(::odm::__private::CopyKind::Latest {
        via: #via,
        n: #n,
        sort: {
            let mut __sort = ::odm::bson::Document::new();
            __sort.insert(#sort, #dir);
            __sort
        },
    }))
}

/// The index that finds the copies of a source: on the summaries' id (`parts.id`). A copy
/// `via` a reference uses that reference's own index. The path comes from the registry entry,
/// so that the summary's `id` is checked (and reported) once.
pub fn copy_indexes(cont: &Container<'_>) -> Vec<TokenStream> {
    cont.stored_fields()
        .filter_map(|f| {
            let d = f.denormalize.as_ref()?;
            if d.kind() != CopyKind::Summary {
                return None;
            }
            let stored = &f.stored;
            Some(quote!(::odm::__private::IndexSpec::on(
                ::odm::__private::summary_ids_path(&copies(), #stored),
                ::odm::__private::IndexKey::Asc,
            )))
        })
        .collect()
}
