//! Page tokens: where a page ended, sealed so that a token altered, or issued for another
//! query or sort, is refused instead of read.
//!
//! A token is base64url (no padding) of: a version byte; 16 bytes of SHA-256 over the
//! collection, the filter and the sort it was issued for (the query's fingerprint); the BSON
//! document `{k: [values of the last document at the sort's keys, ..., _id]}`; and the first
//! 16 bytes of HMAC-SHA256 of all that under the handle's page key.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bson::{doc, Bson, Document};
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::{Error, Result};

const VERSION: u8 = 1;
const FINGERPRINT: usize = 16;
const TAG: usize = 16;

/// The key tokens are sealed with when the handle was given none
/// ([`Odm::with_page_key`](crate::Odm::with_page_key)).
const BUILT_IN_KEY: &[u8] = b"odm keyset page token, built-in key";

/// Where the next page starts: opaque, returned in [`Page::next`](super::Page::next) and
/// given back to [`Paged::after`](super::Paged::after).
///
/// Its text form ([`PageToken::as_str`], `Display`, and serde as a string) is URL-safe, to be
/// handed to a client and read back with [`PageToken::from`]. It is checked when the page
/// runs: one altered, or issued for another collection, filter or sort, or sealed with
/// another key, is [`Error::InvalidPageToken`] and nothing is sent.
#[derive(Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct PageToken(String);

impl PageToken {
    /// The token's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PageToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for PageToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PageToken({})", self.0)
    }
}

impl From<String> for PageToken {
    /// The token a client sent back; checked when the page runs.
    fn from(text: String) -> Self {
        PageToken(text)
    }
}

impl From<&str> for PageToken {
    /// The token a client sent back; checked when the page runs.
    fn from(text: &str) -> Self {
        PageToken(text.to_owned())
    }
}

/// What a token is bound to: the collection, the filter and the sort of its query.
pub(crate) fn fingerprint(collection: &str, filter: &Document, sort: &Document) -> [u8; 16] {
    let mut hash = Sha256::new();
    for part in [
        collection.as_bytes(),
        &bson::serialize_to_vec(filter).unwrap_or_default(),
        &bson::serialize_to_vec(sort).unwrap_or_default(),
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    let mut out = [0; FINGERPRINT];
    out.copy_from_slice(&hash.finalize()[..FINGERPRINT]);
    out
}

fn mac(key: Option<&[u8]>) -> Hmac<Sha256> {
    // HMAC takes keys of any length.
    <Hmac<Sha256> as KeyInit>::new_from_slice(key.unwrap_or(BUILT_IN_KEY))
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"))
}

/// The token for the position `values` of the query `fingerprint`.
pub(crate) fn seal(
    key: Option<&[u8]>,
    fingerprint: [u8; 16],
    values: Vec<Bson>,
    collection: &str,
) -> Result<PageToken> {
    let body = bson::serialize_to_vec(&doc! { "k": values }).map_err(|e| Error::Encode {
        collection: collection.to_owned(),
        what: "page token".to_owned(),
        message: e.to_string(),
    })?;
    let mut bytes = Vec::with_capacity(1 + FINGERPRINT + body.len() + TAG);
    bytes.push(VERSION);
    bytes.extend_from_slice(&fingerprint);
    bytes.extend_from_slice(&body);
    let mut mac = mac(key);
    mac.update(&bytes);
    bytes.extend_from_slice(&mac.finalize().into_bytes()[..TAG]);
    Ok(PageToken(URL_SAFE_NO_PAD.encode(bytes)))
}

/// The position in `token`, once checked: the values at the sort's `keys` keys.
pub(crate) fn open(
    key: Option<&[u8]>,
    token: &PageToken,
    fingerprint: [u8; 16],
    keys: usize,
    collection: &str,
) -> Result<Vec<Bson>> {
    let refuse = |reason: &'static str| Error::InvalidPageToken {
        collection: collection.to_owned(),
        reason,
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(token.0.as_bytes())
        .map_err(|_| refuse("not a page token"))?;
    if bytes.len() < 1 + FINGERPRINT + TAG || bytes[0] != VERSION {
        return Err(refuse("not a page token"));
    }
    let (sealed, tag) = bytes.split_at(bytes.len() - TAG);
    let mut mac = mac(key);
    mac.update(sealed);
    mac.verify_truncated_left(tag)
        .map_err(|_| refuse("altered, or sealed with another page key"))?;
    if sealed[1..1 + FINGERPRINT] != fingerprint {
        return Err(refuse("issued for another collection, filter or sort"));
    }
    let values = bson::deserialize_from_slice::<Document>(&sealed[1 + FINGERPRINT..])
        .ok()
        .and_then(|d| d.get_array("k").ok().cloned())
        .filter(|v| v.len() == keys)
        .ok_or_else(|| refuse("not a page token"))?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_token_opens_only_for_its_query_and_key() {
        let print = fingerprint("books", &doc! {}, &doc! { "title": 1, "_id": 1 });
        let values = vec![Bson::from("Dubliners"), Bson::from(7)];
        let token = seal(None, print, values.clone(), "books").expect("sealed");
        assert_eq!(open(None, &token, print, 2, "books").ok(), Some(values));

        let other = fingerprint("books", &doc! {}, &doc! { "title": -1, "_id": 1 });
        let reason = |r: Result<Vec<Bson>>| match r {
            Err(Error::InvalidPageToken { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reason(open(None, &token, other, 2, "books")),
            "issued for another collection, filter or sort"
        );
        assert_eq!(
            reason(open(Some(b"secret"), &token, print, 2, "books")),
            "altered, or sealed with another page key"
        );
        assert_eq!(
            reason(open(None, &PageToken::from("{$gt: 1}"), print, 2, "books")),
            "not a page token"
        );
    }
}
