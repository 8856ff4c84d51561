//! The text forms of protocols 0 and 1: `INT`/`LONG`/`FLOAT` lines, `STRING`'s quoted repr
//! and `UNICODE`'s raw-unicode-escape.

use super::{bigint, PyValue};

/// Bytes as Latin-1 text (Python 2 `str`, read losslessly).
pub(super) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// An `INT` (`I01`/`I00` are `True`/`False`) or `LONG` (trailing `L`) line.
pub(super) fn int_line(line: &[u8], int_op: bool) -> Result<PyValue, String> {
    let text = std::str::from_utf8(line).map_err(|_| "an int that is not text".to_string())?;
    let text = text.trim();
    if int_op && text == "01" {
        return Ok(PyValue::Bool(true));
    }
    if int_op && text == "00" {
        return Ok(PyValue::Bool(false));
    }
    let text = text.strip_suffix('L').unwrap_or(text);
    if text.len() > 10_000 {
        return Err("an int of more than 10000 digits".into());
    }
    let digits = bigint::normalise(text).ok_or_else(|| format!("{text:.40?} is not an int"))?;
    Ok(match digits.parse::<i64>() {
        Ok(i) => PyValue::Int(i),
        Err(_) => PyValue::BigInt(digits),
    })
}

/// A `FLOAT` line (`repr` of a float, `inf`, `nan`).
pub(super) fn float_line(line: &[u8]) -> Result<f64, String> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| format!("{:.40?} is not a float", String::from_utf8_lossy(line)))
}

/// A `STRING` line: a Python 2 `repr` of a byte string, in quotes, with escapes.
pub(super) fn string_line(line: &[u8]) -> Result<Vec<u8>, String> {
    let inner = match line {
        [q @ (b'\'' | b'"'), inner @ .., last] if last == q => inner,
        _ => return Err("a STRING that is not quoted".into()),
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&e) = inner.get(i) else {
            return Err("a STRING ending in a backslash".into());
        };
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\\' | b'\'' | b'"' => out.push(e),
            b'\n' => {}
            b'x' => {
                let hex = inner
                    .get(i..i + 2)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or("a bad \\x escape in a STRING")?;
                out.push(hex);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match inner.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.extend([b'\\', other]),
        }
    }
    Ok(out)
}

/// An `UNICODE` line: Latin-1 with `\uXXXX` and `\UXXXXXXXX` escapes.
pub(super) fn raw_unicode_escape(line: &[u8]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        let width = match (b, line.get(i + 1)) {
            (b'\\', Some(b'u')) => 4,
            (b'\\', Some(b'U')) => 8,
            _ => 0,
        };
        let code = line
            .get(i + 2..i + 2 + width)
            .filter(|_| width > 0)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        match code {
            Some(c) => {
                out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                i += 2 + width;
            }
            None => {
                out.push(char::from(b));
                i += 1;
            }
        }
    }
    out
}
