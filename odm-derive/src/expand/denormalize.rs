//! What the runtime is told about `#[denormalize]` fields (the registry's copy entries), the
//! compile-time checks that each copy matches its source, and the index that serves cascades.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use crate::model::check::{copy_kind, CopyKind};
use crate::model::{Container, Shape};

fn field_path(expr: TokenStream) -> TokenStream {
    quote!(::odm::__private::Field::path(&#expr))
}

/// `vec![CopyInfo::new(...), ...]` for every `#[denormalize]` field.
pub fn copy_infos(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let type_name = ident.to_string();
    let collection = cont.collection_name();
    let infos = cont.stored_fields().filter_map(|f| {
        let d = f.denormalize.as_ref()?;
        let (from, _) = d.from.as_ref()?;
        let name = f.ident;
        let stored = &f.stored;
        let kind = copy_kind(d);
        let fields = d.fields.iter().map(|src| {
            let src = format_ident!("{}", src);
            let source = field_path(quote!(<#from>::#src()));
            let copy = match kind {
                CopyKind::Flat => quote!(::odm::__private::String::new()),
                _ => {
                    let full = field_path(quote!(#ident::#name().#src()));
                    quote!(::odm::__private::sub_path(#stored, #full))
                }
            };
            quote!((::std::borrow::ToOwned::to_owned(#source), #copy))
        });
        let kind_tokens = match kind {
            CopyKind::Summary => {
                let array = matches!(f.shape, Shape::Vec(_));
                let id = field_path(quote!(#ident::#name().id()));
                quote!(::odm::__private::CopyKind::Summary {
                    array: #array,
                    id: ::odm::__private::sub_path(#stored, #id),
                })
            }
            CopyKind::Flat => {
                let via = format_ident!("{}", d.via.as_ref()?.value());
                let via = field_path(quote!(#ident::#via()));
                quote!(::odm::__private::CopyKind::Flat {
                    via: ::std::borrow::ToOwned::to_owned(#via),
                })
            }
            CopyKind::Latest => {
                let via = format_ident!("{}", d.via.as_ref()?.value());
                let via = field_path(quote!(<#from>::#via()));
                let sort_lit = d.sort.as_ref()?.value();
                let (dir, sort_name) = match sort_lit.strip_prefix('-') {
                    Some(rest) => (-1i32, rest.to_owned()),
                    None => (1i32, sort_lit),
                };
                let sort_ident = format_ident!("{}", sort_name);
                let sort_path = field_path(quote!(<#from>::#sort_ident()));
                let (n, _) = d.latest?;
                quote!(::odm::__private::CopyKind::Latest {
                    via: ::std::borrow::ToOwned::to_owned(#via),
                    n: #n,
                    sort: {
                        let mut sort = ::odm::bson::Document::new();
                        sort.insert(#sort_path, #dir);
                        sort
                    },
                })
            }
        };
        Some(quote! {
            ::odm::__private::CopyInfo::new(
                #type_name,
                #collection,
                #stored,
                <#from as ::odm::__private::Model>::COLLECTION,
                #kind_tokens,
                ::std::vec![#(#fields),*],
            )
        })
    });
    quote!(::std::vec![#(#infos),*])
}

/// Code that only compiles when each copy matches its source: `from` is a model, each copied
/// field exists on it with exactly the copy's type, a summary carries the source id, and `via`
/// is a reference between the two. Errors point at the attribute's strings.
pub fn copy_checks(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let checks = cont.stored_fields().filter_map(|f| {
        let d = f.denormalize.as_ref()?;
        let (from, from_lit) = d.from.as_ref()?;
        let name = f.ident;
        let kind = copy_kind(d);
        let mut body = Vec::new();
        if let Some(lit) = &d.fields_lit {
            for src in &d.fields {
                let src = format_ident!("{}", src, span = lit.span());
                let copy = match kind {
                    CopyKind::Flat => quote_spanned!(lit.span()=> #ident::#name()),
                    _ => quote_spanned!(lit.span()=> #ident::#name().#src()),
                };
                body.push(quote_spanned! {lit.span()=>
                    ::odm::__private::copy_of(&<#from>::#src(), &#copy);
                });
            }
        }
        match kind {
            CopyKind::Summary => body.push(quote_spanned! {from_lit.span()=>
                ::odm::__private::summary_id::<#from, _, _>(&#ident::#name().id());
            }),
            CopyKind::Flat => {
                if let Some(via) = &d.via {
                    let via_ident = format_ident!("{}", via.value(), span = via.span());
                    body.push(quote_spanned! {via.span()=>
                        ::odm::__private::via_of::<#from, _, _>(&#ident::#via_ident());
                    });
                }
            }
            CopyKind::Latest => {
                if let Some(via) = &d.via {
                    let via_ident = format_ident!("{}", via.value(), span = via.span());
                    body.push(quote_spanned! {via.span()=>
                        ::odm::__private::via_of::<#ident, _, _>(&<#from>::#via_ident());
                    });
                }
                if let Some(sort) = &d.sort {
                    let sort_ident = format_ident!(
                        "{}",
                        sort.value().trim_start_matches('-'),
                        span = sort.span()
                    );
                    body.push(quote_spanned! {sort.span()=>
                        let _ = <#from>::#sort_ident();
                    });
                }
            }
        }
        Some(quote_spanned! {from_lit.span()=>
            const _: () = ::odm::__private::assert_model::<#from>();
            const _: fn() = || {
                #(#body)*
            };
        })
    });
    quote!(#(#checks)*)
}

/// The index that finds the copies of a source: on the summaries' id (`parts.id`). A copy
/// `via` a reference uses that reference's own index.
pub fn copy_indexes(cont: &Container<'_>) -> Vec<TokenStream> {
    let ident = cont.ident;
    cont.stored_fields()
        .filter_map(|f| {
            let d = f.denormalize.as_ref()?;
            if copy_kind(d) != CopyKind::Summary {
                return None;
            }
            let name = f.ident;
            let path = field_path(quote!(#ident::#name().id()));
            Some(quote!(::odm::__private::IndexSpec::on(#path, ::odm::__private::IndexKey::Asc)))
        })
        .collect()
}
