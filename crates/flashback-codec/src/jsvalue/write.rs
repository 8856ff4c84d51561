//! The way back: a typed value as the JSON LangGraph.js's serde writes, refusing what JS
//! could not read back as the same value.

use super::{class_of, ALWAYS, BASE, LC_EXTRA};
use crate::value::{PyObject, Value};
use serde_json::{Map, Value as Json};

/// An `lc: 2` constructor record as JS's `_encodeConstructorArgs` writes it.
fn record(name: &str, method: Option<&str>, args: Vec<Json>) -> Json {
    serde_json::json!({"lc": 2, "type": "constructor", "id": [name], "method": method,
                       "args": args, "kwargs": {}})
}

/// Why a value cannot be written as JSON LangGraph.js reads back as the same value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {what} cannot be written to a LangGraph.js database (its JSON serde has no form for it)")]
pub struct NotJson {
    /// Where in the value (`messages[2].when`).
    pub path: String,
    /// What it is.
    pub what: String,
}

/// The JSON LangGraph.js's serde writes for `v`: messages as `lc` envelopes, `Send` as
/// `{node, args}`, `Interrupt` as `{id, value}`, objects revived from envelopes as those
/// envelopes, bytes, sets and DeltaChannel snapshots as JS's `lc: 2` records. Refuses what JS
/// could not read back as the same value: numpy arrays, non-finite floats, dicts with
/// non-string keys, and every other Python object.
pub fn to_json(v: &Value) -> Result<Json, NotJson> {
    let mut path = String::new();
    json_at(v, &mut path)
}

fn refuse(path: &str, what: String) -> NotJson {
    NotJson {
        path: if path.is_empty() {
            "the value".into()
        } else {
            path.trim_start_matches('.').into()
        },
        what,
    }
}

fn json_at(v: &Value, path: &mut String) -> Result<Json, NotJson> {
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .ok_or_else(|| refuse(path, format!("the float {f}")))?,
        Value::Float32(f) => serde_json::Number::from_f64(f64::from(*f))
            .map(Json::Number)
            .ok_or_else(|| refuse(path, format!("the float {f}")))?,
        Value::Str(s) => Json::String(s.to_string()),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(json_at(item, path)?);
                path.truncate(len);
            }
            Json::Array(out)
        }
        Value::Map(entries) => Json::Object(fields(entries, path, |_, _| true)?),
        Value::Object(o) => object_json(o, path)?,
        Value::Bin(b) => record(
            "Uint8Array",
            Some("from"),
            vec![Json::Array(b.iter().map(|x| Json::from(*x)).collect())],
        ),
        Value::NdArray(_) => return Err(refuse(path, "a numpy array".into())),
        Value::DeltaSnapshot(inner) => {
            serde_json::json!({"lc": 2, "type": "delta_snapshot", "value": json_at(inner, path)?})
        }
        Value::RawExt(raw) => {
            return Err(refuse(
                path,
                format!("an undecoded msgpack ext {}", raw.code),
            ))
        }
    })
}

/// A dict's entries as a JSON object, those `keep` accepts (all but a message's defaults).
fn fields(
    entries: &[(Value, Value)],
    path: &mut String,
    keep: impl Fn(&str, &Value) -> bool,
) -> Result<Map<String, Json>, NotJson> {
    let mut out = Map::new();
    for (k, v) in entries {
        let Some(key) = k.as_str() else {
            return Err(refuse(path, format!("a dict with a {} key", k.type_name())));
        };
        if !keep(key, v) {
            continue;
        }
        let len = path.len();
        path.push('.');
        path.push_str(key);
        out.insert(key.to_owned(), json_at(v, path)?);
        path.truncate(len);
    }
    Ok(out)
}

fn object_json(o: &PyObject, path: &mut String) -> Result<Json, NotJson> {
    let entries = match &o.payload {
        Value::Map(m) => Some(m.as_slice()),
        _ => None,
    };
    if let (Some(class), Some(entries)) = (class_of(o), entries) {
        let is_default = |key: &str, v: &Value| -> bool {
            let default = BASE.contains(&key).then_some(Value::Nil).or_else(|| {
                class
                    .extra
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, d)| d.value())
            });
            default.is_some_and(|d| &d == v)
        };
        let always_list =
            |key: &str| class.kind == "ai" && matches!(key, "tool_calls" | "invalid_tool_calls");
        let kwargs = fields(entries, path, |key, v| {
            key != "type" && (ALWAYS.contains(&key) || always_list(key) || !is_default(key, v))
        })?;
        return Ok(serde_json::json!({
            "lc": 1, "type": "constructor",
            "id": ["langchain_core", "messages", class.name],
            "kwargs": kwargs,
        }));
    }
    let type_name = o.type_name();
    match (type_name.as_str(), &o.payload) {
        ("langgraph.types.Send", Value::Array(args)) if matches!(args.len(), 2 | 3) => {
            let node = json_at(&args[0], path)?;
            let len = path.len();
            path.push_str(".arg");
            let arg = json_at(&args[1], path)?;
            path.truncate(len);
            let mut send = serde_json::json!({"node": node, "args": arg});
            if let Some(timeout) = args.get(2) {
                send["timeout"] = json_at(timeout, path)?;
            }
            return Ok(send);
        }
        ("builtins.set", Value::Array(items)) => {
            let items = items
                .iter()
                .map(|item| json_at(item, path))
                .collect::<Result<_, _>>()?;
            return Ok(record("Set", None, vec![Json::Array(items)]));
        }
        ("js.Map", Value::Map(pairs)) => {
            let mut out = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                out.push(Json::Array(vec![json_at(k, path)?, json_at(v, path)?]));
            }
            return Ok(record("Map", None, vec![Json::Array(out)]));
        }
        ("js.RegExp" | "js.Error", Value::Array(args)) => {
            let args = args
                .iter()
                .map(|a| json_at(a, path))
                .collect::<Result<_, _>>()?;
            return Ok(record(&o.name, None, args));
        }
        ("js.undefined", _) => return Ok(serde_json::json!({"lc": 2, "type": "undefined"})),
        ("langgraph.types.Interrupt", Value::Map(m)) => {
            let get = |key: &str| {
                m.iter()
                    .find(|(k, _)| k.as_str() == Some(key))
                    .map(|(_, v)| v)
            };
            if let (Some(value), Some(id)) = (get("value"), get("id")) {
                let id = json_at(id, path)?;
                let value = json_at(value, path)?;
                return Ok(serde_json::json!({"id": id, "value": value}));
            }
        }
        _ => {}
    }
    if o.extra.as_ref().and_then(Value::as_str) == Some(LC_EXTRA) {
        if let Some(entries) = entries {
            let mut id: Vec<Json> = o
                .module
                .split('.')
                .map(|s| Json::String(s.into()))
                .collect();
            id.push(Json::String(o.name.to_string()));
            let kwargs = fields(entries, path, |_, _| true)?;
            return Ok(
                serde_json::json!({"lc": 1, "type": "constructor", "id": id, "kwargs": kwargs}),
            );
        }
    }
    Err(refuse(path, format!("a {type_name} object")))
}

/// `(type, bytes)` as LangGraph.js's `dumpsTyped` stores a value: `json` (compact
/// `JSON.stringify` output) or `bytes`. A value stored in a form JS has none for (pickle,
/// encrypted, undecodable other than `json`, left undecoded) is refused.
pub fn encode(d: &crate::Decoded) -> Result<(String, Vec<u8>), NotJson> {
    use crate::Decoded;
    let what = match d {
        Decoded::Msgpack(v) => {
            let json = to_json(v)?;
            return Ok(("json".into(), serde_json::to_vec(&json).unwrap_or_default()));
        }
        Decoded::Null => return Ok(("json".into(), b"null".to_vec())),
        Decoded::Bytes(b) | Decoded::ByteArray(b) => return Ok(("bytes".into(), b.clone())),
        Decoded::Error { tag, raw, .. } if tag == "json" || tag == "bytes" => {
            return Ok((tag.clone(), raw.clone()))
        }
        Decoded::Empty => return Ok(("empty".into(), Vec::new())),
        Decoded::Pickle(_) => "a pickled value".to_owned(),
        Decoded::Encrypted { tag, .. } => format!("an encrypted value ({tag})"),
        Decoded::Error { tag, .. } => format!("an undecodable {tag} value"),
        Decoded::TooLarge { .. } => "a value left undecoded (too large)".to_owned(),
    };
    Err(refuse("", what))
}
