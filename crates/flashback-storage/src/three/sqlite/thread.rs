//! Thread-wide reads of a three-table SQLite file that need no channel value: the thread
//! list, a thread's write keys, and the writes whose stored bytes hold a needle (searched by
//! SQLite, as the LangGraph store does). Namespaces come from the thread's checkpoints
//! (`checkpoint_writes` holds only their hash).

use crate::escape::key_text;
use crate::model::*;
use crate::StoreError;
use flashback_codec::{decode_typed_cached, DecodeCache, Decoded};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::HashMap;

type Err<'a> = &'a dyn Fn(rusqlite::Error) -> StoreError;

/// Every thread: its namespaces, checkpoint count and latest root checkpoint.
pub(super) fn threads(conn: &Connection, err: Err<'_>) -> Result<Vec<ThreadInfo>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
             GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    let mut threads = crate::sqlite::threads::fold_threads(&mut rows, err)?;
    // Escaped ids sort where their text does, as in LangGraph's schema.
    threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
    Ok(threads)
}

/// The namespace of each hash in a thread (from its checkpoints).
fn namespaces(
    conn: &Connection,
    thread: &str,
    err: Err<'_>,
) -> Result<HashMap<String, String>, StoreError> {
    let mut names = HashMap::new();
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
    Ok(names)
}

/// The writes of `sql` (its first five columns: hash, checkpoint id, task id, task path,
/// channel), each with what `each` makes of the row.
fn query_writes<P: rusqlite::Params, T>(
    conn: &Connection,
    thread: &str,
    sql: &str,
    params: P,
    err: Err<'_>,
    mut each: impl FnMut(&rusqlite::Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<(WriteInfo, T)>, StoreError> {
    let names = namespaces(conn, thread, err)?;
    let mut stmt = conn.prepare_cached(sql).map_err(err)?;
    let mut rows = stmt.query(params).map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let text = |i: usize| -> Result<String, StoreError> {
            Ok(match r.get_ref(i).map_err(err)? {
                ValueRef::Null => String::new(),
                v => key_text("column", v.into()).unwrap_or_else(|b| b.shown),
            })
        };
        let hash = text(0)?;
        let info = WriteInfo {
            checkpoint_ns: names.get(&hash).cloned().unwrap_or(hash),
            checkpoint_id: text(1)?,
            task_id: text(2)?,
            task_path: text(3)?,
            channel: text(4)?,
        };
        out.push((info, each(r)?));
    }
    Ok(out)
}

/// Every pending write of a thread, without values.
pub(super) fn thread_writes(
    conn: &Connection,
    thread: &str,
    err: Err<'_>,
) -> Result<Vec<WriteInfo>, StoreError> {
    let sql = "SELECT checkpoint_ns_hash, checkpoint_id, task_id, task_path, channel \
               FROM checkpoint_writes WHERE thread_id = ?";
    let out = query_writes(conn, thread, sql, [thread], err, |_| Ok(()))?;
    Ok(out.into_iter().map(|(w, ())| w).collect())
}

/// [`crate::CheckpointStore::thread_writes_mentioning`]: the writes of a thread whose stored
/// bytes hold `needle` (SQLite's `instr` on `blob_data`, values of at most
/// [`crate::MENTION_MAX_BYTES`]), decoded.
pub(super) fn thread_writes_mentioning(
    conn: &Connection,
    thread: &str,
    needle: &str,
    cache: &mut DecodeCache,
    err: Err<'_>,
) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
    let sql = "SELECT checkpoint_ns_hash, checkpoint_id, task_id, task_path, channel, type, \
               blob_data FROM checkpoint_writes WHERE thread_id = ?1 \
               AND length(blob_data) <= ?3 AND instr(blob_data, CAST(?2 AS BLOB)) > 0";
    let max = crate::MENTION_MAX_BYTES as i64;
    let params = rusqlite::params![thread, needle.as_bytes(), max];
    query_writes(conn, thread, sql, params, err, |r| {
        let tag = match r.get_ref(5).map_err(err)? {
            ValueRef::Text(t) if !t.is_empty() => String::from_utf8_lossy(t).into_owned(),
            _ => "msgpack".to_owned(),
        };
        let data = match r.get_ref(6).map_err(err)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => Some(b),
            _ => None,
        };
        Ok(decode_typed_cached(&tag, data, cache))
    })
}
