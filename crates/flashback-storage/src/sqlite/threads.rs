//! The thread list: every thread, or the most recently active ones, from the primary key's
//! index (one row per thread and namespace).

use super::ctx::Ctx;
use crate::escape::{joined, key_or_note, key_text};
use crate::model::{ThreadInfo, WriteInfo};
use crate::StoreError;
use rusqlite::types::ValueRef;

/// Every thread (`recent: None`), or the `recent` most recently active ones.
pub(super) fn list_threads_blocking(
    cx: Ctx<'_>,
    recent: Option<usize>,
) -> Result<Vec<ThreadInfo>, StoreError> {
    let err = cx.err();
    let (sql, limit) = match recent {
        None => (
            "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
             GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
            -1,
        ),
        // The newest threads from the primary key's index alone, then their rows.
        Some(n) => (
            "WITH recent AS (SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
               GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC LIMIT ?1) \
             SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
             WHERE thread_id IN (SELECT thread_id FROM recent) \
             GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
            i64::try_from(n).unwrap_or(i64::MAX),
        ),
    };
    let mut stmt = cx.conn.prepare(sql).map_err(&err)?;
    let mut rows = if recent.is_some() {
        stmt.query([limit])
    } else {
        stmt.query([])
    }
    .map_err(&err)?;
    let mut threads = fold_threads(&mut rows, &err)?;
    match recent {
        Some(_) => crate::newest_first(&mut threads),
        // Escaped ids sort where their text does.
        None => threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id)),
    }
    Ok(threads)
}

/// Rows of `(thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id))` ordered by thread and
/// namespace, folded into threads (keys that are not text are shown escaped, with a problem):
/// the thread list of LangGraph's SQLite schema and of the three-table store alike.
pub(crate) fn fold_threads(
    rows: &mut rusqlite::Rows<'_>,
    err: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<ThreadInfo>, StoreError> {
    let mut threads: Vec<(ThreadInfo, Vec<String>)> = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let get = |i: usize| r.get_ref(i).map_err(err);
        let mut notes = Vec::new();
        let thread_id = key_or_note("thread_id", get(0)?.into(), &mut notes);
        let ns = key_or_note("checkpoint_ns", get(1)?.into(), &mut notes);
        let count = get(2)?.as_i64().unwrap_or(0);
        let latest = match get(3)? {
            ValueRef::Null => None,
            v => Some(key_text("checkpoint_id", v.into()).unwrap_or_else(|bad| {
                notes.push(format!("latest checkpoint: {}", bad.problem));
                bad.shown
            })),
        };
        if threads.last().map(|(t, _)| &t.thread_id) != Some(&thread_id) {
            let info = ThreadInfo {
                thread_id,
                namespaces: Vec::new(),
                checkpoint_count: 0,
                latest_checkpoint_id: None,
                problem: None,
            };
            threads.push((info, Vec::new()));
        }
        if let Some((t, problems)) = threads.last_mut() {
            t.checkpoint_count += u64::try_from(count).unwrap_or(0);
            if ns.is_empty() {
                t.latest_checkpoint_id = latest;
            }
            t.namespaces.push(ns);
            for note in notes {
                if !problems.contains(&note) {
                    problems.push(note);
                }
            }
        }
    }
    Ok(threads
        .into_iter()
        .map(|(mut t, problems)| {
            t.problem = joined(problems);
            t
        })
        .collect())
}

/// The rows of `sql` (which selects [`key_columns`] first, then anything `each` reads from
/// column 5 on) with each row's keys as a [`WriteInfo`] (keys that are not text shown escaped).
fn query_writes<T>(
    cx: &Ctx<'_>,
    sql: &str,
    params: impl rusqlite::Params,
    mut each: impl FnMut(WriteInfo, &rusqlite::Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let err = cx.err();
    let mut stmt = cx.conn.prepare_cached(sql).map_err(&err)?;
    let mut rows = stmt.query(params).map_err(&err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(&err)? {
        let text = |i: usize, column: &str| -> Result<String, StoreError> {
            Ok(match r.get_ref(i).map_err(&err)? {
                ValueRef::Null => String::new(),
                v => key_text(column, v.into()).unwrap_or_else(|bad| bad.shown),
            })
        };
        let info = WriteInfo {
            checkpoint_ns: text(0, "checkpoint_ns")?,
            checkpoint_id: text(1, "checkpoint_id")?,
            task_id: text(2, "task_id")?,
            task_path: text(3, "task_path")?,
            channel: text(4, "channel")?,
        };
        out.push(each(info, r)?);
    }
    Ok(out)
}

/// The key columns of a write, as [`query_writes`] reads them.
fn key_columns(cx: &Ctx<'_>) -> &'static str {
    if cx.schema.has_task_path {
        "checkpoint_ns, checkpoint_id, task_id, task_path, channel"
    } else {
        "checkpoint_ns, checkpoint_id, task_id, '', channel"
    }
}

/// Every pending write of a thread without its value (the key columns, `task_path` and
/// `channel` only).
pub(super) fn thread_writes_blocking(
    cx: Ctx<'_>,
    thread_id: &str,
) -> Result<Vec<WriteInfo>, StoreError> {
    let sql = format!(
        "SELECT {} FROM writes WHERE thread_id = ?",
        key_columns(&cx)
    );
    query_writes(&cx, &sql, [thread_id], |w, _| Ok(w))
}

/// [`crate::CheckpointStore::thread_writes_mentioning`]: the bytes are searched by SQLite
/// (`instr` on the value), so only matching values are read and decoded.
pub(super) fn thread_writes_mentioning_blocking(
    cx: Ctx<'_>,
    thread_id: &str,
    needle: &str,
) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
    let sql = format!(
        "SELECT {}, type, value FROM writes \
         WHERE thread_id = ?1 AND length(value) <= ?3 AND instr(value, CAST(?2 AS BLOB)) > 0",
        key_columns(&cx)
    );
    let max = crate::MENTION_MAX_BYTES as i64;
    let params = rusqlite::params![thread_id, needle.as_bytes(), max];
    let mut cache = cx.dec.cache();
    let err = cx.err();
    query_writes(&cx, &sql, params, |info, r| {
        let tag = match r.get_ref(5).map_err(&err)? {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            _ => String::new(),
        };
        let data = match r.get_ref(6).map_err(&err)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => Some(b),
            _ => None,
        };
        let value = flashback_codec::decode_typed_cached(&tag, data, &mut cache);
        Ok((info, value))
    })
}
