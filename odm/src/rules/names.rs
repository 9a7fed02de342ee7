//! Field names at compile time: whether a type has a field, the closest name to a misspelt one,
//! and the message that says so. `const fn`s, so that a name another derive wrote (a copied
//! field, a key into an embedded type) is checked while compiling, against the names the
//! other type's derive recorded, and the error can suggest the field that was meant.

/// The longest message; longer ones are cut (the suggestion comes first).
const MESSAGE_LEN: usize = 1024;

/// The longest name compared by [`distance`]; longer names are never "close".
const MAX_NAME: usize = 64;

pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub const fn contains(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if same(names[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

/// Levenshtein distance by bytes (field names are identifiers), `usize::MAX` past
/// [`MAX_NAME`].
const fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > MAX_NAME || b.len() > MAX_NAME {
        return usize::MAX;
    }
    let mut row = [0usize; MAX_NAME + 1];
    let mut j = 0;
    while j <= b.len() {
        row[j] = j;
        j += 1;
    }
    let mut i = 0;
    while i < a.len() {
        let mut prev = row[0];
        row[0] = i + 1;
        let mut j = 0;
        while j < b.len() {
            let cur = row[j + 1];
            let replace = prev + if a[i] == b[j] { 0 } else { 1 };
            let mut best = if row[j] + 1 < cur + 1 {
                row[j] + 1
            } else {
                cur + 1
            };
            if replace < best {
                best = replace;
            }
            row[j + 1] = best;
            prev = cur;
            j += 1;
        }
        i += 1;
    }
    row[b.len()]
}

/// The name in `names` closest to `name`, within a third of its length (rounded up), as the
/// derive's own hints.
pub const fn closest<'a>(names: &[&'a str], name: &str) -> Option<&'a str> {
    let limit = name.len().div_ceil(3);
    let mut best: Option<&'a str> = None;
    let mut best_distance = usize::MAX;
    let mut i = 0;
    while i < names.len() {
        let d = distance(name, names[i]);
        if d <= limit && d < best_distance {
            best = Some(names[i]);
            best_distance = d;
        }
        i += 1;
    }
    best
}

/// A message built at compile time.
pub struct Message {
    buf: [u8; MESSAGE_LEN],
    len: usize,
}

impl Message {
    pub const fn new() -> Self {
        Message {
            buf: [0; MESSAGE_LEN],
            len: 0,
        }
    }

    pub const fn push(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        // Whole characters only: the text stays UTF-8 when it is cut.
        while i < s.len() && self.len < MESSAGE_LEN - 4 {
            self.buf[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        while self.len > 0 && i < s.len() && (s[i] & 0xC0) == 0x80 {
            self.len -= 1;
            i -= 1;
        }
        self
    }

    /// `` `a`, `b`, `c` ``.
    pub const fn push_list(mut self, names: &[&str]) -> Self {
        let mut i = 0;
        while i < names.len() {
            if i > 0 {
                self = self.push(", ");
            }
            self = self.push("`").push(names[i]).push("`");
            i += 1;
        }
        self
    }

    /// "did you mean `x`?" when a name is close, else the list of names.
    pub const fn push_hint(self, names: &[&str], name: &str) -> Self {
        match closest(names, name) {
            Some(c) => self.push("did you mean `").push(c).push("`?"),
            None if names.is_empty() => self.push("it has no fields"),
            None => self.push("its fields are ").push_list(names),
        }
    }

    pub const fn as_str(&self) -> &str {
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(s) => s,
            Err(_) => "a field name is not valid UTF-8",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_name_is_within_a_third_of_the_letters() {
        let names = ["id", "name", "qty", "catalog_number"];
        assert_eq!(closest(&names, "nme"), Some("name"));
        assert_eq!(closest(&names, "titel"), None);
        assert_eq!(closest(&names, "catalog_nmber"), Some("catalog_number"));
        assert_eq!(closest(&["title"], "titel"), Some("title"));
        assert!(contains(&names, "qty") && !contains(&names, "qt"));
    }

    #[test]
    fn messages_hint_or_list_and_stay_utf8_when_cut() {
        let m = Message::new()
            .push("`Part`: ")
            .push_hint(&["id", "name"], "nme");
        assert_eq!(m.as_str(), "`Part`: did you mean `name`?");
        let m = Message::new().push_hint(&["id", "name"], "xyz");
        assert_eq!(m.as_str(), "its fields are `id`, `name`");
        let long = "é".repeat(MESSAGE_LEN);
        let m = Message::new().push("a").push(&long);
        assert!(m.as_str().len() < MESSAGE_LEN && m.as_str().ends_with('é'));
    }
}
