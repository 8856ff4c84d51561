//! Fetched rows: their keys, the parsed checkpoint documents, decoded blobs, writes and
//! sends (pure, run on blocking threads).

use super::docjson::VersionTexts;
use crate::decode::{checkpoint_from_json, empty, in_channel, unreadable_document};
use crate::model::*;
use crate::StoreError;
use flashback_codec::{
    decode_typed_cached, decode_typed_keyed, AesKey, DecodeCache, Decoded, Value,
};
use sqlx::postgres::PgRow;
use sqlx::Row as _;
use std::collections::HashMap;
use std::sync::Arc;

/// The identity of one fetched checkpoint row.
pub(super) struct RowKey {
    pub(super) thread_id: String,
    pub(super) ns: String,
    pub(super) checkpoint_id: String,
    pub(super) parent: Option<String>,
    /// `checkpoint.v < 4` (or no numeric `v`).
    pub(super) pre_v4: bool,
}

// Key columns need no lenient reading here, unlike SQLite's: they are NOT NULL text, and a
// UTF-8 client (sqlx) only ever receives valid UTF-8 (the server converts, or refuses with
// "invalid byte sequence" for bytes a SQL_ASCII database let in).
impl RowKey {
    pub(super) fn from_row(r: &PgRow) -> Result<RowKey, sqlx::Error> {
        Ok(RowKey {
            thread_id: r.try_get("thread_id")?,
            ns: r.try_get("checkpoint_ns")?,
            checkpoint_id: r
                .try_get::<Option<String>, _>("checkpoint_id")?
                .unwrap_or_default(),
            parent: r.try_get("parent_checkpoint_id")?,
            pre_v4: r.try_get::<Option<bool>, _>("pre_v4")?.unwrap_or(true),
        })
    }
}

/// A parsed checkpoint row.
pub(super) struct Doc {
    /// The document with its inline values (none for the shallow saver).
    pub(super) checkpoint: Checkpoint,
    pub(super) metadata: serde_json::Value,
    /// `channel_versions` in stored order, each as Postgres' `jsonb_each_text` renders it
    /// (`None` for JSON `null`, which joins no blob).
    pub(super) versions: Vec<(String, Option<String>)>,
    /// Some version text could not be rendered client-side (see `fetch_exact_versions`).
    pub(super) inexact: bool,
    /// For each entry of `versions`, the index of its blob reference (see `blob_refs`).
    pub(super) blob_ids: Vec<Option<usize>>,
    /// Why the document cannot be read (it then has no values).
    pub(super) problem: Option<String>,
}

/// `(thread, ns, channel, version)`; the version is `""` for the shallow saver.
pub(super) type BlobKey = (String, String, String, String);
/// A decoded blob and whether it was stored encrypted.
pub(super) type Blob = (Arc<Decoded>, bool);
/// Decoded blobs by reference index; `None` for missing and `empty` rows (which Python
/// skips).
pub(super) type Blobs = Vec<Option<Blob>>;
/// Pending writes per fetched row, in row order.
pub(super) type Writes = Vec<Vec<PendingWrite>>;
/// Decoded blobs of one batch, by reference index.
pub(super) type BlobSlice = Vec<(usize, Option<Blob>)>;
/// Fetched blob rows and the reference index their `i` counts from.
pub(super) type BlobBatch = (usize, Vec<PgRow>);
/// `(thread, parent checkpoint id)` (full saver) or `(thread, ns)` (shallow saver).
pub(super) type SendsKey = (String, String);

/// Decoded pending sends of one key.
pub(super) struct Sends {
    /// Each Send (shallow saver: `checkpoint.pending_sends`).
    pub(super) items: Vec<Arc<Decoded>>,
    /// All of them as one list value (full saver: the `__pregel_tasks` channel value).
    pub(super) as_list: Arc<Decoded>,
}

pub(super) async fn joined<T>(handle: tokio::task::JoinHandle<T>) -> Result<T, StoreError> {
    handle
        .await
        .map_err(|e| StoreError::Query(format!("decoding task failed: {e}")))
}

fn row_err(e: sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

/// Parse the checkpoint and metadata documents of the rows. A document that cannot be read
/// gives a checkpoint without values and the reason in [`Doc::problem`]; it never fails the
/// other rows.
pub(super) fn parse_rows(
    rows: &[PgRow],
    ids: &[String],
    shallow: bool,
    keep: Option<&ChannelFilter>,
) -> Vec<Doc> {
    rows.iter()
        .zip(ids)
        .map(|(r, id)| {
            let read = read_document(r, id, shallow, keep);
            let (checkpoint, versions, inexact, problem) = match read {
                Ok((checkpoint, (versions, inexact))) => (checkpoint, versions, inexact, None),
                Err(detail) => {
                    let mut checkpoint = empty();
                    checkpoint.id = id.clone();
                    (
                        checkpoint,
                        Vec::new(),
                        false,
                        Some(unreadable_document(detail)),
                    )
                }
            };
            let metadata = match r.try_get::<Option<&str>, _>("metadata") {
                Ok(text) => parse_metadata(text),
                Err(e) => flashback_codec::view::error_view(
                    &format!("metadata cannot be read: {e}"),
                    "json",
                    &[],
                ),
            };
            Doc {
                checkpoint,
                metadata,
                versions,
                inexact,
                blob_ids: Vec::new(),
                problem,
            }
        })
        .collect()
}

/// The checkpoint document of a row, its version texts, or why it cannot be read.
fn read_document(
    r: &PgRow,
    id: &str,
    shallow: bool,
    keep: Option<&ChannelFilter>,
) -> Result<(Checkpoint, VersionTexts), String> {
    let text: Option<&str> = r.try_get("checkpoint").map_err(|e| e.to_string())?;
    let text = text.unwrap_or("null");
    // Read straight into the checkpoint; anything unusual the reference way, below.
    let (mut checkpoint, texts) = match super::docjson::parse(text, keep) {
        Some(parsed) => parsed,
        None => {
            let doc: serde_json::Value =
                serde_json::from_str(text).map_err(|e| format!("checkpoint JSON: {e}"))?;
            (checkpoint_from_json(&doc)?, version_texts(&doc))
        }
    };
    if checkpoint.id.is_empty() {
        checkpoint.id = id.to_owned();
    }
    if shallow {
        // ShallowPostgresSaver: channel values come from the blobs only.
        checkpoint.channel_values.clear();
    }
    Ok((checkpoint, texts))
}

/// Each `channel_versions` entry as Postgres' `jsonb_each_text` renders it, where the client
/// can (see `fetch_exact_versions` for the rest).
pub(super) fn version_texts(doc: &serde_json::Value) -> VersionTexts {
    let mut inexact = false;
    let versions = match doc.get("channel_versions") {
        Some(serde_json::Value::Object(map)) => map
            .iter()
            .map(|(channel, v)| {
                let text = match v {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Null => None,
                    serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
                    _ => {
                        inexact = true;
                        None
                    }
                };
                (channel.clone(), text)
            })
            .collect(),
        _ => Vec::new(),
    };
    (versions, inexact)
}

/// A row's `blob` as selected by `PostgresStore::budgeted`: decoded, or (over the budget) its
/// size and kind only. (The cache carries the key and no budget of its own: the budget is
/// applied by the query.)
fn decode_budgeted(r: &PgRow, tag: &str, cache: &mut DecodeCache) -> Result<Decoded, StoreError> {
    if let Some(bytes) = r.try_get::<Option<i64>, _>("big").map_err(row_err)? {
        let head: Option<&[u8]> = r.try_get("head").map_err(row_err)?;
        let kind = flashback_codec::budget::kind_for(tag, head.unwrap_or_default());
        return Ok(flashback_codec::budget::too_large(
            tag,
            bytes.max(0) as u64,
            kind,
            flashback_codec::TooLargeReason::Value,
        ));
    }
    let data: Option<&[u8]> = r.try_get("blob").map_err(row_err)?;
    Ok(decode_typed_cached(tag, data, cache))
}

/// Decode blob rows (each distinct blob once); `offset` is the query's first reference index.
/// Objects met before in `cache` are shared, not decoded again.
pub(super) fn decode_blob_rows(
    rows: &[PgRow],
    offset: usize,
    cache: &mut DecodeCache,
) -> Result<BlobSlice, StoreError> {
    rows.iter()
        .map(|r| {
            let i: i64 = r.try_get("i").map_err(row_err)?;
            let tag: &str = r
                .try_get::<Option<&str>, _>("type")
                .map_err(row_err)?
                .unwrap_or("msgpack");
            let value = if tag == "empty" {
                None
            } else {
                let encrypted = flashback_codec::cipher::is_encrypted(tag);
                let channel: &str = r.try_get("channel").map_err(row_err)?;
                let value = in_channel(tag, channel, decode_budgeted(r, tag, cache)?);
                Some((Arc::new(value), encrypted))
            };
            Ok((
                offset + usize::try_from(i).unwrap_or(usize::MAX - offset),
                value,
            ))
        })
        .collect()
}

/// Finds a fetched row's position from its `(thread, ns, checkpoint id)` without allocating.
pub(super) struct RowIndex {
    map: HashMap<String, usize>,
    len: usize,
}

impl RowIndex {
    pub(super) fn new(keys: &[RowKey]) -> RowIndex {
        let mut map = HashMap::with_capacity(keys.len());
        let mut buf = String::new();
        for (i, k) in keys.iter().enumerate() {
            Self::compose(&mut buf, &k.thread_id, &k.ns, &k.checkpoint_id);
            map.entry(buf.clone()).or_insert(i);
        }
        RowIndex {
            map,
            len: keys.len(),
        }
    }

    fn compose(buf: &mut String, thread: &str, ns: &str, id: &str) {
        buf.clear();
        for part in [thread, "\0", ns, "\0", id] {
            buf.push_str(part);
        }
    }

    pub(super) fn get(&self, buf: &mut String, thread: &str, ns: &str, id: &str) -> Option<usize> {
        Self::compose(buf, thread, ns, id);
        self.map.get(buf.as_str()).copied()
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }
}

/// A write's type tag (a NULL type is read as msgpack, like the SQLite store does).
fn type_tag(r: &PgRow) -> Result<String, StoreError> {
    Ok(r.try_get::<Option<String>, _>("type")
        .map_err(row_err)?
        .unwrap_or_else(|| "msgpack".into()))
}

/// Decode the pending writes (grouped per fetched row, sorted like Python) and the sends.
pub(super) fn decode_writes(
    write_rows: &[PgRow],
    send_rows: &[PgRow],
    index: &RowIndex,
    key: Option<Arc<AesKey>>,
) -> Result<(Writes, HashMap<SendsKey, Sends>), StoreError> {
    let mut cache = DecodeCache::new().with_key(key);
    let mut writes: Writes = (0..index.len()).map(|_| Vec::new()).collect();
    let mut buf = String::new();
    for r in write_rows {
        let thread: &str = r.try_get("thread_id").map_err(row_err)?;
        let ns: &str = r.try_get("checkpoint_ns").map_err(row_err)?;
        let id: &str = r.try_get("checkpoint_id").map_err(row_err)?;
        // Rows of unlisted checkpoints (same id in another namespace) are not ours.
        let Some(slot) = index.get(&mut buf, thread, ns, id) else {
            continue;
        };
        let type_tag = type_tag(r)?;
        let channel: String = r.try_get("channel").map_err(row_err)?;
        let value = in_channel(
            &type_tag,
            &channel,
            decode_budgeted(r, &type_tag, &mut cache)?,
        );
        writes[slot].push(PendingWrite {
            task_id: r.try_get("task_id").map_err(row_err)?,
            task_path: r
                .try_get::<Option<String>, _>("task_path")
                .map_err(row_err)?
                .unwrap_or_default(),
            idx: r.try_get("idx").map_err(row_err)?,
            channel,
            value,
            type_tag,
        });
    }
    for list in &mut writes {
        sort_writes(list);
    }

    // In query order: already sorted by task_path, task_id, idx.
    let mut grouped: HashMap<SendsKey, Vec<Decoded>> = HashMap::new();
    for r in send_rows {
        let tag = type_tag(r)?;
        let data: Option<&[u8]> = r.try_get("blob").map_err(row_err)?;
        let sends_key = (
            r.try_get("thread_id").map_err(row_err)?,
            r.try_get("key").map_err(row_err)?,
        );
        grouped
            .entry(sends_key)
            .or_default()
            .push(decode_typed_keyed(&tag, data, cache.key().as_deref()));
    }
    let sends = grouped
        .into_iter()
        .map(|(key, list)| {
            let as_list = Arc::new(sends_value(&list));
            let items = list.into_iter().map(Arc::new).collect();
            (key, Sends { items, as_list })
        })
        .collect();
    Ok((writes, sends))
}

/// The decoded Sends as one list value, as `_migrate_pending_sends` re-encodes them.
fn sends_value(list: &[Decoded]) -> Decoded {
    let mut items = Vec::with_capacity(list.len());
    for (i, d) in list.iter().enumerate() {
        let item = match d {
            Decoded::Msgpack(v) => v.clone(),
            Decoded::Null => Value::Nil,
            Decoded::Bytes(b) | Decoded::ByteArray(b) => Value::Bin(b.clone()),
            other => {
                let (tag, raw) = flashback_codec::encode_typed(other);
                let detail = match other {
                    Decoded::Error { message, .. } => message.clone(),
                    _ => format!("a {tag} value cannot be part of a msgpack list"),
                };
                return Decoded::Error {
                    tag,
                    message: format!("pending send #{i}: {detail}"),
                    raw,
                };
            }
        };
        items.push(item);
    }
    Decoded::Msgpack(Value::Array(items))
}

/// Metadata JSON text (JSONB output); unreadable metadata becomes an `$error` object.
pub(super) fn parse_metadata(raw: Option<&str>) -> serde_json::Value {
    match raw {
        None => serde_json::Value::Null,
        Some(text) => serde_json::from_str(text).unwrap_or_else(|e| {
            flashback_codec::view::error_view(
                &format!("metadata is not valid JSON: {e}"),
                "json",
                text.as_bytes(),
            )
        }),
    }
}
