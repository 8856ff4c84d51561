//! The JSON view: one stable, documented mapping from decoded values to JSON
//! (see `docs/json-view.md` and the crate docs).

use crate::decoded::Decoded;
use crate::value::{PyObject, Value};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Map, Value as Json};

pub(crate) mod float;
mod stream;
pub use stream::JsonView;

/// `$type` of a float JSON has no number for.
/// `$type` of a nested `bytes` value.
const BYTES_TYPE: &str = "builtins.bytes";
/// `$type` of a dict shown as `$items`.
const DICT_TYPE: &str = "builtins.dict";
/// `$type` of a numpy array.
const NDARRAY_TYPE: &str = "numpy.ndarray";
/// `$type` of a DeltaChannel snapshot.
const DELTA_TYPE: &str = "langgraph.checkpoint.serde.types._DeltaSnapshot";
/// `$type` of a JSON number kept as its text (beyond 64-bit integers or float64's range).
pub const NUMBER_TYPE: &str = "json.number";
/// The `$error` of a JSON list or dict nested deeper than the codec reads.
const TOO_DEEP: &str =
    "nested deeper than 256 levels: not decoded (raw_base64 holds its JSON text)";

/// The keys the view itself gives meaning to. A dict with one of them (or a key starting with
/// `$$`, the escape of a typed object's `$` field) is shown as `$items`; any other string-keyed
/// dict is a plain object, JSON schemas' `$defs`/`$ref` included.
pub const VIEW_KEYS: [&str; 14] = [
    "$type",
    "$error",
    "$too_large",
    "$message",
    "$encrypted",
    "$locked",
    "$opaque",
    "$items",
    "$value",
    "$args",
    "$kwargs",
    "$secret",
    "$method",
    "$ext",
];

/// Whether `key` can be a key of a dict shown as a plain JSON object.
pub fn plain_key(key: &str) -> bool {
    !key.starts_with("$$") && !VIEW_KEYS.contains(&key)
}

/// Whether a JSON object of the view is a typed value (`$type`) or an error, whose keys starting
/// with `$` are markers, rather than a dict whose keys are all data.
pub fn is_marked(o: &Map<String, Json>) -> bool {
    o.contains_key("$type") || o.contains_key("$error")
}

/// The masked form of a secret, as pydantic prints it.
pub const SECRET_MASK: &str = "**********";

/// Options for the JSON view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// Show `SecretStr`/`SecretBytes` values in plain text instead of masked.
    pub reveal_secrets: bool,
}

/// JSON view of a stored value (`None` for `empty`, which Python treats as "no value").
///
/// Defined by [`JsonView`]'s serialization; write that straight to bytes instead of building
/// this tree when the view is output.
pub fn view_decoded(d: &Decoded, opts: ViewOptions) -> Option<Json> {
    match d {
        Decoded::Empty => None,
        d => Some(collect(JsonView::decoded(d, opts))),
    }
}

/// The JSON view of the stored forms that are not msgpack trees (each a small object).
fn decoded_view(d: &Decoded) -> Json {
    match d {
        // Written by `JsonView` itself, never through here.
        Decoded::Msgpack(_) | Decoded::Empty => Json::Null,
        Decoded::Null => Json::Null,
        Decoded::Bytes(b) => bytes_view(BYTES_TYPE, b),
        Decoded::ByteArray(b) => bytes_view("builtins.bytearray", b),
        Decoded::Pickle(b) => {
            let reason = crate::pickle::shown(b).err().map(|e| e.to_string());
            opaque_pickle(b, reason.as_deref())
        }
        Decoded::Encrypted { tag, data } => encrypted_view(tag, data),
        Decoded::Error { tag, message, raw } => error_view(message, tag, raw),
        Decoded::TooLarge {
            bytes,
            kind,
            reason,
            ..
        } => too_large_view(*bytes, kind, *reason),
    }
}

/// `{"$type": "pickle", "$opaque": true, "class", "size", "base64", "reason"}`: a pickle that
/// does not read (`reason`, one line), its first class read statically when it can be.
pub(super) fn opaque_pickle(b: &[u8], reason: Option<&str>) -> Json {
    let mut m = Map::new();
    m.insert("$type".into(), "pickle".into());
    m.insert("$opaque".into(), true.into());
    if let Some(class) = crate::legacy::pickle_class(b) {
        m.insert("class".into(), class.into());
    }
    m.insert("size".into(), b.len().into());
    m.insert("base64".into(), b64(b).into());
    if let Some(reason) = reason {
        m.insert("reason".into(), reason.into());
    }
    Json::Object(m)
}

/// A serialization collected into a `serde_json::Value`.
fn collect(view: JsonView<'_>) -> Json {
    // The view writes string keys and finite numbers only, which cannot fail.
    serde_json::to_value(view).unwrap_or(Json::Null)
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
        "$message": format!("too large: {} ({note}); open it to load it", crate::units::bytes(bytes)),
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
    json!({"$error": message, "$type": type_name, "raw_base64": b64(raw)})
}

fn bytes_view(type_name: &str, b: &[u8]) -> Json {
    json!({"$type": type_name, "base64": b64(b)})
}

fn b64(b: &[u8]) -> String {
    B64.encode(b)
}

/// JSON view of a value tree.
///
/// Defined by [`JsonView`]'s serialization; write that straight to bytes instead of building
/// this tree when the view is output.
pub fn view(v: &Value, opts: ViewOptions) -> Json {
    collect(JsonView::new(v, opts))
}

/// Whether an object is a pydantic secret, masked in the view unless revealed.
pub fn is_secret(obj: &PyObject) -> bool {
    matches!(obj.name.as_str(), "SecretStr" | "SecretBytes") && obj.module.starts_with("pydantic")
}
