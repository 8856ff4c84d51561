//! One numpy element (`itemsize` bytes) as a JSON value, the way the JSON view shows it
//! (`docs/json-view.md`): numbers, `{"real", "imag"}` for complex, strings for `U` and
//! datetime64, bytes objects for `S` and `V`.

use super::dtype::{Base, Dtype, Kind, Unit};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value as Json};

/// numpy's NaT (not a time) in datetime64 and timedelta64.
const NAT: i64 = i64::MIN;

/// Decode one element; `chunk` is exactly `dtype.size` bytes. `None` when the bytes are not
/// a value of the dtype (a code point outside Unicode, a datetime out of range).
pub(super) fn element(dtype: &Dtype, chunk: &[u8]) -> Option<Json> {
    let little = dtype.little;
    Some(match dtype.kind {
        Kind::Bool => Json::Bool(chunk.iter().any(|&b| b != 0)),
        Kind::UInt => Json::Number(uint(chunk, little)?.into()),
        Kind::Int => Json::Number(int(chunk, little)?.into()),
        Kind::Float => float(real(chunk, little)?),
        Kind::Complex => {
            let (re, im) = chunk.split_at(chunk.len() / 2);
            json!({"real": float(real(re, little)?), "imag": float(real(im, little)?)})
        }
        Kind::Bytes => {
            let end = chunk.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            bytes(&chunk[..end])
        }
        Kind::Void => bytes(chunk),
        Kind::Unicode => {
            let mut s = String::new();
            let mut nuls = 0usize;
            for unit in chunk.chunks_exact(4) {
                let code = uint(unit, little)? as u32;
                if code == 0 {
                    nuls += 1;
                    continue;
                }
                s.extend(std::iter::repeat_n('\0', nuls));
                nuls = 0;
                s.push(char::from_u32(code)?);
            }
            Json::String(s)
        }
        Kind::DateTime(unit) => match int(chunk, little)? {
            NAT => Json::String("NaT".into()),
            v => Json::String(datetime(v, unit)?),
        },
        Kind::TimeDelta(_) => match int(chunk, little)? {
            NAT => Json::String("NaT".into()),
            v => Json::Number(v.into()),
        },
    })
}

/// A float as the view shows every float (NaN and infinities as `builtins.float` objects).
fn float(f: f64) -> Json {
    crate::view::float::float_view(f)
}

fn bytes(b: &[u8]) -> Json {
    json!({"$type": "builtins.bytes", "base64": B64.encode(b)})
}

/// An unsigned integer of 1 to 8 bytes.
fn uint(chunk: &[u8], little: bool) -> Option<u64> {
    if chunk.is_empty() || chunk.len() > 8 {
        return None;
    }
    let mut buf = [0u8; 8];
    if little {
        buf[..chunk.len()].copy_from_slice(chunk);
    } else {
        for (dst, src) in buf.iter_mut().zip(chunk.iter().rev()) {
            *dst = *src;
        }
    }
    Some(u64::from_le_bytes(buf))
}

/// A two's complement integer of 1 to 8 bytes, sign-extended.
fn int(chunk: &[u8], little: bool) -> Option<i64> {
    let shift = 64 - 8 * chunk.len() as u32;
    Some(((uint(chunk, little)? << shift) as i64) >> shift)
}

/// An IEEE 754 float of 2, 4 or 8 bytes, exactly as an f64.
fn real(chunk: &[u8], little: bool) -> Option<f64> {
    let raw = uint(chunk, little)?;
    Some(match chunk.len() {
        2 => half(raw as u16),
        4 => f32::from_bits(raw as u32) as f64,
        8 => f64::from_bits(raw),
        _ => return None,
    })
}

/// IEEE 754 half precision (numpy `float16`) as the f64 of the same value.
fn half(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let mant = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        0x1f if mant == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A datetime64 value as ISO 8601 at its unit's precision, as `numpy.datetime_as_string`
/// writes it (`2024-05`, `2024-01-02T03`, `1969-12-31T23:59:59.500`; years with at least
/// four digits, `-001` for 2 BC as numpy writes it). `None` past ±2^127 of the unit.
fn datetime(v: i64, unit: Unit) -> Option<String> {
    let n = i128::from(v).checked_mul(i128::from(unit.mult))?;
    let (days, second_of_day, frac) = match unit.base {
        Base::Year => return Some(format!("{:04}", n.checked_add(1970)?)),
        Base::Month => {
            let year = n.div_euclid(12).checked_add(1970)?;
            return Some(format!("{year:04}-{:02}", n.rem_euclid(12) + 1));
        }
        Base::Week => (n.checked_mul(7)?, None, None),
        Base::Day => (n, None, None),
        Base::Hour => (n.div_euclid(24), Some((n.rem_euclid(24) * 3600, 1)), None),
        Base::Minute => (n.div_euclid(1440), Some((n.rem_euclid(1440) * 60, 2)), None),
        Base::Second => (n.div_euclid(86_400), Some((n.rem_euclid(86_400), 3)), None),
        Base::Frac(digits) => {
            let per_second = 10i128.pow(digits);
            let seconds = n.div_euclid(per_second);
            (
                seconds.div_euclid(86_400),
                Some((seconds.rem_euclid(86_400), 3)),
                Some((n.rem_euclid(per_second), digits as usize)),
            )
        }
    };
    let (year, month, day) = civil(days)?;
    let mut out = format!("{year:04}-{month:02}-{day:02}");
    if let Some((sod, parts)) = second_of_day {
        let (h, m, s) = (sod / 3600, sod / 60 % 60, sod % 60);
        out.push_str(&match parts {
            1 => format!("T{h:02}"),
            2 => format!("T{h:02}:{m:02}"),
            _ => format!("T{h:02}:{m:02}:{s:02}"),
        });
    }
    if let Some((f, width)) = frac {
        out.push_str(&format!(".{f:0width$}"));
    }
    Some(out)
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`), checked against overflow.
fn civil(days: i128) -> Option<(i128, u32, u32)> {
    let z = days.checked_add(719_468)?;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = era
        .checked_mul(400)?
        .checked_add(yoe)?
        .checked_add(i128::from(month <= 2))?;
    Some((year, month, day))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(base: Base, mult: u32) -> Unit {
        Unit { base, mult }
    }

    #[test]
    fn datetimes_as_numpy_writes_them() {
        // Expected strings from numpy 2.4's datetime_as_string.
        let cases = [
            (2_932_897, unit(Base::Day, 1), "10000-01-01"),
            (-719_834, unit(Base::Day, 1), "-001-03-01"),
            (-500, unit(Base::Frac(3), 1), "1969-12-31T23:59:59.500"),
            (473_379, unit(Base::Hour, 1), "2024-01-02T03"),
            (652, unit(Base::Month, 1), "2024-05"),
            (54, unit(Base::Year, 1), "2024"),
            (3, unit(Base::Second, 10), "1970-01-01T00:00:30"),
            (3, unit(Base::Week, 1), "1970-01-22"),
            (
                3,
                unit(Base::Frac(18), 1),
                "1970-01-01T00:00:00.000000000000000003",
            ),
            (-3, unit(Base::Minute, 1), "1969-12-31T23:57"),
            (3, unit(Base::Month, 2), "1970-07"),
        ];
        for (v, u, want) in cases {
            assert_eq!(datetime(v, u).as_deref(), Some(want), "{v} {u:?}");
        }
        assert!(datetime(i64::MAX, unit(Base::Week, u32::MAX)).is_some());
        assert!(datetime(i64::MIN + 1, unit(Base::Frac(18), u32::MAX)).is_some());
    }

    #[test]
    fn half_floats() {
        for (bits, want) in [
            (0x3e00u16, 1.5),
            (0x8000, -0.0),
            (0x7bff, 65504.0),
            (0x0001, 5.960464477539063e-8),
            (0xfc00, f64::NEG_INFINITY),
        ] {
            assert_eq!(half(bits), want, "{bits:#x}");
        }
        assert!(half(0x7e00).is_nan());
    }
}
