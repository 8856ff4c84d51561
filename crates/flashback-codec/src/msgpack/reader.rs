//! Decoding: the byte [`Reader`] that turns a msgpack document into a [`Value`] (handing ext
//! payloads to [`super::ext`]), and the public entry points built on it.

use super::ext::decode_ext;
use super::{DecodeCache, MsgpackError, CACHE_MIN_LEN, MAX_DEPTH};
use crate::value::{RawExt, Value};

/// The ext code of the in-place value that stands for a `str` whose bytes are not valid UTF-8
/// (see [`is_invalid_str`]). Negative codes are reserved by msgpack itself and LangGraph never
/// writes this one.
const INVALID_STR_CODE: i8 = i8::MIN;

/// The start of the reason such a value carries.
const INVALID_STR_REASON: &str = "str is not valid UTF-8";

/// Whether `raw` is the in-place value the decoder makes of a msgpack `str` whose bytes are not
/// valid UTF-8 (Python's msgpack would refuse the whole document). Its `data` holds the
/// string's bytes; its view is an `$error` object. Encoding it again does NOT give the stored
/// bytes back (it would be written as an ext), so writers must refuse to store it.
pub fn is_invalid_str(raw: &RawExt) -> bool {
    raw.code == INVALID_STR_CODE && raw.error.starts_with(INVALID_STR_REASON)
}

/// Decode one complete msgpack document (trailing bytes are an error).
pub fn decode(data: &[u8]) -> Result<Value, MsgpackError> {
    decode_doc(data, None)
}

/// [`decode`], reusing and filling `cache`.
pub fn decode_with_cache(data: &[u8], cache: &mut DecodeCache) -> Result<Value, MsgpackError> {
    decode_doc(data, Some(cache))
}

fn decode_doc(data: &[u8], cache: Option<&mut DecodeCache>) -> Result<Value, MsgpackError> {
    let mut r = Reader {
        data,
        pos: 0,
        cache,
    };
    let v = r.value(0)?;
    if r.pos != data.len() {
        return Err(r.err(format!(
            "{} trailing bytes after the document",
            data.len() - r.pos
        )));
    }
    Ok(v)
}

/// Check that `data` is one complete, well-formed msgpack document without building it: what
/// [`decode`] rejects (truncation, the reserved byte 0xc1, nesting deeper than [`MAX_DEPTH`],
/// trailing bytes) is rejected here too, much more cheaply.
pub fn check(data: &[u8]) -> Result<(), MsgpackError> {
    let mut r = Reader {
        data,
        pos: 0,
        cache: None,
    };
    r.skip(0)?;
    if r.pos != data.len() {
        return Err(r.err(format!(
            "{} trailing bytes after the document",
            data.len() - r.pos
        )));
    }
    Ok(())
}

/// Read the string stored under `key` in a top-level map without decoding anything else
/// (used to list checkpoint timestamps cheaply). `None` if absent, not a string, or malformed.
pub fn top_level_str(data: &[u8], key: &str) -> Option<String> {
    let mut r = Reader {
        data,
        pos: 0,
        cache: None,
    };
    let m = r.u8().ok()?;
    let n = match m {
        0x80..=0x8f => (m & 0x0f) as usize,
        0xde => r.len(2).ok()?,
        0xdf => r.len(4).ok()?,
        _ => return None,
    };
    for _ in 0..n {
        let k = r.value(MAX_DEPTH).ok()?;
        if k.as_str() == Some(key) {
            return match r.value(MAX_DEPTH).ok()? {
                Value::Str(s) => Some(s.into()),
                _ => None,
            };
        }
        r.skip(0).ok()?;
    }
    None
}

/// The parts of a msgpack document, as raw byte slices (nothing decoded): for a three-table
/// delta, which compares and splices items byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawParts<'a> {
    /// An array: each item's bytes.
    Array(Vec<&'a [u8]>),
    /// A map: each key's and value's bytes, in stored order.
    Map(Vec<(&'a [u8], &'a [u8])>),
    /// Anything else.
    Scalar,
}

/// Split one complete msgpack document into its top-level items (see [`RawParts`]); the same
/// checks as [`check`] (truncation, 0xc1, depth, trailing bytes).
pub fn raw_parts(data: &[u8]) -> Result<RawParts<'_>, MsgpackError> {
    let mut r = Reader {
        data,
        pos: 0,
        cache: None,
    };
    let m = r.u8()?;
    let (n, map) = match m {
        0x90..=0x9f => ((m & 0x0f) as usize, false),
        0xdc => (r.len(2)?, false),
        0xdd => (r.len(4)?, false),
        0x80..=0x8f => ((m & 0x0f) as usize, true),
        0xde => (r.len(2)?, true),
        0xdf => (r.len(4)?, true),
        _ => {
            check(data)?;
            return Ok(RawParts::Scalar);
        }
    };
    // Each item is at least one byte: a count beyond what is left is a lie, not an allocation.
    let cap = n.min(data.len());
    let item = |r: &mut Reader<'_, '_>| -> Result<&[u8], MsgpackError> {
        let start = r.pos;
        r.skip(1)?;
        Ok(&data[start..r.pos])
    };
    let parts = if map {
        let mut entries = Vec::with_capacity(cap);
        for _ in 0..n {
            let k = item(&mut r)?;
            let v = item(&mut r)?;
            entries.push((k, v));
        }
        RawParts::Map(entries)
    } else {
        let mut items = Vec::with_capacity(cap);
        for _ in 0..n {
            items.push(item(&mut r)?);
        }
        RawParts::Array(items)
    };
    if r.pos != data.len() {
        return Err(r.err(format!(
            "{} trailing bytes after the document",
            data.len() - r.pos
        )));
    }
    Ok(parts)
}

/// Items of an [`ArrayIndex`] per kept offset.
const MARK_EVERY: usize = 64;

/// A msgpack array's items found by index without decoding them, and without keeping each
/// item's place: one walk keeps every 64th item's offset, and an item is found by skipping
/// from the offset before it. For paging a long list held as bytes (memory: one word per 64
/// items).
#[derive(Debug, Clone)]
pub struct ArrayIndex<'a> {
    data: &'a [u8],
    marks: Vec<usize>,
    len: usize,
}

impl<'a> ArrayIndex<'a> {
    /// Index `data`, one complete msgpack document: `Ok(None)` when it is not an array; the
    /// checks of [`check`] (truncation, 0xc1, depth, trailing bytes) otherwise.
    pub fn new(data: &'a [u8]) -> Result<Option<ArrayIndex<'a>>, MsgpackError> {
        let mut r = Reader {
            data,
            pos: 0,
            cache: None,
        };
        let m = r.u8()?;
        let len = match m {
            0x90..=0x9f => (m & 0x0f) as usize,
            0xdc => r.len(2)?,
            0xdd => r.len(4)?,
            _ => return Ok(None),
        };
        // Each item is at least one byte: a count beyond what is left is a lie.
        let mut marks = Vec::with_capacity(len.min(data.len()) / MARK_EVERY + 1);
        for i in 0..len {
            if i % MARK_EVERY == 0 {
                marks.push(r.pos);
            }
            r.skip(1)?;
        }
        if r.pos != data.len() {
            return Err(r.err(format!(
                "{} trailing bytes after the document",
                data.len() - r.pos
            )));
        }
        Ok(Some(ArrayIndex { data, marks, len }))
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Item `i`'s bytes (`None` past the end).
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let mut r = Reader {
            data: self.data,
            pos: *self.marks.get(i / MARK_EVERY)?,
            cache: None,
        };
        if i >= self.len {
            return None;
        }
        for _ in 0..i % MARK_EVERY {
            r.skip(1).ok()?;
        }
        let start = r.pos;
        r.skip(1).ok()?;
        Some(&self.data[start..r.pos])
    }
}

fn uint_value(u: u64) -> Value {
    i64::try_from(u).map(Value::Int).unwrap_or(Value::UInt(u))
}

pub(super) struct Reader<'a, 'c> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    pub(super) cache: Option<&'c mut DecodeCache>,
}

impl<'a> Reader<'a, '_> {
    fn err(&self, message: impl Into<String>) -> MsgpackError {
        MsgpackError {
            offset: self.pos,
            message: message.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], MsgpackError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        match end {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.err(format!(
                "truncated: needed {n} more bytes, {} left",
                self.data.len() - self.pos
            ))),
        }
    }

    fn u8(&mut self) -> Result<u8, MsgpackError> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], MsgpackError> {
        let mut buf = [0u8; N];
        buf.copy_from_slice(self.take(N)?);
        Ok(buf)
    }

    fn len(&mut self, width: usize) -> Result<usize, MsgpackError> {
        Ok(match width {
            1 => self.u8()? as usize,
            2 => u16::from_be_bytes(self.be()?) as usize,
            _ => u32::from_be_bytes(self.be()?) as usize,
        })
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Value, MsgpackError> {
        if depth > MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let start = self.pos;
        let m = self.u8()?;
        Ok(match m {
            0x00..=0x7f => Value::Int(m as i64),
            0x80..=0x8f => self.map((m & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((m & 0x0f) as usize, depth)?,
            0xa0..=0xbf => self.str((m & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (m - 0xc4))?;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (m - 0xc7))?;
                self.ext(n, depth)?
            }
            0xca => Value::Float32(f32::from_be_bytes(self.be()?)),
            0xcb => Value::Float(f64::from_be_bytes(self.be()?)),
            0xcc => Value::Int(self.u8()? as i64),
            0xcd => Value::Int(u16::from_be_bytes(self.be()?) as i64),
            0xce => Value::Int(u32::from_be_bytes(self.be()?) as i64),
            0xcf => uint_value(u64::from_be_bytes(self.be()?)),
            0xd0 => Value::Int(self.u8()? as i8 as i64),
            0xd1 => Value::Int(i16::from_be_bytes(self.be()?) as i64),
            0xd2 => Value::Int(i32::from_be_bytes(self.be()?) as i64),
            0xd3 => Value::Int(i64::from_be_bytes(self.be()?)),
            0xd4..=0xd8 => self.ext(1 << (m - 0xd4), depth)?,
            0xd9..=0xdb => {
                let n = self.len(1 << (m - 0xd9))?;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.len(if m == 0xdc { 2 } else { 4 })?;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.len(if m == 0xde { 2 } else { 4 })?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(m as i8 as i64),
            0xc1 => {
                self.pos = start;
                return Err(self.err("reserved marker 0xc1"));
            }
        })
    }

    /// Skip one value without building it.
    fn skip(&mut self, depth: usize) -> Result<(), MsgpackError> {
        if depth > MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let m = self.u8()?;
        let (skip, items) = match m {
            0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => (0, 0),
            0x80..=0x8f => (0, 2 * (m & 0x0f) as usize),
            0x90..=0x9f => (0, (m & 0x0f) as usize),
            0xa0..=0xbf => ((m & 0x1f) as usize, 0),
            0xc4..=0xc6 => (self.len(1 << (m - 0xc4))?, 0),
            0xc7..=0xc9 => (self.len(1 << (m - 0xc7))? + 1, 0),
            0xca => (4, 0),
            0xcb => (8, 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xce | 0xd2 => (4, 0),
            0xcf | 0xd3 => (8, 0),
            0xd4..=0xd8 => ((1 << (m - 0xd4)) + 1, 0),
            0xd9..=0xdb => (self.len(1 << (m - 0xd9))?, 0),
            0xdc => (0, self.len(2)?),
            0xdd => (0, self.len(4)?),
            0xde => (0, 2 * self.len(2)?),
            0xdf => (0, 2 * self.len(4)?),
            0xc1 => return Err(self.err("reserved marker 0xc1")),
        };
        self.take(skip)?;
        for _ in 0..items {
            self.skip(depth + 1)?;
        }
        Ok(())
    }

    fn str(&mut self, n: usize) -> Result<Value, MsgpackError> {
        let start = self.pos;
        let bytes = self.take(n)?;
        // Not valid UTF-8: the string alone becomes an in-place error value (the rest of the
        // document still decodes); `is_invalid_str` recognises it.
        Ok(match std::str::from_utf8(bytes) {
            Ok(s) => Value::Str(s.into()),
            Err(e) => Value::RawExt(Box::new(RawExt {
                code: INVALID_STR_CODE,
                data: bytes.to_vec(),
                error: format!(
                    "{INVALID_STR_REASON} (invalid byte {} of {}, at offset {start}); \
                     raw_base64 holds its bytes",
                    e.valid_up_to() + 1,
                    bytes.len()
                ),
            })),
        })
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, MsgpackError> {
        // Cap the pre-allocation: a corrupt length must not allocate gigabytes.
        let mut items = Vec::with_capacity(n.min(self.data.len() - self.pos));
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, MsgpackError> {
        let mut entries = Vec::with_capacity(n.min(self.data.len() - self.pos));
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }

    fn ext(&mut self, n: usize, depth: usize) -> Result<Value, MsgpackError> {
        let code = self.u8()? as i8;
        let data = self.take(n)?;
        if (0..6).contains(&code) && data.len() >= CACHE_MIN_LEN {
            if let Some(cache) = self.cache.as_deref_mut() {
                if let Some(v) = cache.by_code[code as usize].get(data) {
                    return Ok(v.clone());
                }
                let v = decode_ext(code, data, || payload(code, data, depth, Some(&mut *cache)));
                cache.by_code[code as usize].insert(data.into(), v.clone());
                return Ok(v);
            }
        }
        let cache = self.cache.as_deref_mut();
        Ok(decode_ext(code, data, || payload(code, data, depth, cache)))
    }
}

/// An ext payload read as one msgpack document, one level deeper than its ext.
fn payload(
    code: i8,
    data: &[u8],
    depth: usize,
    cache: Option<&mut DecodeCache>,
) -> Result<Value, String> {
    let mut r = Reader {
        data,
        pos: 0,
        cache,
    };
    match r.value(depth + 1) {
        Ok(doc) if r.pos == data.len() => Ok(doc),
        Ok(_) => Err(format!("ext {code} payload has trailing bytes")),
        Err(e) => Err(format!("ext {code} payload: {e}")),
    }
}
