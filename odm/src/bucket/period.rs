//! Periods of buckets: the first instant of the hour, day, month or year (UTC) holding a time.

use std::fmt;

use bson::DateTime;

/// The length of a bucket's period (`every = "month"`). Periods are calendar periods in UTC;
/// a bucket stores the first instant of its period (`2012-10-01T00:00:00Z` for October 2012).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    /// One bucket per hour.
    Hour,
    /// One bucket per day.
    Day,
    /// One bucket per calendar month.
    Month,
    /// One bucket per calendar year.
    Year,
}

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

impl Every {
    /// The first instant of the period holding `time`.
    pub fn start(self, time: DateTime) -> DateTime {
        let ms = time.timestamp_millis();
        let floor = |unit: i64| ms.div_euclid(unit) * unit;
        DateTime::from_millis(match self {
            Every::Hour => floor(HOUR_MS),
            Every::Day => floor(DAY_MS),
            Every::Month | Every::Year => {
                let (y, m, _) = civil_from_days(ms.div_euclid(DAY_MS));
                let m = if self == Every::Year { 1 } else { m };
                days_from_civil(y, m, 1) * DAY_MS
            }
        })
    }

    /// The period holding `time`, as people write it: `2012-10` for a month, `2012-10-13` for
    /// a day, `2012-10-13T12h` for an hour, `2012` for a year.
    pub fn label(self, time: DateTime) -> String {
        let ms = time.timestamp_millis();
        let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
        match self {
            Every::Hour => format!(
                "{y:04}-{m:02}-{d:02}T{:02}h",
                ms.rem_euclid(DAY_MS) / HOUR_MS
            ),
            Every::Day => format!("{y:04}-{m:02}-{d:02}"),
            Every::Month => format!("{y:04}-{m:02}"),
            Every::Year => format!("{y:04}"),
        }
    }
}

impl fmt::Display for Every {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Every::Hour => "hour",
            Every::Day => "day",
            Every::Month => "month",
            Every::Year => "year",
        })
    }
}

/// `(year, month, day)` of a day counted from 1970-01-01 (proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The day counted from 1970-01-01 of `(year, month, day)`.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime {
        DateTime::parse_rfc3339_str(s).unwrap()
    }

    #[test]
    fn periods_start_at_their_first_instant() {
        let t = at("2012-10-13T12:26:11.502Z");
        assert_eq!(Every::Month.start(t), at("2012-10-01T00:00:00Z"));
        assert_eq!(Every::Year.start(t), at("2012-01-01T00:00:00Z"));
        assert_eq!(Every::Day.start(t), at("2012-10-13T00:00:00Z"));
        assert_eq!(Every::Hour.start(t), at("2012-10-13T12:00:00Z"));
        assert_eq!(Every::Month.label(t), "2012-10");
        assert_eq!(Every::Hour.label(t), "2012-10-13T12h");
        // Before 1970, and the last instant of a leap February.
        assert_eq!(
            Every::Month.start(at("1969-12-31T23:59:59.999Z")),
            at("1969-12-01T00:00:00Z")
        );
        assert_eq!(
            Every::Month.start(at("2012-02-29T23:59:59.999Z")),
            at("2012-02-01T00:00:00Z")
        );
        assert_eq!(
            Every::Month.start(at("2000-03-01T00:00:00Z")),
            at("2000-03-01T00:00:00Z")
        );
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        for day in -80_000..80_000 {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
    }
}
