//! Row building for the write side (pure, before any statement runs): the rows of one `put`
//! (the JSONB document with the primitives inline, the blobs) and of one `put_writes` batch.

use crate::model::{Checkpoint, Version, Versions};
use crate::saver::{write_idx, PutRequest};
use crate::serializer::Serde;
use crate::{jsformat, Dialect, StoreError};
use flashback_codec::{Decoded, Value};
use serde_json::{Map, Value as Json};
use std::collections::{HashMap, HashSet};

/// The rows of one `put`.
pub(super) struct PutRows {
    pub(super) channels: Vec<String>,
    pub(super) versions: Vec<String>,
    pub(super) types: Vec<String>,
    pub(super) blobs: Vec<Option<Vec<u8>>>,
    pub(super) checkpoint: Json,
    pub(super) metadata: Json,
}

/// Where `put` stores a channel value.
enum Placement {
    /// Inline in `checkpoint.channel_values`.
    Inline(Json),
    /// In `checkpoint_blobs` only.
    Blob,
    /// A `_DeltaSnapshot`: in `checkpoint_blobs`, with the inline marker `true`.
    Snapshot,
}

impl PutRows {
    /// The rows Python's saver writes for `req`, or (`Dialect::Js`) LangGraph.js's: every
    /// value a `json` blob, a document without `channel_values`; the blobs stored by `serde`.
    pub(super) fn new(req: &PutRequest<'_>, serde: Serde<'_>) -> Result<PutRows, StoreError> {
        let js = serde.dialect == Dialect::Js;
        let cp = req.checkpoint;
        for (what, text) in [
            ("thread_id", req.thread_id),
            ("checkpoint_ns", req.checkpoint_ns),
            ("checkpoint id", cp.id.as_str()),
            (
                "parent_checkpoint_id",
                req.parent_checkpoint_id.unwrap_or(""),
            ),
        ] {
            check_text(what, text)?;
        }

        // Channel values: the last entry of a channel wins, as in a Python dict.
        let mut inline = Map::new();
        let mut blob_values: HashMap<&str, &Decoded> = HashMap::new();
        for (channel, value) in &cp.channel_values {
            let placement = if js {
                Placement::Blob
            } else {
                placement(value).map_err(|why| {
                    StoreError::InvalidInput(format!("channel {channel:?}: {why}"))
                })?
            };
            match placement {
                Placement::Inline(json) => {
                    blob_values.remove(channel.as_str());
                    inline.insert(channel.clone(), json);
                }
                Placement::Blob => {
                    inline.remove(channel.as_str());
                    blob_values.insert(channel, value);
                }
                Placement::Snapshot => {
                    inline.insert(channel.clone(), Json::Bool(true));
                    blob_values.insert(channel, value);
                }
            }
        }

        // Blobs: only channels with a new version (a dict: the last entry of a channel wins).
        let mut new_versions: Vec<(&str, &Version)> = Vec::new();
        for (channel, version) in req.new_versions {
            match new_versions.iter_mut().find(|(c, _)| *c == channel) {
                Some(slot) => slot.1 = version,
                None => new_versions.push((channel, version)),
            }
        }
        let mut rows = PutRows {
            channels: Vec::new(),
            versions: Vec::new(),
            types: Vec::new(),
            blobs: Vec::new(),
            checkpoint: Json::Null,
            metadata: Json::Null,
        };
        for (channel, version) in new_versions {
            let value = match blob_values.get(channel) {
                Some(value) => *value,
                // JS's `_dumpBlobs` stores ('empty', NULL) for a new version without a value.
                None if js => &Decoded::Empty,
                None => continue,
            };
            let version = version.as_text();
            check_text("channel", channel)?;
            check_text("channel version", &version)?;
            let (tag, bytes) = serde.dumps_typed(channel, value)?;
            check_text("serde type", &tag)?;
            rows.channels.push(channel.to_owned());
            rows.versions.push(version);
            // `_dump_blobs` writes ("empty", NULL) for a channel without a value.
            rows.blobs
                .push((!matches!(value, Decoded::Empty)).then_some(bytes));
            rows.types.push(tag);
        }

        rows.checkpoint = if js {
            jsformat::checkpoint_document(cp)?
        } else {
            checkpoint_json(cp, inline)?
        };
        if let Some(path) = nul_path(&rows.checkpoint) {
            return Err(StoreError::InvalidInput(match path.split_first() {
                Some((first, rest)) if first == "channel_values" && !rest.is_empty() => format!(
                    "channel {:?}: the value contains a NUL character (\\u0000), which Postgres \
                     JSONB cannot store (Python's PostgresSaver.put fails on it too)",
                    rest[0]
                ),
                _ => format!(
                    "checkpoint {}: {} contains a NUL character (\\u0000), which Postgres JSONB \
                     cannot store",
                    cp.id,
                    path.join(".")
                ),
            }));
        }
        rows.metadata = metadata_json(req.metadata)?;
        Ok(rows)
    }
}

/// Python's `v is None or isinstance(v, (str, int, float, bool))` test, on decoded values.
fn placement(value: &Decoded) -> Result<Placement, String> {
    let inline = match value {
        Decoded::Null => Json::Null,
        Decoded::Msgpack(v) => match v {
            Value::Nil => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => finite(*f)?,
            // Python reads a float32 as a float.
            Value::Float32(f) => finite(f64::from(*f))?,
            Value::Str(s) => Json::String(s.to_string()),
            Value::DeltaSnapshot(_) => return Ok(Placement::Snapshot),
            _ => return Ok(Placement::Blob),
        },
        _ => return Ok(Placement::Blob),
    };
    Ok(Placement::Inline(inline))
}

fn finite(f: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| {
            format!(
                "the float {f} cannot be stored inline: JSON has no NaN or infinity (Python's \
             json.dumps writes {}, which Postgres JSONB rejects)",
                if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
            )
        })
}

fn version_json(v: &Version) -> Result<Json, String> {
    match (v.to_json(), v) {
        (Some(json), _) => Ok(json),
        (None, Version::Float(f)) => finite(*f),
        (None, _) => Err("a version JSON has no form for".into()),
    }
}

fn versions_json(vs: &Versions, what: &str) -> Result<Json, StoreError> {
    let mut map = Map::new();
    for (channel, v) in vs {
        let json = version_json(v)
            .map_err(|why| StoreError::InvalidInput(format!("{what} of {channel:?}: {why}")))?;
        map.insert(channel.clone(), json);
    }
    Ok(Json::Object(map))
}

/// The JSONB document: `{v, id, ts, versions_seen, channel_values, channel_versions,
/// updated_channels}` (+ `pending_sends` when the checkpoint has that key), as
/// `Jsonb(copy)` dumps it.
fn checkpoint_json(cp: &Checkpoint, inline: Map<String, Json>) -> Result<Json, StoreError> {
    let mut seen = Map::new();
    for (node, versions) in &cp.versions_seen {
        seen.insert(
            node.clone(),
            versions_json(versions, &format!("versions_seen[{node:?}]"))?,
        );
    }
    let mut doc = Map::new();
    doc.insert("v".into(), Json::from(cp.v));
    doc.insert("id".into(), Json::String(cp.id.clone()));
    doc.insert("ts".into(), Json::String(cp.ts.clone()));
    doc.insert("versions_seen".into(), Json::Object(seen));
    doc.insert("channel_values".into(), Json::Object(inline));
    doc.insert(
        "channel_versions".into(),
        versions_json(&cp.channel_versions, "channel_versions")?,
    );
    doc.insert(
        "updated_channels".into(),
        cp.updated_channels.as_ref().map_or(Json::Null, |u| {
            Json::Array(u.iter().cloned().map(Json::String).collect())
        }),
    );
    if let Some(sends) = &cp.pending_sends {
        // json.dumps succeeds only for JSON-able items (in practice: an empty list).
        let items = sends
            .iter()
            .enumerate()
            .map(|(i, d)| {
                d.as_value()
                    .map_or_else(|| (d.is_none()).then_some(Json::Null), plain_json)
                    .ok_or_else(|| {
                        StoreError::InvalidInput(format!(
                            "checkpoint {}: pending_sends[{i}] is not JSON-serializable (Python's \
                             json.dumps fails on it too)",
                            cp.id
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        doc.insert("pending_sends".into(), Json::Array(items));
    }
    Ok(Json::Object(doc))
}

/// A msgpack value made only of what `json.dumps` accepts (no objects, bytes or non-string
/// keys, finite floats).
fn plain_json(v: &Value) -> Option<Json> {
    Some(match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => finite(*f).ok()?,
        Value::Float32(f) => finite(f64::from(*f)).ok()?,
        Value::Str(s) => Json::String(s.to_string()),
        Value::Array(items) => Json::Array(items.iter().map(plain_json).collect::<Option<_>>()?),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| Some((k.as_str()?.to_owned(), plain_json(v)?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// `get_serializable_checkpoint_metadata` on final metadata: NULs stripped from top-level
/// string values, no `writes` key.
fn metadata_json(metadata: &Map<String, Json>) -> Result<Json, StoreError> {
    let mut out = Map::new();
    for (key, value) in metadata {
        if key == "writes" {
            continue;
        }
        let value = match value {
            Json::String(s) if s.contains('\0') => Json::String(s.replace('\0', "")),
            other => other.clone(),
        };
        out.insert(key.clone(), value);
    }
    let out = Json::Object(out);
    if let Some(path) = nul_path(&out) {
        return Err(StoreError::InvalidInput(format!(
            "metadata {}: contains a NUL character (\\u0000), which Postgres JSONB cannot store \
             (Python strips NULs only from top-level string values and fails here too)",
            path.join(".")
        )));
    }
    Ok(out)
}

/// The path (keys and array indexes) to the first string or key containing a NUL.
pub(crate) fn nul_path(v: &Json) -> Option<Vec<String>> {
    match v {
        Json::String(s) if s.contains('\0') => Some(Vec::new()),
        Json::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            nul_path(item).map(|mut p| {
                p.insert(0, i.to_string());
                p
            })
        }),
        Json::Object(map) => map.iter().find_map(|(k, item)| {
            if k.contains('\0') {
                return Some(vec![format!("{k:?} (the key)")]);
            }
            nul_path(item).map(|mut p| {
                p.insert(0, k.clone());
                p
            })
        }),
        _ => None,
    }
}

/// Postgres `text` cannot hold NUL characters.
pub(crate) fn check_text(what: &str, text: &str) -> Result<(), StoreError> {
    if text.contains('\0') {
        Err(StoreError::InvalidInput(format!(
            "{what} {text:?} contains a NUL character, which Postgres text cannot store"
        )))
    } else {
        Ok(())
    }
}

/// The rows of one `put_writes` batch.
pub(super) struct WriteRows {
    /// DO UPDATE (every channel special) rather than DO NOTHING.
    pub(super) replace: bool,
    pub(super) idx: Vec<i32>,
    pub(super) channels: Vec<String>,
    pub(super) types: Vec<String>,
    pub(super) blobs: Vec<Vec<u8>>,
}

impl WriteRows {
    /// `_dump_writes`. Python executes one statement per row, so when a batch repeats an idx
    /// (a special channel written twice) the first row wins with DO NOTHING and the last with
    /// DO UPDATE; one multi-row statement must not touch a row twice, so the batch keeps only
    /// that row of each idx.
    pub(super) fn new(
        writes: &[(String, Decoded)],
        replace: bool,
        serde: Serde<'_>,
    ) -> Result<WriteRows, StoreError> {
        let mut rows: Vec<(i32, &str, &Decoded)> = Vec::with_capacity(writes.len());
        for (position, (channel, value)) in writes.iter().enumerate() {
            check_text("channel", channel)?;
            let idx = i32::try_from(write_idx(channel, position)).map_err(|_| {
                StoreError::InvalidInput(format!(
                    "write #{position} of channel {channel:?}: the idx does not fit the INTEGER \
                     column"
                ))
            })?;
            rows.push((idx, channel, value));
        }
        if replace {
            let mut seen = HashSet::new();
            let mut kept: Vec<_> = rows
                .into_iter()
                .rev()
                .filter(|(idx, _, _)| seen.insert(*idx))
                .collect();
            kept.reverse();
            rows = kept;
        } else {
            let mut seen = HashSet::new();
            rows.retain(|(idx, _, _)| seen.insert(*idx));
        }
        let mut out = WriteRows {
            replace,
            idx: Vec::with_capacity(rows.len()),
            channels: Vec::with_capacity(rows.len()),
            types: Vec::with_capacity(rows.len()),
            blobs: Vec::with_capacity(rows.len()),
        };
        for (idx, channel, value) in rows {
            let (tag, bytes) = serde.dumps_typed(channel, value)?;
            check_text("serde type", &tag)?;
            out.idx.push(idx);
            out.channels.push(channel.to_owned());
            out.types.push(tag);
            // `checkpoint_writes.blob` is NOT NULL: None is ('null', b'').
            out.blobs.push(bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn cp(values: Vec<(&str, Decoded)>) -> Checkpoint {
        Checkpoint {
            v: 4,
            id: "1f0".into(),
            ts: "2026-01-01T00:00:00+00:00".into(),
            channel_versions: values
                .iter()
                .map(|(c, _)| ((*c).to_owned(), Version::Str("v1".into())))
                .collect(),
            channel_values: values
                .into_iter()
                .map(|(c, v)| (c.to_owned(), Arc::new(v)))
                .collect(),
            versions_seen: vec![("__input__".into(), Vec::new())],
            updated_channels: None,
            pending_sends: None,
        }
    }

    #[test]
    fn primitives_inline_others_blobs() {
        let snapshot = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(Value::Array(vec![]))));
        let c = cp(vec![
            ("s", Decoded::Msgpack(Value::Str("x".into()))),
            ("n", Decoded::Null),
            ("i", Decoded::Msgpack(Value::Int(3))),
            ("f", Decoded::Msgpack(Value::Float(1.5))),
            ("b", Decoded::Msgpack(Value::Bool(true))),
            ("l", Decoded::Msgpack(Value::Array(vec![Value::Int(1)]))),
            ("bs", Decoded::Bytes(b"ab".to_vec())),
            ("d", snapshot),
        ]);
        let md = Map::new();
        let req = PutRequest {
            thread_id: "t",
            checkpoint_ns: "",
            parent_checkpoint_id: None,
            checkpoint: &c,
            metadata: &md,
            // `bs` has no new version: no blob.
            new_versions: &vec![
                ("l".into(), Version::Str("v1".into())),
                ("d".into(), Version::Str("v1".into())),
                ("s".into(), Version::Str("v1".into())),
            ],
        };
        let rows = PutRows::new(&req, Serde::python(None)).unwrap();
        assert_eq!(rows.channels, vec!["l", "d"]);
        assert_eq!(rows.types, vec!["msgpack", "msgpack"]);
        assert_eq!(rows.blobs[0], Some(vec![0x91, 0x01]));
        assert_eq!(
            rows.checkpoint["channel_values"],
            json!({"s": "x", "n": null, "i": 3, "f": 1.5, "b": true, "d": true})
        );
        assert_eq!(rows.checkpoint["updated_channels"], Json::Null);
    }

    #[test]
    fn metadata_rules() {
        let md = json!({"x": "a\u{0}b", "writes": {"q": 1}, "step": -1});
        let out = metadata_json(md.as_object().unwrap()).unwrap();
        assert_eq!(out, json!({"x": "ab", "step": -1}));
        let nested = json!({"x": {"y": "a\u{0}b"}});
        let err = metadata_json(nested.as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("x.y"), "{err}");
    }

    #[test]
    fn duplicate_idx_in_a_batch() {
        let w = |c: &str, i: i64| (c.to_owned(), Decoded::Msgpack(Value::Int(i)));
        let batch = vec![w("__interrupt__", 1), w("__interrupt__", 2)];
        let replace = WriteRows::new(&batch, true, Serde::python(None)).unwrap();
        assert_eq!(
            (replace.idx.clone(), replace.blobs[0].clone()),
            (vec![-3], vec![2])
        );
        let mixed = vec![w("__interrupt__", 1), w("a", 5), w("__interrupt__", 2)];
        let ignore = WriteRows::new(&mixed, false, Serde::python(None)).unwrap();
        assert_eq!(ignore.idx, vec![-3, 1]);
        assert_eq!(ignore.blobs[0], vec![1]);
    }
}
