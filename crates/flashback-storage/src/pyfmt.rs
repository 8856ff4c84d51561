//! Byte-exact reproductions of the Python formats the savers write: float `repr`,
//! `json.dumps(..., ensure_ascii=False)`, `uuid6(clock_seq=step)` checkpoint ids and
//! `get_next_version` channel versions.

use crate::model::Version;
use serde_json::Value as Json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Python's `repr(float)`: the shortest round-trip digits, positional for decimal exponents in
/// `[-4, 16)`, otherwise `d.ddde±XX` with at least two exponent digits.
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "1.2345e-5".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa
        .strip_prefix('-')
        .map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let frac = &digits[1..];
        let m = if frac.is_empty() {
            digits[..1].to_string()
        } else {
            format!("{}.{}", &digits[..1], frac)
        };
        format!(
            "{sign}{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// Python's `json.dumps(value, ensure_ascii=False)` with the default separators `", "` and
/// `": "` (how the SQLite saver writes metadata). NaN and infinities are written as Python does
/// (`NaN`, `Infinity`, `-Infinity`).
pub fn py_json_dumps(value: &Json) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(v: &Json, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => {
            if n.is_f64() {
                let f = n.as_f64().unwrap_or(f64::NAN);
                match py_float_repr(f).as_str() {
                    "nan" => out.push_str("NaN"),
                    "inf" => out.push_str("Infinity"),
                    "-inf" => out.push_str("-Infinity"),
                    r => out.push_str(r),
                }
            } else {
                out.push_str(&n.to_string());
            }
        }
        Json::String(s) => write_str(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(k, out);
                out.push_str(": ");
                write_json(v, out);
            }
            out.push('}');
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `datetime.now(timezone.utc).isoformat()`: `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00` (Python
/// omits the fraction when the microseconds are zero).
pub fn utc_now_isoformat() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    isoformat_utc(d.as_secs() as i64, d.subsec_micros())
}

/// [`utc_now_isoformat`] for a given Unix time.
pub fn isoformat_utc(secs: i64, micros: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let frac = if micros == 0 {
        String::new()
    } else {
        format!(".{micros:06}")
    };
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}{frac}+00:00")
}

/// 100-ns ticks since 1582-10-15, as `uuid6` uses.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

static LAST_V6_TIMESTAMP: AtomicU64 = AtomicU64::new(0);

fn random_u64() -> u64 {
    // uuid's v4 generator is backed by the OS's random source.
    (uuid::Uuid::new_v4().as_u128() >> 64) as u64
}

/// When a version-6 UUID (a LangGraph checkpoint id) was made, as [`isoformat_utc`] writes it;
/// `None` for any other id (LangGraph.js's and the three-table store's are v6 too; a v1 or
/// v4 id, or text that is not a UUID, carries no such time).
pub fn uuid6_time(id: &str) -> Option<String> {
    let u = uuid::Uuid::try_parse(id).ok()?;
    if u.get_version_num() != 6 {
        return None;
    }
    let v = u.as_u128();
    let high = ((v >> 80) & 0xFFFF_FFFF_FFFF) as u64;
    let low = ((v >> 64) & 0x0FFF) as u64;
    let ticks = (high << 12) | low;
    let since_epoch = ticks.checked_sub(GREGORIAN_OFFSET)?;
    let secs = i64::try_from(since_epoch / 10_000_000).ok()?;
    Some(isoformat_utc(
        secs,
        ((since_epoch % 10_000_000) / 10) as u32,
    ))
}

/// A checkpoint id exactly as LangGraph's `uuid6(clock_seq=step)` makes it: the Gregorian
/// 100-ns clock (strictly increasing within this process), version 6, the step in the 14-bit
/// clock sequence, 48 random node bits; lowercase, so string order is time order.
pub fn uuid6(clock_seq: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut ts = now / 100 + GREGORIAN_OFFSET;
    let mut last = LAST_V6_TIMESTAMP.load(Ordering::Relaxed);
    loop {
        if ts <= last {
            ts = last + 1;
        }
        match LAST_V6_TIMESTAMP.compare_exchange_weak(last, ts, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => break,
            Err(actual) => last = actual,
        }
    }
    uuid6_from_parts(ts, clock_seq, random_u64())
}

/// [`uuid6`] with every input given (for tests and for recomputing ids).
pub fn uuid6_from_parts(timestamp: u64, clock_seq: i64, node: u64) -> String {
    let time_high_mid = ((timestamp >> 12) & 0xFFFF_FFFF_FFFF) as u128;
    let time_low = (timestamp & 0x0FFF) as u128;
    let mut v: u128 = time_high_mid << 80;
    v |= (0x6000 | time_low) << 64;
    v |= ((0x8000 | (clock_seq as u128 & 0x3FFF)) & 0xFFFF) << 48;
    v |= node as u128 & 0xFFFF_FFFF_FFFF;
    uuid::Uuid::from_u128(v).hyphenated().to_string()
}

/// `get_next_version` of the SQLite/Postgres savers: `f"{n+1:032}.{random.random():016}"` where
/// `n` is the integer before the first `.` of the current version (0 when there is none).
pub fn next_version(current: Option<&Version>) -> Version {
    let n = current.and_then(Version::counter).unwrap_or(0) + 1;
    // random.random(): 53 random bits / 2^53.
    let r = (random_u64() >> 11) as f64 / (1u64 << 53) as f64;
    Version::Str(format!("{n:032}.{:0>16}", py_float_repr(r)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (0.0, "0.0"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.2e-05, "1.2e-05"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (2.5e-7, "2.5e-07"),
            (100.0, "100.0"),
            (1e22, "1e+22"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(py_float_repr(f), want, "repr({f:e})");
        }
        // f"{x:016}" as used in versions.
        assert_eq!(
            format!("{:0>16}", py_float_repr(1.2e-05)),
            "0000000001.2e-05"
        );
        assert_eq!(format!("{:0>16}", py_float_repr(0.1)), "00000000000000.1");
    }

    #[test]
    fn json_dumps_matches_python() {
        let v = json!({"a": [1, 2.0, "x\"\\\n\t\u{1}é😀", null, true, {"b": {}}], "c": []});
        assert_eq!(
            py_json_dumps(&v),
            "{\"a\": [1, 2.0, \"x\\\"\\\\\\n\\t\\u0001é😀\", null, true, {\"b\": {}}], \"c\": []}"
        );
    }

    #[test]
    fn uuid6_layout_and_order() {
        // The fixture id 1f1e640f-3555-6213-8005-0a0b87dbca46 (written by Python at step 5).
        assert_eq!(
            uuid6_from_parts(0x1f1_e640_f355_5213, 5, 0x0a0b_87db_ca46),
            "1f1e640f-3555-6213-8005-0a0b87dbca46"
        );
        assert_eq!(&uuid6_from_parts(1 << 40, -1, 0)[19..23], "bfff", "step -1");
        let a = uuid6(0);
        let b = uuid6(0);
        assert!(b > a, "ids increase within a process: {a} {b}");
        assert_eq!(&a[14..15], "6", "version 6");
    }

    #[test]
    fn uuid6_says_when_it_was_made() {
        // Python: the id's 60-bit time, less the Gregorian offset, as a UTC datetime.
        assert_eq!(
            uuid6_time("1f1e640f-3555-6213-8005-0a0b87dbca46").as_deref(),
            Some("2026-11-22T06:50:05.994651+00:00")
        );
        let before = utc_now_isoformat();
        let made = uuid6_time(&uuid6(3)).unwrap();
        let after = utc_now_isoformat();
        assert!(
            before[..19] <= made[..19] && made[..19] <= after[..19],
            "{before} {made} {after}"
        );
        assert_eq!(
            uuid6_time("5b2c7a1e-8f3d-4c1a-9e2b-0a0b87dbca46"),
            None,
            "v4"
        );
        assert_eq!(uuid6_time("not an id"), None);
        assert_eq!(uuid6_time(""), None);
    }

    #[test]
    fn isoformat_matches_python() {
        // datetime.fromtimestamp(1795326054.853699, timezone.utc).isoformat()
        assert_eq!(
            isoformat_utc(1_795_326_054, 853_699),
            "2026-11-22T05:40:54.853699+00:00"
        );
        assert_eq!(isoformat_utc(951_782_400, 0), "2000-02-29T00:00:00+00:00");
        assert_eq!(isoformat_utc(0, 5), "1970-01-01T00:00:00.000005+00:00");
        assert!(utc_now_isoformat().ends_with("+00:00"));
    }

    #[test]
    fn versions_follow_python_format() {
        let Version::Str(v) = next_version(None) else {
            panic!("string version")
        };
        assert!(v.starts_with("00000000000000000000000000000001."), "{v}");
        assert!(v.len() >= 33 + 16, "{v}");
        let Version::Str(v2) = next_version(Some(&Version::Str(v.clone()))) else {
            panic!()
        };
        assert!(v2.starts_with("00000000000000000000000000000002."), "{v2}");
        let Version::Str(v3) = next_version(Some(&Version::Int(7))) else {
            panic!()
        };
        assert!(v3.starts_with("00000000000000000000000000000008."), "{v3}");
    }
}
