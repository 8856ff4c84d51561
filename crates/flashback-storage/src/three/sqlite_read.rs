//! Blocking reads of a three-table SQLite file: checkpoint rows chosen as Python's
//! `search_where` chooses them, channel values materialised from their blob chains, pending
//! writes. Anything unreadable in a row or blob damages only that checkpoint (or channel),
//! noted in its header's `problem`.

use super::rows::{materialise, ns_hash, unversioned, Memo, StoredBlob, EMPTY};
use crate::decode::{checkpoint_from_msgpack, empty, unreadable_document, Decoding};
use crate::escape::{joined, key_or_note, key_text};
use crate::model::*;
use crate::sqlite::read::search_where;
use crate::StoreError;
use flashback_codec::cipher::is_encrypted;
use flashback_codec::{decode_typed_cached, DecodeCache, Decoded};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::sync::Arc;

/// A checkpoint row as read.
pub(super) struct Row {
    pub(super) thread_id: String,
    pub(super) ns: String,
    pub(super) hash: String,
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) type_tag: Option<String>,
    pub(super) doc: Option<Vec<u8>>,
    pub(super) metadata: Option<Vec<u8>>,
    pub(super) problems: Vec<String>,
}

pub(super) type ChannelValues = Vec<(String, Arc<Decoded>)>;

type Err<'a> = &'a dyn Fn(rusqlite::Error) -> StoreError;

fn bytes_of(v: ValueRef<'_>) -> Option<Vec<u8>> {
    match v {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    }
}

/// The checkpoint rows of `q`, newest first, with Python's `list()` semantics.
pub(super) fn rows(conn: &Connection, q: &ListQuery, err: Err<'_>) -> Result<Vec<Row>, StoreError> {
    let (where_sql, params) = search_where(q)?;
    let limit = q.limit.map(|l| format!(" LIMIT {l}")).unwrap_or_default();
    let sql = format!(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
         metadata, checkpoint_ns_hash FROM checkpoints {where_sql} ORDER BY checkpoint_id DESC{limit}"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params.iter()))
        .map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let get = |i: usize| r.get_ref(i).map_err(err);
        let mut problems = Vec::new();
        let thread_id = key_or_note("thread_id", get(0)?.into(), &mut problems);
        let ns = key_or_note("checkpoint_ns", get(1)?.into(), &mut problems);
        let id = key_or_note("checkpoint_id", get(2)?.into(), &mut problems);
        let parent = match get(3)? {
            ValueRef::Null => None,
            v => Some(key_or_note("parent_checkpoint_id", v.into(), &mut problems)),
        };
        let type_tag = match get(4)? {
            ValueRef::Null => None,
            v => Some(key_or_note("type", v.into(), &mut problems)),
        };
        let hash = match get(7)? {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            _ => ns_hash(&ns),
        };
        out.push(Row {
            thread_id,
            ns,
            hash,
            id,
            parent,
            type_tag,
            doc: bytes_of(get(5)?),
            metadata: bytes_of(get(6)?),
            problems,
        });
    }
    Ok(out)
}

/// The document decoded (without values), or why not; `Ok(None)`: encrypted, no key.
pub(super) fn document(row: &Row, cache: &mut DecodeCache) -> Result<Option<Checkpoint>, String> {
    let tag = row.type_tag.as_deref().unwrap_or("msgpack");
    let mut cp = match decode_typed_cached(tag, row.doc.as_deref(), cache) {
        Decoded::Msgpack(v) => checkpoint_from_msgpack(v),
        Decoded::Encrypted { .. } => return Ok(None),
        Decoded::Error { message, .. } => Err(message),
        Decoded::Null => Err("it is NULL".into()),
        other => Err(format!("it is not a checkpoint document: {other}")),
    }
    .map_err(unreadable_document)?;
    if cp.id.is_empty() {
        cp.id = row.id.clone();
    }
    Ok(Some(cp))
}

fn metadata(raw: Option<&[u8]>) -> serde_json::Value {
    match raw {
        None => serde_json::json!({}),
        Some(b) => serde_json::from_slice(b).unwrap_or_else(|e| {
            flashback_codec::view::error_view(
                &format!("metadata is not valid JSON: {e}"),
                "json",
                b,
            )
        }),
    }
}

impl Row {
    pub(super) fn header_with(&self, ts: String, more: Vec<String>) -> CheckpointHeader {
        let mut problems = self.problems.clone();
        problems.extend(more);
        CheckpointHeader {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.ns.clone(),
            checkpoint_id: self.id.clone(),
            parent_checkpoint_id: self.parent.clone().filter(|p| !p.is_empty()),
            ts,
            metadata: metadata(self.metadata.as_deref()),
            problem: joined(problems),
        }
    }

    /// The header (the document decoded for its timestamp, values are not read).
    pub(super) fn header(&self, dec: &Decoding) -> CheckpointHeader {
        match document(self, &mut dec.cache()) {
            Ok(Some(cp)) => self.header_with(cp.ts, Vec::new()),
            Ok(None) => self.header_with(String::new(), Vec::new()),
            Err(p) => self.header_with(String::new(), vec![p]),
        }
    }
}

/// One blob row by version.
fn fetch_blob(
    conn: &Connection,
    row: &Row,
    channel: &str,
    version: &str,
) -> Result<Option<StoredBlob>, String> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT type, kind, base_version, depth, blob_data FROM checkpoint_blobs \
             WHERE thread_id = ? AND checkpoint_ns_hash = ? AND channel = ? AND version = ?",
        )
        .map_err(|e| e.to_string())?;
    let mut rows = stmt
        .query([&row.thread_id, &row.hash, channel, version])
        .map_err(|e| e.to_string())?;
    let Some(r) = rows.next().map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let text = |i: usize| -> Result<Option<String>, String> {
        Ok(match r.get_ref(i).map_err(|e| e.to_string())? {
            ValueRef::Null => None,
            v => Some(key_text("column", v.into()).map_err(|b| b.problem)?),
        })
    };
    Ok(Some(StoredBlob {
        type_tag: text(0)?.unwrap_or_else(|| "msgpack".into()),
        kind: text(1)?.unwrap_or_else(|| "full".into()),
        base_version: text(2)?,
        depth: r.get_ref(3).ok().and_then(|v| v.as_i64().ok()).unwrap_or(0),
        data: r.get_ref(4).ok().and_then(bytes_of),
    }))
}

/// Reads one blob row by `(channel, version)` (`None`: no row; `Err`: why not).
pub(super) type FetchBlob<'a> = dyn FnMut(&str, &str) -> Result<Option<StoredBlob>, String> + 'a;

/// A value stored without a channel version: `(channel, type, blob_data)` as read.
pub(super) type Unversioned = (Option<String>, Option<String>, Option<Vec<u8>>);

/// The channel values a checkpoint's versions name, materialised from the blob rows `fetch`
/// reads by `(channel, version)`, then `extra` (values without a version), with the
/// problems met. Backend-neutral.
pub(super) fn values_from(
    row: &Row,
    cp: &Checkpoint,
    memo: &mut Memo,
    cache: &mut DecodeCache,
    sealing: &mut Sealing,
    fetch: &mut FetchBlob<'_>,
    extra: Vec<Unversioned>,
) -> (ChannelValues, Vec<String>) {
    let mut out = Vec::with_capacity(cp.channel_versions.len());
    let mut problems = Vec::new();
    let mut put = |channel: &str, m: super::rows::Materialised, out: &mut Vec<_>| {
        if m.type_tag == EMPTY {
            return;
        }
        if is_encrypted(&m.type_tag) {
            sealing.encrypted.push(channel.to_owned());
        } else {
            sealing.plaintext.push(channel.to_owned());
        }
        let v = decode_typed_cached(&m.type_tag, Some(&m.bytes), cache);
        if matches!(v, Decoded::Encrypted { .. }) {
            sealing.locked = true;
        }
        out.push((channel.to_owned(), Arc::new(v)));
    };
    for (channel, version) in &cp.channel_versions {
        let version = super::rows::version_text(version);
        let key = (row.thread_id.as_str(), row.hash.as_str(), channel.as_str());
        let mut by_version = |v: &str| fetch(channel, v);
        match materialise(key, &version, memo, &mut by_version) {
            Ok(Some(m)) => put(channel, m, &mut out),
            Ok(None) => problems.push(format!(
                "channel {channel:?}: no blob row for its version {version:?}"
            )),
            Err(e) => problems.push(format!("channel {channel:?}: {e}")),
        }
    }
    for (channel, tag, data) in extra {
        let Some(channel) = channel else {
            problems.push("a value without a version has no channel name".into());
            continue;
        };
        let m = super::rows::Materialised {
            type_tag: tag.unwrap_or_else(|| "msgpack".into()),
            bytes: Arc::new(data.unwrap_or_default()),
            depth: 0,
        };
        put(&channel, m, &mut out);
    }
    (out, problems)
}

/// The channel values of a checkpoint read from a SQLite file.
fn values(
    conn: &Connection,
    row: &Row,
    cp: &Checkpoint,
    memo: &mut Memo,
    cache: &mut DecodeCache,
    sealing: &mut Sealing,
) -> Result<(ChannelValues, Vec<String>), StoreError> {
    // Values stored without a channel version, for this checkpoint alone.
    let mut extra = Vec::new();
    let mut stmt = conn
        .prepare_cached(
            "SELECT channel, type, blob_data FROM checkpoint_blobs \
             WHERE thread_id = ? AND checkpoint_ns_hash = ? AND version = ? ORDER BY rowid",
        )
        .map_err(|e| StoreError::Query(e.to_string()))?;
    let mut rows = stmt
        .query([&row.thread_id, &row.hash, &unversioned(&row.id)])
        .map_err(|e| StoreError::Query(e.to_string()))?;
    while let Some(r) = rows.next().map_err(|e| StoreError::Query(e.to_string()))? {
        let channel = match r.get_ref(0) {
            Ok(ValueRef::Text(c)) => Some(String::from_utf8_lossy(c).into_owned()),
            _ => None,
        };
        let tag = r
            .get_ref(1)
            .ok()
            .and_then(|t| t.as_str().ok().map(str::to_owned));
        extra.push((channel, tag, r.get_ref(2).ok().and_then(bytes_of)));
    }
    let mut fetch = |channel: &str, v: &str| fetch_blob(conn, row, channel, v);
    Ok(values_from(
        row, cp, memo, cache, sealing, &mut fetch, extra,
    ))
}

/// A checkpoint's pending writes, sorted as Python sorts them.
fn writes(
    conn: &Connection,
    row: &Row,
    cache: &mut DecodeCache,
    err: Err<'_>,
) -> Result<Vec<PendingWrite>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT task_id, task_path, idx, channel, type, blob_data FROM checkpoint_writes \
             WHERE thread_id = ? AND checkpoint_ns_hash = ? AND checkpoint_id = ?",
        )
        .map_err(err)?;
    let mut rows = stmt
        .query([&row.thread_id, &row.hash, &row.id])
        .map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let get = |i: usize| r.get_ref(i).map_err(err);
        let text = |i: usize, c: &str| -> Result<String, StoreError> {
            Ok(match get(i)? {
                ValueRef::Null => String::new(),
                v => key_text(c, v.into()).unwrap_or_else(|b| b.shown),
            })
        };
        let type_tag = match text(4, "type")? {
            t if t.is_empty() => "msgpack".to_owned(),
            t => t,
        };
        let data = bytes_of(get(5)?);
        let (idx, value) = match get(2)? {
            ValueRef::Integer(i) => (i, decode_typed_cached(&type_tag, data.as_deref(), cache)),
            _ => (
                i64::MAX,
                Decoded::Error {
                    tag: type_tag.clone(),
                    message: "this write's idx is not an integer".into(),
                    raw: data.unwrap_or_default(),
                },
            ),
        };
        out.push(PendingWrite {
            task_id: text(0, "task_id")?,
            task_path: text(1, "task_path")?,
            idx,
            channel: text(3, "channel")?,
            type_tag,
            value,
        });
    }
    sort_writes(&mut out);
    Ok(out)
}

/// The full tuple of a row.
pub(super) fn tuple(
    conn: &Connection,
    row: Row,
    memo: &mut Memo,
    cache: &mut DecodeCache,
    err: Err<'_>,
) -> Result<CheckpointTuple, StoreError> {
    let pending_writes = writes(conn, &row, cache, err)?;
    let mut vals = |row: &Row, cp: &Checkpoint, cache: &mut DecodeCache, s: &mut Sealing| {
        values(conn, row, cp, memo, cache, s)
    };
    assemble(row, pending_writes, cache, &mut vals)
}

/// The channel values of a row's checkpoint, with the problems met.
pub(super) type ValuesOf<'a> = dyn FnMut(
        &Row,
        &Checkpoint,
        &mut DecodeCache,
        &mut Sealing,
    ) -> Result<(ChannelValues, Vec<String>), StoreError>
    + 'a;

/// A tuple from its row, pending writes and values (backend-neutral).
pub(super) fn assemble(
    row: Row,
    pending_writes: Vec<PendingWrite>,
    cache: &mut DecodeCache,
    values: &mut ValuesOf<'_>,
) -> Result<CheckpointTuple, StoreError> {
    let doc_encrypted = row.type_tag.as_deref().is_some_and(is_encrypted);
    let mut sealing = Sealing::default();
    if doc_encrypted {
        sealing.encrypted.push("checkpoint".into());
    }
    let (checkpoint, problems) = match document(&row, cache) {
        Ok(Some(mut cp)) => {
            let (mut vals, problems) = values(&row, &cp, cache, &mut sealing)?;
            // In the order of the document's `channel_values` keys (Python's order).
            let order = |c: &str| cp.channel_values.iter().position(|(k, _)| k == c);
            vals.sort_by_key(|(c, _)| order(c).unwrap_or(usize::MAX));
            cp.channel_values = vals;
            (cp, problems)
        }
        Ok(None) => {
            sealing.locked = true;
            let mut cp = empty();
            cp.id = row.id.clone();
            (cp, Vec::new())
        }
        Err(p) => {
            let mut cp = empty();
            cp.id = row.id.clone();
            (cp, vec![p])
        }
    };
    Ok(CheckpointTuple {
        header: row.header_with(checkpoint.ts.clone(), problems),
        checkpoint,
        pending_writes,
        sealing,
    })
}

/// Every thread: its namespaces, checkpoint count and latest root checkpoint.
pub(super) fn threads(conn: &Connection, err: Err<'_>) -> Result<Vec<ThreadInfo>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
             GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    let mut out: Vec<(ThreadInfo, Vec<String>)> = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let get = |i: usize| r.get_ref(i).map_err(err);
        let mut notes = Vec::new();
        let thread_id = key_or_note("thread_id", get(0)?.into(), &mut notes);
        let ns = key_or_note("checkpoint_ns", get(1)?.into(), &mut notes);
        let count = get(2)?.as_i64().unwrap_or(0);
        let latest = match get(3)? {
            ValueRef::Null => None,
            v => Some(key_or_note("checkpoint_id", v.into(), &mut notes)),
        };
        if out.last().map(|(t, _)| &t.thread_id) != Some(&thread_id) {
            let info = ThreadInfo {
                thread_id,
                namespaces: Vec::new(),
                checkpoint_count: 0,
                latest_checkpoint_id: None,
                problem: None,
            };
            out.push((info, Vec::new()));
        }
        if let Some((t, problems)) = out.last_mut() {
            t.checkpoint_count += u64::try_from(count).unwrap_or(0);
            if ns.is_empty() {
                t.latest_checkpoint_id = latest;
            }
            t.namespaces.push(ns);
            problems.extend(notes);
        }
    }
    Ok(out
        .into_iter()
        .map(|(mut t, mut p)| {
            p.dedup();
            t.problem = joined(p);
            t
        })
        .collect())
}

/// Every pending write of a thread, without values (namespaces from the thread's checkpoints).
pub(super) fn thread_writes(
    conn: &Connection,
    thread: &str,
    err: Err<'_>,
) -> Result<Vec<WriteInfo>, StoreError> {
    let mut names = std::collections::HashMap::new();
    {
        let mut stmt = conn
            .prepare_cached(
                "SELECT DISTINCT checkpoint_ns_hash, checkpoint_ns FROM checkpoints WHERE thread_id = ?",
            )
            .map_err(err)?;
        let mut rows = stmt.query([thread]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let h = key_text("hash", r.get_ref(0).map_err(err)?.into()).unwrap_or_default();
            let n = key_text("ns", r.get_ref(1).map_err(err)?.into()).unwrap_or_default();
            names.insert(h, n);
        }
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT checkpoint_ns_hash, checkpoint_id, task_id, task_path, channel \
             FROM checkpoint_writes WHERE thread_id = ?",
        )
        .map_err(err)?;
    let mut rows = stmt.query([thread]).map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let text = |i: usize| -> Result<String, StoreError> {
            Ok(match r.get_ref(i).map_err(err)? {
                ValueRef::Null => String::new(),
                v => key_text("column", v.into()).unwrap_or_else(|b| b.shown),
            })
        };
        let hash = text(0)?;
        out.push(WriteInfo {
            checkpoint_ns: names.get(&hash).cloned().unwrap_or(hash),
            checkpoint_id: text(1)?,
            task_id: text(2)?,
            task_path: text(3)?,
            channel: text(4)?,
        });
    }
    Ok(out)
}
