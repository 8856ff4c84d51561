//! Integers beyond 64 bits: pickle's little-endian two's complement (`LONG1`, `LONG4`) ⇄
//! decimal digits ([`super::PyValue::BigInt`]).

use super::PyValue;

/// `LONG1`/`LONG4` longer than this many bytes are refused: converting them to decimal is
/// quadratic (CPython itself refuses to print ints of more than 4300 digits).
pub(super) const MAX_LONG_BYTES: usize = 2048;

/// The value of little-endian two's complement bytes: an [`PyValue::Int`] when it fits, else a
/// [`PyValue::BigInt`].
pub(super) fn from_le(bytes: &[u8]) -> PyValue {
    match le_value(bytes) {
        Ok(i) => PyValue::Int(i),
        Err(digits) => PyValue::BigInt(digits),
    }
}

/// `Ok(i64)` when it fits, else `Err(decimal digits)`.
fn le_value(bytes: &[u8]) -> Result<i64, String> {
    let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
    if bytes.len() <= 8 {
        let fill = if negative { 0xff } else { 0 };
        let mut a = [fill; 8];
        a[..bytes.len()].copy_from_slice(bytes);
        return Ok(i64::from_le_bytes(a));
    }
    // Magnitude as little-endian u32 limbs.
    let mut mag: Vec<u8> = bytes.to_vec();
    if negative {
        negate(&mut mag);
    }
    let mut limbs: Vec<u32> = mag
        .chunks(4)
        .map(|c| {
            let mut a = [0u8; 4];
            a[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(a)
        })
        .collect();
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    if limbs.len() <= 2 {
        let m = limbs
            .iter()
            .rev()
            .fold(0u64, |a, &l| (a << 32) | u64::from(l));
        if !negative && m <= i64::MAX as u64 {
            return Ok(m as i64);
        }
        if negative && m <= 1u64 << 63 {
            return Ok((m as i64).wrapping_neg());
        }
    }
    let mut chunks: Vec<u32> = Vec::new(); // base 1e9, least significant first
    while !limbs.is_empty() {
        let mut rem = 0u64;
        for l in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem as u32);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut s = String::from(if negative { "-" } else { "" });
    let mut it = chunks.iter().rev();
    if let Some(first) = it.next() {
        s.push_str(&first.to_string());
    }
    for c in it {
        s.push_str(&format!("{c:09}"));
    }
    Err(s)
}

/// Decimal digits (optional `-`/`+`) normalised: no leading zeros, `-0` is `0`. `None` when
/// the text is not an integer.
pub(super) fn normalise(text: &str) -> Option<String> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    Some(match (trimmed.is_empty(), negative) {
        (true, _) => "0".into(),
        (false, true) => format!("-{trimmed}"),
        (false, false) => trimmed.into(),
    })
}

/// The shortest little-endian two's complement bytes of a decimal integer, as CPython's
/// `encode_long` writes them (`None` for text that is not an integer).
pub(super) fn to_le(decimal: &str) -> Option<Vec<u8>> {
    let text = normalise(decimal)?;
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    if digits == "0" {
        return Some(Vec::new());
    }
    let mut limbs: Vec<u32> = Vec::new(); // magnitude, little-endian
    for d in digits.bytes() {
        let mut carry = u64::from(d - b'0');
        for l in &mut limbs {
            let v = u64::from(*l) * 10 + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let mut mag: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    while mag.last() == Some(&0) {
        mag.pop();
    }
    // bit_length of the magnitude → nbytes = bit_length / 8 + 1
    let top = *mag.last()?;
    let bit_length = (mag.len() - 1) * 8 + (8 - top.leading_zeros() as usize);
    let nbytes = bit_length / 8 + 1;
    mag.resize(nbytes, 0);
    if negative {
        negate(&mut mag);
        let n = mag.len();
        if n > 1 && mag[n - 1] == 0xff && mag[n - 2] & 0x80 != 0 {
            mag.pop();
        }
    }
    Some(mag)
}

/// Two's complement negation of little-endian bytes, in place: invert and add one.
fn negate(bytes: &mut [u8]) {
    let mut carry = true;
    for b in bytes {
        *b = !*b;
        if carry {
            let (v, c) = b.overflowing_add(1);
            *b = v;
            carry = c;
        }
    }
}

/// A decimal integer as a `u128`, if it is one.
pub(super) fn to_u128(decimal: &str) -> Option<u128> {
    decimal.parse().ok()
}
