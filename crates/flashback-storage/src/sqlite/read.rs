//! The read side of [`SqliteStore`]: Python's `search_where` queries, row decoding and the
//! pending writes of the listed checkpoints.

use super::{open_read_only, query_err, SqliteStore};
use crate::decode::{checkpoint_from_json, checkpoint_from_msgpack};
use crate::model::*;
use crate::{validate_filter_key, CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{decode_typed_cached, msgpack, DecodeCache, Decoded};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::Path;

/// Below this many listed checkpoints, writes are fetched per checkpoint; above, in one query.
const BULK_WRITES_THRESHOLD: usize = 16;

/// Checkpoints decoded together on one worker, sharing a decode cache.
const BATCH: usize = 64;

/// Build `WHERE …` and its parameters with the semantics of Python's `search_where`.
fn search_where(q: &ListQuery) -> Result<(String, Vec<SqlValue>), StoreError> {
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

struct Row {
    thread_id: String,
    ns: String,
    id: String,
    parent: Option<String>,
    type_tag: Option<String>,
    checkpoint: Option<Vec<u8>>,
    metadata: Option<Vec<u8>>,
}

const ROW_COLUMNS: &str =
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata";

/// The checkpoint rows of a query, newest first, handed to `f` one by one.
///
/// Only `(rowid, checkpoint_id)` pairs are sorted; each row is then fetched by rowid, so the
/// multi-kilobyte blobs are never copied through SQLite's sorter. Both steps run in one read
/// transaction and so see the same snapshot. (A `WITHOUT ROWID` table, which LangGraph never
/// creates, falls back to sorting whole rows.)
fn for_each_row(
    conn: &Connection,
    q: &ListQuery,
    mut f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let (where_sql, params) = search_where(q)?;
    let limit = limit_sql(q);
    // Inside a caller's read transaction (`get_tuples`) that one is the snapshot.
    let snapshot = if conn.is_autocommit() {
        Some(conn.unchecked_transaction().map_err(query_err)?)
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
                .map_err(query_err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(query_err)?;
            let mut by_id = conn
                .prepare_cached(&format!(
                    "SELECT {ROW_COLUMNS} FROM checkpoints WHERE rowid = ?"
                ))
                .map_err(query_err)?;
            for id in ids {
                let mut rows = by_id.query([id]).map_err(query_err)?;
                if let Some(r) = rows.next().map_err(query_err)? {
                    f(row_from(r).map_err(query_err)?)?;
                }
            }
        }
        Err(_) => {
            let sql = format!(
                "SELECT {ROW_COLUMNS} FROM checkpoints {where_sql} ORDER BY checkpoint_id DESC{limit}"
            );
            let mut stmt = conn.prepare_cached(&sql).map_err(query_err)?;
            let mut rows = stmt
                .query(rusqlite::params_from_iter(params.iter()))
                .map_err(query_err)?;
            while let Some(r) = rows.next().map_err(query_err)? {
                f(row_from(r).map_err(query_err)?)?;
            }
        }
    }
    match snapshot {
        Some(tx) => tx.finish().map_err(query_err),
        None => Ok(()),
    }
}

fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        thread_id: r.get(0)?,
        ns: r.get(1)?,
        id: r.get(2)?,
        parent: r.get(3)?,
        type_tag: r.get(4)?,
        checkpoint: blob_or_text(r, 5)?,
        metadata: blob_or_text(r, 6)?,
    })
}

/// Values may be stored as BLOB or (by other writers) TEXT; read both as bytes.
fn blob_or_text(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

/// Metadata is UTF-8 JSON in a BLOB; unreadable metadata becomes an `$error` object.
fn parse_metadata(raw: Option<&[u8]>) -> serde_json::Value {
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
    /// The header, reading `ts` cheaply from the undecoded document.
    fn header(&self) -> CheckpointHeader {
        let ts = self
            .checkpoint
            .as_deref()
            .and_then(|b| match self.type_tag.as_deref() {
                Some("json") => serde_json::from_slice::<serde_json::Value>(b)
                    .ok()
                    .and_then(|v| v.get("ts")?.as_str().map(str::to_owned)),
                _ => msgpack::top_level_str(b, "ts"),
            })
            .unwrap_or_default();
        self.header_with_ts(ts)
    }

    fn header_with_ts(&self, ts: String) -> CheckpointHeader {
        CheckpointHeader {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.ns.clone(),
            checkpoint_id: self.id.clone(),
            parent_checkpoint_id: self.parent.clone().filter(|p| !p.is_empty()),
            ts,
            metadata: parse_metadata(self.metadata.as_deref()),
        }
    }

    fn checkpoint(&self, cache: &mut DecodeCache) -> Result<Checkpoint, StoreError> {
        let tag = self.type_tag.as_deref().unwrap_or("msgpack");
        let corrupt = |detail: String| StoreError::Corrupt {
            checkpoint_id: self.id.clone(),
            detail,
        };
        let mut cp = match decode_typed_cached(tag, self.checkpoint.as_deref(), cache) {
            Decoded::Msgpack(v) => checkpoint_from_msgpack(v).map_err(corrupt)?,
            Decoded::Json { value, .. } => checkpoint_from_json(&value).map_err(corrupt)?,
            Decoded::Error { message, .. } => return Err(corrupt(message)),
            other => {
                return Err(corrupt(format!(
                    "checkpoint column is not a msgpack document: {other}"
                )))
            }
        };
        if cp.id.is_empty() {
            cp.id = self.id.clone();
        }
        Ok(cp)
    }
}

fn write_select(schema: &SchemaInfo) -> &'static str {
    if schema.has_task_path {
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, type, value, task_path, idx FROM writes"
    } else {
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, type, value, '' AS task_path, idx FROM writes"
    }
}

/// `(thread_id, checkpoint_ns, checkpoint_id)`.
type WriteKey = (String, String, String);

/// A write row not decoded yet (decoding happens on the worker that builds its checkpoint).
struct RawWrite {
    task_id: String,
    channel: String,
    type_tag: String,
    data: Option<Vec<u8>>,
    task_path: String,
    idx: i64,
}

impl RawWrite {
    fn decode(self, cache: &mut DecodeCache) -> PendingWrite {
        PendingWrite {
            value: decode_typed_cached(&self.type_tag, self.data.as_deref(), cache),
            task_id: self.task_id,
            channel: self.channel,
            type_tag: self.type_tag,
            task_path: self.task_path,
            idx: self.idx,
        }
    }
}

/// Decode a checkpoint's writes and sort them as Python does.
fn decode_writes(raw: Vec<RawWrite>, cache: &mut DecodeCache) -> Vec<PendingWrite> {
    let mut writes: Vec<PendingWrite> = raw.into_iter().map(|w| w.decode(cache)).collect();
    sort_writes(&mut writes);
    writes
}

fn read_writes(
    conn: &Connection,
    schema: &SchemaInfo,
    where_sql: &str,
    params: &[SqlValue],
) -> Result<HashMap<WriteKey, Vec<RawWrite>>, StoreError> {
    let sql = format!("{} {where_sql}", write_select(schema));
    let mut stmt = conn.prepare_cached(&sql).map_err(query_err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params.iter()))
        .map_err(query_err)?;
    let mut out: HashMap<WriteKey, Vec<RawWrite>> = HashMap::new();
    while let Some(r) = rows.next().map_err(query_err)? {
        let thread: String = r.get(0).map_err(query_err)?;
        let ns: String = r.get(1).map_err(query_err)?;
        let cid: String = r.get(2).map_err(query_err)?;
        let type_tag: Option<String> = r.get(5).map_err(query_err)?;
        let value = blob_or_text(r, 6).map_err(query_err)?;
        let type_tag = type_tag.unwrap_or_else(|| "msgpack".into());
        let w = RawWrite {
            task_id: r.get(3).map_err(query_err)?,
            channel: r.get(4).map_err(query_err)?,
            data: value,
            type_tag,
            task_path: r
                .get::<_, Option<String>>(7)
                .map_err(query_err)?
                .unwrap_or_default(),
            idx: r.get(8).map_err(query_err)?,
        };
        out.entry((thread, ns, cid)).or_default().push(w);
    }
    Ok(out)
}

impl Row {
    fn into_tuple(
        self,
        writes: Vec<RawWrite>,
        cache: &mut DecodeCache,
    ) -> Result<CheckpointTuple, StoreError> {
        let pending_writes = decode_writes(writes, cache);
        let checkpoint = self.checkpoint(cache)?;
        Ok(CheckpointTuple {
            header: self.header_with_ts(checkpoint.ts.clone()),
            checkpoint,
            pending_writes,
        })
    }
}

fn writes_of(
    conn: &Connection,
    schema: &SchemaInfo,
    row: &Row,
) -> Result<Vec<RawWrite>, StoreError> {
    let params = [
        SqlValue::Text(row.thread_id.clone()),
        SqlValue::Text(row.ns.clone()),
        SqlValue::Text(row.id.clone()),
    ];
    let mut map = read_writes(
        conn,
        schema,
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
        &params,
    )?;
    let writes = map.drain().next().map(|(_, w)| w).unwrap_or_default();
    Ok(writes)
}

/// Python's `list()`: checkpoint rows newest first, each with its pending writes.
///
/// Short lists query writes per checkpoint. Long ones read all the writes in one query on a
/// second connection while this thread streams the checkpoint rows to the rayon pool, which
/// decodes them as they arrive (reading and decoding take similar time on a long history).
fn list_tuples_blocking(
    conn: &Connection,
    path: &str,
    schema: &SchemaInfo,
    q: &ListQuery,
) -> Result<Vec<CheckpointTuple>, StoreError> {
    let short =
        q.checkpoint_id.is_some() || q.limit.is_some_and(|l| l as usize <= BULK_WRITES_THRESHOLD);
    if short {
        let mut rows = Vec::new();
        for_each_row(conn, q, |row| {
            rows.push(row);
            Ok(())
        })?;
        let mut cache = DecodeCache::new();
        return rows
            .into_iter()
            .map(|row| {
                let writes = writes_of(conn, schema, &row)?;
                row.into_tuple(writes, &mut cache)
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
        let schema = schema.clone();
        let path = path.to_owned();
        scope.spawn(move |_| {
            let read = || -> Result<HashMap<WriteKey, Vec<PendingWrite>>, StoreError> {
                let conn = open_read_only(Path::new(&path)).map_err(query_err)?;
                let mut cache = DecodeCache::new();
                Ok(read_writes(&conn, &schema, &wsql, &wparams)?
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
                let mut cache = DecodeCache::new();
                for (i, row) in batch.into_iter().enumerate() {
                    let _ = tx.send((first + i, row.into_tuple(Vec::new(), &mut cache)));
                }
            });
        };
        for_each_row(conn, q, |row| {
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
    let mut out: Vec<(usize, Result<CheckpointTuple, StoreError>)> = rx.into_iter().collect();
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter()
        .map(|(_, t)| {
            let mut t = t?;
            let h = &t.header;
            let key = (
                h.thread_id.clone(),
                h.checkpoint_ns.clone(),
                h.checkpoint_id.clone(),
            );
            t.pending_writes = writes.remove(&key).unwrap_or_default();
            Ok(t)
        })
        .collect()
}

#[async_trait]
impl CheckpointStore for SqliteStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        self.with_conn(|conn, _| {
            let mut stmt = conn
                .prepare(
                    "SELECT thread_id, checkpoint_ns, COUNT(*), MAX(checkpoint_id) FROM checkpoints \
                     GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
                )
                .map_err(query_err)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })
                .map_err(query_err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(query_err)?;
            let mut threads: Vec<ThreadInfo> = Vec::new();
            for (thread_id, ns, count, max_id) in rows {
                if threads.last().map(|t| &t.thread_id) != Some(&thread_id) {
                    threads.push(ThreadInfo {
                        thread_id,
                        namespaces: Vec::new(),
                        checkpoint_count: 0,
                        latest_checkpoint_id: None,
                    });
                }
                if let Some(t) = threads.last_mut() {
                    t.checkpoint_count += count as u64;
                    if ns.is_empty() {
                        t.latest_checkpoint_id = Some(max_id);
                    }
                    t.namespaces.push(ns);
                }
            }
            Ok(threads)
        })
        .await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        let q = query.clone();
        self.with_conn(move |conn, _| {
            let mut out = Vec::new();
            for_each_row(conn, &q, |row| {
                out.push(row.header());
                Ok(())
            })?;
            Ok(out)
        })
        .await
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        let q = query.clone();
        let path = self.path.clone();
        self.with_conn(move |conn, schema| list_tuples_blocking(conn, &path, schema, &q))
            .await
    }

    /// All in one blocking call and one read transaction: per-key calls cost a thread hand-off
    /// and a file lock each, which dominated listing tens of thousands of threads.
    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let queries: Vec<ListQuery> = keys
            .iter()
            .map(|(thread_id, ns, id)| ListQuery::one(thread_id, ns, *id))
            .collect();
        let path = self.path.clone();
        self.with_conn(move |conn, schema| {
            let snapshot = conn.unchecked_transaction().map_err(query_err)?;
            let read = queries
                .iter()
                .map(|q| list_tuples_blocking(conn, &path, schema, q).map(|v| v.into_iter().next()))
                .collect::<Result<Vec<_>, _>>()?;
            snapshot.finish().map_err(query_err)?;
            Ok(read)
        })
        .await
    }
}
