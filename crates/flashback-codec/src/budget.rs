//! The decode budget: how many bytes one stored value, and one read request, may decode. A
//! value over it is not decoded at all: it becomes [`Decoded::TooLarge`] (its size and kind
//! only), shown as "too large: 21.3 MB" with a way to open it on purpose. So a database holding
//! a 200 MB value lists, steps and diffs in bounded memory.
//!
//! For a checkpoint document that holds its channel values inline (SQLite) and is itself over
//! the budget, [`slim_document`] streams it once — from any reader, such as SQLite's
//! incremental blob I/O, so the document is never in memory whole — and returns a copy with
//! each oversized channel value replaced by `nil` and listed in [`Slim::too_large`].

use crate::decoded::Decoded;
pub use crate::decoded::TooLargeReason;
use std::io::{self, BufRead, Read, Seek, SeekFrom};

/// Limits on decoding. `0` means "no limit" for either figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeBudget {
    /// Largest stored value (its encoded bytes) that is decoded.
    pub max_value_bytes: u64,
    /// Most bytes of values decoded by one read request; past it, values are left undecoded.
    pub max_request_bytes: u64,
}

impl DecodeBudget {
    /// No limits: everything is decoded (what writes use, and "open it anyway").
    pub const UNLIMITED: DecodeBudget = DecodeBudget {
        max_value_bytes: 0,
        max_request_bytes: 0,
    };

    /// The default for reads: 16 MB per value, 256 MB per request.
    pub const DEFAULT: DecodeBudget = DecodeBudget {
        max_value_bytes: 16 << 20,
        max_request_bytes: 256 << 20,
    };

    /// Whether a value of `bytes` is over the per-value limit.
    pub fn value_too_large(&self, bytes: u64) -> bool {
        self.max_value_bytes != 0 && bytes > self.max_value_bytes
    }

    /// Whether `bytes` more would go past the per-request limit after `spent`.
    pub fn request_exhausted(&self, spent: u64, bytes: u64) -> bool {
        self.max_request_bytes != 0 && spent.saturating_add(bytes) > self.max_request_bytes
    }
}

impl Default for DecodeBudget {
    fn default() -> Self {
        DecodeBudget::DEFAULT
    }
}

/// A placeholder for a value that was not decoded.
pub fn too_large(tag: &str, bytes: u64, kind: String, why: TooLargeReason) -> Decoded {
    Decoded::TooLarge {
        tag: tag.to_owned(),
        bytes,
        kind,
        reason: why,
    }
}

/// The kind of a stored value left undecoded, from its serde tag and first bytes (as many as
/// it has; 96 are plenty): for msgpack, [`kind_of`] them; otherwise the tag (`bytes`, `pickle`…).
pub fn kind_for(tag: &str, head: &[u8]) -> String {
    match tag {
        "msgpack" => kind_of(head.get(..KEEP).unwrap_or(head)),
        other => other.to_owned(),
    }
}

/// The kind of msgpack value that starts with `head` (its first bytes): `list`, `dict`, `str`,
/// `bytes`, `numpy.ndarray`, a Python class name for ext 0–5 when its name is readable, or
/// `value`.
pub fn kind_of(head: &[u8]) -> String {
    let Some(&m) = head.first() else {
        return "value".into();
    };
    match m {
        0x80..=0x8f | 0xde | 0xdf => "dict".into(),
        0x90..=0x9f | 0xdc | 0xdd => "list".into(),
        0xa0..=0xbf | 0xd9..=0xdb => "str".into(),
        0xc4..=0xc6 => "bytes".into(),
        0xc7..=0xc9 | 0xd4..=0xd8 => {
            let (code_at, payload_at) = match m {
                0xc7 => (2, 3),
                0xc8 => (3, 4),
                0xc9 => (5, 6),
                _ => (1, 2),
            };
            match head.get(code_at).map(|&c| c as i8) {
                Some(6) => "numpy.ndarray".into(),
                Some(7) => "langgraph.checkpoint.serde.types._DeltaSnapshot".into(),
                Some(0..=5) => head
                    .get(payload_at..)
                    .and_then(class_name)
                    .unwrap_or_else(|| "object".into()),
                _ => "msgpack ext".into(),
            }
        }
        _ => "value".into(),
    }
}

/// `module.Name` from the start of an ext 0–5 payload `[module, name, …]`, if it is there.
fn class_name(p: &[u8]) -> Option<String> {
    let rest = match p.first()? {
        0x90..=0x9f => &p[1..],
        0xdc => p.get(3..)?,
        0xdd => p.get(5..)?,
        _ => return None,
    };
    let (module, rest) = short_str(rest)?;
    let (name, _) = short_str(rest)?;
    Some(format!("{module}.{name}"))
}

fn short_str(b: &[u8]) -> Option<(&str, &[u8])> {
    let (len, at) = match *b.first()? {
        m @ 0xa0..=0xbf => ((m & 0x1f) as usize, 1),
        0xd9 => (*b.get(1)? as usize, 2),
        _ => return None,
    };
    let s = std::str::from_utf8(b.get(at..at + len)?).ok()?;
    Some((s, &b[at + len..]))
}

/// A checkpoint document streamed with its oversized channel values left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Slim {
    /// The document, each oversized channel value replaced by `nil`.
    pub document: Vec<u8>,
    /// The channel values left out: `(channel, stored bytes, kind)`.
    pub too_large: Vec<(String, u64, String)>,
}

/// Stream a msgpack checkpoint document (a map) from `r`, copying it except for values of its
/// `channel_values` map larger than `max_value_bytes`, which are skipped (never held in memory)
/// and replaced by `nil`. Other fields are copied whole. Memory: the slim document plus one
/// value up to the limit.
pub fn slim_document<R: BufRead + Seek>(r: R, max_value_bytes: u64) -> io::Result<Slim> {
    slim_with(r, |_| Some(max_value_bytes))
}

/// Stream a msgpack checkpoint document keeping the values of only the channels `keep`
/// accepts: the others are read past (never decoded or held) and replaced by `nil`. For reads
/// that need a few control channels and none of the state, such as a thread list's statuses.
pub fn select_channels<R: BufRead + Seek>(
    r: R,
    keep: impl Fn(&str) -> bool,
) -> io::Result<Vec<u8>> {
    slim_with(r, |channel| keep(channel).then_some(u64::MAX)).map(|s| s.document)
}

/// The stored bytes of one channel's value in a msgpack checkpoint document streamed from `r`
/// (every other value read past, never held): what a page of a list over the decode budget is
/// read from. `None`: the document has no such channel.
pub fn channel_value<R: BufRead + Seek>(mut r: R, channel: &str) -> io::Result<Option<Vec<u8>>> {
    let mut scratch = Vec::new();
    let entries = map_header(&mut r, &mut scratch)?;
    for _ in 0..entries {
        scratch.clear();
        let key = copy_key(&mut r, &mut scratch)?;
        if key.as_deref() != Some("channel_values") {
            copy_value(&mut r, None, 0)?;
            continue;
        }
        scratch.clear();
        let Ok(n) = map_header(&mut r, &mut scratch) else {
            return Err(invalid("channel_values is not a map"));
        };
        for _ in 0..n {
            scratch.clear();
            if copy_key(&mut r, &mut scratch)?.as_deref() == Some(channel) {
                // Measured first (long strings are sought over), so the copy is one allocation
                // of its size, not a doubling vector's.
                let at = r.stream_position()?;
                let size = copy_value(&mut r, None, 0)?;
                r.seek(SeekFrom::Start(at))?;
                let mut value = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
                copy_value(&mut r, Some(&mut value), u64::MAX)?;
                return Ok(Some(value));
            }
            copy_value(&mut r, None, 0)?;
        }
        return Ok(None);
    }
    Ok(None)
}

/// The walk of [`slim_document`] and [`select_channels`]: `limit(channel)` is the size up to
/// which a channel's value is kept (over it: `nil`, listed as too large), or `None` to drop it.
fn slim_with<R: BufRead + Seek>(mut r: R, limit: impl Fn(&str) -> Option<u64>) -> io::Result<Slim> {
    let mut out = Vec::new();
    let mut too_large = Vec::new();
    let entries = map_header(&mut r, &mut out)?;
    for _ in 0..entries {
        let key = copy_key(&mut r, &mut out)?;
        if key.as_deref() != Some("channel_values") {
            copy_value(&mut r, Some(&mut out), u64::MAX)?;
            continue;
        }
        let mut head = Vec::new();
        let Ok(n) = map_header(&mut r, &mut head) else {
            return Err(invalid("channel_values is not a map"));
        };
        out.extend_from_slice(&head);
        for _ in 0..n {
            let channel = copy_key(&mut r, &mut out)?.unwrap_or_else(|| "?".into());
            let Some(max) = limit(&channel) else {
                copy_value(&mut r, None, 0)?;
                out.push(0xc0);
                continue;
            };
            let mut value = Vec::new();
            let size = copy_value(&mut r, Some(&mut value), max)?;
            if size > max {
                too_large.push((channel, size, kind_of(&value)));
                out.push(0xc0);
            } else {
                out.extend_from_slice(&value);
            }
        }
    }
    Ok(Slim {
        document: out,
        too_large,
    })
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

/// Appends exactly `n` bytes read from `r` to `out`, growing `out` as they arrive (a length
/// claimed by the input is never allocated up front).
fn read_n<R: Read>(r: &mut R, n: usize, out: &mut Vec<u8>) -> io::Result<()> {
    let start = out.len();
    r.take(n as u64).read_to_end(out)?;
    if out.len() - start != n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | u64::from(x))
}

/// Reads a map header into `out`; its entry count.
fn map_header<R: Read>(r: &mut R, out: &mut Vec<u8>) -> io::Result<u64> {
    let at = out.len();
    read_n(r, 1, out)?;
    Ok(match out[at] {
        m @ 0x80..=0x8f => u64::from(m & 0x0f),
        0xde => {
            read_n(r, 2, out)?;
            be(&out[at + 1..])
        }
        0xdf => {
            read_n(r, 4, out)?;
            be(&out[at + 1..])
        }
        _ => return Err(invalid("not a map")),
    })
}

/// Copies one key into `out`; its text when it is a string.
fn copy_key<R: BufRead + Seek>(r: &mut R, out: &mut Vec<u8>) -> io::Result<Option<String>> {
    let at = out.len();
    copy_value(r, Some(out), 1 << 20)?;
    let k = &out[at..];
    let body = match k.first() {
        Some(0xa0..=0xbf) => &k[1..],
        Some(0xd9) => k.get(2..).unwrap_or_default(),
        Some(0xda) => k.get(3..).unwrap_or_default(),
        Some(0xdb) => k.get(5..).unwrap_or_default(),
        _ => return Ok(None),
    };
    Ok(std::str::from_utf8(body).ok().map(str::to_owned))
}

/// Reads one msgpack value (iteratively, any depth), copying its bytes into `out` while they
/// fit in `cap`; returns its full size. Past `cap` the copy stops (what was copied stays, so
/// its first bytes tell its kind) and the rest is read and dropped.
fn copy_value<R: BufRead + Seek>(
    r: &mut R,
    mut out: Option<&mut Vec<u8>>,
    cap: u64,
) -> io::Result<u64> {
    let start = out.as_ref().map_or(0, |o| o.len());
    let mut copying = out.is_some();
    let mut size = 0u64;
    let mut pending: u64 = 1;
    let mut hdr = Vec::with_capacity(9);
    while pending > 0 {
        pending -= 1;
        hdr.clear();
        read_n(r, 1, &mut hdr)?;
        let m = hdr[0];
        // Extra header bytes, the payload length when the marker fixes it, and child count.
        let (extra, fixed, children): (usize, Option<u64>, u64) = match m {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, Some(0), 0),
            0x80..=0x8f => (0, Some(0), 2 * u64::from(m & 0x0f)),
            0x90..=0x9f => (0, Some(0), u64::from(m & 0x0f)),
            0xa0..=0xbf => (0, Some(u64::from(m & 0x1f)), 0),
            0xc4 | 0xd9 => (1, None, 0),
            0xc5 | 0xda => (2, None, 0),
            0xc6 | 0xdb => (4, None, 0),
            0xc7 => (2, None, 0),
            0xc8 => (3, None, 0),
            0xc9 => (5, None, 0),
            0xca => (0, Some(4), 0),
            0xcb => (0, Some(8), 0),
            0xcc | 0xd0 => (0, Some(1), 0),
            0xcd | 0xd1 => (0, Some(2), 0),
            0xce | 0xd2 => (0, Some(4), 0),
            0xcf | 0xd3 => (0, Some(8), 0),
            0xd4 => (0, Some(2), 0),
            0xd5 => (0, Some(3), 0),
            0xd6 => (0, Some(5), 0),
            0xd7 => (0, Some(9), 0),
            0xd8 => (0, Some(17), 0),
            0xdc | 0xde => (2, Some(0), 0),
            0xdd | 0xdf => (4, Some(0), 0),
            _ => return Err(invalid("reserved msgpack byte 0xc1")),
        };
        read_n(r, extra, &mut hdr)?;
        let (payload, children) = match m {
            0xdc | 0xdd => (0, be(&hdr[1..])),
            0xde | 0xdf => (0, 2 * be(&hdr[1..])),
            // The header holds the length, then the ext code byte (already read).
            0xc7..=0xc9 => (be(&hdr[1..hdr.len() - 1]), 0),
            _ => (fixed.unwrap_or_else(|| be(&hdr[1..])), children),
        };
        pending = pending
            .checked_add(children)
            .ok_or_else(|| invalid("impossible element count"))?;
        size += hdr.len() as u64 + payload;
        match out.as_deref_mut() {
            Some(o) if copying && size <= cap => {
                o.extend_from_slice(&hdr);
                read_n(r, payload as usize, o)?;
            }
            Some(o) if copying => {
                // Over the cap: keep the first bytes (they tell the kind), drop the rest.
                copying = false;
                o.truncate(start + KEEP.min(o.len() - start));
                let room = KEEP - (o.len() - start);
                if room >= hdr.len() {
                    o.extend_from_slice(&hdr);
                    let keep = (room - hdr.len()).min(payload as usize);
                    read_n(r, keep, o)?;
                    skip(r, payload - keep as u64)?;
                } else {
                    skip(r, payload)?;
                }
            }
            _ => skip(r, payload)?,
        }
    }
    Ok(size)
}

/// Bytes kept of a value over the cap: enough for its kind and class name.
const KEEP: usize = 96;

/// Skips `n` bytes: what is buffered is consumed, a longer run is sought over (so a big string,
/// bytes or numpy buffer is never read, nor its pages touched).
fn skip<R: BufRead + Seek>(r: &mut R, mut n: u64) -> io::Result<()> {
    if n > 1 << 16 {
        let buffered = r.fill_buf()?.len() as u64;
        let k = buffered.min(n);
        r.consume(k as usize);
        n -= k;
        let rest = i64::try_from(n).map_err(|_| invalid("impossible length"))?;
        let at = r.stream_position()?;
        let end = r.seek(SeekFrom::End(0))?;
        if at.checked_add(n).is_none_or(|target| target > end) {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        r.seek(SeekFrom::Start(at))?;
        r.seek(SeekFrom::Current(rest))?;
        return Ok(());
    }
    while n > 0 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let k = (buf.len() as u64).min(n) as usize;
        r.consume(k);
        n -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack;
    use crate::value::Value;
    use std::io::Cursor;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    #[test]
    fn slim_documents_leave_big_values_out() {
        let big = Value::Array((0..100_000).map(Value::Int).collect());
        let doc = Value::Map(vec![
            (s("v"), Value::Int(4)),
            (
                s("channel_values"),
                Value::Map(vec![
                    (s("small"), s("hi")),
                    (s("big"), big),
                    (s("blob"), Value::Bin(vec![7; 5000])),
                ]),
            ),
            (
                s("channel_versions"),
                Value::Map(vec![(s("small"), s("1"))]),
            ),
        ]);
        let bytes = msgpack::encode(&doc);
        let slim = slim_document(Cursor::new(&bytes[..]), 4096).unwrap();
        let big_len = msgpack::encode(doc.get("channel_values").unwrap().get("big").unwrap()).len();
        assert_eq!(
            slim.too_large,
            vec![
                ("big".to_owned(), big_len as u64, "list".to_owned()),
                ("blob".to_owned(), 5003, "bytes".to_owned()),
            ]
        );
        let back = msgpack::decode(&slim.document).unwrap();
        let values = back.get("channel_values").unwrap();
        assert_eq!(values.get("small"), Some(&s("hi")));
        assert_eq!(values.get("big"), Some(&Value::Nil));
        assert_eq!(back.get("channel_versions"), doc.get("channel_versions"));
        // Every value under the limit: the document is unchanged.
        assert_eq!(
            slim_document(Cursor::new(&bytes[..]), u64::MAX)
                .unwrap()
                .document,
            bytes
        );
    }

    #[test]
    fn ext_values_of_every_length_form_are_copied_whole() {
        // ext8 (0xc7), ext16 (0xc8), ext32 (0xc9) and fixext: the header is the length and then
        // the ext code, which must not be read as part of the length (found by fuzzing).
        let mut values = Vec::new();
        for len in [3usize, 200, 300, 70_000] {
            let mut ext = match len {
                0..=255 => vec![0xc7, len as u8],
                256..=65_535 => vec![0xc8, (len >> 8) as u8, len as u8],
                _ => {
                    let mut h = vec![0xc9];
                    h.extend_from_slice(&(len as u32).to_be_bytes());
                    h
                }
            };
            ext.push(0x93); // an unknown ext code: kept raw
            ext.extend(std::iter::repeat_n(0x41, len));
            values.push(ext);
        }
        values.push(vec![0xd4, 0x93, 0x41]);
        let mut doc = vec![0x82, 0xae];
        doc.extend_from_slice(b"channel_values");
        doc.push(0x80 | values.len() as u8);
        for (i, v) in values.iter().enumerate() {
            doc.extend_from_slice(&[0xa1, b'a' + i as u8]);
            doc.extend_from_slice(v);
        }
        doc.extend_from_slice(&[0xa1, b'v', 0x04]);
        assert!(msgpack::decode(&doc).is_ok());
        let whole = slim_document(Cursor::new(&doc[..]), u64::MAX).unwrap();
        assert_eq!(whole.document, doc);
        let slim = slim_document(Cursor::new(&doc[..]), 1000).unwrap();
        assert_eq!(slim.too_large.len(), 1, "{:?}", slim.too_large);
        assert_eq!(slim.too_large[0].1, 70_006);
        msgpack::decode(&slim.document).expect("still a document");
    }

    #[test]
    fn selecting_channels_keeps_their_values_and_drops_the_rest() {
        let doc = Value::Map(vec![
            (s("v"), Value::Int(4)),
            (
                s("channel_values"),
                Value::Map(vec![
                    (
                        s("messages"),
                        Value::Array((0..500).map(|i| s(&format!("m{i}"))).collect()),
                    ),
                    (s("__pregel_tasks"), Value::Array(vec![s("send")])),
                    (s("branch:to:a"), Value::Nil),
                ]),
            ),
        ]);
        let bytes = msgpack::encode(&doc);
        let kept = select_channels(Cursor::new(&bytes[..]), |c| c.starts_with("__")).unwrap();
        assert!(
            kept.len() < bytes.len() / 10,
            "{} of {}",
            kept.len(),
            bytes.len()
        );
        let back = msgpack::decode(&kept).unwrap();
        let values = back.get("channel_values").unwrap();
        assert_eq!(
            values.get("__pregel_tasks"),
            Some(&Value::Array(vec![s("send")]))
        );
        assert_eq!(values.get("messages"), Some(&Value::Nil));
        // The other fields are untouched.
        assert_eq!(back.get("v"), Some(&Value::Int(4)));
        assert!(select_channels(Cursor::new(&[0x92][..]), |_| true).is_err());
    }

    #[test]
    fn one_channel_value_is_read_from_the_document() {
        let list = Value::Array((0..2000).map(|i| s(&format!("m{i}"))).collect());
        let doc = Value::Map(vec![
            (s("v"), Value::Int(4)),
            (
                s("channel_values"),
                Value::Map(vec![(s("a"), s("x")), (s("messages"), list.clone())]),
            ),
            (s("channel_versions"), Value::Map(vec![])),
        ]);
        let bytes = msgpack::encode(&doc);
        let got = channel_value(Cursor::new(&bytes[..]), "messages").unwrap();
        assert_eq!(got, Some(msgpack::encode(&list)));
        assert_eq!(
            channel_value(Cursor::new(&bytes[..]), "nope").unwrap(),
            None
        );
        assert!(channel_value(Cursor::new(&bytes[..bytes.len() / 2]), "messages").is_err());
        assert!(channel_value(Cursor::new(&[0x92][..]), "messages").is_err());
    }

    #[test]
    fn sizes_and_kinds() {
        for v in [
            Value::Array((0..3000).map(Value::Int).collect()),
            Value::Map((0..3000).map(|i| (Value::Int(i), s("x"))).collect()),
            s(&"x".repeat(70_000)),
        ] {
            let bytes = msgpack::encode(&v);
            let mut sink = Vec::new();
            let n = copy_value(&mut Cursor::new(&bytes[..]), Some(&mut sink), 100).unwrap();
            assert_eq!(n, bytes.len() as u64);
            assert!(sink.len() <= KEEP);
            assert_eq!(
                copy_value(&mut Cursor::new(&bytes[..]), None, 0).unwrap(),
                n
            );
        }
        assert_eq!(kind_of(&[0x93]), "list");
        assert_eq!(kind_of(&[0xde]), "dict");
        // Truncated input is an error, never a hang.
        let bytes = msgpack::encode(&Value::Array(vec![s("abc"); 10]));
        assert!(copy_value(&mut Cursor::new(&bytes[..bytes.len() - 2]), None, 0).is_err());
        assert!(slim_document(Cursor::new(&[0xc1][..]), 10).is_err());
        // A claimed length is never allocated up front: 4 GB claimed, 10 bytes there.
        let mut liar = vec![0x81, 0xa1, b'x', 0xc6, 0xff, 0xff, 0xff, 0xf0];
        liar.extend_from_slice(&[0; 10]);
        assert!(slim_document(Cursor::new(&liar[..]), u64::MAX).is_err());
        // A length past the end (sought over, not read) is an error too.
        let mut huge = vec![0xc6, 0x7f, 0xff, 0xff, 0xff];
        huge.extend_from_slice(&[0; 100_000]);
        assert!(copy_value(&mut Cursor::new(&huge[..]), None, 0).is_err());
        let big = msgpack::encode(&Value::Bin(vec![1; 300_000]));
        assert_eq!(
            copy_value(&mut Cursor::new(&big[..]), None, 0).unwrap(),
            big.len() as u64
        );
    }
}
