//! Recognising a file stored as base64 text inside a value (an image a vision model was sent, a
//! PDF attached to a message): a `data:<type>;base64,` URL, or a string that is all base64 and
//! whose decoded bytes start like a known file format.

use base64::Engine;

/// Strings shorter than this are not looked at as files.
pub(crate) const MIN_ENCODED: usize = 1_000;

/// What a large string holds, if it is an encoded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Embedded {
    /// `image/png`, …; `application/octet-stream` for base64 binary of no known format.
    pub(crate) media_type: String,
    /// Whether it is a `data:` URL.
    pub(crate) data_url: bool,
    /// The size of the file it encodes.
    pub(crate) decoded_bytes: u64,
}

/// The file a string encodes, or `None` for ordinary text.
pub(crate) fn sniff(s: &[u8]) -> Option<Embedded> {
    if s.len() < MIN_ENCODED {
        return None;
    }
    if let Some(rest) = s.strip_prefix(b"data:") {
        let comma = rest.iter().take(256).position(|&b| b == b',')?;
        let head = std::str::from_utf8(&rest[..comma]).ok()?;
        let declared = head.strip_suffix(";base64")?;
        let body = &rest[comma + 1..];
        if !looks_base64(body) {
            return None;
        }
        let media_type = match declared.split(';').next().unwrap_or("").trim() {
            "" => magic(body).unwrap_or("application/octet-stream"),
            t => t,
        };
        return Some(Embedded {
            media_type: media_type.to_ascii_lowercase(),
            data_url: true,
            decoded_bytes: decoded_len(body),
        });
    }
    if !looks_base64(s) {
        return None;
    }
    let media_type = magic(s).or_else(|| binary(s).then_some("application/octet-stream"))?;
    Some(Embedded {
        media_type: media_type.to_owned(),
        data_url: false,
        decoded_bytes: decoded_len(s),
    })
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// All base64 (standard or URL-safe) with at most two `=` at the end, and line breaks only as
/// MIME wraps them; at least one character that is not a letter (base64 of real bytes has digits
/// or `+`/`/` within its first kilobyte; a long word does not).
fn looks_base64(s: &[u8]) -> bool {
    let s = s.trim_ascii_end();
    let body = s.strip_suffix(b"==").or(s.strip_suffix(b"=")).unwrap_or(s);
    let mut other = false;
    for &b in body {
        if b == b'\n' || b == b'\r' {
            continue;
        }
        if !is_b64(b) {
            return false;
        }
        other |= !b.is_ascii_alphabetic();
    }
    other
}

/// The decoded size of base64 text (line breaks and padding not counted).
fn decoded_len(s: &[u8]) -> u64 {
    let chars = s
        .iter()
        .filter(|&&b| b != b'\n' && b != b'\r' && b != b'=')
        .count() as u64;
    chars * 3 / 4
}

/// The first bytes the text encodes.
fn head(s: &[u8]) -> Vec<u8> {
    let text: Vec<u8> = s
        .iter()
        .copied()
        .filter(|&b| b != b'\n' && b != b'\r')
        .take(64)
        .map(|b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(&text[..text.len() / 4 * 4])
        .unwrap_or_default()
}

/// A known file format by its first bytes.
fn magic(s: &[u8]) -> Option<&'static str> {
    let h = head(s);
    let starts = |m: &[u8]| h.starts_with(m);
    Some(if starts(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if starts(b"\xff\xd8\xff") {
        "image/jpeg"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "image/gif"
    } else if h.len() >= 12 && starts(b"RIFF") && &h[8..12] == b"WEBP" {
        "image/webp"
    } else if h.len() >= 12 && starts(b"RIFF") && &h[8..12] == b"WAVE" {
        "audio/wav"
    } else if starts(b"%PDF-") {
        "application/pdf"
    } else if starts(b"PK\x03\x04") {
        "application/zip"
    } else if starts(b"ID3") || starts(b"\xff\xfb") {
        "audio/mpeg"
    } else if starts(b"OggS") {
        "audio/ogg"
    } else if h.len() >= 8 && &h[4..8] == b"ftyp" {
        "video/mp4"
    } else if starts(b"\x1f\x8b") {
        "application/gzip"
    } else {
        return None;
    })
}

/// Whether the first bytes the text encodes are binary (not text that happens to be base64).
fn binary(s: &[u8]) -> bool {
    let h = head(s);
    h.len() >= 24
        && h.iter()
            .filter(|&&b| b < 0x09 || (0x0e..0x20).contains(&b) || b == 0x7f)
            .count()
            >= 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;

    fn b64(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }

    fn file(head: &[u8], n: usize) -> Vec<u8> {
        let mut v = head.to_vec();
        v.extend((0..n).map(|i| (i * 7 % 251) as u8));
        v
    }

    #[test]
    fn data_urls_and_bare_base64_files() {
        let png = file(b"\x89PNG\r\n\x1a\n", 3000);
        let url = format!("data:image/png;base64,{}", b64(&png));
        let e = sniff(url.as_bytes()).unwrap();
        assert_eq!(
            (e.media_type.as_str(), e.data_url, e.decoded_bytes),
            ("image/png", true, png.len() as u64)
        );
        let pdf = file(b"%PDF-1.4\n", 2000);
        let e = sniff(b64(&pdf).as_bytes()).unwrap();
        assert_eq!(
            (e.media_type.as_str(), e.data_url),
            ("application/pdf", false)
        );
        assert_eq!(e.decoded_bytes, pdf.len() as u64);
        let noise = file(b"\x00\x01\x02\x03", 2000);
        let e = sniff(b64(&noise).as_bytes()).unwrap();
        assert_eq!(e.media_type, "application/octet-stream");
        // MIME line breaks and URL-safe base64.
        let wrapped: String = b64(&png)
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap().to_owned() + "\n")
            .collect();
        assert_eq!(sniff(wrapped.as_bytes()).unwrap().media_type, "image/png");
        let jpeg =
            base64::engine::general_purpose::URL_SAFE.encode(file(b"\xff\xd8\xff\xe0", 2000));
        assert_eq!(sniff(jpeg.as_bytes()).unwrap().media_type, "image/jpeg");
    }

    #[test]
    fn text_is_not_a_file() {
        let prose = "The quick brown fox jumps over the lazy dog. ".repeat(40);
        assert_eq!(sniff(prose.as_bytes()), None);
        let word = "a".repeat(4000);
        assert_eq!(sniff(word.as_bytes()), None);
        // Base64 of text: not a file.
        assert_eq!(sniff(b64(prose.as_bytes()).as_bytes()), None);
        let short = format!("data:image/png;base64,{}", b64(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(sniff(short.as_bytes()), None);
        assert_eq!(sniff(b"data:text/plain,hello".repeat(100).as_slice()), None);
    }
}
