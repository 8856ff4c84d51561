//! The Store's timestamps: read from SQLite's text (`CURRENT_TIMESTAMP`'s
//! `YYYY-MM-DD HH:MM:SS`, Python's `str(datetime)` `YYYY-MM-DD HH:MM:SS.ffffff+00:00`) or
//! Postgres' `timestamptz` (as microseconds since the epoch), shown as ISO 8601 in UTC, and
//! written as Python writes them.

use crate::pyfmt::isoformat_utc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A stored timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// A point in time: microseconds since 1970-01-01 UTC.
    At {
        /// Microseconds since the epoch.
        micros: i64,
    },
    /// Something that is not a timestamp, as stored.
    Unreadable(String),
}

impl Stamp {
    /// Parse SQLite's text forms: `YYYY-MM-DD[ T]HH:MM[:SS[.f…]]` with an optional `Z` or
    /// `±HH:MM` (none: UTC, as `CURRENT_TIMESTAMP` writes).
    pub fn parse(text: &str) -> Stamp {
        parse(text.trim()).map_or_else(
            || Stamp::Unreadable(text.to_owned()),
            |micros| Stamp::At { micros },
        )
    }

    /// Now, in the unit of [`Stamp::At`] (microseconds since the epoch).
    pub fn now_micros() -> i64 {
        now_micros()
    }
}

/// Now, in microseconds since the epoch.
pub(crate) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// ISO 8601 in UTC: `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00` (Python's `isoformat()` of an aware
/// datetime).
pub(crate) fn iso(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let sub = u32::try_from(micros.rem_euclid(1_000_000)).unwrap_or(0);
    isoformat_utc(secs, sub)
}

/// `str(datetime)` of an aware UTC datetime, as Python's sqlite3 adapter stores `expires_at`:
/// `YYYY-MM-DD HH:MM:SS[.ffffff]+00:00`.
pub(crate) fn python_str(micros: i64) -> String {
    iso(micros).replacen('T', " ", 1)
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse(s: &str) -> Option<i64> {
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let mut parts = date.split('-');
    let (y, m, d) = (
        digits(parts.next()?)?,
        digits(parts.next()?)?,
        digits(parts.next()?)?,
    );
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut micros = days_from_civil(y, m, d) * 86_400_000_000;
    if rest.is_empty() {
        return Some(micros);
    }
    let rest = rest.strip_prefix([' ', 'T'])?;
    // The zone: `Z`, `±HH:MM` or nothing.
    let (clock, offset) = if let Some(c) = rest.strip_suffix('Z') {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, z) = rest.split_at(i);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let (h, m) = z[1..].split_once(':').unwrap_or((&z[1..], "0"));
        let (h, m) = (digits(h)?, digits(m)?);
        if h > 23 || m > 59 {
            return None;
        }
        (c, sign * (h * 3600 + m * 60))
    } else {
        (rest, 0)
    };
    let mut hms = clock.split(':');
    let h = digits(hms.next()?)?;
    let min = digits(hms.next()?)?;
    let (sec, frac) = match hms.next() {
        None => (0, 0),
        Some(s) => {
            let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
            let frac = if frac.is_empty() {
                0
            } else {
                let six: String = frac.chars().chain("000000".chars()).take(6).collect();
                digits(&six)?
            };
            (digits(whole)?, frac)
        }
    };
    if hms.next().is_some() || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    micros += ((h * 3600 + min * 60 + sec) - offset) * 1_000_000 + frac;
    Some(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_python_forms_parse() {
        let at = |s: &str| match Stamp::parse(s) {
            Stamp::At { micros } => iso(micros),
            Stamp::Unreadable(raw) => format!("unreadable {raw}"),
        };
        assert_eq!(at("2025-03-01 12:34:56"), "2025-03-01T12:34:56+00:00");
        assert_eq!(
            at("2025-03-01 12:34:56.123456+00:00"),
            "2025-03-01T12:34:56.123456+00:00"
        );
        assert_eq!(
            at("2025-03-01T12:34:56.5Z"),
            "2025-03-01T12:34:56.500000+00:00"
        );
        assert_eq!(at("2025-03-01 14:34:56+02:00"), "2025-03-01T12:34:56+00:00");
        assert_eq!(at("2024-02-29"), "2024-02-29T00:00:00+00:00");
        assert_eq!(at("1969-12-31 23:59:59"), "1969-12-31T23:59:59+00:00");
        for bad in [
            "",
            "yesterday",
            "2025-13-01 00:00:00",
            "2025-03-01 25:00:00",
            "2025-03-01x",
            "2025-03-01 00:00:00+99999999999999999:00",
            "2025-03-01 99999999999999999999:00:00",
            "2025-03-01 00:00:00.x",
            "éééééééééééé",
        ] {
            assert!(matches!(Stamp::parse(bad), Stamp::Unreadable(_)), "{bad}");
        }
    }

    #[test]
    fn written_as_python_writes() {
        let Stamp::At { micros } = Stamp::parse("2025-03-01 12:34:56.000001+00:00") else {
            panic!("parse");
        };
        assert_eq!(python_str(micros), "2025-03-01 12:34:56.000001+00:00");
        assert_eq!(python_str(micros - 1), "2025-03-01 12:34:56+00:00");
    }
}
