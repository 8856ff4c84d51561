//! Would Python revive it? An edited typed value is checked the way LangGraph's msgpack ext hook
//! would construct it (`datetime.fromisoformat(s)`, `UUID(s)`, `Decimal(s)`, `date(*args)`,
//! `timedelta(*args)`, `time(**kw)`, `timezone(*args)`, the message classes' fields…). Where
//! Python would fail it silently keeps the raw payload (a `str` where the program expects a
//! `datetime`), so such a value is refused here instead, with its JSON path.
//!
//! Only the types whose constructors are known are checked; other classes (the user's own) are
//! constructed by Python with whatever fields they are given, and an Enum member keeps the kind
//! of value (str, int…) its original had.

use crate::value::{ObjectForm, PyObject, Value};

/// Why `obj` would not revive as its type, or `None` when it would (or cannot be told).
pub(super) fn problem(obj: &PyObject, template: Option<&PyObject>) -> Option<String> {
    // A value the program wrote is what Python reads back, whatever this check thinks.
    if template.is_some_and(|t| t.payload == obj.payload && t.form == obj.form) {
        return None;
    }
    let p = &obj.payload;
    match (obj.module.as_ref(), obj.name.as_ref(), obj.form) {
        ("datetime", "datetime", ObjectForm::Method) => {
            match obj.extra.as_ref().and_then(Value::as_str) {
                Some("fromisoformat") | None => {}
                Some(m) => {
                    return Some(format!(
                        "datetime.datetime can only be revived with fromisoformat, not {m:?}"
                    ))
                }
            }
            match p.as_str() {
                None => Some(format!(
                    "a datetime is an ISO 8601 string, not {}",
                    shown(p)
                )),
                Some(s) => iso_datetime(s)
                    .err()
                    .map(|e| format!("not a datetime Python reads ({e}): {}", shown(p))),
            }
        }
        ("datetime", "date", ObjectForm::PosArgs) => {
            date_args(p).err().map(|e| format!("not a date: {e}"))
        }
        ("datetime", "timedelta", ObjectForm::PosArgs) => timedelta_args(p)
            .err()
            .map(|e| format!("not a timedelta: {e}")),
        ("datetime", "time", ObjectForm::KwArgs) => {
            time_kwargs(p).err().map(|e| format!("not a time: {e}"))
        }
        ("datetime", "timezone", ObjectForm::PosArgs) => timezone_args(p)
            .err()
            .map(|e| format!("not a timezone: {e}")),
        ("uuid", "UUID", ObjectForm::SingleArg) => match p.as_str() {
            Some(s) if uuid_ok(s) => None,
            _ => Some(format!(
                "not a UUID (32 hex digits, dashes allowed): {}",
                shown(p)
            )),
        },
        ("decimal", "Decimal", ObjectForm::SingleArg) => match p {
            Value::Str(_) if p.as_str().is_some_and(decimal_ok) => None,
            Value::Int(_) | Value::UInt(_) | Value::Float(_) => None,
            _ => Some(format!("not a Decimal: {}", shown(p))),
        },
        ("builtins", "set" | "frozenset", ObjectForm::SingleArg)
        | ("collections", "deque", ObjectForm::SingleArg) => match p {
            Value::Array(_) => None,
            _ => Some(format!(
                "{} needs a list of items",
                obj.name.as_ref() as &str
            )),
        },
        ("ipaddress", name, ObjectForm::SingleArg) => ip_problem(name, p),
        (m, name, ObjectForm::PydanticV2 | ObjectForm::PydanticV1)
            if m.starts_with("langchain_core.messages") =>
        {
            message_problem(name, p)
        }
        ("langgraph.types", "Send", ObjectForm::PosArgs) => match p {
            Value::Array(a) if (2..=3).contains(&a.len()) && a[0].as_str().is_some() => None,
            _ => Some("a Send is [node name, argument] (and optionally a timeout)".into()),
        },
        _ => enum_like(obj, template),
    }
}

/// An Enum member (or another single-argument object) keeps its original's kind of value.
fn enum_like(obj: &PyObject, template: Option<&PyObject>) -> Option<String> {
    let t = template?;
    if obj.form != ObjectForm::SingleArg || t.form != ObjectForm::SingleArg {
        return None;
    }
    let (new, old) = (obj.payload.type_name(), t.payload.type_name());
    (new != old).then(|| {
        format!(
            "{}.{} was constructed from a {old}; a {new} would not give the same kind of value",
            &*t.module, &*t.name
        )
    })
}

fn shown(v: &Value) -> String {
    match v.as_str() {
        Some(s) if s.chars().count() > 60 => {
            format!("{:?}…", s.chars().take(60).collect::<String>())
        }
        Some(s) => format!("{s:?}"),
        None => format!("a {}", v.type_name()),
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

fn days_in(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn check_date(y: i64, m: i64, d: i64) -> Result<(), &'static str> {
    if !(1..=9999).contains(&y) {
        return Err("year out of range 1–9999");
    }
    if !(1..=12).contains(&m) {
        return Err("month must be in 1–12");
    }
    if d < 1 || d > days_in(y, m) {
        return Err("day is out of range for month");
    }
    Ok(())
}

fn date_args(p: &Value) -> Result<(), String> {
    let Value::Array(a) = p else {
        return Err("expected [year, month, day]".into());
    };
    let [y, m, d] = a.as_slice() else {
        return Err("expected [year, month, day]".into());
    };
    match (int(y), int(m), int(d)) {
        (Some(y), Some(m), Some(d)) => check_date(y, m, d).map_err(str::to_owned),
        _ => Err("year, month and day are integers".into()),
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        Value::Float32(f) => Some(f64::from(*f)),
        _ => int(v).map(|i| i as f64),
    }
}

fn timedelta_args(p: &Value) -> Result<(), String> {
    let Value::Array(a) = p else {
        return Err("expected [days, seconds, microseconds]".into());
    };
    if a.len() > 7 {
        return Err("at most 7 arguments".into());
    }
    let mut total_days = 0f64;
    for (v, per_day) in a
        .iter()
        .zip([1.0, 86_400.0, 86_400e6, 86_400e3, 1440.0, 24.0, 1.0 / 7.0])
    {
        let Some(n) = number(v).filter(|n| n.is_finite()) else {
            return Err(format!("{} is not a finite number", shown(v)));
        };
        total_days += n / per_day;
    }
    if total_days.abs() > 999_999_999.0 {
        return Err("more than 999999999 days".into());
    }
    Ok(())
}

fn time_kwargs(p: &Value) -> Result<(), String> {
    let Value::Map(_) = p else {
        return Err("expected {hour, minute, second, microsecond, tzinfo, fold}".into());
    };
    for (field, max) in [
        ("hour", 23),
        ("minute", 59),
        ("second", 59),
        ("microsecond", 999_999),
        ("fold", 1),
    ] {
        match p.get(field) {
            None => {}
            Some(v) => match int(v) {
                Some(n) if (0..=max).contains(&n) => {}
                _ => return Err(format!("{field} must be an integer in 0–{max}")),
            },
        }
    }
    match p.get("tzinfo") {
        None | Some(Value::Nil) | Some(Value::Object(_)) => Ok(()),
        Some(v) => Err(format!(
            "tzinfo must be None or a timezone, not {}",
            shown(v)
        )),
    }
}

fn timezone_args(p: &Value) -> Result<(), String> {
    let Value::Array(a) = p else {
        return Err("expected [offset, name]".into());
    };
    match a.as_slice() {
        [Value::Object(o)] | [Value::Object(o), Value::Str(_)]
            if &*o.module == "datetime" && &*o.name == "timedelta" =>
        {
            let Value::Array(args) = &o.payload else {
                return Err("the offset is a timedelta".into());
            };
            let secs: f64 = args
                .iter()
                .zip([86_400.0, 1.0, 1e-6])
                .map(|(v, k)| number(v).unwrap_or(f64::NAN) * k)
                .sum();
            if secs.is_finite() && secs.abs() < 86_400.0 {
                Ok(())
            } else {
                Err("the offset must be strictly between -24 and 24 hours".into())
            }
        }
        _ => Err("expected [timedelta offset] or [timedelta offset, name]".into()),
    }
}

fn digits(s: &[u8], n: usize) -> Option<i64> {
    (s.len() >= n && s[..n].iter().all(u8::is_ascii_digit))
        .then(|| s[..n].iter().fold(0, |a, &c| a * 10 + i64::from(c - b'0')))
}

/// `datetime.fromisoformat` (Python 3.11+): a date (`YYYY-MM-DD` or `YYYYMMDD`), optionally a
/// one-character separator and a time `HH[:MM[:SS[.f+]]]` (or the basic `HHMMSS` form), then an
/// optional `Z` or `±HH[:MM[:SS[.ffffff]]]` offset.
pub(super) fn iso_datetime(s: &str) -> Result<(), &'static str> {
    let b = s.as_bytes();
    let (y, m, d, rest) = if b.get(4) == Some(&b'-') {
        let (Some(y), Some(m), Some(d)) = (
            digits(b, 4),
            digits(&b[5..], 2),
            digits(b.get(8..).unwrap_or(&[]), 2),
        ) else {
            return Err("the date must be YYYY-MM-DD");
        };
        if b.get(7) != Some(&b'-') {
            return Err("the date must be YYYY-MM-DD");
        }
        (y, m, d, &b[10..])
    } else {
        match (
            digits(b, 4),
            digits(b.get(4..).unwrap_or(&[]), 2),
            digits(b.get(6..).unwrap_or(&[]), 2),
        ) {
            (Some(y), Some(m), Some(d)) => (y, m, d, &b[8..]),
            _ => return Err("the date must be YYYY-MM-DD"),
        }
    };
    check_date(y, m, d)?;
    if rest.is_empty() {
        return Ok(());
    }
    // One separator character (any, in 3.11), then the time.
    let sep_len = std::str::from_utf8(rest)
        .ok()
        .and_then(|r| r.chars().next())
        .map_or(1, char::len_utf8);
    let time = &rest[sep_len..];
    let tz_at = time
        .iter()
        .position(|&c| matches!(c, b'+' | b'-' | b'Z'))
        .unwrap_or(time.len());
    clock(&time[..tz_at], true)?;
    let tz = &time[tz_at..];
    match tz {
        [] => Ok(()),
        [b'Z'] => Ok(()),
        [b'+' | b'-', offset @ ..] => clock(offset, false),
        _ => Err("the UTC offset must be Z or ±HH:MM"),
    }
}

/// `HH[:MM[:SS[.f+]]]` or `HH[MM[SS[.f+]]]`; an offset (`with_hour_24` false) is below 24h.
fn clock(t: &[u8], is_time: bool) -> Result<(), &'static str> {
    let bad = if is_time {
        "the time must be HH:MM[:SS[.ffffff]]"
    } else {
        "the UTC offset must be ±HH:MM"
    };
    let (main, frac) = match t.iter().position(|&c| c == b'.' || c == b',') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    if let Some(f) = frac {
        if f.is_empty() || !f.iter().all(u8::is_ascii_digit) || (!is_time && f.len() != 6) {
            return Err(bad);
        }
    }
    let parts: Vec<i64> = if main.contains(&b':') {
        let mut out = Vec::new();
        for p in main.split(|&c| c == b':') {
            if p.len() != 2 {
                return Err(bad);
            }
            out.push(digits(p, 2).ok_or(bad)?);
        }
        out
    } else {
        if main.len() % 2 != 0 || main.is_empty() {
            return Err(bad);
        }
        main.chunks(2)
            .map(|p| digits(p, 2).ok_or(bad))
            .collect::<Result<_, _>>()?
    };
    if parts.is_empty() || parts.len() > 3 || (frac.is_some() && parts.len() != 3) {
        return Err(bad);
    }
    let limits = [23, 59, 59];
    if parts.iter().zip(limits).any(|(v, max)| *v > max) {
        return Err(if is_time {
            "hour, minute or second out of range"
        } else {
            "the UTC offset must be below 24 hours"
        });
    }
    Ok(())
}

/// `uuid.UUID(s)`: braces, `urn:uuid:` and dashes removed, 32 hex digits remain.
fn uuid_ok(s: &str) -> bool {
    let s = s.strip_prefix("urn:uuid:").unwrap_or(s);
    let s = s.trim_matches(|c| c == '{' || c == '}');
    let hex: Vec<char> = s.chars().filter(|&c| c != '-').collect();
    hex.len() == 32 && hex.iter().all(char::is_ascii_hexdigit)
}

/// `decimal.Decimal(s)`: surrounding whitespace and every underscore are dropped, then a sign,
/// digits with an optional point and exponent, or Infinity / NaN / sNaN.
fn decimal_ok(s: &str) -> bool {
    let lower = s.trim().replace('_', "").to_ascii_lowercase();
    let s = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    if matches!(s, "inf" | "infinity") {
        return true;
    }
    if let Some(payload) = s.strip_prefix("snan").or_else(|| s.strip_prefix("nan")) {
        return payload.chars().all(|c| c.is_ascii_digit());
    }
    let (mantissa, exp) = match s.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    let digits_ok = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => {
            (!a.is_empty() || !b.is_empty())
                && (a.is_empty() || digits_ok(a))
                && (b.is_empty() || digits_ok(b))
        }
        None => digits_ok(mantissa),
    };
    let exp_ok = exp.is_none_or(|e| digits_ok(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mantissa_ok && exp_ok
}

fn ip_problem(name: &str, p: &Value) -> Option<String> {
    let s = p.as_str()?;
    let (addr, prefix) = match s.split_once('/') {
        Some((a, n)) => (a, Some(n)),
        None => (s, None),
    };
    let v4 = addr.parse::<std::net::Ipv4Addr>().is_ok();
    let v6 = addr.parse::<std::net::Ipv6Addr>().is_ok();
    let ok = match name {
        "IPv4Address" => v4 && prefix.is_none(),
        "IPv6Address" => v6 && prefix.is_none(),
        "IPv4Network" | "IPv4Interface" => {
            v4 && prefix.is_none_or(|n| n.parse::<u8>().is_ok_and(|n| n <= 32))
        }
        "IPv6Network" | "IPv6Interface" => {
            v6 && prefix.is_none_or(|n| n.parse::<u8>().is_ok_and(|n| n <= 128))
        }
        _ => return None,
    };
    (!ok).then(|| format!("not an ipaddress.{name}: {}", shown(p)))
}

/// The fields LangChain's message classes validate: `content` (a string or a list), `type`
/// matching the class, tool calls, and the ids a ToolMessage / RemoveMessage need.
fn message_problem(name: &str, p: &Value) -> Option<String> {
    let Value::Map(_) = p else {
        return Some(format!("a {name} is an object with its fields"));
    };
    let base = name.strip_suffix("Chunk").unwrap_or(name);
    let expected_type = match base {
        "AIMessage" => "ai",
        "HumanMessage" => "human",
        "SystemMessage" => "system",
        "ToolMessage" => "tool",
        "FunctionMessage" => "function",
        "ChatMessage" => "chat",
        "RemoveMessage" => "remove",
        _ => return None,
    };
    if base != "RemoveMessage" {
        match p.get("content") {
            Some(Value::Str(_)) | Some(Value::Array(_)) => {}
            None => return Some(format!("a {name} needs \"content\" (a string or a list)")),
            Some(v) => {
                return Some(format!(
                    "{name}.content must be a string or a list, not {}",
                    shown(v)
                ))
            }
        }
    }
    if let Some(t) = p.get("type") {
        let ok = t.as_str() == Some(expected_type)
            || (name.ends_with("Chunk") && t.as_str() == Some(name));
        if !ok {
            return Some(format!(
                "{name}.type must be {expected_type:?}, not {}",
                shown(t)
            ));
        }
    }
    for (field, needed) in [
        ("tool_call_id", base == "ToolMessage"),
        ("id", base == "RemoveMessage"),
        ("role", base == "ChatMessage"),
        ("name", base == "FunctionMessage"),
    ] {
        if needed && !matches!(p.get(field), Some(Value::Str(_))) {
            return Some(format!("{name}.{field} must be a string"));
        }
    }
    if let Some(id) = p.get("id") {
        if !matches!(id, Value::Nil | Value::Str(_)) {
            return Some(format!("{name}.id must be a string or null"));
        }
    }
    if let Some(calls) = p.get("tool_calls") {
        let Value::Array(calls) = calls else {
            return Some(format!("{name}.tool_calls must be a list"));
        };
        for (i, c) in calls.iter().enumerate() {
            let ok = matches!(c, Value::Map(_))
                && matches!(c.get("name"), Some(Value::Str(_)))
                && matches!(c.get("args"), Some(Value::Map(_)))
                && matches!(c.get("id"), None | Some(Value::Nil | Value::Str(_)));
            if !ok {
                return Some(format!(
                    "{name}.tool_calls[{i}] must be {{\"name\": str, \"args\": {{…}}, \"id\": str}}"
                ));
            }
        }
    }
    None
}
