//! Serializing populated references as the documents they hold, for output (a web handler's
//! JSON), while storage keeps writing ids.

use std::cell::Cell;

use serde::{Serialize, Serializer};

thread_local! {
    /// Whether the serialization running on this thread is inside an [`Expanded`].
    static EXPANDING: Cell<bool> = const { Cell::new(false) };
}

/// Whether a populated reference serialized now is written as its document.
pub(crate) fn expanding() -> bool {
    EXPANDING.with(Cell::get)
}

/// `value` serialized with every populated [`Ref`](crate::Ref) written as the document it
/// holds, at any depth (a populated reference inside a populated document too), and every
/// reference that was not populated written as it is stored (its id, or its DBRef). For
/// output: `serde_json::to_string(&odm::expanded(&books))` gives the books with their authors.
///
/// Serializing a model without this wrapper always writes ids: that is what odm stores, and
/// what an insert or a replacement of a populated document sends. Only the serialization
/// inside the wrapper, on the calling thread, is changed.
pub fn expanded<T: ?Sized + Serialize>(value: &T) -> Expanded<'_, T> {
    Expanded(value)
}

/// See [`expanded`].
#[derive(Debug, Clone, Copy)]
pub struct Expanded<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized + Serialize> Serialize for Expanded<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// Restores the flag however the serialization ends.
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                EXPANDING.with(|e| e.set(self.0));
            }
        }
        let _restore = Restore(EXPANDING.with(|e| e.replace(true)));
        self.0.serialize(serializer)
    }
}
