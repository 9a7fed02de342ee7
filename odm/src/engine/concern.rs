//! A write's own write concern: the setter every write builder has, and how the write is then
//! run — on a handle made for it with that concern ([`Odm::with_write_concern`](crate::Odm::with_write_concern)), so that the
//! ODM's own writes for it and the commit of a transaction it runs carry the concern too, and
//! not only the caller's command. Nothing of this is made when no concern is set.

/// What a write's own command carries besides its concern, when the caller set it: a comment,
/// document validation bypassed, the variables of its `$expr`s. Boxed in the builder and the
/// call, so that a write without them carries one empty pointer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    pub comment: Option<bson::Bson>,
    pub bypass_document_validation: Option<bool>,
    pub let_vars: Option<bson::Document>,
}

/// The option setters of the write builder `$ty`: `write_concern` (kept in its field
/// `concern`, an `Option<Box<WriteConcern>>`) and `comment` (in `extras`, an
/// `Option<Box<Extras>>`); with `bypass`, `bypass_document_validation`; with `let`,
/// `let_vars`. `@concern` gives `write_concern` alone.
macro_rules! write_options {
    ($ty:ident $(, $extra:ident)*) => {
        $crate::engine::write_options!(@concern $ty);
        impl<'a, T: $crate::Model> $ty<'a, T> {
            /// Attaches `comment` to the write's own command (the profiler, the server's log
            /// and `currentOp` show it); the ODM's own commands for the write carry none.
            pub fn comment(mut self, comment: impl Into<::bson::Bson>) -> Self {
                self.extras.get_or_insert_with(Default::default).comment = Some(comment.into());
                self
            }
        }
        $( $crate::engine::write_options!(@$extra $ty); )*
    };
    (@concern $ty:ident) => {
        impl<'a, T: $crate::Model> $ty<'a, T> {
            /// The write concern of this write (`w: "majority"`, a `wtimeout`), the handle's
            /// otherwise ([`Odm::with_write_concern`](crate::Odm::with_write_concern)): on its
            /// command, on the ODM's own writes for it (copies, counts, two-way arrays, delete
            /// rules) and on the commit of a transaction the ODM runs for it. In a caller's
            /// transaction the commit's concern is the one that counts (the driver sends none
            /// with the write).
            pub fn write_concern(mut self, concern: $crate::options::WriteConcern) -> Self {
                self.concern = Some(Box::new(concern));
                self
            }
        }
    };
    (@bypass $ty:ident) => {
        impl<'a, T: $crate::Model> $ty<'a, T> {
            /// Lets the write's own command store documents the collection's validator would
            /// refuse (`bypassDocumentValidation`, which needs the privilege of that action);
            /// the ODM's own writes for it are validated as always.
            pub fn bypass_document_validation(mut self, yes: bool) -> Self {
                self.extras
                    .get_or_insert_with(Default::default)
                    .bypass_document_validation = Some(yes);
                self
            }
        }
    };
    (@let $ty:ident) => {
        impl<'a, T: $crate::Model> $ty<'a, T> {
            /// The variables (`let`) the filter's and the update's `$expr`s read as `$$name`.
            /// Only for a write of a model nothing maintains: the ODM's commands for a
            /// maintained write read the filter too, without them, so such a write is refused
            /// before anything is sent ([`Error::Unsupported`](crate::Error::Unsupported)).
            pub fn let_vars(mut self, vars: ::bson::Document) -> Self {
                self.extras.get_or_insert_with(Default::default).let_vars = Some(vars);
                self
            }
        }
    };
}
pub(crate) use write_options;

/// When the write builder `$op` (a `$ty`) has a concern of its own, returns from the caller
/// the future of `$op.$then()` run on a handle with that concern: boxed into `$wrap` (a
/// `Sending`), or awaited (`return await`, in an `async fn`; `$then` must then be another
/// function than the caller's). Nothing happens when it has none. In a caller's transaction
/// the driver leaves the concern out of the write (the transaction's commit carries one), as
/// it does for a collection's.
macro_rules! concerned {
    (return await, $op:ident: $ty:ident . $then:ident) => {
        if let Some(concern) = $crate::engine::concerned!(@concern $op) {
            let odm = $op.odm.for_write(concern);
            let op = $ty { odm: &odm, ..$op };
            return op.$then().await;
        }
    };
    (return $wrap:path, $op:ident: $ty:ident . $then:ident) => {
        if let Some(concern) = $crate::engine::concerned!(@concern $op) {
            let odm = $op.odm.for_write(concern);
            return $wrap(Box::pin(async move {
                let op = $ty { odm: &odm, ..$op };
                op.$then().await
            }));
        }
    };
    // The write's own concern, else its model's: on the handle made for the model when there
    // is one (then `None`), to make a handle with otherwise.
    (@concern $op:ident) => {
        match $op.concern.take() {
            Some(concern) => Some(*concern),
            None => match $op.odm.writing::<T>() {
                $crate::engine::Writing::This => None,
                $crate::engine::Writing::Cached(odm) => {
                    $op.odm = odm;
                    None
                }
                $crate::engine::Writing::Make(concern) => Some(concern),
            },
        }
    };
}
pub(crate) use concerned;
