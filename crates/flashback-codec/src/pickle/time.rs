//! Python's datetime and uuid objects, read from their pickled state without running anything:
//! `datetime.datetime(b'\x07\xe8…', tz)` → its `isoformat()`, `uuid.UUID` → its text.

use super::{bigint, PyValue};
use std::sync::Arc;

/// The object's class path and arguments, if it is an object of `module.name`.
fn object_of<'a>(
    v: &'a PyValue,
    module: &str,
    names: &[&str],
) -> Option<(&'a str, &'a [Arc<PyValue>])> {
    match v {
        PyValue::Object {
            module: m,
            name,
            args,
            ..
        } if m == module && names.contains(&name.as_str()) => Some((name, args)),
        _ => None,
    }
}

/// The bytes of a datetime state argument (bytes, or a Python 2 str read as Latin-1).
fn state_bytes(v: &PyValue) -> Option<Vec<u8>> {
    match v {
        PyValue::Bytes(b) => Some(b.clone()),
        PyValue::Str(s) => s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect(),
        _ => None,
    }
}

/// A `datetime.timedelta`'s total (seconds, microseconds), from its `(days, seconds, us)`.
pub(super) fn timedelta(v: &PyValue) -> Option<(i64, i64)> {
    let (_, args) = object_of(v, "datetime", &["timedelta"])?;
    let part = |i: usize| args.get(i).map_or(Some(0), |a| a.as_int());
    let (days, seconds, micros) = (part(0)?, part(1)?, part(2)?);
    Some((days.checked_mul(86_400)?.checked_add(seconds)?, micros))
}

/// `+HH:MM[:SS[.ffffff]]` of a `datetime.timezone` (`None` for a tzinfo whose offset is not in
/// its pickle, such as a `zoneinfo.ZoneInfo`).
fn utc_offset(tz: &PyValue) -> Option<String> {
    let (_, args) = object_of(tz, "datetime", &["timezone"])?;
    let (secs, micros) = timedelta(args.first()?)?;
    let total = secs.checked_mul(1_000_000)?.checked_add(micros)?;
    let sign = if total < 0 { '-' } else { '+' };
    let total = total.unsigned_abs();
    let (secs, micros) = (total / 1_000_000, total % 1_000_000);
    let mut s = format!("{sign}{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if secs % 60 != 0 || micros != 0 {
        s.push_str(&format!(":{:02}", secs % 60));
    }
    if micros != 0 {
        s.push_str(&format!(".{micros:06}"));
    }
    Some(s)
}

/// `HH:MM:SS[.ffffff]` from hour, minute, second and three microsecond bytes.
fn clock(b: &[u8]) -> String {
    let micros = u32::from(b[3]) << 16 | u32::from(b[4]) << 8 | u32::from(b[5]);
    let mut s = format!("{:02}:{:02}:{:02}", b[0] & 0x7f, b[1], b[2]);
    if micros != 0 {
        s.push_str(&format!(".{micros:06}"));
    }
    s
}

/// The offset suffix of an optional tzinfo argument (`Some("")` when naive).
fn tz_suffix(tz: Option<&Arc<PyValue>>) -> Option<String> {
    match tz {
        None => Some(String::new()),
        Some(t) if t.is_none() => Some(String::new()),
        Some(t) => utc_offset(t),
    }
}

/// A `datetime.datetime`, `date` or `time` object's `isoformat()` text (with its UTC offset
/// when it has a `datetime.timezone`). `None` for anything else, and for a tzinfo whose offset
/// is not in the pickle.
pub fn iso_datetime(v: &PyValue) -> Option<String> {
    let (local, tz) = local_iso(v)?;
    Some(local + &tz_suffix(tz)?)
}

/// A `datetime.datetime` or `time`'s text without its UTC offset, whatever its tzinfo.
pub(super) fn naive_iso(v: &PyValue) -> Option<String> {
    Some(local_iso(v)?.0)
}

/// The isoformat text without the offset, and the tzinfo argument.
fn local_iso(v: &PyValue) -> Option<(String, Option<&Arc<PyValue>>)> {
    let (name, args) = object_of(v, "datetime", &["datetime", "date", "time"])?;
    let b = state_bytes(args.first()?)?;
    let date = |b: &[u8]| {
        format!(
            "{:04}-{:02}-{:02}",
            u16::from(b[0]) << 8 | u16::from(b[1]),
            b[2] & 0x7f,
            b[3]
        )
    };
    let text = match (name, b.len()) {
        ("datetime", 10) => format!("{}T{}", date(&b), clock(&b[4..])),
        ("date", 4) => date(&b),
        ("time", 6) => clock(&b),
        _ => return None,
    };
    Some((text, args.get(1)))
}

/// The 128-bit value of a `uuid.UUID` object (its state's `int`).
fn uuid_int(v: &PyValue) -> Option<u128> {
    let PyValue::Object {
        module,
        name,
        state: Some(state),
        ..
    } = v
    else {
        return None;
    };
    if module != "uuid" || name != "UUID" {
        return None;
    }
    // `{'int': …}`, or `(None, {'int': …})` for a slotted state.
    let dict = match &**state {
        PyValue::Tuple(t) if t.len() == 2 => &t[1],
        _ => state,
    };
    match &**dict.get("int")? {
        PyValue::Int(i) => u128::try_from(*i).ok(),
        PyValue::BigInt(d) => bigint::to_u128(d),
        _ => None,
    }
}

/// A `uuid.UUID` object as its canonical text (`12345678-1234-5678-1234-567812345678`).
pub fn uuid_string(v: &PyValue) -> Option<String> {
    let h = format!("{:032x}", uuid_int(v)?);
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// A `uuid.UUID` object as `UUID.hex` (what LangGraph's msgpack stores).
pub(super) fn uuid_hex(v: &PyValue) -> Option<String> {
    Some(format!("{:032x}", uuid_int(v)?))
}
