//! The write side: the operations of LangGraph's `BaseCheckpointSaver`, storing rows the
//! Python savers (langgraph-checkpoint-sqlite 3.1.2, -postgres 3.2.0) write byte for byte.
//!
//! Each operation runs in one transaction. Callers pass what the Python saver receives after
//! its config handling: the final metadata (`get_checkpoint_metadata` already applied) and the
//! parent id taken from the config's `checkpoint_id`.

use crate::model::{Checkpoint, Version, Versions};
use crate::{CheckpointStore, Dialect, StoreError};
use async_trait::async_trait;
use flashback_codec::{Decoded, JsonTextKind, Value};
use serde_json::{Map, Value as Json};

pub use flashback_codec::reserved::WRITES_IDX_MAP;

/// The `idx` Python stores for the write at `position` in a `put_writes` batch.
pub fn write_idx(channel: &str, position: usize) -> i64 {
    WRITES_IDX_MAP
        .iter()
        .find(|(c, _)| *c == channel)
        .map_or(position as i64, |(_, i)| *i)
}

/// Whether a batch replaces existing rows (every channel special) or keeps the first writer.
pub fn writes_replace(writes: &[(String, Decoded)]) -> bool {
    writes
        .iter()
        .all(|(c, _)| WRITES_IDX_MAP.iter().any(|(s, _)| s == c))
}

/// One `put`.
#[derive(Debug, Clone)]
pub struct PutRequest<'a> {
    /// Thread id.
    pub thread_id: &'a str,
    /// Namespace.
    pub checkpoint_ns: &'a str,
    /// The config's `checkpoint_id`, stored as `parent_checkpoint_id`.
    pub parent_checkpoint_id: Option<&'a str>,
    /// The checkpoint (its `id` is the row's id).
    pub checkpoint: &'a Checkpoint,
    /// Final metadata.
    pub metadata: &'a Map<String, Json>,
    /// Channels whose versions are new in this put (Postgres writes blobs only for these).
    pub new_versions: &'a Versions,
}

#[cfg(feature = "postgres")] // the Postgres timeouts say what was being done
/// What a put is called in messages: `writing checkpoint 1ef… of thread t1`.
pub(crate) fn writing(req: &PutRequest<'_>) -> String {
    format!(
        "writing checkpoint {} of thread {}",
        req.checkpoint.id.escape_debug(),
        req.thread_id.escape_debug()
    )
}

#[cfg(feature = "postgres")] // the Postgres timeouts say what was being done
/// What a [`CheckpointSaver::put_batch`] is called in messages.
pub(crate) fn writing_batch(puts: &[PutRequest<'_>], writes: &[WriteBatch<'_>]) -> String {
    match (puts, writes) {
        ([put], []) => writing(put),
        ([], [w]) => format!(
            "writing the pending writes of checkpoint {} of thread {}",
            w.checkpoint_id.escape_debug(),
            w.thread_id.escape_debug()
        ),
        _ => format!(
            "writing {} checkpoints and {} sets of pending writes",
            puts.len(),
            writes.len()
        ),
    }
}

#[cfg(feature = "postgres")] // the Postgres timeouts say what was being done
/// What deleting a thread is called in messages.
pub(crate) fn deleting(thread_id: &str) -> String {
    format!("deleting thread {}", thread_id.escape_debug())
}

/// One `put_writes` call, for [`CheckpointSaver::put_batch`].
#[derive(Debug, Clone)]
pub struct WriteBatch<'a> {
    /// Thread id.
    pub thread_id: &'a str,
    /// Namespace.
    pub checkpoint_ns: &'a str,
    /// The checkpoint the writes belong to.
    pub checkpoint_id: &'a str,
    /// The task that wrote them.
    pub task_id: &'a str,
    /// The task's path (stored where the schema has the column).
    pub task_path: &'a str,
    /// `(channel, value)` in the order of the task's `put_writes` call.
    pub writes: &'a [(String, Decoded)],
}

/// Write access to a checkpoint database, on top of read access.
#[async_trait]
pub trait CheckpointSaver: CheckpointStore {
    /// Create the schema (or bring it up to date) exactly as Python's `setup()` does.
    async fn setup(&self) -> Result<(), StoreError>;

    /// Store a checkpoint (`put`). By default the one-put [`CheckpointSaver::put_batch`].
    async fn put(&self, req: PutRequest<'_>) -> Result<(), StoreError> {
        self.put_batch(&[req], &[]).await
    }

    /// Store a task's writes against a checkpoint (`put_writes`), with `WRITES_IDX_MAP` and
    /// the REPLACE-vs-IGNORE rule. By default the one-batch [`CheckpointSaver::put_batch`].
    async fn put_writes(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: &[(String, Decoded)],
    ) -> Result<(), StoreError> {
        let batch = WriteBatch {
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            task_id,
            task_path,
            writes,
        };
        self.put_batch(&[], &[batch]).await
    }

    /// Every `put` of `puts` (in order), then every `put_writes` of `writes` (in order), in ONE
    /// transaction: either all rows are stored or, on any error (or a killed process or a
    /// dropped connection), none. Each row is the one the single call would store.
    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError>;

    /// Delete every checkpoint, write and blob of a thread, all namespaces.
    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError>;
}

/// Refuse to store a value whose encoding in `dialect` would not give back what was read: one
/// holding a string that was not valid UTF-8 (decoded in place, see
/// [`flashback_codec::msgpack::is_invalid_str`]), which would be written as something else; in
/// Python's msgpack, one holding JSON kept as its text ([`flashback_codec::JsonText`]: a
/// string with a lone surrogate, a number beyond 64 bits or float64, a value nested too deep),
/// which msgpack has no form for (JSON writes it back unchanged).
pub fn check_storable(channel: &str, v: &Decoded, dialect: Dialect) -> Result<(), StoreError> {
    fn bad(v: &Value, dialect: Dialect) -> Option<String> {
        match v {
            Value::RawExt(raw) if flashback_codec::msgpack::is_invalid_str(raw) => Some(
                "holds a string that is not valid UTF-8 as stored; Flashback cannot write it \
                 back byte for byte, so it does not write it"
                    .into(),
            ),
            Value::JsonText(t) if dialect == Dialect::Python => Some(format!(
                "holds {} read from JSON ({}), which msgpack has no form for; nothing was \
                 written",
                match t.kind {
                    JsonTextKind::LoneSurrogate { .. } => "a string with a lone surrogate",
                    JsonTextKind::Number => "a number beyond 64-bit integers and float64",
                    JsonTextKind::TooDeep => "a list or dict nested deeper than Flashback reads",
                },
                flashback_codec::describe::quoted(&t.text, 40)
            )),
            Value::Array(items) => items.iter().find_map(|i| bad(i, dialect)),
            Value::Map(entries) => entries
                .iter()
                .find_map(|(k, v)| bad(k, dialect).or_else(|| bad(v, dialect))),
            Value::Object(o) => {
                bad(&o.payload, dialect).or_else(|| o.extra.as_ref().and_then(|e| bad(e, dialect)))
            }
            Value::DeltaSnapshot(inner) => bad(inner, dialect),
            _ => None,
        }
    }
    match v {
        Decoded::TooLarge { bytes, .. } => Err(StoreError::InvalidInput(format!(
            "channel {channel:?}: the value ({}) was read over the decode budget and not \
             loaded; Flashback does not write a value it has not read",
            flashback_codec::units::bytes(*bytes)
        ))),
        Decoded::Msgpack(v) => match bad(v, dialect) {
            Some(why) => Err(StoreError::InvalidInput(format!(
                "channel {channel:?}: the value {why}"
            ))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Refuse to write a value Flashback could not read, `what` naming it (`channel "notes" of
/// checkpoint 1f0…`): one left sealed ([`Decoded::Encrypted`]: a cipher Flashback cannot open,
/// or no key) or one that does not decode ([`Decoded::Error`]). A fork, merge or copy carrying
/// it would store what it has not read: re-encoded, or sealed with another cipher.
pub fn check_read(what: &str, v: &Decoded) -> Result<(), StoreError> {
    match v {
        Decoded::Encrypted { tag, .. } => {
            let cipher = flashback_codec::cipher::cipher_of(tag).unwrap_or(tag);
            Err(crate::sealed::sealed_source(what, &[cipher.to_owned()]))
        }
        Decoded::Error { message, .. } => Err(StoreError::InvalidInput(format!(
            "{what} cannot be read ({message}); Flashback does not write what it could not \
             read, so nothing was written"
        ))),
        _ => Ok(()),
    }
}

/// A decoded value as it sits nested in a msgpack document (SQLite keeps the whole checkpoint,
/// values included, in one document).
pub fn nested_value(channel: &str, v: &Decoded) -> Result<Value, StoreError> {
    check_storable(channel, v, Dialect::Python)?;
    Ok(match v {
        Decoded::Msgpack(v) => v.clone(),
        Decoded::Null => Value::Nil,
        Decoded::Bytes(b) | Decoded::ByteArray(b) => Value::Bin(b.clone()),
        other => {
            return Err(StoreError::InvalidInput(format!(
                "channel {channel:?}: a {} value cannot be stored inside a msgpack checkpoint",
                kind(other)
            )))
        }
    })
}

fn kind(v: &Decoded) -> &'static str {
    match v {
        Decoded::Pickle(_) => "pickle",
        Decoded::Encrypted { .. } => "encrypted",
        Decoded::Empty => "empty",
        Decoded::Error { .. } => "undecodable",
        _ => "non-msgpack",
    }
}

fn version_value(v: &Version) -> Value {
    match v {
        Version::Int(i) => Value::Int(*i),
        Version::Float(f) => Value::Float(*f),
        Version::Str(s) => Value::Str(s.as_str().into()),
    }
}

fn versions_value(vs: &Versions) -> Value {
    Value::Map(
        vs.iter()
            .map(|(k, v)| (Value::Str(k.as_str().into()), version_value(v)))
            .collect(),
    )
}

/// The checkpoint as the msgpack document SQLite stores, keys in Python's order
/// (`v, ts, id, channel_values, channel_versions, versions_seen, updated_channels`, then
/// `pending_sends` for pre-v4 checkpoints).
pub fn checkpoint_document(cp: &Checkpoint) -> Result<Value, StoreError> {
    let s = |k: &str| Value::Str(k.into());
    let mut values = Vec::with_capacity(cp.channel_values.len());
    for (k, v) in &cp.channel_values {
        values.push((s(k), nested_value(k, v)?));
    }
    let mut doc = vec![
        (s("v"), Value::Int(cp.v)),
        (s("ts"), s(&cp.ts)),
        (s("id"), s(&cp.id)),
        (s("channel_values"), Value::Map(values)),
        (s("channel_versions"), versions_value(&cp.channel_versions)),
        (
            s("versions_seen"),
            Value::Map(
                cp.versions_seen
                    .iter()
                    .map(|(n, vs)| (s(n), versions_value(vs)))
                    .collect(),
            ),
        ),
        (
            s("updated_channels"),
            cp.updated_channels.as_ref().map_or(Value::Nil, |u| {
                Value::Array(u.iter().map(|c| s(c)).collect())
            }),
        ),
    ];
    if let Some(sends) = &cp.pending_sends {
        let items = sends
            .iter()
            .map(|v| nested_value("pending_sends", v))
            .collect::<Result<Vec<_>, _>>()?;
        doc.push((s("pending_sends"), Value::Array(items)));
    }
    Ok(Value::Map(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idx_and_replace_rules() {
        assert_eq!(write_idx("__error__", 3), -1);
        assert_eq!(write_idx("__resume__", 0), -4);
        assert_eq!(write_idx("messages", 2), 2);
        let special = vec![("__interrupt__".to_string(), Decoded::Null)];
        assert!(writes_replace(&special));
        let mixed = vec![
            ("__interrupt__".to_string(), Decoded::Null),
            ("x".to_string(), Decoded::Null),
        ];
        assert!(!writes_replace(&mixed));
    }
}
