//! The JSON view: one stable, documented mapping from decoded values to JSON
//! (see `docs/json-view.md` and the crate docs).

use crate::typed::Decoded;
use crate::value::{NdArray, ObjectForm, PyObject, Value};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Map, Number, Value as Json};

/// The masked form of a secret, as pydantic prints it.
pub const SECRET_MASK: &str = "**********";

/// Options for the JSON view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// Show `SecretStr`/`SecretBytes` values in plain text instead of masked.
    pub reveal_secrets: bool,
}

/// JSON view of a stored value (`None` for `empty`, which Python treats as "no value").
pub fn view_decoded(d: &Decoded, opts: ViewOptions) -> Option<Json> {
    Some(match d {
        Decoded::Msgpack(v) => view(v, opts),
        Decoded::Null => Json::Null,
        Decoded::Bytes(b) => bytes_view("builtins.bytes", b),
        Decoded::ByteArray(b) => bytes_view("builtins.bytearray", b),
        Decoded::Json { value, .. } => crate::legacy::view_legacy_json(value),
        Decoded::Pickle(b) => {
            let mut m = Map::new();
            m.insert("$type".into(), "pickle".into());
            m.insert("$opaque".into(), true.into());
            if let Some(class) = crate::legacy::pickle_class(b) {
                m.insert("class".into(), class.into());
            }
            m.insert("size".into(), b.len().into());
            m.insert("base64".into(), B64.encode(b).into());
            Json::Object(m)
        }
        Decoded::Encrypted { tag, data } => encrypted_view(tag, data),
        Decoded::Empty => return None,
        Decoded::Error { tag, message, raw } => error_view(message, tag, raw),
        Decoded::TooLarge {
            bytes,
            kind,
            reason,
            ..
        } => too_large_view(*bytes, kind, *reason),
    })
}

/// `{"$too_large": {"bytes", "reason"}, "$type", "$message"}`: a value left undecoded by the
/// decode budget (`reason` `value` or `request`).
pub fn too_large_view(bytes: u64, kind: &str, reason: crate::TooLargeReason) -> Json {
    let (why, note) = match reason {
        crate::TooLargeReason::Value => ("value", "over the per-value decode budget"),
        crate::TooLargeReason::Request => ("request", "past this read's decode budget"),
    };
    json!({
        "$too_large": {"bytes": bytes, "reason": why},
        "$type": kind,
        "$message": format!("too large: {} ({note}); open it to load it", crate::budget::human_bytes(bytes)),
    })
}

/// `{"$type": "encrypted", "$encrypted": tag, "$locked": true, "size", "sha256"}`: a value
/// left encrypted (no key, or a cipher Flashback cannot open), named by its ciphertext.
pub fn encrypted_view(tag: &str, data: &[u8]) -> Json {
    json!({
        "$type": "encrypted",
        "$encrypted": tag,
        "$locked": true,
        "size": data.len(),
        "sha256": crate::cipher::sha256_hex(data),
    })
}

/// The `{"$error", "$type", "raw_base64"}` object for a value that could not be decoded.
pub fn error_view(message: &str, type_name: &str, raw: &[u8]) -> Json {
    json!({"$error": message, "$type": type_name, "raw_base64": B64.encode(raw)})
}

fn bytes_view(type_name: &str, b: &[u8]) -> Json {
    json!({"$type": type_name, "base64": B64.encode(b)})
}

/// JSON view of a value tree.
pub fn view(v: &Value, opts: ViewOptions) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::Number((*i).into()),
        Value::UInt(u) => Json::Number((*u).into()),
        Value::Float(f) => float_view(*f),
        Value::Float32(f) => float_view(*f as f64),
        Value::Str(s) => Json::String(s.to_string()),
        Value::Bin(b) => bytes_view("builtins.bytes", b),
        Value::Array(items) => Json::Array(items.iter().map(|i| view(i, opts)).collect()),
        Value::Map(entries) => map_view(entries, opts),
        Value::Object(obj) => object_view(obj, opts),
        Value::NdArray(arr) => ndarray_view(arr),
        Value::DeltaSnapshot(inner) => json!({
            "$type": "langgraph.checkpoint.serde.types._DeltaSnapshot",
            "$value": view(inner, opts),
        }),
        Value::RawExt(raw) => {
            error_view(&raw.error, &format!("msgpack.ext({})", raw.code), &raw.data)
        }
    }
}

/// A float: a JSON number, or `{"$type": "builtins.float", "$value": "nan" | "inf" | "-inf"}`.
pub(crate) fn float_view(f: f64) -> Json {
    match Number::from_f64(f) {
        Some(n) => Json::Number(n),
        None => {
            let s = if f.is_nan() {
                "nan"
            } else if f > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            json!({"$type": "builtins.float", "$value": s})
        }
    }
}

fn plain_keys(entries: &[(Value, Value)]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    entries.iter().all(|(k, _)| match k {
        Value::Str(s) => !s.starts_with('$') && seen.insert(s.as_str()),
        _ => false,
    })
}

fn map_view(entries: &[(Value, Value)], opts: ViewOptions) -> Json {
    if plain_keys(entries) {
        let mut m = Map::with_capacity(entries.len());
        for (k, v) in entries {
            if let Value::Str(k) = k {
                m.insert(k.to_string(), view(v, opts));
            }
        }
        Json::Object(m)
    } else {
        let items = entries
            .iter()
            .map(|(k, v)| Json::Array(vec![view(k, opts), view(v, opts)]))
            .collect();
        json!({"$type": "builtins.dict", "$items": Json::Array(items)})
    }
}

/// Whether an object is a pydantic secret, masked in the view unless revealed.
pub fn is_secret(obj: &PyObject) -> bool {
    matches!(obj.name.as_str(), "SecretStr" | "SecretBytes") && obj.module.starts_with("pydantic")
}

fn object_view(obj: &PyObject, opts: ViewOptions) -> Json {
    let mut m = Map::new();
    m.insert("$type".into(), obj.type_name().into());
    match obj.form {
        ObjectForm::SingleArg | ObjectForm::Method => {
            if is_secret(obj) && !opts.reveal_secrets {
                m.insert("$value".into(), SECRET_MASK.into());
                m.insert("$secret".into(), true.into());
            } else {
                m.insert("$value".into(), view(&obj.payload, opts));
            }
            if obj.form == ObjectForm::Method {
                let method = obj.extra.as_ref().and_then(Value::as_str);
                if method != Some("fromisoformat") {
                    let extra = obj.extra.as_ref().map_or(Json::Null, |e| view(e, opts));
                    m.insert("$method".into(), extra);
                }
            }
        }
        ObjectForm::PosArgs => {
            let args = match &obj.payload {
                Value::Array(items) => items.iter().map(|i| view(i, opts)).collect(),
                other => vec![view(other, opts)],
            };
            m.insert("$args".into(), Json::Array(args));
        }
        ObjectForm::KwArgs | ObjectForm::PydanticV1 | ObjectForm::PydanticV2 => {
            match &obj.payload {
                Value::Map(entries) if entries.iter().all(|(k, _)| matches!(k, Value::Str(_))) => {
                    for (k, v) in entries {
                        if let Value::Str(k) = k {
                            let key = if k.starts_with('$') {
                                format!("${k}")
                            } else {
                                k.to_string()
                            };
                            m.insert(key, view(v, opts));
                        }
                    }
                }
                other => {
                    m.insert("$kwargs".into(), view(other, opts));
                }
            }
        }
    }
    Json::Object(m)
}

fn ndarray_view(arr: &NdArray) -> Json {
    let mut m = Map::new();
    m.insert("$type".into(), "numpy.ndarray".into());
    m.insert("dtype".into(), arr.dtype.as_str().into());
    m.insert("shape".into(), arr.shape.clone().into());
    m.insert("order".into(), arr.order.as_str().into());
    m.insert("base64".into(), B64.encode(&arr.data).into());
    if let Some(values) = crate::numpy::values(arr) {
        m.insert("values".into(), values);
    }
    Json::Object(m)
}
