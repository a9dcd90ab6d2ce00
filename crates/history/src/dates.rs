//! Dates of the history, in UTC: the `--since`/`--until` filters
//! (`2026-11-22`, `2026-11-22 09:15`, `2026-11-22T09:15:30`, a trailing
//! `Z` allowed) and the times printed in tables.

use ssdready_core::units::{civil_from_days, days_from_civil};

const DAY_MS: i64 = 86_400_000;

/// A `--since`/`--until` value that is not a moment.
#[derive(Debug, thiserror::Error)]
pub enum DateError {
    #[error("'{text}' is not a {what}")]
    NotANumber { text: String, what: &'static str },
    #[error("{what} {value} is out of range ({lo}-{hi})")]
    OutOfRange {
        what: &'static str,
        value: u32,
        lo: u32,
        hi: u32,
    },
    #[error("'{text}' is not a date (allowed: YYYY-MM-DD, optionally with HH:MM[:SS], UTC)")]
    NotADate { text: String },
    #[error("{year:04}-{month:02}-{day:02} is not a day of the calendar")]
    NoSuchDay { year: u32, month: u32, day: u32 },
    #[error("'{text}' is not a time (allowed: HH:MM or HH:MM:SS, UTC)")]
    NotATime { text: String },
}

/// A moment as written, with how much time it names: a date names a whole
/// day, `HH:MM` a minute, `HH:MM:SS` a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moment {
    /// The start, ms since 1970 (UTC).
    pub start_ms: i64,
    /// How long it lasts, ms.
    pub span_ms: i64,
}

impl Moment {
    /// The last millisecond it names (an `--until` includes it).
    pub fn end_ms(&self) -> i64 {
        self.start_ms + self.span_ms - 1
    }
}

fn num(s: &str, what: &'static str, lo: u32, hi: u32) -> Result<u32, DateError> {
    let v: u32 = s
        .parse()
        .ok()
        .filter(|_| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| DateError::NotANumber {
            text: s.into(),
            what,
        })?;
    if !(lo..=hi).contains(&v) {
        return Err(DateError::OutOfRange {
            what,
            value: v,
            lo,
            hi,
        });
    }
    Ok(v)
}

/// Parse a date or date and time, UTC.
pub fn parse(s: &str) -> Result<Moment, DateError> {
    let t = s.trim().trim_end_matches(['Z', 'z']);
    let (date, time) = match t.split_once(['T', 't', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(DateError::NotADate { text: s.into() });
    };
    let y = num(y, "year", 1970, 9999)?;
    let m = num(m, "month", 1, 12)?;
    let d = num(d, "day", 1, 31)?;
    let days = days_from_civil(i64::from(y), m, d);
    if civil_from_days(days) != (i64::from(y), m, d) {
        return Err(DateError::NoSuchDay {
            year: y,
            month: m,
            day: d,
        });
    }
    let mut start = days * DAY_MS;
    let span = match time {
        None => DAY_MS,
        Some(tm) => {
            let f: Vec<&str> = tm.split(':').collect();
            let (h, mi, sec) = match f[..] {
                [h, mi] => (h, mi, None),
                [h, mi, sec] => (h, mi, Some(sec)),
                _ => return Err(DateError::NotATime { text: tm.into() }),
            };
            start += i64::from(num(h, "hour", 0, 23)?) * 3_600_000
                + i64::from(num(mi, "minute", 0, 59)?) * 60_000;
            match sec {
                Some(sec) => {
                    start += i64::from(num(sec, "second", 0, 59)?) * 1000;
                    1000
                }
                None => 60_000,
            }
        }
    };
    Ok(Moment {
        start_ms: start,
        span_ms: span,
    })
}

/// `2026-11-22 09:15` (UTC), for tables.
pub fn fmt_minute(ms: i64) -> String {
    let (y, m, d, hh, mm, _) = split(ms);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}")
}

/// `2026-11-22T09:15:30Z`, for JSON.
pub fn fmt_iso(ms: i64) -> String {
    let (y, m, d, hh, mm, ss) = split(ms);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

fn split(ms: i64) -> (i64, u32, u32, i64, i64, i64) {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    (y, m, d, rem / 3600, rem / 60 % 60, rem % 60)
}

/// `--since` and `--until` that cannot be used together or alone.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error("option '{option}': {why}")]
    Date {
        option: &'static str,
        why: DateError,
    },
    #[error("options '--since' and '--until': --since is after --until")]
    Reversed,
}

/// What `--since` and `--until` name, ms since 1970: from the first one's
/// start to the last millisecond of the second (a date includes its whole
/// day).
pub fn range(
    since: Option<&str>,
    until: Option<&str>,
) -> Result<(Option<i64>, Option<i64>), RangeError> {
    let read = |option, v: Option<&str>| {
        v.map(parse)
            .transpose()
            .map_err(|why| RangeError::Date { option, why })
    };
    let since_ms = read("--since", since)?.map(|m| m.start_ms);
    let until_ms = read("--until", until)?.map(|m| m.end_ms());
    match (since_ms, until_ms) {
        (Some(s), Some(u)) if s > u => Err(RangeError::Reversed),
        _ => Ok((since_ms, until_ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_names_its_whole_day_and_a_time_its_minute_or_second() {
        let d = parse("2025-11-22").unwrap();
        assert_eq!(d.start_ms, 20_414 * DAY_MS);
        assert_eq!(d.end_ms(), 20_415 * DAY_MS - 1);
        let m = parse("2025-11-22 09:15").unwrap();
        assert_eq!(m.start_ms, 20_414 * DAY_MS + 9 * 3_600_000 + 15 * 60_000);
        assert_eq!(m.span_ms, 60_000);
        let s = parse("2025-11-22T09:15:30Z").unwrap();
        assert_eq!(s.start_ms, m.start_ms + 30_000);
        assert_eq!(fmt_iso(s.start_ms), "2025-11-22T09:15:30Z");
        assert_eq!(fmt_minute(s.start_ms), "2025-11-22 09:15");
    }

    #[test]
    fn impossible_dates_say_why() {
        for (bad, why) in [
            ("2025-02-30", "not a day"),
            ("2025-13-01", "month 13"),
            ("yesterday", "not a date"),
            ("2025-11-22 25:00", "hour 25"),
            ("2025-11-22 9", "not a time"),
            ("2025-1x-01", "not a month"),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_range_runs_from_the_start_of_since_to_the_end_of_until() {
        let (s, u) = range(Some("2025-11-22"), Some("2025-11-22")).unwrap();
        assert_eq!((s, u), (Some(20_414 * DAY_MS), Some(20_415 * DAY_MS - 1)));
        assert_eq!(range(None, None).unwrap(), (None, None));
        let (s, u) = range(None, Some("2025-11-22 09:15")).unwrap();
        assert_eq!(s, None);
        assert_eq!(u, Some(20_414 * DAY_MS + 9 * 3_600_000 + 16 * 60_000 - 1));
    }

    #[test]
    fn a_bad_or_reversed_range_names_its_option() {
        let e = range(Some("last tuesday"), None).unwrap_err().to_string();
        assert!(
            e.starts_with("option '--since': 'last tuesday' is not a date"),
            "{e}"
        );
        let e = range(Some("2025-11-22"), Some("2025-13-01"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("option '--until': month 13"), "{e}");
        let e = range(Some("2025-11-23"), Some("2025-11-22"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "options '--since' and '--until': --since is after --until"
        );
    }
}
