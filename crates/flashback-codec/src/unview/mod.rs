//! The reverse of the JSON view: JSON (as shown by [`crate::view`], possibly edited by a user)
//! back to a typed [`Value`] that can be stored again.
//!
//! `from_view(&view(v, reveal), Some(&v)) == v` for every value Python writes, and encoding the
//! result gives the stored bytes again. The optional *template* (the value being replaced)
//! decides what the JSON view cannot say on its own:
//!
//! * an object whose `$type` matches the template's keeps the template's encoding (ext code,
//!   `module`/`name` split, the ext 5 `model_validate_json` / ext 3 method extra), and its
//!   fields follow the template's field order (new fields are appended in JSON order);
//! * a masked secret (`"$secret": true` with the mask) keeps the template's real secret;
//! * an undecodable value (`$error` object) is accepted only when it is the template's own,
//!   unchanged (its bytes are kept); any other `$error` object is rejected;
//! * a float32 template keeps float32 when the number is exactly representable.
//!
//! Without a template (or when the `$type` differs) the encoding is inferred: `$value` → ext 0
//! (ext 3 `fromisoformat` for `datetime.datetime`), `$args` → ext 1, fields → ext 5 with
//! `"model_validate_json"` when the module starts with `langchain_core.`, else ext 2. An explicit
//! `"$ext": N` (0–5) overrides the inference.
//!
//! Errors carry the JSON path of the offending value (`values.messages[2].content: …`).

mod builtins;
mod error;
mod object;
mod revive;
#[cfg(test)]
mod tests;
mod walker;

pub use error::UnviewError;

use crate::decoded::Decoded;
use crate::value::Value;
use crate::view::{view_decoded, ViewOptions};
use serde_json::Value as Json;
use walker::Unview;

/// Turn a JSON view back into a value; see the module docs. `template` is the value being
/// replaced (or the value the view was made from), if any.
pub fn from_view(json: &Json, template: Option<&Value>) -> Result<Value, UnviewError> {
    from_view_at(json, template, "")
}

/// [`from_view`] with a root path for error messages (e.g. `values.messages`).
pub fn from_view_at(
    json: &Json,
    template: Option<&Value>,
    path: &str,
) -> Result<Value, UnviewError> {
    Unview {
        path: path.to_owned(),
    }
    .value(json, template)
}

/// A whole stored value (a channel value or a pending write) from its JSON view
/// ([`crate::view_decoded`]): `null` → [`Decoded::Null`], top-level bytes →
/// [`Decoded::Bytes`] / [`Decoded::ByteArray`] (the serde tags Python uses for them), anything
/// else → [`Decoded::Msgpack`]. A template that is not msgpack (legacy JSON, pickle, encrypted,
/// undecodable) is kept as it is when the JSON is its unchanged view; otherwise pickle,
/// encrypted and `$error` views are rejected.
pub fn decoded_from_view(
    json: &Json,
    template: Option<&Decoded>,
    path: &str,
) -> Result<Decoded, UnviewError> {
    let mut u = Unview {
        path: path.to_owned(),
    };
    if let Some(t) = template {
        if !matches!(t, Decoded::Msgpack(_) | Decoded::Null | Decoded::Empty)
            && view_decoded(
                t,
                ViewOptions {
                    reveal_secrets: true,
                },
            )
            .as_ref()
                == Some(json)
        {
            return Ok(t.clone());
        }
    }
    if let Some(obj) = json.as_object() {
        match obj.get("$type").and_then(Json::as_str) {
            Some("builtins.bytearray") => return Ok(Decoded::ByteArray(u.bytes(obj)?)),
            Some("builtins.bytes") => return Ok(Decoded::Bytes(u.bytes(obj)?)),
            _ => {}
        }
    }
    let value_template = template.and_then(|t| match t {
        Decoded::Msgpack(v) => Some(v.clone()),
        Decoded::Null => Some(Value::Nil),
        _ => None,
    });
    Ok(u.value(json, value_template.as_ref())?.into())
}
