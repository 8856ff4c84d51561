//! The thread list: every thread, or the most recently active ones, from the primary key's
//! index (one row per thread and namespace) — or, when the file has Flashback's newest-first
//! index ([`crate::indexes`]), the most recent ones by walking it.

use super::ctx::Ctx;
use crate::escape::{joined, key_or_note, key_text};
use crate::indexes::RECENT;
use crate::model::{ThreadInfo, WriteInfo};
use crate::StoreError;
use rusqlite::types::{Value as SqlValue, ValueRef};
use std::collections::HashSet;

/// Every thread (`recent: None`), or the `recent` most recently active ones.
pub(super) fn list_threads_blocking(
    cx: Ctx<'_>,
    recent: Option<usize>,
) -> Result<Vec<ThreadInfo>, StoreError> {
    let err = cx.err();
    // With Flashback's newest-first index, the newest threads are found by walking it
    // (`recent_by_index`); without it, from the primary key's index alone.
    let walk = match recent {
        Some(n) if n <= MAX_WALKED && has_index(cx.conn, RECENT).map_err(&err)? => Some(n),
        _ => None,
    };
    let mut threads = match (recent, walk) {
        (_, Some(n)) => recent_by_index(&cx, n)?,
        (None, _) => {
            let mut stmt = cx
                .conn
                .prepare(
                    "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
                     GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
                )
                .map_err(&err)?;
            let mut rows = stmt.query([]).map_err(&err)?;
            fold_threads(&mut rows, &err)?
        }
        // The newest threads (ties by id, as `newest_first` shows them) from the primary
        // key's index alone, then their rows.
        (Some(n), None) => {
            let mut stmt = cx
                .conn
                .prepare(
                    "WITH recent AS (SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
                       GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC, thread_id LIMIT ?1) \
                     SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
                     WHERE thread_id IN (SELECT thread_id FROM recent) \
                     GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
                )
                .map_err(&err)?;
            let mut rows = stmt
                .query([i64::try_from(n).unwrap_or(i64::MAX)])
                .map_err(&err)?;
            fold_threads(&mut rows, &err)?
        }
    };
    match recent {
        Some(_) => crate::newest_first(&mut threads),
        // Escaped ids sort where their text does.
        None => threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id)),
    }
    Ok(threads)
}

/// At most this many threads are found by walking the newest-first index (one bound
/// parameter each in the second query); more take the primary key's way.
const MAX_WALKED: usize = 10_000;

/// Whether the file has an index of this name (`sqlite_master`: a few rows, read per call so
/// an index created or dropped while the database is open is seen at once).
pub(crate) fn has_index(conn: &rusqlite::Connection, name: &str) -> rusqlite::Result<bool> {
    let mut stmt =
        conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")?;
    stmt.exists([name])
}

/// The `n` most recently active threads through [`RECENT`]: its entries walked newest id
/// first (ties by thread id, as the primary key's query orders them), stopping after `n`
/// distinct threads — a thread first met at its newest root checkpoint, so the order is the
/// threads' by latest checkpoint — then those threads' rows, in one snapshot.
fn recent_by_index(cx: &Ctx<'_>, n: usize) -> Result<Vec<ThreadInfo>, StoreError> {
    let err = cx.err();
    let snapshot = match cx.conn.is_autocommit() {
        true => Some(cx.conn.unchecked_transaction().map_err(&err)?),
        false => None,
    };
    let mut found: Vec<SqlValue> = Vec::new();
    {
        let mut seen: HashSet<SqlKey> = HashSet::new();
        let mut stmt = cx
            .conn
            .prepare(&format!(
                "SELECT thread_id FROM checkpoints INDEXED BY {RECENT} WHERE checkpoint_ns = '' \
                 ORDER BY checkpoint_id DESC, thread_id"
            ))
            .map_err(&err)?;
        let mut rows = stmt.query([]).map_err(&err)?;
        while found.len() < n {
            let Some(r) = rows.next().map_err(&err)? else {
                break;
            };
            let v: SqlValue = r.get_ref(0).map_err(&err)?.into();
            if seen.insert(SqlKey::of(&v)) {
                found.push(v);
            }
        }
    }
    let threads = threads_of(cx, &found, &err)?;
    if let Some(tx) = snapshot {
        tx.finish().map_err(&err)?;
    }
    Ok(threads)
}

/// The threads whose stored keys are `ids` (each key as stored: one bound parameter each),
/// folded as [`fold_threads`] does; none for no keys.
pub(super) fn threads_of(
    cx: &Ctx<'_>,
    ids: &[SqlValue],
    err: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<ThreadInfo>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; ids.len()].join(", ");
    let sql = format!(
        "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
         WHERE thread_id IN ({marks}) \
         GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns"
    );
    let mut stmt = cx.conn.prepare(&sql).map_err(err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(ids.iter()))
        .map_err(err)?;
    fold_threads(&mut rows, err)
}

/// A stored key as a set member (SQLite values are not `Hash`): its type and bytes.
#[derive(PartialEq, Eq, Hash)]
struct SqlKey(u8, Vec<u8>);

impl SqlKey {
    fn of(v: &SqlValue) -> SqlKey {
        match v {
            SqlValue::Null => SqlKey(0, Vec::new()),
            SqlValue::Integer(i) => SqlKey(1, i.to_le_bytes().to_vec()),
            SqlValue::Real(f) => SqlKey(2, f.to_bits().to_le_bytes().to_vec()),
            SqlValue::Text(t) => SqlKey(3, t.as_bytes().to_vec()),
            SqlValue::Blob(b) => SqlKey(4, b.clone()),
        }
    }
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
