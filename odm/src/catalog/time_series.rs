//! A model stored in a native time-series collection, as the derive describes it
//! (`#[odm(time_series(...))]`).

use bson::{doc, Document};

/// A declared time-series collection; written by the derive.
#[doc(hidden)]
#[derive(Debug)]
pub struct TimeSeriesEntry {
    /// The collection.
    pub collection: &'static str,
    /// The stored name of the time field (a `bson::DateTime`).
    pub time: &'static str,
    /// The stored name of the meta field, if any.
    pub meta: Option<&'static str>,
    /// `"seconds"`, `"minutes"` or `"hours"`, if declared.
    pub granularity: Option<&'static str>,
}

impl TimeSeriesEntry {
    /// The `timeseries` options of `create`.
    pub fn options(&self) -> Document {
        let mut options = doc! { "timeField": self.time };
        if let Some(meta) = self.meta {
            options.insert("metaField", meta);
        }
        if let Some(granularity) = self.granularity {
            options.insert("granularity", granularity);
        }
        options
    }
}
