//! Parsing `#[odm(schema_version = N, upgrade = "path")]`: the version a model's documents are
//! written with (`_v`), and the function that upgrades older ones on read (the rules are in
//! `check::versions`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Lit, LitStr};

use super::string_value;
use crate::ctxt::Ctxt;

/// The stored field of the version, which the struct itself may not have.
pub const VERSION_FIELD: &str = "_v";

#[derive(Default)]
pub struct VersionAttrs {
    /// `schema_version = N`, and where it is written.
    pub schema_version: Option<(u32, Span)>,
    /// `upgrade = "path::to::fn"`.
    pub upgrade: Option<(syn::Path, LitStr)>,
}

impl VersionAttrs {
    /// Parses `schema_version = N`.
    pub fn parse_version(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let lit: Lit = meta.value()?.parse()?;
        let value = match &lit {
            Lit::Int(i) => i.base10_parse::<u32>().ok(),
            _ => None,
        };
        match value {
            _ if self.schema_version.is_some() => {
                cx.error_spanned_by(&meta.path, "duplicate odm attribute `schema_version`")
            }
            Some(0) => cx.error_spanned_by(
                &lit,
                "schema versions start at 1: a stored document without `_v` is version 1",
            ),
            Some(n) => self.schema_version = Some((n, lit.span())),
            None => cx.error_spanned_by(&lit, "expected an integer from 1: `schema_version = 2`"),
        }
        Ok(())
    }

    /// Parses `upgrade = "path::to::fn"`.
    pub fn parse_upgrade(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(lit) = string_value(cx, meta, "upgrade", "upgrade_book")? else {
            return Ok(());
        };
        if self.upgrade.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate odm attribute `upgrade`");
            return Ok(());
        }
        match lit.parse::<syn::Path>() {
            Ok(path) => self.upgrade = Some((path, lit)),
            Err(_) => cx.error_spanned_by(
                &lit,
                "`upgrade` names a function `fn(from: u32, doc: &mut bson::Document) -> Result<(), String>`: `upgrade = \"upgrade_book\"`",
            ),
        }
        Ok(())
    }

    /// On an enum of kinds: `upgrade` needs `schema_version`, as on a struct.
    pub fn check_on_enum(&self, cx: &Ctxt) {
        if let (None, Some((_, lit))) = (self.schema_version, &self.upgrade) {
            cx.error_spanned_by(lit, UPGRADE_WITHOUT_VERSION);
        }
    }
}

/// The error for `upgrade` without `schema_version`.
pub const UPGRADE_WITHOUT_VERSION: &str =
    "`upgrade` brings old documents to the current schema version: declare it with `schema_version = N`";
