//! A write's own write concern: the setter every write builder has, and how the write is then
//! run — on a handle made for it with that concern ([`Odm::with_write_concern`](crate::Odm::with_write_concern)), so that the
//! ODM's own writes for it and the commit of a transaction it runs carry the concern too, and
//! not only the caller's command. Nothing of this is made when no concern is set.

/// The `write_concern` setter of the write builder `$ty`, keeping the concern in its field
/// `concern` (an `Option<Box<WriteConcern>>`).
macro_rules! write_options {
    ($ty:ident) => {
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
