//! The write side of [`PostgresStore`]: [`CheckpointSaver`] with the rows
//! `langgraph-checkpoint-postgres` 3.2.0's `PostgresSaver` writes.
//!
//! ```text
//!  setup()        migration 0, then every migration above the recorded version, each followed
//!                 by INSERT INTO checkpoint_migrations (autocommit: 6–8 are CONCURRENTLY)
//!  put(req)       one transaction:
//!                   checkpoint_blobs  ← non-primitive values of channels in new_versions
//!                                       (ON CONFLICT DO NOTHING: the first writer wins)
//!                   checkpoints       ← JSONB document with the primitives inline
//!                                       (ON CONFLICT DO UPDATE checkpoint, metadata)
//!  put_writes     one statement: idx from WRITES_IDX_MAP or the position in the batch;
//!                 DO UPDATE when every channel is special, else DO NOTHING
//!  put_batch      one transaction: the statements of several puts, then of several put_writes
//!  delete_thread  one transaction: the thread's rows of the three tables
//! ```
//!
//! Writes use plain `BEGIN` (so a server or role with `default_transaction_read_only` refuses
//! them, as it refuses Python's), never the read-only transactions of the read side.

use super::{detect_schema, PostgresStore};
use crate::model::{Checkpoint, Version, Versions};
use crate::saver::{write_idx, writes_replace, CheckpointSaver, PutRequest, WriteBatch};
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::{encode_typed, Decoded, Value};
use serde_json::{Map, Value as Json};
use sqlx::postgres::PgArguments;
use sqlx::PgConnection;
use sqlx::Postgres;
use std::collections::{HashMap, HashSet};

/// `MIGRATIONS` of `langgraph/checkpoint/postgres/base.py`; the index is the version.
const MIGRATIONS: [&str; 10] = [
    include_str!("../../../migrations/postgres/0000_checkpoint_migrations.sql"),
    include_str!("../../../migrations/postgres/0001_checkpoints.sql"),
    include_str!("../../../migrations/postgres/0002_checkpoint_blobs.sql"),
    include_str!("../../../migrations/postgres/0003_checkpoint_writes.sql"),
    include_str!("../../../migrations/postgres/0004_blobs_blob_nullable.sql"),
    include_str!("../../../migrations/postgres/0005_noop.sql"),
    include_str!("../../../migrations/postgres/0006_checkpoints_thread_id_idx.sql"),
    include_str!("../../../migrations/postgres/0007_checkpoint_blobs_thread_id_idx.sql"),
    include_str!("../../../migrations/postgres/0008_checkpoint_writes_thread_id_idx.sql"),
    include_str!("../../../migrations/postgres/0009_writes_task_path.sql"),
];

/// `UPSERT_CHECKPOINT_BLOBS_SQL`, for all blobs of one put at once.
const INSERT_BLOBS: &str = "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
     SELECT $1, $2, r.channel, r.version, r.type, r.blob \
     FROM unnest($3::text[], $4::text[], $5::text[], $6::bytea[]) AS r(channel, version, type, blob) \
     ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING";

/// `UPSERT_CHECKPOINTS_SQL`.
const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints \
     (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
     VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) \
     DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata";

const DELETE_THREAD: [&str; 3] = [
    "DELETE FROM checkpoints WHERE thread_id = $1",
    "DELETE FROM checkpoint_blobs WHERE thread_id = $1",
    "DELETE FROM checkpoint_writes WHERE thread_id = $1",
];

fn query(sql: &'static str) -> sqlx::query::Query<'static, Postgres, PgArguments> {
    // Unprepared-cached, as the reads: works through transaction-pooling proxies.
    sqlx::query(sql).persistent(false)
}

/// `UPSERT_CHECKPOINT_WRITES_SQL` / `INSERT_CHECKPOINT_WRITES_SQL` for a whole batch.
fn writes_sql(replace: bool, task_path: bool) -> &'static str {
    match (replace, task_path) {
        (true, true) => "INSERT INTO checkpoint_writes \
             (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
             SELECT $1, $2, $3, $4, $5, r.idx, r.channel, r.type, r.blob \
             FROM unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS r(idx, channel, type, blob) \
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET \
             channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob",
        (false, true) => "INSERT INTO checkpoint_writes \
             (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
             SELECT $1, $2, $3, $4, $5, r.idx, r.channel, r.type, r.blob \
             FROM unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS r(idx, channel, type, blob) \
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING",
        (true, false) => "INSERT INTO checkpoint_writes \
             (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
             SELECT $1, $2, $3, $4, r.idx, r.channel, r.type, r.blob \
             FROM unnest($5::int4[], $6::text[], $7::text[], $8::bytea[]) AS r(idx, channel, type, blob) \
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET \
             channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob",
        (false, false) => "INSERT INTO checkpoint_writes \
             (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
             SELECT $1, $2, $3, $4, r.idx, r.channel, r.type, r.blob \
             FROM unnest($5::int4[], $6::text[], $7::text[], $8::bytea[]) AS r(idx, channel, type, blob) \
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING",
    }
}

#[async_trait]
impl CheckpointSaver for PostgresStore {
    /// `PostgresSaver.setup()`: run migration 0, read the highest recorded version, then run
    /// each later migration and record it, on one autocommit connection. A database recorded
    /// at a version above 9 (a newer saver) is left alone. Afterwards the schema is detected
    /// again ([`crate::CheckpointStore::schema`]).
    ///
    /// Unlike Python, a database holding the deprecated shallow saver's tables is refused:
    /// the full saver's migrations would be recorded on top of them.
    async fn setup(&self) -> Result<(), StoreError> {
        if self.info().shallow {
            return Err(StoreError::UnsupportedSchema {
                found: format!(
                    "{}: setup() of the full saver would mix its migrations into the shallow \
                     saver's tables",
                    self.info().description
                ),
            });
        }
        let mut conn = self.pool.acquire().await.map_err(|e| self.err(e))?;
        sqlx::raw_sql(MIGRATIONS[0])
            .execute(&mut *conn)
            .await
            .map_err(|e| self.err(e))?;
        let current: Option<i32> =
            sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1")
                .persistent(false)
                .fetch_optional(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
        let next = usize::try_from(current.map_or(0, |v| i64::from(v) + 1)).unwrap_or(0);
        for (v, migration) in MIGRATIONS.iter().enumerate().skip(next) {
            sqlx::raw_sql(*migration)
                .execute(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
            query("INSERT INTO checkpoint_migrations (v) VALUES ($1)")
                .bind(v as i32)
                .execute(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
        }
        let detected = detect_schema(&mut conn, &self.target).await?;
        drop(conn);
        if detected != *self.info() {
            // Set once: after a setup the schema is final (migrations 0–9).
            let _ = self.after_setup.set(detected);
        }
        Ok(())
    }

    async fn put(&self, req: PutRequest<'_>) -> Result<(), StoreError> {
        self.check_not_shallow()?;
        let rows = PutRows::new(&req)?;
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        self.put_tx(&mut tx, &req, &rows).await?;
        tx.commit().await.map_err(|e| self.err(e))
    }

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
        let Some(rows) = batch_rows(&batch)? else {
            return Ok(());
        };
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        self.put_writes_tx(&mut tx, &batch, &rows).await?;
        tx.commit().await.map_err(|e| self.err(e))
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        if !puts.is_empty() {
            self.check_not_shallow()?;
        }
        // Everything that can be refused is checked before BEGIN.
        let put_rows = puts
            .iter()
            .map(PutRows::new)
            .collect::<Result<Vec<_>, _>>()?;
        let mut write_rows = Vec::with_capacity(writes.len());
        for batch in writes {
            if let Some(rows) = batch_rows(batch)? {
                write_rows.push((batch, rows));
            }
        }
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        for (req, rows) in puts.iter().zip(&put_rows) {
            self.put_tx(&mut tx, req, rows).await?;
        }
        for (batch, rows) in &write_rows {
            self.put_writes_tx(&mut tx, batch, rows).await?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        check_text("thread_id", thread_id)?;
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        for sql in DELETE_THREAD {
            query(sql)
                .bind(thread_id)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }
}

impl PostgresStore {
    fn check_not_shallow(&self) -> Result<(), StoreError> {
        if self.info().shallow {
            return Err(StoreError::UnsupportedSchema {
                found: format!(
                    "{}: writing checkpoints in the shallow saver's layout is not supported",
                    self.info().description
                ),
            });
        }
        Ok(())
    }

    /// The statements of one `put`, inside the caller's transaction.
    async fn put_tx(
        &self,
        conn: &mut PgConnection,
        req: &PutRequest<'_>,
        rows: &PutRows,
    ) -> Result<(), StoreError> {
        if !rows.channels.is_empty() {
            query(INSERT_BLOBS)
                .bind(req.thread_id)
                .bind(req.checkpoint_ns)
                .bind(&rows.channels)
                .bind(&rows.versions)
                .bind(&rows.types)
                .bind(&rows.blobs)
                .execute(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
        }
        query(UPSERT_CHECKPOINT)
            .bind(req.thread_id)
            .bind(req.checkpoint_ns)
            .bind(req.checkpoint.id.as_str())
            .bind(req.parent_checkpoint_id)
            .bind(&rows.checkpoint)
            .bind(&rows.metadata)
            .execute(&mut *conn)
            .await
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The statement of one `put_writes`, inside the caller's transaction.
    async fn put_writes_tx(
        &self,
        conn: &mut PgConnection,
        batch: &WriteBatch<'_>,
        rows: &WriteRows,
    ) -> Result<(), StoreError> {
        let has_task_path = self.info().has_task_path;
        let mut q = query(writes_sql(rows.replace, has_task_path))
            .bind(batch.thread_id)
            .bind(batch.checkpoint_ns)
            .bind(batch.checkpoint_id)
            .bind(batch.task_id);
        if has_task_path {
            q = q.bind(batch.task_path);
        }
        q.bind(&rows.idx)
            .bind(&rows.channels)
            .bind(&rows.types)
            .bind(&rows.blobs)
            .execute(&mut *conn)
            .await
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

/// The rows of one `put_writes` batch, checked; `None` when there is nothing to write.
fn batch_rows(batch: &WriteBatch<'_>) -> Result<Option<WriteRows>, StoreError> {
    for (what, text) in [
        ("thread_id", batch.thread_id),
        ("checkpoint_ns", batch.checkpoint_ns),
        ("checkpoint_id", batch.checkpoint_id),
        ("task_id", batch.task_id),
        ("task_path", batch.task_path),
    ] {
        check_text(what, text)?;
    }
    if batch.writes.is_empty() {
        return Ok(None);
    }
    let replace = writes_replace(batch.writes);
    WriteRows::new(batch.writes, replace).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Row building (pure, before any statement runs)

/// The rows of one `put`.
struct PutRows {
    channels: Vec<String>,
    versions: Vec<String>,
    types: Vec<String>,
    blobs: Vec<Option<Vec<u8>>>,
    checkpoint: Json,
    metadata: Json,
}

/// Where `put` stores a channel value.
enum Placement {
    /// Inline in `checkpoint.channel_values`.
    Inline(Json),
    /// In `checkpoint_blobs` only.
    Blob,
    /// A `_DeltaSnapshot`: in `checkpoint_blobs`, with the inline marker `true`.
    Snapshot,
}

impl PutRows {
    fn new(req: &PutRequest<'_>) -> Result<PutRows, StoreError> {
        let cp = req.checkpoint;
        for (what, text) in [
            ("thread_id", req.thread_id),
            ("checkpoint_ns", req.checkpoint_ns),
            ("checkpoint id", cp.id.as_str()),
            (
                "parent_checkpoint_id",
                req.parent_checkpoint_id.unwrap_or(""),
            ),
        ] {
            check_text(what, text)?;
        }

        // Channel values: the last entry of a channel wins, as in a Python dict.
        let mut inline = Map::new();
        let mut blob_values: HashMap<&str, &Decoded> = HashMap::new();
        for (channel, value) in &cp.channel_values {
            let placement = placement(value)
                .map_err(|why| StoreError::InvalidInput(format!("channel {channel:?}: {why}")))?;
            match placement {
                Placement::Inline(json) => {
                    blob_values.remove(channel.as_str());
                    inline.insert(channel.clone(), json);
                }
                Placement::Blob => {
                    inline.remove(channel.as_str());
                    blob_values.insert(channel, value);
                }
                Placement::Snapshot => {
                    inline.insert(channel.clone(), Json::Bool(true));
                    blob_values.insert(channel, value);
                }
            }
        }

        // Blobs: only channels with a new version (a dict: the last entry of a channel wins).
        let mut new_versions: Vec<(&str, &Version)> = Vec::new();
        for (channel, version) in req.new_versions {
            match new_versions.iter_mut().find(|(c, _)| *c == channel) {
                Some(slot) => slot.1 = version,
                None => new_versions.push((channel, version)),
            }
        }
        let mut rows = PutRows {
            channels: Vec::new(),
            versions: Vec::new(),
            types: Vec::new(),
            blobs: Vec::new(),
            checkpoint: Json::Null,
            metadata: Json::Null,
        };
        for (channel, version) in new_versions {
            let Some(value) = blob_values.get(channel) else {
                continue;
            };
            let version = version.as_text();
            check_text("channel", channel)?;
            check_text("channel version", &version)?;
            let (tag, bytes) = encode_typed(value);
            check_text("serde type", &tag)?;
            rows.channels.push(channel.to_owned());
            rows.versions.push(version);
            // `_dump_blobs` writes ("empty", NULL) for a channel without a value.
            rows.blobs
                .push((!matches!(value, Decoded::Empty)).then_some(bytes));
            rows.types.push(tag);
        }

        rows.checkpoint = checkpoint_json(cp, inline)?;
        if let Some(path) = nul_path(&rows.checkpoint) {
            return Err(StoreError::InvalidInput(match path.split_first() {
                Some((first, rest)) if first == "channel_values" && !rest.is_empty() => format!(
                    "channel {:?}: the value contains a NUL character (\\u0000), which Postgres \
                     JSONB cannot store (Python's PostgresSaver.put fails on it too)",
                    rest[0]
                ),
                _ => format!(
                    "checkpoint {}: {} contains a NUL character (\\u0000), which Postgres JSONB \
                     cannot store",
                    cp.id,
                    path.join(".")
                ),
            }));
        }
        rows.metadata = metadata_json(req.metadata)?;
        Ok(rows)
    }
}

/// Python's `v is None or isinstance(v, (str, int, float, bool))` test, on decoded values.
fn placement(value: &Decoded) -> Result<Placement, String> {
    let inline = match value {
        Decoded::Null => Json::Null,
        Decoded::Msgpack(v) => match v {
            Value::Nil => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => finite(*f)?,
            // Python reads a float32 as a float.
            Value::Float32(f) => finite(f64::from(*f))?,
            Value::Str(s) => Json::String(s.to_string()),
            Value::DeltaSnapshot(_) => return Ok(Placement::Snapshot),
            _ => return Ok(Placement::Blob),
        },
        // A legacy JSON value Python loads as a primitive.
        Decoded::Json { value, .. } => match value {
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => value.clone(),
            _ => return Ok(Placement::Blob),
        },
        _ => return Ok(Placement::Blob),
    };
    Ok(Placement::Inline(inline))
}

fn finite(f: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| {
            format!(
                "the float {f} cannot be stored inline: JSON has no NaN or infinity (Python's \
             json.dumps writes {}, which Postgres JSONB rejects)",
                if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
            )
        })
}

fn version_json(v: &Version) -> Result<Json, String> {
    match v {
        Version::Int(i) => Ok(Json::from(*i)),
        Version::Float(f) => finite(*f),
        Version::Str(s) => Ok(Json::String(s.clone())),
    }
}

fn versions_json(vs: &Versions, what: &str) -> Result<Json, StoreError> {
    let mut map = Map::new();
    for (channel, v) in vs {
        let json = version_json(v)
            .map_err(|why| StoreError::InvalidInput(format!("{what} of {channel:?}: {why}")))?;
        map.insert(channel.clone(), json);
    }
    Ok(Json::Object(map))
}

/// The JSONB document: `{v, id, ts, versions_seen, channel_values, channel_versions,
/// updated_channels}` (+ `pending_sends` when the checkpoint has that key), as
/// `Jsonb(copy)` dumps it.
fn checkpoint_json(cp: &Checkpoint, inline: Map<String, Json>) -> Result<Json, StoreError> {
    let mut seen = Map::new();
    for (node, versions) in &cp.versions_seen {
        seen.insert(
            node.clone(),
            versions_json(versions, &format!("versions_seen[{node:?}]"))?,
        );
    }
    let mut doc = Map::new();
    doc.insert("v".into(), Json::from(cp.v));
    doc.insert("id".into(), Json::String(cp.id.clone()));
    doc.insert("ts".into(), Json::String(cp.ts.clone()));
    doc.insert("versions_seen".into(), Json::Object(seen));
    doc.insert("channel_values".into(), Json::Object(inline));
    doc.insert(
        "channel_versions".into(),
        versions_json(&cp.channel_versions, "channel_versions")?,
    );
    doc.insert(
        "updated_channels".into(),
        cp.updated_channels.as_ref().map_or(Json::Null, |u| {
            Json::Array(u.iter().cloned().map(Json::String).collect())
        }),
    );
    if let Some(sends) = &cp.pending_sends {
        // json.dumps succeeds only for JSON-able items (in practice: an empty list).
        let items = sends
            .iter()
            .enumerate()
            .map(|(i, d)| {
                d.as_value()
                    .map_or_else(|| (d.is_none()).then_some(Json::Null), plain_json)
                    .ok_or_else(|| {
                        StoreError::InvalidInput(format!(
                            "checkpoint {}: pending_sends[{i}] is not JSON-serializable (Python's \
                             json.dumps fails on it too)",
                            cp.id
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        doc.insert("pending_sends".into(), Json::Array(items));
    }
    Ok(Json::Object(doc))
}

/// A msgpack value made only of what `json.dumps` accepts (no objects, bytes or non-string
/// keys, finite floats).
fn plain_json(v: &Value) -> Option<Json> {
    Some(match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => finite(*f).ok()?,
        Value::Float32(f) => finite(f64::from(*f)).ok()?,
        Value::Str(s) => Json::String(s.to_string()),
        Value::Array(items) => Json::Array(items.iter().map(plain_json).collect::<Option<_>>()?),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| Some((k.as_str()?.to_owned(), plain_json(v)?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// `get_serializable_checkpoint_metadata` on final metadata: NULs stripped from top-level
/// string values, no `writes` key.
fn metadata_json(metadata: &Map<String, Json>) -> Result<Json, StoreError> {
    let mut out = Map::new();
    for (key, value) in metadata {
        if key == "writes" {
            continue;
        }
        let value = match value {
            Json::String(s) if s.contains('\0') => Json::String(s.replace('\0', "")),
            other => other.clone(),
        };
        out.insert(key.clone(), value);
    }
    let out = Json::Object(out);
    if let Some(path) = nul_path(&out) {
        return Err(StoreError::InvalidInput(format!(
            "metadata {}: contains a NUL character (\\u0000), which Postgres JSONB cannot store \
             (Python strips NULs only from top-level string values and fails here too)",
            path.join(".")
        )));
    }
    Ok(out)
}

/// The path (keys and array indexes) to the first string or key containing a NUL.
fn nul_path(v: &Json) -> Option<Vec<String>> {
    match v {
        Json::String(s) if s.contains('\0') => Some(Vec::new()),
        Json::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            nul_path(item).map(|mut p| {
                p.insert(0, i.to_string());
                p
            })
        }),
        Json::Object(map) => map.iter().find_map(|(k, item)| {
            if k.contains('\0') {
                return Some(vec![format!("{k:?} (the key)")]);
            }
            nul_path(item).map(|mut p| {
                p.insert(0, k.clone());
                p
            })
        }),
        _ => None,
    }
}

/// Postgres `text` cannot hold NUL characters.
fn check_text(what: &str, text: &str) -> Result<(), StoreError> {
    if text.contains('\0') {
        Err(StoreError::InvalidInput(format!(
            "{what} {text:?} contains a NUL character, which Postgres text cannot store"
        )))
    } else {
        Ok(())
    }
}

/// The rows of one `put_writes` batch.
struct WriteRows {
    /// DO UPDATE (every channel special) rather than DO NOTHING.
    replace: bool,
    idx: Vec<i32>,
    channels: Vec<String>,
    types: Vec<String>,
    blobs: Vec<Vec<u8>>,
}

impl WriteRows {
    /// `_dump_writes`. Python executes one statement per row, so when a batch repeats an idx
    /// (a special channel written twice) the first row wins with DO NOTHING and the last with
    /// DO UPDATE; one multi-row statement must not touch a row twice, so the batch keeps only
    /// that row of each idx.
    fn new(writes: &[(String, Decoded)], replace: bool) -> Result<WriteRows, StoreError> {
        let mut rows: Vec<(i32, &str, &Decoded)> = Vec::with_capacity(writes.len());
        for (position, (channel, value)) in writes.iter().enumerate() {
            check_text("channel", channel)?;
            let idx = i32::try_from(write_idx(channel, position)).map_err(|_| {
                StoreError::InvalidInput(format!(
                    "write #{position} of channel {channel:?}: the idx does not fit the INTEGER \
                     column"
                ))
            })?;
            rows.push((idx, channel, value));
        }
        if replace {
            let mut seen = HashSet::new();
            let mut kept: Vec<_> = rows
                .into_iter()
                .rev()
                .filter(|(idx, _, _)| seen.insert(*idx))
                .collect();
            kept.reverse();
            rows = kept;
        } else {
            let mut seen = HashSet::new();
            rows.retain(|(idx, _, _)| seen.insert(*idx));
        }
        let mut out = WriteRows {
            replace,
            idx: Vec::with_capacity(rows.len()),
            channels: Vec::with_capacity(rows.len()),
            types: Vec::with_capacity(rows.len()),
            blobs: Vec::with_capacity(rows.len()),
        };
        for (idx, channel, value) in rows {
            let (tag, bytes) = encode_typed(value);
            check_text("serde type", &tag)?;
            out.idx.push(idx);
            out.channels.push(channel.to_owned());
            out.types.push(tag);
            // `checkpoint_writes.blob` is NOT NULL: None is ('null', b'').
            out.blobs.push(bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn cp(values: Vec<(&str, Decoded)>) -> Checkpoint {
        Checkpoint {
            v: 4,
            id: "1f0".into(),
            ts: "2026-01-01T00:00:00+00:00".into(),
            channel_versions: values
                .iter()
                .map(|(c, _)| ((*c).to_owned(), Version::Str("v1".into())))
                .collect(),
            channel_values: values
                .into_iter()
                .map(|(c, v)| (c.to_owned(), Arc::new(v)))
                .collect(),
            versions_seen: vec![("__input__".into(), Vec::new())],
            updated_channels: None,
            pending_sends: None,
        }
    }

    #[test]
    fn primitives_inline_others_blobs() {
        let snapshot = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(Value::Array(vec![]))));
        let c = cp(vec![
            ("s", Decoded::Msgpack(Value::Str("x".into()))),
            ("n", Decoded::Null),
            ("i", Decoded::Msgpack(Value::Int(3))),
            ("f", Decoded::Msgpack(Value::Float(1.5))),
            ("b", Decoded::Msgpack(Value::Bool(true))),
            ("l", Decoded::Msgpack(Value::Array(vec![Value::Int(1)]))),
            ("bs", Decoded::Bytes(b"ab".to_vec())),
            ("d", snapshot),
        ]);
        let md = Map::new();
        let req = PutRequest {
            thread_id: "t",
            checkpoint_ns: "",
            parent_checkpoint_id: None,
            checkpoint: &c,
            metadata: &md,
            // `bs` has no new version: no blob.
            new_versions: &vec![
                ("l".into(), Version::Str("v1".into())),
                ("d".into(), Version::Str("v1".into())),
                ("s".into(), Version::Str("v1".into())),
            ],
        };
        let rows = PutRows::new(&req).unwrap();
        assert_eq!(rows.channels, vec!["l", "d"]);
        assert_eq!(rows.types, vec!["msgpack", "msgpack"]);
        assert_eq!(rows.blobs[0], Some(vec![0x91, 0x01]));
        assert_eq!(
            rows.checkpoint["channel_values"],
            json!({"s": "x", "n": null, "i": 3, "f": 1.5, "b": true, "d": true})
        );
        assert_eq!(rows.checkpoint["updated_channels"], Json::Null);
    }

    #[test]
    fn metadata_rules() {
        let md = json!({"x": "a\u{0}b", "writes": {"q": 1}, "step": -1});
        let out = metadata_json(md.as_object().unwrap()).unwrap();
        assert_eq!(out, json!({"x": "ab", "step": -1}));
        let nested = json!({"x": {"y": "a\u{0}b"}});
        let err = metadata_json(nested.as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("x.y"), "{err}");
    }

    #[test]
    fn duplicate_idx_in_a_batch() {
        let w = |c: &str, i: i64| (c.to_owned(), Decoded::Msgpack(Value::Int(i)));
        let batch = vec![w("__interrupt__", 1), w("__interrupt__", 2)];
        let replace = WriteRows::new(&batch, true).unwrap();
        assert_eq!(
            (replace.idx.clone(), replace.blobs[0].clone()),
            (vec![-3], vec![2])
        );
        let mixed = vec![w("__interrupt__", 1), w("a", 5), w("__interrupt__", 2)];
        let ignore = WriteRows::new(&mixed, false).unwrap();
        assert_eq!(ignore.idx, vec![-3, 1]);
        assert_eq!(ignore.blobs[0], vec![1]);
    }
}
