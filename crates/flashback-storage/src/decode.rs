//! Turning stored checkpoint documents into [`Checkpoint`]s.

use crate::model::{Checkpoint, Version, Versions};
use flashback_codec::{jsvalue, msgpack, AesKey, DecodeBudget, DecodeCache, Decoded, Value};
use std::sync::Arc;

/// How a store decodes what it reads: within a budget, and with the key for encrypted values.
#[derive(Clone)]
pub(crate) struct Decoding {
    pub(crate) budget: DecodeBudget,
    pub(crate) key: Option<Arc<AesKey>>,
    /// Decode only the values of the channels it accepts (a selecting read); `None`: all.
    pub(crate) only: Option<crate::model::ChannelFilter>,
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding {
            budget: DecodeBudget::UNLIMITED,
            key: None,
            only: None,
        }
    }
}

impl Decoding {
    /// A decode cache for one read.
    pub(crate) fn cache(&self) -> DecodeCache {
        DecodeCache::with_budget(self.budget).with_key(self.key.clone())
    }
}

/// A map key as a channel or node name: a string, or (a string that is not valid UTF-8) its
/// escaped bytes, so that the entry is still shown. Other keys are not names: `None`.
fn key_name(k: Value) -> Option<String> {
    match k {
        Value::Str(k) => Some(k.into_string()),
        Value::RawExt(raw) if msgpack::is_invalid_str(&raw) => Some(format!(
            "⟨invalid UTF-8 \"{}\"⟩",
            crate::escape::escape_bytes(&raw.data)
        )),
        _ => None,
    }
}

/// Build a [`Checkpoint`] from the msgpack document SQLite stores in `checkpoints.checkpoint`.
pub(crate) fn checkpoint_from_msgpack(doc: Value) -> Result<Checkpoint, String> {
    let Value::Map(entries) = doc else {
        return Err(format!(
            "checkpoint document is a {}, not a dict",
            doc.type_name()
        ));
    };
    let mut cp = empty();
    for (k, v) in entries {
        let Value::Str(key) = k else { continue };
        match key.as_str() {
            "v" => cp.v = v.as_i64().unwrap_or(0),
            "id" => cp.id = v.as_str().unwrap_or_default().to_owned(),
            "ts" => cp.ts = v.as_str().unwrap_or_default().to_owned(),
            "channel_values" => {
                if let Value::Map(values) = v {
                    cp.channel_values = values
                        .into_iter()
                        .filter_map(|(k, v)| Some((key_name(k)?, Arc::new(Decoded::from(v)))))
                        .collect();
                }
            }
            "channel_versions" => cp.channel_versions = versions_from_msgpack(v),
            "versions_seen" => {
                if let Value::Map(nodes) = v {
                    cp.versions_seen = nodes
                        .into_iter()
                        .filter_map(|(k, v)| Some((key_name(k)?, versions_from_msgpack(v))))
                        .collect();
                }
            }
            "updated_channels" => {
                cp.updated_channels = match v {
                    Value::Array(items) => Some(
                        items
                            .iter()
                            .filter_map(|i| i.as_str().map(str::to_owned))
                            .collect(),
                    ),
                    _ => None,
                }
            }
            "pending_sends" => {
                if let Value::Array(items) = v {
                    cp.pending_sends = Some(
                        items
                            .into_iter()
                            .map(|i| Arc::new(Decoded::from(i)))
                            .collect(),
                    );
                }
            }
            _ => {}
        }
    }
    Ok(cp)
}

fn versions_from_msgpack(v: Value) -> Versions {
    // Consumes the tree: long version strings move instead of being copied.
    let Value::Map(entries) = v else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|(k, v)| {
            let version = match v {
                Value::Str(s) => Version::Str(s.into_string()),
                Value::Int(i) => Version::Int(i),
                Value::Float(f) => Version::Float(f),
                _ => return None,
            };
            Some((key_name(k)?, version))
        })
        .collect()
}

/// Build a [`Checkpoint`] from the JSONB document Postgres stores (channel values inline only
/// for primitives; blobs are overlaid by the caller).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn checkpoint_from_json(doc: &serde_json::Value) -> Result<Checkpoint, String> {
    let Some(obj) = doc.as_object() else {
        return Err("checkpoint JSON is not an object".into());
    };
    let mut cp = empty();
    cp.v = obj
        .get("v")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0);
    cp.id = obj
        .get("id")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    cp.ts = obj
        .get("ts")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    if let Some(values) = obj.get("channel_values").and_then(|v| v.as_object()) {
        cp.channel_values = values
            .iter()
            .map(|(k, v)| (k.clone(), Arc::new(Decoded::from(jsvalue::revive(v)))))
            .collect();
    }
    cp.channel_versions = obj
        .get("channel_versions")
        .map(versions_from_json)
        .unwrap_or_default();
    if let Some(seen) = obj.get("versions_seen").and_then(|v| v.as_object()) {
        cp.versions_seen = seen
            .iter()
            .map(|(k, v)| (k.clone(), versions_from_json(v)))
            .collect();
    }
    cp.updated_channels = obj
        .get("updated_channels")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        });
    Ok(cp)
}

#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
fn versions_from_json(v: &serde_json::Value) -> Versions {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), Version::from_json(v)?)))
                .collect()
        })
        .unwrap_or_default()
}

/// A value decoded from `(tag, bytes)` stored for `channel`, with LangGraph.js's untyped
/// control values (`json` only) given their Python types ([`flashback_codec::jsvalue::for_channel`]).
pub(crate) fn in_channel(tag: &str, channel: &str, d: Decoded) -> Decoded {
    if tag != "json" || (channel != jsvalue::TASKS && channel != jsvalue::INTERRUPT) {
        return d;
    }
    match d {
        Decoded::Msgpack(v) => Decoded::Msgpack(jsvalue::for_channel(channel, v)),
        d => d,
    }
}

/// [`in_channel`] for every value of a checkpoint document stored with `tag`.
pub(crate) fn typed_channels(tag: &str, mut cp: Checkpoint) -> Checkpoint {
    if tag == "json" {
        for (channel, v) in &mut cp.channel_values {
            if channel == jsvalue::TASKS {
                let d = Arc::unwrap_or_clone(std::mem::replace(v, Arc::new(Decoded::Null)));
                *v = Arc::new(in_channel(tag, channel, d));
            }
        }
    }
    cp
}

/// The one wording of a checkpoint document that cannot be read (both backends).
pub(crate) fn unreadable_document(detail: String) -> String {
    format!("the checkpoint document cannot be read: {detail}")
}

/// A checkpoint with nothing in it (what an unreadable document loads as).
pub(crate) fn empty() -> Checkpoint {
    Checkpoint {
        v: 0,
        id: String::new(),
        ts: String::new(),
        channel_values: Vec::new(),
        channel_versions: Vec::new(),
        versions_seen: Vec::new(),
        updated_channels: None,
        pending_sends: None,
    }
}
