//! One-line descriptions of stored values for error messages: the serde tag, the size, a
//! short hash and the first bytes, never the bytes themselves (a 21 MB ciphertext is
//! `msgpack+aes value of 21.3 MB (xxh3 3fa1…, starts 8c 07 01 …)`, not 63 MB of digits).

use crate::decoded::Decoded;
use std::fmt::{self, Write as _};

/// Strings taken from stored data (serde tags, type names) are cut to this many characters.
pub const MAX_NAME_CHARS: usize = 40;

/// `s` quoted and escaped on one line, cut to `max` characters (the cut says how long the
/// whole was).
pub fn quoted(s: &str, max: usize) -> String {
    let total = s.chars().count();
    let head: String = s.chars().take(max).collect();
    if total <= max {
        format!("{head:?}")
    } else {
        format!("{head:?}… ({} bytes)", s.len())
    }
}

/// `<what> value of <size> (xxh3 <hash>, starts <first bytes in hex>…)`.
fn payload(f: &mut fmt::Formatter<'_>, what: &str, bytes: &[u8]) -> fmt::Result {
    write!(
        f,
        "{what} value of {}",
        crate::units::bytes(bytes.len() as u64)
    )?;
    if bytes.is_empty() {
        return Ok(());
    }
    let mut head = String::new();
    for b in bytes.iter().take(8) {
        let _ = write!(head, " {b:02x}");
    }
    let more = if bytes.len() > 8 { " …" } else { "" };
    write!(
        f,
        " (xxh3 {:016x}, starts{head}{more})",
        xxhash_rust::xxh3::xxh3_64(bytes)
    )
}

impl fmt::Display for Decoded {
    /// One line naming the kind of value and its size, never its bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decoded::Msgpack(v) => write!(
                f,
                "msgpack value ({})",
                quoted(&v.type_name(), MAX_NAME_CHARS)
            ),
            Decoded::Null => f.write_str("null value (None)"),
            Decoded::TooLarge { bytes, kind, .. } => write!(
                f,
                "{} value left undecoded (too large: {})",
                quoted(kind, MAX_NAME_CHARS),
                crate::units::bytes(*bytes)
            ),
            Decoded::Empty => f.write_str("empty value (no value)"),
            Decoded::Bytes(b) => payload(f, "bytes", b),
            Decoded::ByteArray(b) => payload(f, "bytearray", b),
            Decoded::Pickle(b) => payload(f, "pickle", b),
            Decoded::Encrypted { tag, data } => payload(f, &quoted(tag, MAX_NAME_CHARS), data),
            Decoded::Error { tag, message, raw } => {
                payload(
                    f,
                    &format!("undecodable {}", quoted(tag, MAX_NAME_CHARS)),
                    raw,
                )?;
                write!(f, ": {message}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode_typed;

    #[test]
    fn descriptions_are_short_whatever_the_size() {
        let blob: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 + i / 3) as u8).collect();
        for tag in [
            "msgpack+aes",
            "pickle",
            "bytes",
            "json",
            "msgpack",
            "x\n".repeat(5000).as_str(),
        ] {
            let text = decode_typed(tag, Some(&blob)).to_string();
            assert!(
                text.len() < 300,
                "{tag:.20}: {} chars: {text:.400}",
                text.len()
            );
            assert!(!text.contains('\n'), "{text}");
        }
        let d = decode_typed("msgpack+aes", Some(&blob));
        let text = d.to_string();
        assert!(
            text.starts_with("\"msgpack+aes\" value of 1.0 MB (xxh3 "),
            "{text}"
        );
        assert!(
            text.ends_with(", starts 00 07 0e 16 1d 24 2c 33 …)"),
            "{text}"
        );
        assert_eq!(
            decode_typed("bytes", Some(b"")).to_string(),
            "bytes value of 0 B"
        );
        assert_eq!(quoted("ab\"c", 2), "\"ab\"… (4 bytes)");
    }
}
