//! numpy dtype strings (`dtype.str`, as LangGraph stores them: `<f8`, `|S16`, `<U8`, `<c16`,
//! `<M8[ns]`, `|V12`, …) parsed into what the element decoder needs. Anything whose memory
//! layout cannot be known from the string alone is `None`.

/// A dtype whose elements Flashback can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dtype {
    /// Byte order of multi-byte elements (`<`, `|`, `=` little; `>` big).
    pub(super) little: bool,
    /// What an element is.
    pub(super) kind: Kind,
    /// Bytes per element (numpy's `itemsize`), never 0.
    pub(super) size: usize,
}

/// The element kinds with a known layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `b1`: one byte, non-zero is `True`.
    Bool,
    /// `i1`/`i2`/`i4`/`i8`: two's complement.
    Int,
    /// `u1`/`u2`/`u4`/`u8`.
    UInt,
    /// `f2`/`f4`/`f8`: IEEE 754 half, single, double.
    Float,
    /// `c8`/`c16`: real part then imaginary part, each a float of half the size.
    Complex,
    /// `S<n>`: `n` bytes, trailing NULs not part of the value.
    Bytes,
    /// `U<n>`: `n` UCS-4 code points, trailing NULs not part of the value.
    Unicode,
    /// `V<n>`: `n` opaque bytes (what a structured dtype's `str` is).
    Void,
    /// `M8[unit]`: int64 count of units since 1970-01-01T00:00, `i64::MIN` is NaT.
    DateTime(Unit),
    /// `m8[unit]`: int64 count of units, `i64::MIN` is NaT.
    TimeDelta(Unit),
}

/// A datetime64/timedelta64 unit: `mult` × `base` (`[10s]` is 10 seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unit {
    pub(super) base: Base,
    pub(super) mult: u32,
}

/// The base units of datetime64/timedelta64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Base {
    Year,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    /// A fraction of a second with this many decimal digits (ms 3, us 6, ns 9, ps 12, fs 15,
    /// as 18).
    Frac(u32),
}

/// Parse a dtype string. `None` for anything whose layout is unknown or platform-dependent:
/// object arrays (`|O`, pointers), `longdouble` and `clongdouble` (`<f16`, `<c32`: x87
/// extended precision with garbage padding on x86-64, IEEE binary128 on aarch64 Linux),
/// zero-size items, generic datetime units, and anything numpy would not accept.
pub(super) fn parse(s: &str) -> Option<Dtype> {
    let b = s.as_bytes();
    let (&order, rest) = b.split_first()?;
    let little = match order {
        b'<' | b'|' | b'=' => true,
        b'>' => false,
        _ => return None,
    };
    let (&kind, rest) = rest.split_first()?;
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let (number, suffix) = rest.split_at(digits);
    let n: usize = std::str::from_utf8(number).ok()?.parse().ok()?;
    let unit = match suffix {
        [] => None,
        [b'[', inner @ .., b']'] if matches!(kind, b'M' | b'm') => Some(unit(inner)?),
        _ => return None,
    };
    let (kind, size) = match (kind, n, unit) {
        (b'b', 1, None) => (Kind::Bool, 1),
        (b'i', 1 | 2 | 4 | 8, None) => (Kind::Int, n),
        (b'u', 1 | 2 | 4 | 8, None) => (Kind::UInt, n),
        (b'f', 2 | 4 | 8, None) => (Kind::Float, n),
        (b'c', 8 | 16, None) => (Kind::Complex, n),
        (b'S', 1.., None) => (Kind::Bytes, n),
        (b'V', 1.., None) => (Kind::Void, n),
        (b'U', 1.., None) => (Kind::Unicode, n.checked_mul(4)?),
        (b'M', 8, Some(u)) => (Kind::DateTime(u), 8),
        (b'm', 8, Some(u)) => (Kind::TimeDelta(u), 8),
        _ => return None,
    };
    Some(Dtype { little, kind, size })
}

fn unit(s: &[u8]) -> Option<Unit> {
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let (number, name) = s.split_at(digits);
    let mult = if number.is_empty() {
        1
    } else if digits > 9 {
        return None;
    } else {
        std::str::from_utf8(number).ok()?.parse().ok()?
    };
    if mult == 0 {
        return None;
    }
    let base = match name {
        b"Y" => Base::Year,
        b"M" => Base::Month,
        b"W" => Base::Week,
        b"D" => Base::Day,
        b"h" => Base::Hour,
        b"m" => Base::Minute,
        b"s" => Base::Second,
        b"ms" => Base::Frac(3),
        b"us" => Base::Frac(6),
        b"ns" => Base::Frac(9),
        b"ps" => Base::Frac(12),
        b"fs" => Base::Frac(15),
        b"as" => Base::Frac(18),
        _ => return None,
    };
    Some(Unit { base, mult })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_strings() {
        let d = |s| parse(s).map(|d| (d.little, d.kind, d.size));
        assert_eq!(d("<f8"), Some((true, Kind::Float, 8)));
        assert_eq!(d(">c16"), Some((false, Kind::Complex, 16)));
        assert_eq!(d("|S16"), Some((true, Kind::Bytes, 16)));
        assert_eq!(d("<U8"), Some((true, Kind::Unicode, 32)));
        assert_eq!(d("|V12"), Some((true, Kind::Void, 12)));
        let ns = Unit {
            base: Base::Frac(9),
            mult: 1,
        };
        assert_eq!(d("<M8[ns]"), Some((true, Kind::DateTime(ns), 8)));
        let ten_s = Unit {
            base: Base::Second,
            mult: 10,
        };
        assert_eq!(d("<m8[10s]"), Some((true, Kind::TimeDelta(ten_s), 8)));
        for unknown in [
            "",
            "<",
            "<f",
            "|O",
            "<f16",
            "<c32",
            "<f12",
            "|S0",
            "<U0",
            "<M8",
            "<M8[]",
            "<M8[0s]",
            "<M8[xs]",
            "<i3",
            "<f8[s]",
            "<f8x",
            "!f8",
            "<U99999999999",
            "<M8[ns",
            "|b2",
        ] {
            assert_eq!(d(unknown), None, "{unknown:?}");
        }
    }
}
