//! The read side of [`SqliteStore`]: Python's `search_where` queries, the thread list, and
//! the pending writes of the listed checkpoints (rows are decoded in `rows.rs`).

use super::access::{LookupWindow, Source};
use super::batch::{get_many, writes_of, Key};
use super::rows::{
    decode_writes, read_writes, row_columns, row_from, RawWrite, Row, WriteKey, ROW_COLUMNS,
};
use super::threads::{
    list_threads_blocking, thread_writes_blocking, thread_writes_mentioning_blocking,
};
use super::{query_err, SqliteStore};
use crate::decode::Decoding;
use crate::escape::key_text;
use crate::model::*;
use crate::{validate_filter_key, CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::DecodeCache;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use std::collections::HashMap;

/// Below this many listed checkpoints, writes are fetched per checkpoint; above, in one query.
const BULK_WRITES_THRESHOLD: usize = 16;

/// Checkpoints decoded together on one worker, sharing a decode cache.
const BATCH: usize = 64;

/// Build `WHERE …` and its parameters with the semantics of Python's `search_where`.
pub(crate) fn search_where(q: &ListQuery) -> Result<(String, Vec<SqlValue>), StoreError> {
    let mut clauses = Vec::new();
    let mut params = Vec::new();
    if let Some(t) = &q.thread_id {
        clauses.push("thread_id = ?".to_string());
        params.push(SqlValue::Text(t.clone()));
    }
    if let Some(ns) = &q.checkpoint_ns {
        clauses.push("checkpoint_ns = ?".to_string());
        params.push(SqlValue::Text(ns.clone()));
    }
    if let Some(id) = &q.checkpoint_id {
        clauses.push("checkpoint_id = ?".to_string());
        params.push(SqlValue::Text(id.clone()));
    }
    if !q.checkpoint_ids.is_empty() {
        let marks = vec!["?"; q.checkpoint_ids.len()].join(", ");
        clauses.push(format!("checkpoint_id IN ({marks})"));
        params.extend(q.checkpoint_ids.iter().cloned().map(SqlValue::Text));
    }
    for (key, value) in &q.filter {
        validate_filter_key(key)?;
        let path = format!("json_extract(CAST(metadata AS TEXT), '$.{key}')");
        use serde_json::Value as J;
        let (op, param) = match value {
            J::Null => ("IS", SqlValue::Null),
            J::Bool(b) => ("=", SqlValue::Integer(*b as i64)),
            J::Number(n) => (
                "=",
                n.as_i64()
                    .map(SqlValue::Integer)
                    .unwrap_or_else(|| SqlValue::Real(n.as_f64().unwrap_or(f64::NAN))),
            ),
            J::String(s) => ("=", SqlValue::Text(s.clone())),
            other => ("=", SqlValue::Text(other.to_string())),
        };
        clauses.push(format!("{path} {op} ?"));
        params.push(param);
    }
    if let Some(b) = &q.before {
        clauses.push("checkpoint_id < ?".to_string());
        params.push(SqlValue::Text(b.clone()));
    }
    let sql = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    Ok((sql, params))
}

fn limit_sql(q: &ListQuery) -> String {
    q.limit.map(|l| format!(" LIMIT {l}")).unwrap_or_default()
}

/// What a read needs besides the query: the connection, how to open another one, the schema,
/// and the path (for messages).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) conn: &'a Connection,
    pub(super) source: &'a Source,
    pub(super) schema: &'a SchemaInfo,
    pub(super) path: &'a str,
    pub(super) dec: &'a Decoding,
}

impl Ctx<'_> {
    pub(super) fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        query_err(self.path)
    }

    /// A decode cache for one read, within the store's budget.
    fn cache(&self) -> DecodeCache {
        self.dec.cache()
    }
}

/// The checkpoint rows of a query, newest first, handed to `f` one by one.
///
/// Only `(rowid, checkpoint_id)` pairs are sorted; each row is then fetched by rowid, so the
/// multi-kilobyte blobs are never copied through SQLite's sorter. Both steps run in one read
/// transaction and so see the same snapshot. (A `WITHOUT ROWID` table, which LangGraph never
/// creates, falls back to sorting whole rows.)
fn for_each_row(
    cx: Ctx<'_>,
    q: &ListQuery,
    mut f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let (where_sql, params) = search_where(q)?;
    let limit = limit_sql(q);
    let (conn, err) = (cx.conn, cx.err());
    // Inside a caller's read transaction (`get_tuples`) that one is the snapshot.
    let snapshot = if conn.is_autocommit() {
        Some(conn.unchecked_transaction().map_err(&err)?)
    } else {
        None
    };
    let ids_sql =
        format!("SELECT rowid FROM checkpoints {where_sql} ORDER BY checkpoint_id DESC{limit}");
    match conn.prepare_cached(&ids_sql) {
        Ok(mut stmt) => {
            let ids = stmt
                .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(&err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(&err)?;
            let mut by_id = by_id_statement(cx)?;
            let mut unmapped: Option<Connection> = None;
            for id in ids {
                if let Some(row) = fetch_row(cx, &mut by_id, id, &mut unmapped)? {
                    f(row)?;
                }
            }
        }
        Err(_) => {
            let sql = format!(
                "SELECT {ROW_COLUMNS} FROM checkpoints {where_sql} ORDER BY checkpoint_id DESC{limit}"
            );
            let mut stmt = conn.prepare_cached(&sql).map_err(&err)?;
            let mut rows = stmt
                .query(rusqlite::params_from_iter(params.iter()))
                .map_err(&err)?;
            while let Some(r) = rows.next().map_err(&err)? {
                f(row_from(r).map_err(&err)?)?;
            }
        }
    }
    match snapshot {
        Some(tx) => tx.finish().map_err(&err),
        None => Ok(()),
    }
}

/// The statement reading one checkpoint row by rowid ([`fetch_row`]).
pub(super) fn by_id_statement<'c>(
    cx: Ctx<'c>,
) -> Result<rusqlite::CachedStatement<'c>, StoreError> {
    let sql = format!(
        "SELECT {} FROM checkpoints WHERE rowid = ?",
        row_columns(cx.dec.budget.max_value_bytes)
    );
    cx.conn.prepare_cached(&sql).map_err(cx.err())
}

/// Checkpoint row `rowid` (`None` when there is none). A document over the budget is streamed
/// from the file, its big values left out, never in memory whole (nor mapped: see
/// `connect_unmapped`, opened once per read in `unmapped`).
pub(super) fn fetch_row(
    cx: Ctx<'_>,
    by_id: &mut rusqlite::CachedStatement<'_>,
    rowid: i64,
    unmapped: &mut Option<Connection>,
) -> Result<Option<Row>, StoreError> {
    let err = cx.err();
    let mut rows = by_id.query([rowid]).map_err(&err)?;
    let Some(r) = rows.next().map_err(&err)? else {
        return Ok(None);
    };
    let mut row = row_from(r).map_err(&err)?;
    if let Some(len) = row.oversized() {
        if unmapped.is_none() {
            *unmapped = Some(cx.source.connect_unmapped().map_err(&err)?);
        }
        row.slim(
            unmapped.as_ref().unwrap_or(cx.conn),
            rowid,
            len,
            cx.dec.budget.max_value_bytes,
            cx.dec.key.as_ref(),
        );
    }
    Ok(Some(row))
}

/// A row and its writes decoded into a tuple; with `only`, a selecting read (the other
/// channels' values skipped undecoded).
pub(super) fn tuple_of(
    mut row: Row,
    writes: Vec<RawWrite>,
    only: Option<&ChannelFilter>,
    cache: &mut DecodeCache,
) -> CheckpointTuple {
    let Some(only) = only else {
        return row.into_tuple(writes, cache);
    };
    row.select(only.as_ref());
    let mut tuple = row.into_tuple(writes, cache);
    tuple.checkpoint.retain_channel_values(only);
    tuple
}

/// Python's `list()`: checkpoint rows newest first, each with its pending writes.
///
/// Short lists query writes per checkpoint. Long ones read all the writes in one query on a
/// second connection while this thread streams the checkpoint rows to the rayon pool, which
/// decodes them as they arrive (reading and decoding take similar time on a long history).
pub(super) fn list_tuples_blocking(
    cx: Ctx<'_>,
    q: &ListQuery,
) -> Result<Vec<CheckpointTuple>, StoreError> {
    let short = q.checkpoint_id.is_some()
        || q.limit.is_some_and(|l| l as usize <= BULK_WRITES_THRESHOLD)
        || (1..=BULK_WRITES_THRESHOLD).contains(&q.checkpoint_ids.len());
    if short {
        let mut rows = Vec::new();
        for_each_row(cx, q, |row| {
            rows.push(row);
            Ok(())
        })?;
        let mut cache = cx.cache();
        return rows
            .into_iter()
            .map(|row| {
                let writes = writes_of(cx, &row)?;
                Ok(tuple_of(row, writes, cx.dec.only.as_ref(), &mut cache))
            })
            .collect();
    }
    let mut clauses = Vec::new();
    let mut wparams = Vec::new();
    if let Some(t) = &q.thread_id {
        clauses.push("thread_id = ?");
        wparams.push(SqlValue::Text(t.clone()));
    }
    if let Some(ns) = &q.checkpoint_ns {
        clauses.push("checkpoint_ns = ?");
        wparams.push(SqlValue::Text(ns.clone()));
    }
    // A batch of known checkpoints: only their writes.
    let ids_clause;
    if !q.checkpoint_ids.is_empty() {
        ids_clause = format!(
            "checkpoint_id IN ({})",
            vec!["?"; q.checkpoint_ids.len()].join(", ")
        );
        clauses.push(&ids_clause);
        wparams.extend(q.checkpoint_ids.iter().cloned().map(SqlValue::Text));
    }
    let wsql = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };

    // The writes are read on a second connection and decoded on the pool while this thread
    // streams the checkpoint rows to the pool in batches of consecutive checkpoints, each
    // batch with its own DecodeCache (neighbouring checkpoints share most of their objects).
    let (tx, rx) = std::sync::mpsc::channel();
    let (wtx, wrx) = std::sync::mpsc::channel();
    rayon::in_place_scope(|scope| -> Result<(), StoreError> {
        // Not the Ctx itself: its connection stays on this thread.
        let (source, schema, path, dec) = (cx.source, cx.schema, cx.path, cx.dec);
        scope.spawn(move |_| {
            let read = || -> Result<HashMap<WriteKey, Vec<PendingWrite>>, StoreError> {
                let err = query_err(path);
                let conn = source.connect().map_err(&err)?;
                let mut cache = dec.cache();
                Ok(read_writes(
                    &conn,
                    schema,
                    &wsql,
                    &wparams,
                    dec.budget.max_value_bytes,
                    &err,
                )?
                .into_iter()
                .map(|(key, raw)| (key, decode_writes(raw, &mut cache)))
                .collect())
            };
            let _ = wtx.send(read());
        });
        let mut batch = Vec::with_capacity(BATCH);
        let mut first = 0usize;
        let send = |batch: Vec<Row>, first: usize| {
            let tx = tx.clone();
            scope.spawn(move |_| {
                let mut cache = dec.cache();
                for (i, row) in batch.into_iter().enumerate() {
                    let _ = tx.send((first + i, row.into_tuple(Vec::new(), &mut cache)));
                }
            });
        };
        for_each_row(cx, q, |row| {
            batch.push(row);
            if batch.len() == BATCH {
                let n = batch.len();
                send(
                    std::mem::replace(&mut batch, Vec::with_capacity(BATCH)),
                    first,
                );
                first += n;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            send(batch, first);
        }
        Ok(())
    })?;
    let mut writes = wrx
        .recv()
        .map_err(|_| StoreError::Query("the writes reader stopped".into()))??;
    drop(tx);
    let mut out: Vec<(usize, CheckpointTuple)> = rx.into_iter().collect();
    out.sort_unstable_by_key(|(i, _)| *i);
    Ok(out
        .into_iter()
        .map(|(_, mut t)| {
            let h = &t.header;
            let key = (
                h.thread_id.clone(),
                h.checkpoint_ns.clone(),
                h.checkpoint_id.clone(),
            );
            t.pending_writes = writes.remove(&key).unwrap_or_default();
            t
        })
        .collect())
}

/// Every thread: one row per `(thread_id, checkpoint_ns)`. Keys that are not text are shown
/// escaped, with the thread's `problem` saying so.
#[async_trait]
impl CheckpointStore for SqliteStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        self.memory_reader()
            .map(|m| m as &dyn crate::memory::MemoryRead)
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        self.with_cx(|cx| list_threads_blocking(cx, None)).await
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        self.with_cx(move |cx| {
            let mut threads = list_threads_blocking(cx, Some(limit))?;
            // A thread whose root checkpoints all have an unreadable id has none listed.
            threads.retain(|t| t.latest_checkpoint_id.is_some());
            Ok(threads)
        })
        .await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let q = query.clone();
        self.with_cx(move |cx| {
            let mut out = Vec::new();
            for_each_row(cx, &q, |row| {
                out.push(row.header(cx.dec.key.as_ref()));
                Ok(())
            })?;
            Ok(out)
        })
        .await
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let q = query.clone();
        self.with_cx(move |cx| list_tuples_blocking(cx, &q)).await
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let thread = thread_id.to_owned();
        self.with_cx(move |cx| thread_writes_blocking(cx, &thread))
            .await
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let (thread, needle) = (thread_id.to_owned(), needle.to_owned());
        self.with_cx(move |cx| thread_writes_mentioning_blocking(cx, &thread, &needle))
            .await
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let thread = thread_id.to_owned();
        self.with_conn(move |conn, _, _, path, _| {
            let err = query_err(path);
            let mut stmt = conn
                .prepare_cached(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? \
                     ORDER BY checkpoint_ns",
                )
                .map_err(&err)?;
            let mut rows = stmt.query([&thread]).map_err(&err)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(&err)? {
                let raw = r.get_ref(0).map_err(&err)?;
                out.push(key_text("checkpoint_ns", raw.into()).unwrap_or_else(|bad| bad.shown));
            }
            out.sort();
            out.dedup();
            Ok(out)
        })
        .await
    }

    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        self.with_conn(|conn, _, _, path, _| {
            let err = query_err(path);
            let mut probe = crate::EncryptionProbe::default();
            for (table, column) in [("writes", "value"), ("checkpoints", "checkpoint")] {
                // The newest rows by rowid (the primary key's b-tree is walked backwards).
                let sql = format!(
                    "SELECT type, CASE WHEN type LIKE '%+%' AND length({column}) <= 65536 \
                     THEN {column} END FROM {table} ORDER BY rowid DESC LIMIT {}",
                    crate::sealed::PROBE_ROWS
                );
                let Ok(mut stmt) = conn.prepare(&sql) else {
                    continue; // a WITHOUT ROWID table, which LangGraph never creates
                };
                let mut rows = stmt.query([]).map_err(&err)?;
                while let Some(r) = rows.next().map_err(&err)? {
                    let tag = match r.get_ref(0).map_err(&err)? {
                        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        _ => continue,
                    };
                    probe.add(&tag, super::rows::blob_or_text(r, 1).map_err(&err)?);
                }
            }
            Ok(probe.done())
        })
        .await
    }

    /// All in one blocking call and one read transaction: per-key calls cost a thread hand-off
    /// and a file lock each, which dominated listing tens of thousands of threads.
    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.get_tuples_decoding(keys, self.decoding.clone()).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let mut decoding = self.decoding.clone();
        decoding.only = Some(keep);
        self.get_tuples_decoding(keys, decoding).await
    }
}

impl SqliteStore {
    /// [`with_conn`](Self::with_conn) with the connection and what comes with it as one [`Ctx`].
    async fn with_cx<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Ctx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.with_conn(move |conn, source, schema, path, dec| {
            f(Ctx {
                conn,
                source,
                schema,
                path,
                dec,
            })
        })
        .await
    }

    /// [`get_tuples`](CheckpointStore::get_tuples) with `decoding`: one call to the
    /// connection, one snapshot.
    async fn get_tuples_decoding(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        decoding: Decoding,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(vec![None; keys.len()]);
        }
        let keys: Vec<Key> = keys
            .iter()
            .map(|(t, n, c)| (t.to_string(), n.to_string(), c.map(str::to_owned)))
            .collect();
        self.with_conn_decoding(decoding, move |conn, source, schema, path, dec| {
            let cx = Ctx {
                conn,
                source,
                schema,
                path,
                dec,
            };
            let _window = LookupWindow::open(conn);
            let snapshot = conn.unchecked_transaction().map_err(cx.err())?;
            let read = get_many(cx, &keys)?;
            snapshot.finish().map_err(cx.err())?;
            Ok(read)
        })
        .await
    }
}
