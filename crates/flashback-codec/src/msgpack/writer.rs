//! Encoding: a [`Value`] as msgpack in the minimal forms Python's `ormsgpack` writes.

use crate::value::{JsonTextKind, Value};

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
        // msgpack has no exact form (writers refuse it): only what the view shows.
        Value::JsonText(t) => match &t.kind {
            JsonTextKind::LoneSurrogate { shown } => write_str(shown, out),
            JsonTextKind::Number => {
                let f = t.text.parse::<f64>().unwrap_or(f64::NAN);
                encode_into(&Value::Float(f), out);
            }
            JsonTextKind::TooDeep => write_str(&t.text, out),
        },
    }
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
/// An array header for `n` items, in the minimal form.
pub fn write_array_header(n: usize, out: &mut Vec<u8>) {
    write_len(n, [0x90, 0, 0xdc, 0xdd], Some(16), out);
}

/// A map header for `n` entries, in the minimal form.
pub fn write_map_header(n: usize, out: &mut Vec<u8>) {
    write_len(n, [0x80, 0, 0xde, 0xdf], Some(16), out);
}

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
