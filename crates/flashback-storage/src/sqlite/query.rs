//! Python's `search_where` queries and the checkpoint rows they select, read in one snapshot
//! and decoded with their pending writes (rows are decoded in `rows.rs`).

use super::connect::query_err;
use super::ctx::Ctx;
use super::rows::{
    decode_writes, read_writes, row_columns, row_from, RawWrite, Row, WriteKey, ROW_COLUMNS,
};
use crate::model::*;
use crate::{validate_filter_key, StoreError};
use flashback_codec::DecodeCache;
use rusqlite::types::Value as SqlValue;
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
    // A row whose metadata is not JSON (damaged) matches no filter, instead of failing the
    // whole query with "malformed JSON": one bad row damages only itself. The guarded
    // expression is NULL there, which `=` never matches; `IS NULL` needs the guard itself.
    if q.filter.values().any(serde_json::Value::is_null) {
        clauses.push("json_valid(CAST(metadata AS TEXT))".to_string());
    }
    for (key, value) in &q.filter {
        validate_filter_key(key)?;
        // CASE, not AND alone: SQLite may evaluate the terms of a WHERE in any order. The
        // text of Flashback's metadata indexes (`indexes::sqlite_metadata_expr`), so they
        // serve it.
        let path = crate::indexes::sqlite_metadata_expr(key);
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

/// The checkpoint rows of a query, newest first, handed to `f` one by one.
///
/// Only `(rowid, checkpoint_id)` pairs are sorted; each row is then fetched by rowid, so the
/// multi-kilobyte blobs are never copied through SQLite's sorter. Both steps run in one read
/// transaction and so see the same snapshot. (A `WITHOUT ROWID` table, which LangGraph never
/// creates, falls back to sorting whole rows.)
pub(super) fn for_each_row(
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

/// The pending writes of one row (by its stored keys, exactly).
pub(super) fn writes_of(cx: Ctx<'_>, row: &Row) -> Result<Vec<RawWrite>, StoreError> {
    let (where_sql, params) = row.writes_where();
    let mut map = read_writes(
        cx.conn,
        cx.schema,
        &where_sql,
        &params,
        cx.dec.budget.max_value_bytes,
        &cx.err(),
    )?;
    let writes = map.drain().next().map(|(_, w)| w).unwrap_or_default();
    Ok(writes)
}
