//! The generated side of `#[odm(shard_key(...))]`: the key's description (`ModelEntry::shard_key`),
//! carried by the model's entry (for the routing of other models' cascades into this
//! collection and for `sync_indexes`), its index, and the check that a filled key field holds a `String`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::shard::{field_for, reaches_into_embed};
use crate::model::Container;

/// What a shard key adds to the model's code.
pub struct ShardItems {
    /// The key's description (`__SHARD_KEY`, which the entry names) and the type check.
    pub items: TokenStream,
}

pub fn shard_items(cont: &Container<'_>) -> Option<ShardItems> {
    let shard = cont.shard_key.as_ref()?;
    let hashed = shard.hashed.as_ref().map(syn::LitStr::value);
    let names = shard.names();
    let fields = names.iter().filter_map(|name| {
        let f = field_for(cont, name)?;
        // A key inside an embedded document is stored under the embedded field's stored name,
        // then the inner field's, which only the embedded type's derive knows: a constant
        // joins the two while compiling.
        let stored = match name.split_once('.') {
            Some((_, below)) if reaches_into_embed(f, name) => {
                let outer = &f.stored;
                let embed = embed_of(f);
                quote!({
                    const INNER: &::odm::__private::str = ::odm::__private::stored_name(
                        #embed::FIELDS, #embed::STORED, #below,
                    );
                    const BYTES: [::odm::__private::u8; #outer.len() + 1 + INNER.len()] =
                        ::odm::__private::dotted_path(#outer, INNER);
                    ::odm::__private::path_str(&BYTES)
                })
            }
            Some((_, below)) => {
                let path = format!("{}.{below}", f.stored);
                quote!(#path)
            }
            None => {
                let path = &f.stored;
                quote!(#path)
            }
        };
        let order = if hashed.as_deref() == Some(name.as_str()) {
            quote!(Hashed)
        } else {
            quote!(Ranged)
        };
        Some(quote!((#stored, ::odm::__private::ShardOrder::#order)))
    });
    let stored_of = |lit: &Option<syn::LitStr>| {
        lit.as_ref()
            .and_then(|l| cont.field_named(&l.value()))
            .map(|f| f.stored.clone())
    };
    let mut check = quote!();
    let segment = match (
        stored_of(&shard.fill),
        stored_of(&shard.month),
        stored_of(&shard.hash),
    ) {
        (Some(field), Some(month), Some(hash)) => {
            if let Some(f) = shard
                .fill
                .as_ref()
                .and_then(|l| cont.field_named(&l.value()))
            {
                let (ident, ty) = (f.ident, f.ty);
                let cont_ident = cont.ident;
                check = quote_spanned! {ty.span()=>
                    // The filled key is `"<YYYY-MM>-<md5>"`: its field holds a `String`.
                    fn __odm_filled_key_is_a_string(doc: &#cont_ident) -> &::odm::__private::String {
                        &doc.#ident
                    }
                };
            }
            quote!(::odm::__private::Option::Some(::odm::__private::Segment {
                field: #field,
                month: #month,
                hash: #hash,
            }))
        }
        _ => quote!(::odm::__private::Option::None),
    };
    let mutable = shard.mutable.is_some();
    Some(ShardItems {
        items: quote! {
            const __SHARD_KEY: ::odm::__private::ShardKey = ::odm::__private::ShardKey {
                fields: &[#(#fields),*],
                segment: #segment,
                mutable: #mutable,
            };
            #check
        },
    })
}

/// The checks of the keys inside an embedded document (`meta.host`): the embedded type has
/// the field, stored under that name. Unnamed constants next to the struct, evaluated while
/// compiling, pointing at the `keys` string.
pub fn key_field_checks(cont: &Container<'_>) -> TokenStream {
    let Some(shard) = &cont.shard_key else {
        return TokenStream::new();
    };
    let Some(lit) = &shard.keys else {
        return TokenStream::new();
    };
    let span = proc_macro2::Span::call_site().located_at(lit.span());
    let checks = shard.names().into_iter().filter_map(|name| {
        let f = field_for(cont, &name)?;
        let (_, below) = name.split_once('.')?;
        if !reaches_into_embed(f, &name) {
            return None;
        }
        let embed = embed_of(f);
        Some(quote_spanned! {span=>
            const _: () = ::odm::__private::shard_key_field(
                #embed::NAME, #embed::FIELDS, #below, #name,
            );
        })
    });
    quote!(#(#checks)*)
}

/// `<Inner as Embed>` for the embedded field `f`, spanned at its type.
fn embed_of(f: &crate::model::Field<'_>) -> TokenStream {
    let inner = f.inner_ty();
    quote_spanned!(inner.span()=> <#inner as ::odm::__private::Embed>)
}
