//! Blocking reads of a three-table SQLite file: checkpoint rows chosen as Python's
//! `search_where` chooses them, channel values materialised from their blob chains, pending
//! writes. Anything unreadable in a row or blob damages only that checkpoint (or channel),
//! noted in its header's `problem`.

use crate::escape::{key_or_note, key_text};
use crate::model::*;
use crate::sqlite::query::search_where;
use crate::three::assemble::{assemble, Row};
use crate::three::rows::{ns_hash, unversioned, StoredBlob};
use crate::three::values::{values_from, ReadMemo, Unversioned};
use crate::StoreError;
use flashback_codec::{decode_typed_cached, DecodeCache, Decoded};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::HashMap;

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

/// One `(channel, type, blob_data)` of a value stored without a version, from column `i`.
fn unversioned_at(r: &rusqlite::Row<'_>, i: usize) -> Unversioned {
    let channel = match r.get_ref(i) {
        Ok(ValueRef::Text(c)) => Some(String::from_utf8_lossy(c).into_owned()),
        _ => None,
    };
    let tag = r
        .get_ref(i + 1)
        .ok()
        .and_then(|t| t.as_str().ok().map(str::to_owned));
    (channel, tag, r.get_ref(i + 2).ok().and_then(bytes_of))
}

/// Lists longer than this read the values stored without a version once per thread.
const BULK: usize = 16;

/// The values stored without a channel version (`~<checkpoint id>` rows), by `(thread, ns
/// hash, version)`. The version is not a prefix of the primary key, so finding a checkpoint's
/// scans its thread's blob rows: a long list reads them for its threads at once.
pub(super) struct Extras(Option<HashMap<(String, String, String), Vec<Unversioned>>>);

impl Extras {
    /// For reading `rows`.
    pub(super) fn for_rows(conn: &Connection, rows: &[Row]) -> Result<Extras, StoreError> {
        if rows.len() <= BULK {
            return Ok(Extras(None));
        }
        let q = |e: rusqlite::Error| StoreError::Query(e.to_string());
        let mut threads: Vec<&str> = rows.iter().map(|r| r.thread_id.as_str()).collect();
        threads.sort_unstable();
        threads.dedup();
        let mut stmt = conn
            .prepare_cached(
                "SELECT checkpoint_ns_hash, version, channel, type, blob_data FROM checkpoint_blobs \
                 WHERE thread_id = ? AND substr(version, 1, 1) = '~' ORDER BY rowid",
            )
            .map_err(q)?;
        let mut map: HashMap<_, Vec<Unversioned>> = HashMap::new();
        for thread in threads {
            let mut found = stmt.query([thread]).map_err(q)?;
            while let Some(r) = found.next().map_err(q)? {
                let text = |i: usize| {
                    r.get_ref(i)
                        .ok()
                        .and_then(|t| t.as_str().ok().map(str::to_owned))
                };
                let (Some(hash), Some(version)) = (text(0), text(1)) else {
                    continue;
                };
                map.entry((thread.to_owned(), hash, version))
                    .or_default()
                    .push(unversioned_at(r, 2));
            }
        }
        Ok(Extras(Some(map)))
    }

    /// Those of `row`'s checkpoint.
    fn of(&mut self, conn: &Connection, row: &Row) -> Result<Vec<Unversioned>, StoreError> {
        let version = unversioned(&row.id);
        if let Some(map) = &mut self.0 {
            let key = (row.thread_id.clone(), row.hash.clone(), version);
            return Ok(map.remove(&key).unwrap_or_default());
        }
        let q = |e: rusqlite::Error| StoreError::Query(e.to_string());
        let mut stmt = conn
            .prepare_cached(
                "SELECT channel, type, blob_data FROM checkpoint_blobs \
                 WHERE thread_id = ? AND checkpoint_ns_hash = ? AND version = ? ORDER BY rowid",
            )
            .map_err(q)?;
        let mut found = stmt
            .query([&row.thread_id, &row.hash, &version])
            .map_err(q)?;
        let mut out = Vec::new();
        while let Some(r) = found.next().map_err(q)? {
            out.push(unversioned_at(r, 0));
        }
        Ok(out)
    }
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
    memo: &mut ReadMemo,
    extras: &mut Extras,
    cache: &mut DecodeCache,
    err: Err<'_>,
) -> Result<CheckpointTuple, StoreError> {
    let pending_writes = writes(conn, &row, cache, err)?;
    let mut vals = |row: &Row, cp: &Checkpoint, cache: &mut DecodeCache, s: &mut Sealing| {
        let extra = extras.of(conn, row)?;
        let mut fetch = |channel: &str, v: &str| fetch_blob(conn, row, channel, v);
        Ok(values_from(row, cp, memo, cache, s, &mut fetch, extra))
    };
    assemble(row, pending_writes, cache, &mut vals)
}
