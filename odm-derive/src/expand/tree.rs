//! The generated side of `#[odm(tree)]`: the tree's description (`TreeModel::INFO`), its
//! indexes, and the checks that its two fields hold ids of the same model.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::attr::TreeDelete;
use crate::model::tree::tree_fields;
use crate::model::{ref_inner, Container, Shape};

/// What a tree adds to the model's code.
pub struct TreeItems {
    /// In the model's entry: the tree's description.
    pub entry: TokenStream,
    /// Beside it: the `TreeModel` impl and the type checks.
    pub items: TokenStream,
    /// The indexes the tree's queries use: `{parent: 1}` and the multikey `{ancestors: 1}`.
    pub indexes: TokenStream,
}

pub fn tree_items(cont: &Container<'_>, id_ty: &TokenStream) -> Option<TreeItems> {
    let tree = cont.tree.as_ref()?;
    let (parent, ancestors) = tree_fields(cont)?;
    let ident = cont.ident;
    let rule = match tree.on_delete.map(|(r, _)| r) {
        None | Some(TreeDelete::Restrict) => quote!(Restrict),
        Some(TreeDelete::Cascade) => quote!(Cascade),
        Some(TreeDelete::Lift) => quote!(Lift),
    };
    let (parent_path, ancestors_path) = (&parent.stored, &ancestors.stored);
    let checks = [parent, ancestors].into_iter().map(|f| {
        let held = match f.shape {
            Shape::Option(t) | Shape::Vec(t) => t,
            // Reported by the shape rule.
            Shape::Plain => return quote!(),
        };
        match ref_inner(held) {
            Some(target) => quote_spanned! {target.span()=>
                const _: () = ::odm::__private::tree_ref::<#ident, #target>();
            },
            None => quote_spanned! {held.span()=>
                const _: () = ::odm::__private::tree_id::<#ident, #id_ty, #held>();
            },
        }
    });
    let asc = quote!(::odm::__private::IndexKey::Asc);
    Some(TreeItems {
        entry: quote! {
            ::odm::__private::Option::Some(<#ident as ::odm::__private::TreeModel>::INFO)
        },
        items: quote! {
            #[automatically_derived]
            impl ::odm::__private::TreeModel for #ident {
                const INFO: ::odm::__private::TreeInfo = ::odm::__private::TreeInfo::new(
                    #parent_path,
                    #ancestors_path,
                    ::odm::__private::DeleteRule::#rule,
                );
            }
            #(#checks)*
        },
        indexes: quote! {
            ::odm::__private::IndexSpec::on(#parent_path, #asc),
            ::odm::__private::IndexSpec::on(#ancestors_path, #asc),
        },
    })
}

/// The stub of a tree whose declaration has mistakes, so that its uses (`odm.tree::<M>()`)
/// are not reported on top of them.
pub fn stub(cont: &Container<'_>) -> TokenStream {
    if cont.tree.is_none() {
        return quote!();
    }
    let ident = cont.ident;
    quote! {
        impl ::odm::__private::TreeModel for #ident {
            const INFO: ::odm::__private::TreeInfo = ::odm::__private::TreeInfo::new(
                "", "", ::odm::__private::DeleteRule::Restrict,
            );
        }
    }
}
