//! The hours of a day document: `{ "0": { total: 7, "0": 0, ..., "59": 2 }, ..., "23": {...} }`,
//! the workshop's solution B, where each hour is a sub-document holding its total and the
//! counters of its minutes (numbered by minute of the day, `1380` to `1439` for hour 23).
//!
//! The stored keys are strings; reading checks each one (an hour from 0 to 23, a minute within
//! its hour, counts that are integers), so a malformed day document is a decode error naming
//! the document and the path (`hour.23.1500`), never a panic or a silently wrong count.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The per-hour counters of one day (the `hour` field of a counters model).
///
/// Only the hours and minutes that were recorded (or pre-allocated) are present; every other
/// one reads as zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hours {
    hours: BTreeMap<u8, Hour>,
}

/// One hour of a day: its total, and with minute granularity the count of each minute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hour {
    total: i64,
    /// By minute of the day (`0..1440`), each within the hour.
    minutes: BTreeMap<u16, i64>,
}

impl Hours {
    /// The hour `hour` (0 to 23), if anything was recorded or pre-allocated in it.
    pub fn get(&self, hour: u8) -> Option<&Hour> {
        self.hours.get(&hour)
    }

    /// The total of `hour` (0 when nothing was recorded in it).
    pub fn total_of(&self, hour: u8) -> i64 {
        self.get(hour).map_or(0, |h| h.total)
    }

    /// The count of the minute of the day `minute` (0 to 1439; 0 when nothing was recorded).
    pub fn minute(&self, minute: u16) -> i64 {
        self.get((minute / 60) as u8)
            .map_or(0, |h| h.minute(minute))
    }

    /// The hours present, in order, with their number.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &Hour)> {
        self.hours.iter().map(|(h, v)| (*h, v))
    }
}

impl Hour {
    /// An hour with this total and these `(minute of the day, count)` counters.
    pub fn new(total: i64, minutes: impl IntoIterator<Item = (u16, i64)>) -> Self {
        Hour {
            total,
            minutes: minutes.into_iter().collect(),
        }
    }

    /// The hour's total.
    pub fn total(&self) -> i64 {
        self.total
    }

    /// The count of the minute of the day `minute` (0 when nothing was recorded in it).
    pub fn minute(&self, minute: u16) -> i64 {
        self.minutes.get(&minute).copied().unwrap_or(0)
    }

    /// The minutes present, in order: `(minute of the day, count)`.
    pub fn minutes(&self) -> impl Iterator<Item = (u16, i64)> + '_ {
        self.minutes.iter().map(|(m, n)| (*m, *n))
    }
}

impl Serialize for Hours {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.hours.len()))?;
        for (hour, value) in &self.hours {
            map.serialize_entry(&hour.to_string(), value)?;
        }
        map.end()
    }
}

impl Serialize for Hour {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.minutes.len() + 1))?;
        map.serialize_entry("total", &self.total)?;
        for (minute, count) in &self.minutes {
            map.serialize_entry(&minute.to_string(), count)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Hours {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(HoursVisitor)
    }
}

struct HoursVisitor;

impl<'de> Visitor<'de> for HoursVisitor {
    type Value = Hours;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a document of hours (\"0\" to \"23\")")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hours, A::Error> {
        let mut hours = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let hour = match key.parse::<u8>() {
                Ok(h) if h < 24 && key == h.to_string() => h,
                _ => {
                    return Err(de::Error::custom(format!(
                        "`{key}` is not an hour of the day (\"0\" to \"23\")"
                    )))
                }
            };
            let value = map.next_value_seed(HourSeed(hour))?;
            hours.insert(hour, value);
        }
        Ok(Hours { hours })
    }
}

/// Reads one hour, knowing which: its minutes must fall within it.
struct HourSeed(u8);

impl<'de> DeserializeSeed<'de> for HourSeed {
    type Value = Hour;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Hour, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HourSeed {
    type Value = Hour;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a document with the total of hour {} and its minutes",
            self.0
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hour, A::Error> {
        let first = u16::from(self.0) * 60;
        let mut out = Hour::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "total" {
                out.total = map.next_value()?;
                continue;
            }
            match key.parse::<u16>() {
                Ok(m) if (first..first + 60).contains(&m) && key == m.to_string() => {
                    out.minutes.insert(m, map.next_value()?);
                }
                _ => {
                    return Err(de::Error::custom(format!(
                    "`{key}` is neither `total` nor a minute of hour {} (\"{first}\" to \"{}\")",
                    self.0,
                    first + 59
                )))
                }
            }
        }
        Ok(out)
    }
}
