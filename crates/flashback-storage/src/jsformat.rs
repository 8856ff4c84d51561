//! LangGraph.js's rows (`@langchain/langgraph-checkpoint-sqlite` 1.0.4, `-postgres` 1.0.5):
//! what a [`Dialect`] does (its versions and times), and the documents and values the JS savers
//! write, so that what Flashback writes into a JS database is what JS reads back.
//!
//! The JS savers store every value with the `json` serde (`JSON.stringify`, langchain objects as
//! `lc` envelopes: [`flashback_codec::jsvalue`]), channel versions as integers (the next is the
//! previous + 1), `ts` as `Date.toISOString()`, and metadata `{source, step, parents}`.
//! SQLite keeps the channel values inside the checkpoint document; Postgres keeps every value
//! (primitives too) in `checkpoint_blobs`, its JSONB document has no `channel_values`.

use crate::layout::Dialect;
use crate::model::{Checkpoint, Version, Versions};
use crate::StoreError;
use flashback_codec::{jsvalue, Decoded};
use serde_json::{Map, Value as Json};

impl Dialect {
    /// The version a step gives the channels it updates, after `current` (the maximum).
    pub fn next_version(self, current: Option<&Version>) -> Version {
        match self {
            Dialect::Python => crate::pyfmt::next_version(current),
            Dialect::Js => Version::Int(current.and_then(Version::counter).unwrap_or(0) + 1),
        }
    }

    /// A new checkpoint's `ts`: Python's `datetime.now(timezone.utc).isoformat()`, or JS's
    /// `new Date().toISOString()` (milliseconds, `Z`).
    pub fn now(self) -> String {
        match self {
            Dialect::Python => crate::pyfmt::utc_now_isoformat(),
            Dialect::Js => js_iso(std::time::SystemTime::now()),
        }
    }

    /// How the description of a database names it.
    pub fn label(self) -> &'static str {
        match self {
            Dialect::Python => "",
            Dialect::Js => "LangGraph.js, json serde",
        }
    }
}

/// `Date.toISOString()` of a time: `2026-11-26T14:50:39.328Z`.
pub fn js_iso(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let py = crate::pyfmt::isoformat_utc(d.as_secs() as i64, 0);
    let base = py.strip_suffix("+00:00").unwrap_or(&py);
    format!("{base}.{:03}Z", d.subsec_millis())
}

/// A value as the JS savers store it: `(json | bytes, bytes)`, or why JS could not read it.
/// (The writers check it first with [`crate::saver::check_storable`], as for Python's rows.)
pub fn value(channel: &str, v: &Decoded) -> Result<(String, Vec<u8>), StoreError> {
    jsvalue::encode(v).map_err(|e| refused(channel, &e))
}

fn refused(channel: &str, e: &jsvalue::NotJson) -> StoreError {
    let at = if e.path == "the value" {
        String::new()
    } else {
        format!(" at {}", e.path)
    };
    StoreError::InvalidInput(format!(
        "channel {channel:?}{at}: {} cannot be written to a LangGraph.js database (its JSON \
         serde has no form for it, so the JS program could not read it back); nothing was \
         written",
        e.what
    ))
}

/// A value inside the SQLite checkpoint document, as its JSON text (`None`: no value).
fn nested(channel: &str, v: &Decoded) -> Result<Option<String>, StoreError> {
    crate::saver::check_storable(channel, v, Dialect::Js)?;
    match v {
        Decoded::Empty => Ok(None),
        Decoded::Null => Ok(Some("null".into())),
        Decoded::Msgpack(v) => jsvalue::to_json_text(v)
            .map(Some)
            .map_err(|e| refused(channel, &e)),
        other => Err(StoreError::InvalidInput(format!(
            "channel {channel:?}: {other} cannot be stored inside a LangGraph.js checkpoint \
             document; nothing was written"
        ))),
    }
}

/// Channel versions as JS numbers them. LangGraph's `"{counter:032}.{random}"` strings (a thread
/// copied from a Python database) are refused: JS's `getNextVersion` throws on a string, so the
/// program could not continue the thread.
fn versions_json(vs: &Versions) -> Result<Json, StoreError> {
    let mut out = Map::new();
    for (channel, v) in vs {
        let json = match v {
            Version::Str(s) => {
                return Err(StoreError::InvalidInput(format!(
                    "channel {channel:?} has LangGraph's (Python's) version {s:?}; LangGraph.js \
                     numbers versions and could not continue this thread, so nothing was written"
                )))
            }
            v => v.to_json().ok_or_else(|| {
                StoreError::InvalidInput(format!(
                    "the version of channel {channel:?} is not a number JSON can store"
                ))
            })?,
        };
        out.insert(channel.clone(), json);
    }
    Ok(Json::Object(out))
}

/// The document's fields but `channel_values`, in JS's order.
fn fields(cp: &Checkpoint) -> Result<[(&'static str, Json); 5], StoreError> {
    let mut seen = Map::new();
    for (node, vs) in &cp.versions_seen {
        seen.insert(node.clone(), versions_json(vs)?);
    }
    Ok([
        ("v", Json::from(cp.v)),
        ("id", Json::String(cp.id.clone())),
        ("ts", Json::String(cp.ts.clone())),
        ("channel_versions", versions_json(&cp.channel_versions)?),
        ("versions_seen", Json::Object(seen)),
    ])
}

/// The checkpoint document Postgres stores (JSONB, no `channel_values`: JS keeps every value
/// in `checkpoint_blobs`), keys in JS's order (`v, id, ts, channel_versions, versions_seen`).
pub fn checkpoint_document(cp: &Checkpoint) -> Result<Json, StoreError> {
    Ok(Json::Object(
        fields(cp)?
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    ))
}

/// The checkpoint document SQLite stores, as `JSON.stringify` writes it (keys in JS's order:
/// `v, id, ts, channel_values, channel_versions, versions_seen`), every value inline as its
/// JSON text (what was kept as its stored text written back unchanged).
pub fn sqlite_document(cp: &Checkpoint) -> Result<Vec<u8>, StoreError> {
    let fields = fields(cp)?;
    let mut values = Vec::with_capacity(cp.channel_values.len());
    for (channel, v) in &cp.channel_values {
        if let Some(text) = nested(channel, v)? {
            values.push((channel.as_str(), text));
        }
    }
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if *key == "channel_versions" {
            out.extend_from_slice(b"\"channel_values\":{");
            for (j, (channel, text)) in values.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&to_bytes(&Json::String((*channel).to_owned())));
                out.push(b':');
                out.extend_from_slice(text.as_bytes());
            }
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(&to_bytes(&Json::String((*key).to_owned())));
        out.push(b':');
        out.extend_from_slice(&to_bytes(value));
    }
    out.push(b'}');
    Ok(out)
}

/// Compact JSON bytes, as `JSON.stringify` writes them.
pub fn to_bytes(doc: &Json) -> Vec<u8> {
    serde_json::to_vec(doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn js_versions_and_times() {
        assert_eq!(Dialect::Js.next_version(None), Version::Int(1));
        assert_eq!(
            Dialect::Js.next_version(Some(&Version::Int(6))),
            Version::Int(7)
        );
        let t = UNIX_EPOCH + Duration::from_millis(1_795_000_000_328);
        assert_eq!(js_iso(t), "2026-11-18T11:06:40.328Z");
        assert!(Dialect::Js.now().ends_with('Z'));
    }

    #[test]
    fn documents_are_what_the_js_savers_write() {
        let cp = Checkpoint {
            v: 4,
            id: "1f0".into(),
            ts: "2026-11-26T14:50:39.328Z".into(),
            channel_values: vec![
                (
                    "log".into(),
                    Arc::new(Decoded::from(flashback_codec::Value::Array(vec![
                        flashback_codec::Value::Str("start".into()),
                    ]))),
                ),
                ("branch:to:a".into(), Arc::new(Decoded::Null)),
            ],
            channel_versions: vec![("log".into(), Version::Int(3))],
            versions_seen: vec![("a".into(), vec![("log".into(), Version::Int(2))])],
            updated_channels: None,
            pending_sends: None,
        };
        assert_eq!(
            String::from_utf8(sqlite_document(&cp).unwrap()).unwrap(),
            r#"{"v":4,"id":"1f0","ts":"2026-11-26T14:50:39.328Z","channel_values":{"log":["start"],"branch:to:a":null},"channel_versions":{"log":3},"versions_seen":{"a":{"log":2}}}"#
        );
        let pg = checkpoint_document(&cp).unwrap();
        let mut python = cp.clone();
        python.channel_versions = vec![("log".into(), Version::Str("0001.0.5".into()))];
        let e = sqlite_document(&python).unwrap_err().to_string();
        assert!(e.contains("LangGraph.js numbers versions"), "{e}");
        assert!(pg.get("channel_values").is_none());
        let e = value("x", &Decoded::Pickle(vec![1]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("channel \"x\"") && e.contains("LangGraph.js"),
            "{e}"
        );
    }
}
