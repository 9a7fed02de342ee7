//! The driver's options of a read, on each read builder under the driver's names and types
//! (re-exported in [`crate::options`]), forwarded to its command unchanged.

/// The option setters every read builder has, writing into the driver's options at
/// `self.$($field).+` (a `FindOptions`, a `CountOptions`, ...).
macro_rules! read_options {
    ($ty:ident, $($field:ident).+) => {
        impl<'a, T: $crate::Model> $ty<'a, T> {
            /// Attaches `comment` to the command, where the profiler, the server's log and
            /// `currentOp` show it.
            pub fn comment(mut self, comment: impl Into<::bson::Bson>) -> Self {
                self.$($field).+.comment = Some(comment.into());
                self
            }

            /// The index the server uses (`hint`), by its name or its keys: the command fails
            /// when there is no such index.
            pub fn hint(mut self, hint: $crate::options::Hint) -> Self {
                self.$($field).+.hint = Some(hint);
                self
            }

            /// Bounds the time the server spends on the command (`maxTimeMS`); past it the
            /// command fails ([`Error::is_time_limit`](crate::Error::is_time_limit)).
            pub fn max_time(mut self, max: ::std::time::Duration) -> Self {
                self.$($field).+.max_time = Some(max);
                self
            }

            /// Compares strings by `collation`: with `strength: 2`, `"ann@x.org"` matches
            /// `"Ann@X.org"` (an index is used only when it has the same collation).
            pub fn collation(mut self, collation: $crate::options::Collation) -> Self {
                self.$($field).+.collation = Some(collation);
                self
            }

            /// The read concern of the command (`majority`: only what a majority of the
            /// replica set acknowledged); the handle's otherwise.
            pub fn read_concern(mut self, concern: $crate::options::ReadConcern) -> Self {
                self.$($field).+.read_concern = Some(concern);
                self
            }

            /// Where the command is sent (`secondaryPreferred` for a report); the handle's
            /// otherwise. odm's own reads for a write never follow it (see the guide's
            /// "Options, collation and search").
            pub fn read_preference(mut self, preference: $crate::options::ReadPreference) -> Self {
                self.$($field).+.selection_criteria =
                    Some($crate::options::SelectionCriteria::ReadPreference(preference));
                self
            }
        }
    };
}
pub(crate) use read_options;
