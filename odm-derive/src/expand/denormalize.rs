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
use crate::model::attr::{field_ident, sort_key, DenormalizeAttr};
use crate::model::check::{copy_kind, CopyKind};
use crate::model::{Container, Field, Shape};

/// The source side, for every model: a hidden type with one method per stored field that
/// returns the field's typed path, reached as `<Model as CopySource>::fields()`. The method of
/// a `#[frequently_updated]` field is deprecated, so that a copy of it is a warning at the copy
/// (rule of thumb 5); nothing else calls it. Each method is the field's accessor again, token
/// for token, so that a mistake in the field's type is reported once, not once more here.
pub fn source_fields(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let hidden = hidden_fields_name(cont);
    let methods = cont.stored_fields().map(|f| {
        let name = f.ident;
        let vis = f.vis;
        let (ret, body) = paths::model_accessor_parts(cont, f);
        let deprecated = f.frequently_updated.as_ref().map(|_| {
            let note = format!(
                "`{ident}::{field}` is `#[frequently_updated]`, and copying it turns every update of it into an update of every copy (rule of thumb 5: denormalize only what is read much more often than it is written). Keep a `Ref<{ident}>` and populate it instead, or accept the cost with `#[allow(deprecated)]` on the copying struct",
                field = name.unraw(),
            );
            quote!(#[deprecated(note = #note)])
        });
        quote! {
            #deprecated
            #vis fn #name(&self) -> #ret {
                #body
            }
        }
    });
    // At the model's name, where "method not found for this struct" (a copy of a field the
    // source does not have) points; as visible as the model, whose `CopySource` impl names it.
    let vis = cont.vis;
    let def = quote_spanned! {ident.span()=>
        #vis struct #hidden;
    };
    quote! {
        const _: () = {
            #[doc(hidden)]
            #[allow(missing_debug_implementations)]
            #def

            impl ::odm::__private::CopySource for #ident {
                type Fields = #hidden;

                fn fields() -> #hidden {
                    #hidden
                }
            }

            impl ::odm::__private::SourceAccessors for #hidden {
                type Model = #ident;
            }

            #[allow(dead_code)]
            impl #hidden {
                #(#methods)*
            }
        };
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

/// `vec![CopyInfo::new(...), ...]` for every `#[denormalize]` field.
pub fn copy_infos(cont: &Container<'_>) -> TokenStream {
    let infos = cont
        .stored_fields()
        .filter_map(|f| copy_info(cont, f, f.denormalize.as_ref()?));
    quote!(::std::vec![#(#infos),*])
}

fn copy_info(cont: &Container<'_>, f: &Field<'_>, d: &DenormalizeAttr) -> Option<TokenStream> {
    let type_name = cont.ident.to_string();
    let collection = cont.collection_name();
    let stored = &f.stored;
    let (from, from_lit) = d.from.as_ref()?;
    let fields_lit = d.fields_lit.as_ref()?;
    let kind = copy_kind(d);

    // The generated locals are named at the call site, the same wherever they are used.
    let source_var = Ident::new("__source", Span::call_site());
    let source = quote_spanned! {from_lit.span()=>
        let #source_var = <#from as ::odm::__private::CopySource>::fields();
    };

    let fields = d.fields.iter().map(|src| {
        let span = at(fields_lit);
        let model = respan(cont.ident, span);
        let name = respan(f.ident, span);
        let source_var = respan(&source_var, span);
        // The method of a `#[frequently_updated]` field is deprecated. The lint is only
        // reported at a span of the user's code, so its call is spanned at the string itself;
        // it is reached from the source field, so that a field the source does not have is
        // one error (the first call's, without a suggestion to rewrite the string as code).
        let lint_src = field_ident(src, fields_lit.span());
        let src = field_ident(src, span);
        let from = quote_spanned! {span=>
            use ::odm::__private::CopyIn as _;
            let __from = #source_var.#src();
            let _ = __from.__odm_copy_in(&#source_var).#lint_src();
        };
        match kind {
            CopyKind::Flat => quote_spanned! {span=>
                {
                    #from
                    (
                        ::odm::__private::copy_of(&__from, &#model::#name()).0,
                        ::odm::__private::String::new(),
                        ::odm::__private::copy_check(&__from),
                    )
                }
            },
            // The copy's side is also reached from the source field, so that a field the
            // source does not have is not reported again for the summary.
            CopyKind::Summary | CopyKind::Latest => quote_spanned! {span=>
                {
                    #from
                    // What the copy holds must decode as the source field's (the copy's) type.
                    let __check = ::odm::__private::copy_check(&__from);
                    let (__from, __copy) = ::odm::__private::copy_of(
                        &__from,
                        &__from.__odm_copy_in(#model::#name()).#src(),
                    );
                    (__from, ::odm::__private::sub_path(#stored, &__copy), __check)
                }
            },
        }
    });
    let allow = (cont.allow_deprecated || f.allow_deprecated).then(|| quote!(#[allow(deprecated)]));

    let kind_tokens = match kind {
        CopyKind::Summary => {
            // At the summary type: it is what lacks `id: Ref<Source>`.
            let span = at(f.inner_ty());
            let source_var = respan(&source_var, span);
            let model = respan(cont.ident, span);
            let name = respan(f.ident, span);
            let array = matches!(f.shape, Shape::Vec(_));
            let id = quote_spanned! {span=>
                ::odm::__private::summary_id(&#source_var, &#model::#name())
            };
            let optional = matches!(f.shape, Shape::Option(_));
            quote!(::odm::__private::CopyKind::Summary {
                array: #array,
                id: #id,
                optional: #optional,
            })
        }
        CopyKind::Flat => {
            let via = d.via.as_ref()?;
            let span = at(via);
            let model = respan(cont.ident, span);
            let via_ident = field_ident(&via.value(), span);
            let source_var = respan(&source_var, span);
            let via = quote_spanned! {span=>
                ::odm::__private::via_to_source(&#source_var, &#model::#via_ident())
            };
            quote!(::odm::__private::CopyKind::Flat { via: #via })
        }
        CopyKind::Latest => {
            let via = d.via.as_ref()?;
            let sort = d.sort.as_ref()?;
            let (n, _, _) = d.latest?;
            let via_span = at(via);
            let via_ident = field_ident(&via.value(), via_span);
            let model = respan(cont.ident, via_span);
            let sort_value = sort.value();
            let (dir, sort_name) = sort_key(&sort_value);
            let sort_ident = field_ident(sort_name, at(sort));
            let via_source = respan(&source_var, via_span);
            let sort_source = respan(&source_var, at(sort));
            // Following the reference and sorting are not copies: no deprecation warning.
            let via = quote_spanned! {via_span=>
                {
                    #[allow(deprecated)]
                    let __via = #via_source.#via_ident();
                    ::odm::__private::via_from_source::<#model, _, _, _>(&__via)
                }
            };
            let sort = quote_spanned! {at(sort)=>
                {
                    #[allow(deprecated)]
                    let __sort = #sort_source.#sort_ident();
                    ::std::borrow::ToOwned::to_owned(::odm::__private::Field::path(&__sort))
                }
            };
            quote!(::odm::__private::CopyKind::Latest {
                via: #via,
                n: #n,
                sort: {
                    let mut __sort = ::odm::bson::Document::new();
                    __sort.insert(#sort, #dir);
                    __sort
                },
            })
        }
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
        }
    })
}

/// The index that finds the copies of a source: on the summaries' id (`parts.id`). A copy
/// `via` a reference uses that reference's own index. The path comes from the registry entry,
/// so that the summary's `id` is checked (and reported) once.
pub fn copy_indexes(cont: &Container<'_>) -> Vec<TokenStream> {
    cont.stored_fields()
        .filter_map(|f| {
            let d = f.denormalize.as_ref()?;
            if copy_kind(d) != CopyKind::Summary {
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
