//! Parsing a model's defaults for its operations: `read_preference = "secondaryPreferred"`
//! (one of the five modes, spelled as the server spells them) and `write_concern =
//! "majority"` or `write_concern = 2` (the number of members that acknowledge a write). A
//! misspelt mode, an unacknowledged `0` or a repeated key is an error at its token.

use proc_macro2::TokenStream;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::Lit;

use crate::ctxt::Ctxt;

/// The modes of a read preference, as written in the attribute, with the runtime's names.
const MODES: [(&str, &str); 5] = [
    ("primary", "Primary"),
    ("primaryPreferred", "PrimaryPreferred"),
    ("secondary", "Secondary"),
    ("secondaryPreferred", "SecondaryPreferred"),
    ("nearest", "Nearest"),
];

/// `read_preference` and `write_concern`, as parsed.
#[derive(Default)]
pub struct DefaultsAttr {
    /// The runtime name of the mode.
    read_preference: Option<&'static str>,
    write_concern: Option<Concern>,
    /// The keys given, where errors about where they are declared point.
    pub keys: Vec<(&'static str, proc_macro2::Span)>,
}

enum Concern {
    Majority,
    Nodes(u32),
}

impl DefaultsAttr {
    /// Parses `read_preference = "..."`.
    pub fn parse_read_preference(
        &mut self,
        cx: &Ctxt,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        self.keys.push(("read_preference", meta.path.span()));
        let lit: Lit = meta.value()?.parse()?;
        let mode = match &lit {
            Lit::Str(s) => MODES.iter().find(|(m, _)| *m == s.value()).map(|(_, r)| *r),
            _ => None,
        };
        match mode {
            _ if self.read_preference.is_some() => {
                cx.error_spanned_by(&meta.path, "duplicate odm attribute `read_preference`")
            }
            Some(mode) => self.read_preference = Some(mode),
            None => cx.error_spanned_by(
                &lit,
                "`read_preference` is one of \"primary\", \"primaryPreferred\", \"secondary\", \"secondaryPreferred\", \"nearest\"",
            ),
        }
        Ok(())
    }

    /// Parses `write_concern = "majority"` or `write_concern = N`.
    pub fn parse_write_concern(
        &mut self,
        cx: &Ctxt,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        self.keys.push(("write_concern", meta.path.span()));
        let lit: Lit = meta.value()?.parse()?;
        let concern = match &lit {
            Lit::Str(s) if s.value() == "majority" => Ok(Concern::Majority),
            Lit::Int(i) => match i.base10_parse::<u32>() {
                Ok(0) => Err("`write_concern = 0` asks for no acknowledgment, which odm cannot report on: use 1 or more, or \"majority\""),
                Ok(n) => Ok(Concern::Nodes(n)),
                Err(_) => Err("`write_concern` is \"majority\" or a number of members: `write_concern = \"majority\"`"),
            },
            _ => Err("`write_concern` is \"majority\" or a number of members: `write_concern = \"majority\"`"),
        };
        match concern {
            _ if self.write_concern.is_some() => {
                cx.error_spanned_by(&meta.path, "duplicate odm attribute `write_concern`")
            }
            Ok(concern) => self.write_concern = Some(concern),
            Err(message) => cx.error_spanned_by(&lit, message),
        }
        Ok(())
    }

    /// Whether the model declares any.
    pub fn declared(&self) -> bool {
        self.read_preference.is_some() || self.write_concern.is_some()
    }

    /// The entry's `defaults`.
    pub fn entry(&self) -> TokenStream {
        let read = match self.read_preference {
            Some(mode) => {
                let mode = syn::Ident::new(mode, proc_macro2::Span::call_site());
                quote!(::odm::__private::Option::Some(::odm::__private::ReadMode::#mode))
            }
            None => quote!(::odm::__private::Option::None),
        };
        let write = match self.write_concern {
            Some(Concern::Majority) => {
                quote!(::odm::__private::Option::Some(
                    ::odm::__private::Acknowledged::Majority
                ))
            }
            Some(Concern::Nodes(n)) => {
                quote!(::odm::__private::Option::Some(::odm::__private::Acknowledged::Nodes(#n)))
            }
            None => quote!(::odm::__private::Option::None),
        };
        quote!(::odm::__private::Defaults { read_preference: #read, write_concern: #write })
    }
}
