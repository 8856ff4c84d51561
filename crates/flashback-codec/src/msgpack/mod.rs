//! msgpack ⇄ [`Value`], with LangGraph's extension types.
//!
//! The decoder accepts every msgpack form; the encoder always writes the minimal form, which is
//! what Python's `ormsgpack` writes, so `encode(decode(b)) == b` for every document Python
//! produced (tested over every blob of the fixtures).

use crate::value::{NdArray, ObjectForm, PyObject, RawExt, Value};
use std::collections::HashMap;
use std::sync::Arc;
use thiserror::Error;
use xxhash_rust::xxh3::Xxh3Builder;

/// Nesting deeper than this is rejected instead of overflowing the stack.
pub const MAX_DEPTH: usize = 256;

/// Why a msgpack document could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid msgpack at byte {offset}: {message}")]
pub struct MsgpackError {
    /// Byte offset where decoding stopped.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

/// Ext payloads at least this long are worth looking up in a [`DecodeCache`].
const CACHE_MIN_LEN: usize = 48;

/// Remembers decoded Python objects by their exact ext bytes, so the same object met again
/// (in SQLite every checkpoint stores the whole state: a thread of n steps holds each message
/// up to n times) is decoded once and shared. Identical bytes always decode to the same value,
/// so sharing is exact. Use one cache for a batch of related documents, then drop it.
#[derive(Debug, Default)]
pub struct DecodeCache {
    by_code: [HashMap<Box<[u8]>, Value, Xxh3Builder>; 6],
}

impl DecodeCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
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

/// Encode a value as msgpack, minimal forms only.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    encode_into(value, &mut out);
    out
}

/// Encode a value, appending to `out`.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Nil => out.push(0xc0),
        Value::Bool(false) => out.push(0xc2),
        Value::Bool(true) => out.push(0xc3),
        Value::Int(i) => write_int(*i, out),
        Value::UInt(u) => write_uint(*u, out),
        Value::Float(f) => {
            out.push(0xcb);
            out.extend_from_slice(&f.to_be_bytes());
        }
        Value::Float32(f) => {
            out.push(0xca);
            out.extend_from_slice(&f.to_be_bytes());
        }
        Value::Str(s) => write_str(s, out),
        Value::Bin(b) => {
            write_len(b.len(), [0, 0xc4, 0xc5, 0xc6], None, out);
            out.extend_from_slice(b);
        }
        Value::Array(items) => {
            write_len(items.len(), [0x90, 0, 0xdc, 0xdd], Some(16), out);
            for item in items {
                encode_into(item, out);
            }
        }
        Value::Map(entries) => {
            write_len(entries.len(), [0x80, 0, 0xde, 0xdf], Some(16), out);
            for (k, v) in entries {
                encode_into(k, out);
                encode_into(v, out);
            }
        }
        Value::Object(obj) => {
            let mut doc = Vec::with_capacity(64);
            doc.push(0x90 | if obj.extra.is_some() { 4 } else { 3 });
            write_str(&obj.module, &mut doc);
            write_str(&obj.name, &mut doc);
            encode_into(&obj.payload, &mut doc);
            if let Some(extra) = &obj.extra {
                encode_into(extra, &mut doc);
            }
            write_ext(obj.form.code(), &doc, out);
        }
        Value::NdArray(arr) => {
            let mut doc = Vec::with_capacity(arr.data.len() + 32);
            doc.push(0x94);
            write_str(&arr.dtype, &mut doc);
            write_len(arr.shape.len(), [0x90, 0, 0xdc, 0xdd], Some(16), &mut doc);
            for &d in &arr.shape {
                write_uint(d, &mut doc);
            }
            write_str(&arr.order, &mut doc);
            write_len(arr.data.len(), [0, 0xc4, 0xc5, 0xc6], None, &mut doc);
            doc.extend_from_slice(&arr.data);
            write_ext(6, &doc, out);
        }
        Value::DeltaSnapshot(inner) => write_ext(7, &encode(inner), out),
        Value::RawExt(raw) => write_ext(raw.code, &raw.data, out),
    }
}

fn uint_value(u: u64) -> Value {
    i64::try_from(u).map(Value::Int).unwrap_or(Value::UInt(u))
}

fn write_uint(u: u64, out: &mut Vec<u8>) {
    if u < 0x80 {
        out.push(u as u8);
    } else if u <= 0xff {
        out.extend_from_slice(&[0xcc, u as u8]);
    } else if u <= 0xffff {
        out.push(0xcd);
        out.extend_from_slice(&(u as u16).to_be_bytes());
    } else if u <= 0xffff_ffff {
        out.push(0xce);
        out.extend_from_slice(&(u as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

fn write_int(i: i64, out: &mut Vec<u8>) {
    if i >= 0 {
        write_uint(i as u64, out);
    } else if i >= -32 {
        out.push(i as i8 as u8);
    } else if i >= i8::MIN as i64 {
        out.extend_from_slice(&[0xd0, i as i8 as u8]);
    } else if i >= i16::MIN as i64 {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= i32::MIN as i64 {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

fn write_str(s: &str, out: &mut Vec<u8>) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else {
        write_len(n, [0, 0xd9, 0xda, 0xdb], None, out);
    }
    out.extend_from_slice(s.as_bytes());
}

/// Write a length header: `fix` markers OR-ed with n below `fix_limit`, else the 8/16/32-bit
/// marker (`markers[1..]`; a zero marker means that width does not exist for the type).
fn write_len(n: usize, markers: [u8; 4], fix_limit: Option<usize>, out: &mut Vec<u8>) {
    if let Some(limit) = fix_limit {
        if n < limit {
            out.push(markers[0] | n as u8);
            return;
        }
    }
    if n <= 0xff && markers[1] != 0 {
        out.extend_from_slice(&[markers[1], n as u8]);
    } else if n <= 0xffff {
        out.push(markers[2]);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(markers[3]);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn write_ext(code: i8, data: &[u8], out: &mut Vec<u8>) {
    match data.len() {
        1 => out.push(0xd4),
        2 => out.push(0xd5),
        4 => out.push(0xd6),
        8 => out.push(0xd7),
        16 => out.push(0xd8),
        n => write_len(n, [0, 0xc7, 0xc8, 0xc9], None, out),
    }
    out.push(code as u8);
    out.extend_from_slice(data);
}

struct Reader<'a, 'c> {
    data: &'a [u8],
    pos: usize,
    cache: Option<&'c mut DecodeCache>,
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

    fn value(&mut self, depth: usize) -> Result<Value, MsgpackError> {
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
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Value::Str(s.into())),
            Err(e) => Err(MsgpackError {
                offset: start + e.valid_up_to(),
                message: "string is not valid UTF-8".into(),
            }),
        }
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
                let v = decode_ext(code, data, depth, Some(&mut *cache));
                cache.by_code[code as usize].insert(data.into(), v.clone());
                return Ok(v);
            }
        }
        Ok(decode_ext(code, data, depth, self.cache.as_deref_mut()))
    }
}

/// Decode an ext payload. Never fails: a payload that does not parse is kept raw with the reason.
fn decode_ext(code: i8, data: &[u8], depth: usize, cache: Option<&mut DecodeCache>) -> Value {
    let raw = |error: String| {
        Value::RawExt(Box::new(RawExt {
            code,
            data: data.to_vec(),
            error,
        }))
    };
    if !(0..=7).contains(&code) {
        return raw(format!("unknown msgpack ext code {code}"));
    }
    let mut r = Reader {
        data,
        pos: 0,
        cache,
    };
    let doc = match r.value(depth + 1) {
        Ok(doc) if r.pos == data.len() => doc,
        Ok(_) => return raw(format!("ext {code} payload has trailing bytes")),
        Err(e) => return raw(format!("ext {code} payload: {e}")),
    };
    let result = match code {
        7 => Ok(Value::DeltaSnapshot(Box::new(doc))),
        6 => ndarray(doc),
        _ => object(code, doc),
    };
    result.unwrap_or_else(raw)
}

fn object(code: i8, doc: Value) -> Result<Value, String> {
    let form = ObjectForm::from_code(code).ok_or_else(|| format!("unknown ext code {code}"))?;
    let Value::Array(mut items) = doc else {
        return Err(format!("ext {code} payload is not an array"));
    };
    if !(3..=4).contains(&items.len()) {
        return Err(format!(
            "ext {code} payload has {} elements, expected 3 or 4",
            items.len()
        ));
    }
    let extra = if items.len() == 4 { items.pop() } else { None };
    let payload = items.pop().unwrap_or(Value::Nil);
    let name = items.pop();
    let module = items.pop();
    match (module, name) {
        (Some(Value::Str(module)), Some(Value::Str(name))) => {
            Ok(Value::Object(Arc::new(PyObject {
                form,
                module,
                name,
                payload,
                extra,
            })))
        }
        _ => Err(format!(
            "ext {code} payload does not start with module and class names"
        )),
    }
}

fn ndarray(doc: Value) -> Result<Value, String> {
    let bad = || "ext 6 (numpy) payload is not [dtype, shape, order, buffer]".to_string();
    let Value::Array(items) = doc else {
        return Err(bad());
    };
    let [Value::Str(dtype), Value::Array(shape), Value::Str(order), Value::Bin(data)] =
        <[Value; 4]>::try_from(items).map_err(|_| bad())?
    else {
        return Err(bad());
    };
    let shape = shape
        .iter()
        .map(|d| match d {
            Value::Int(i) if *i >= 0 => Ok(*i as u64),
            Value::UInt(u) => Ok(*u),
            _ => Err(bad()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::NdArray(Box::new(NdArray {
        dtype,
        shape,
        order,
        data,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(bytes: &[u8]) -> Value {
        let v = decode(bytes).expect("decodes");
        assert_eq!(encode(&v), bytes, "round trip of {bytes:02x?}");
        v
    }

    #[test]
    fn ints_use_minimal_forms() {
        for (i, bytes) in [
            (0i64, vec![0x00]),
            (127, vec![0x7f]),
            (128, vec![0xcc, 0x80]),
            (256, vec![0xcd, 0x01, 0x00]),
            (65536, vec![0xce, 0, 1, 0, 0]),
            (1 << 32, vec![0xcf, 0, 0, 0, 1, 0, 0, 0, 0]),
            (-1, vec![0xff]),
            (-32, vec![0xe0]),
            (-33, vec![0xd0, 0xdf]),
            (-129, vec![0xd1, 0xff, 0x7f]),
            (-40000, vec![0xd2, 0xff, 0xff, 0x63, 0xc0]),
            (i64::MIN, vec![0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ] {
            assert_eq!(encode(&Value::Int(i)), bytes, "encoding {i}");
            assert_eq!(rt(&bytes), Value::Int(i));
        }
        let max = [0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(rt(&max), Value::UInt(u64::MAX));
    }

    #[test]
    fn containers_and_strings_round_trip() {
        let long = "x".repeat(40);
        let v = Value::Map(vec![
            (
                Value::Str("a".into()),
                Value::Array(vec![Value::Nil, Value::Bool(true)]),
            ),
            (Value::Int(3), Value::Float(1.5)),
            (Value::Str(long.into()), Value::Bin(vec![1, 2, 3])),
            (Value::Nil, Value::Array((0..20).map(Value::Int).collect())),
        ]);
        let bytes = encode(&v);
        assert_eq!(decode(&bytes).expect("decodes"), v);
    }

    #[test]
    fn ext_uses_fixext_for_power_of_two_lengths() {
        // ext 0 ["uuid","UUID","00..01"] is longer than 16 bytes → ext8.
        let obj = Value::Object(Arc::new(PyObject {
            form: ObjectForm::SingleArg,
            module: "uuid".into(),
            name: "UUID".into(),
            payload: Value::Str("0".repeat(32).into()),
            extra: None,
        }));
        let bytes = encode(&obj);
        assert_eq!(bytes[0], 0xc7, "ext8 header");
        assert_eq!(rt(&bytes), obj);
        // ext 7 wrapping the int 5 → payload of 1 byte → fixext1.
        assert_eq!(
            rt(&[0xd4, 0x07, 0x05]),
            Value::DeltaSnapshot(Box::new(Value::Int(5)))
        );
    }

    #[test]
    fn top_level_str_skips_other_values() {
        let doc = Value::Map(vec![
            (Value::Str("v".into()), Value::Int(4)),
            (
                Value::Str("big".into()),
                Value::Array(vec![Value::Bin(vec![0; 300]), Value::Float(1.0)]),
            ),
            (
                Value::Str("ts".into()),
                Value::Str("2026-01-01T00:00:00+00:00".into()),
            ),
        ]);
        let bytes = encode(&doc);
        assert_eq!(
            top_level_str(&bytes, "ts").as_deref(),
            Some("2026-01-01T00:00:00+00:00")
        );
        assert_eq!(top_level_str(&bytes, "nope"), None);
        assert_eq!(top_level_str(&bytes[..10], "ts"), None, "truncated");
    }

    #[test]
    fn the_cache_shares_identical_objects_and_changes_nothing() {
        let msg = |content: &str| {
            Value::Object(Arc::new(PyObject {
                form: ObjectForm::PydanticV2,
                module: "langchain_core.messages.ai".into(),
                name: "AIMessage".into(),
                payload: Value::Map(vec![(
                    Value::Str("content".into()),
                    Value::Str(content.into()),
                )]),
                extra: Some(Value::Str("model_validate_json".into())),
            }))
        };
        let a = encode(&Value::Array(vec![msg("hello there"), msg("second")]));
        let b = encode(&Value::Array(vec![
            msg("hello there"),
            msg("second"),
            msg("third"),
        ]));
        let mut cache = DecodeCache::new();
        let da = decode_with_cache(&a, &mut cache).expect("a");
        let db = decode_with_cache(&b, &mut cache).expect("b");
        assert_eq!(da, decode(&a).expect("a"), "same result as without a cache");
        assert_eq!(db, decode(&b).expect("b"));
        let (Value::Array(xa), Value::Array(xb)) = (&da, &db) else {
            panic!("arrays")
        };
        let (Value::Object(oa), Value::Object(ob)) = (&xa[0], &xb[0]) else {
            panic!("objects")
        };
        assert!(
            Arc::ptr_eq(oa, ob),
            "the first message is decoded once and shared"
        );
        assert_eq!(encode(&db), b, "round trip");
    }

    #[test]
    fn bad_input_is_an_error_or_raw_ext_never_a_panic() {
        assert!(decode(&[0x92, 0x01]).is_err(), "truncated array");
        assert!(decode(&[0xc1]).is_err(), "reserved marker");
        assert!(decode(&[0xa2, 0xff, 0xfe]).is_err(), "invalid utf-8");
        assert!(decode(&[0x01, 0x02]).is_err(), "trailing bytes");
        assert!(
            decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err(),
            "huge length"
        );
        let deep: Vec<u8> = std::iter::repeat_n(0x91, 10_000).chain([0x00]).collect();
        assert!(decode(&deep).is_err(), "deep nesting");
        // Unknown ext code 9 with payload 0x01: kept raw, re-encodes identically.
        match rt(&[0xd4, 0x09, 0x01]) {
            Value::RawExt(raw) => {
                assert_eq!(raw.code, 9);
                assert!(
                    raw.error.contains("unknown msgpack ext code 9"),
                    "{}",
                    raw.error
                );
            }
            other => panic!("expected RawExt, got {other:?}"),
        }
        // ext 0 whose payload is not an array; ext 1 whose payload is truncated.
        assert!(matches!(rt(&[0xd4, 0x00, 0x05]), Value::RawExt(r) if r.code == 0));
        assert!(matches!(rt(&[0xd4, 0x01, 0x93]), Value::RawExt(r) if r.code == 1));
    }
}
