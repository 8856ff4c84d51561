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
//! A LangGraph.js database (`Dialect::Js`) gets the rows JS's `PostgresSaver` writes: every
//! value a `json` blob, integer versions as text, no `channel_values` in the document; a fork's
//! versions are moved above every stored one ([`js_versions_above`]).
//!
//! Writes use plain `BEGIN` (so a server or role with `default_transaction_read_only` refuses
//! them, as it refuses Python's), never the read-only transactions of the read side.

use super::schema::detect_schema;
use super::write_rows::{check_text, PutRows, WriteRows};
use super::PostgresStore;
use crate::model::{Checkpoint, Version, Versions};
use crate::postgres::wait::Bounded as _;
use crate::saver::{
    deleting, writes_replace, writing, writing_batch, CheckpointSaver, PutRequest, WriteBatch,
};
use crate::serializer::Serde;
use crate::{Dialect, StoreError};
use async_trait::async_trait;
use flashback_codec::Decoded;
use sqlx::postgres::PgArguments;
use sqlx::PgConnection;
use sqlx::Postgres;
use sqlx::Row as _;

/// `MIGRATIONS` of `langgraph/checkpoint/postgres/base.py`; the index is the version.
const MIGRATIONS: [&str; 10] = [
    include_str!("../../../../migrations/postgres/0000_checkpoint_migrations.sql"),
    include_str!("../../../../migrations/postgres/0001_checkpoints.sql"),
    include_str!("../../../../migrations/postgres/0002_checkpoint_blobs.sql"),
    include_str!("../../../../migrations/postgres/0003_checkpoint_writes.sql"),
    include_str!("../../../../migrations/postgres/0004_blobs_blob_nullable.sql"),
    include_str!("../../../../migrations/postgres/0005_noop.sql"),
    include_str!("../../../../migrations/postgres/0006_checkpoints_thread_id_idx.sql"),
    include_str!("../../../../migrations/postgres/0007_checkpoint_blobs_thread_id_idx.sql"),
    include_str!("../../../../migrations/postgres/0008_checkpoint_writes_thread_id_idx.sql"),
    include_str!("../../../../migrations/postgres/0009_writes_task_path.sql"),
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
        let step = async {
            if self.info().shallow() {
                return Err(StoreError::UnsupportedSchema {
                    found: format!(
                        "{}: setup() of the full saver would mix its migrations into the shallow \
                         saver's tables",
                        self.info().description
                    ),
                });
            }
            let mut conn = self.target.acquire(&self.pool).await?;
            sqlx::raw_sql(MIGRATIONS[0])
                .execute(&mut *conn)
                .bounded(&self.target)
                .await?;
            let current: Option<i32> =
                sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1")
                    .persistent(false)
                    .fetch_optional(&mut *conn)
                    .bounded(&self.target)
                    .await?;
            let next = usize::try_from(current.map_or(0, |v| i64::from(v) + 1)).unwrap_or(0);
            for (v, migration) in MIGRATIONS.iter().enumerate().skip(next) {
                sqlx::raw_sql(*migration)
                    .execute(&mut *conn)
                    .bounded(&self.target)
                    .await?;
                query("INSERT INTO checkpoint_migrations (v) VALUES ($1)")
                    .bind(v as i32)
                    .execute(&mut *conn)
                    .bounded(&self.target)
                    .await?;
            }
            let detected =
                detect_schema(&mut conn, &self.target, self.memory_reader().is_some()).await?;
            drop(conn);
            if detected != *self.info() {
                // Set once: after a setup the schema is final (migrations 0–9).
                let _ = self.after_setup.set(detected);
            }
            Ok(())
        };
        step.await
            .map_err(|e: StoreError| e.during(|| "creating the checkpoint tables".into()))
    }

    async fn put(&self, req: PutRequest<'_>) -> Result<(), StoreError> {
        let step = async {
            self.check_not_shallow()?;
            let dialect = self.info().dialect;
            let rows = PutRows::new(&req, self.serde())?;
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            if dialect == Dialect::Js {
                // Neither the fork's versions nor those JS gives the next steps may name blobs
                // another branch already stored.
                let floor = self.js_version_floor(&mut tx, &req).await?;
                if let Some((checkpoint, versions)) = js_versions_above(&req, floor) {
                    let req = PutRequest {
                        checkpoint: &checkpoint,
                        new_versions: &versions,
                        ..req
                    };
                    let rows = PutRows::new(&req, self.serde())?;
                    self.put_tx(&mut tx, &req, &rows).await?;
                    return tx.commit().bounded(&self.target).await;
                }
            }
            self.put_tx(&mut tx, &req, &rows).await?;
            tx.commit().bounded(&self.target).await
        };
        step.await
            .map_err(|e: StoreError| e.during(|| writing(&req)))
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
        let Some(rows) = batch_rows(&batch, self.serde())? else {
            return Ok(());
        };
        let step = async {
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            self.put_writes_tx(&mut tx, &batch, &rows).await?;
            tx.commit().bounded(&self.target).await
        };
        step.await
            .map_err(|e| e.during(|| writing_batch(&[], &[batch])))
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        let step = async {
            if !puts.is_empty() {
                self.check_not_shallow()?;
            }
            // Everything that can be refused is checked before BEGIN.
            let put_rows = puts
                .iter()
                .map(|p| PutRows::new(p, self.serde()))
                .collect::<Result<Vec<_>, _>>()?;
            let mut write_rows = Vec::with_capacity(writes.len());
            for batch in writes {
                if let Some(rows) = batch_rows(batch, self.serde())? {
                    write_rows.push((batch, rows));
                }
            }
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            for (req, rows) in puts.iter().zip(&put_rows) {
                self.put_tx(&mut tx, req, rows).await?;
            }
            for (batch, rows) in &write_rows {
                self.put_writes_tx(&mut tx, batch, rows).await?;
            }
            tx.commit().bounded(&self.target).await
        };
        step.await
            .map_err(|e: StoreError| e.during(|| writing_batch(puts, writes)))
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        check_text("thread_id", thread_id)?;
        delete_thread_with(&self.pool, &self.target, thread_id, &DELETE_THREAD).await
    }
}

/// Delete a thread: each of `statements` (`$1`: the thread id) in one transaction. Shared
/// with the three-table store.
pub(crate) async fn delete_thread_with(
    pool: &sqlx::PgPool,
    target: &super::target::Target,
    thread_id: &str,
    statements: &[&'static str],
) -> Result<(), StoreError> {
    let step = async {
        let mut tx = target.begin(pool, "BEGIN").await?;
        for sql in statements {
            query(sql)
                .bind(thread_id)
                .execute(&mut *tx)
                .bounded(target)
                .await?;
        }
        tx.commit().bounded(target).await
    };
    step.await
        .map_err(|e: StoreError| e.during(|| deleting(thread_id)))
}

impl PostgresStore {
    /// How it stores values: the database's dialect, sealed with its key.
    fn serde(&self) -> Serde<'_> {
        Serde::new(self.info().dialect, self.key.as_deref())
    }

    fn check_not_shallow(&self) -> Result<(), StoreError> {
        if self.info().shallow() {
            return Err(StoreError::UnsupportedSchema {
                found: format!(
                    "{}: writing checkpoints in the shallow saver's layout is not supported",
                    self.info().description
                ),
            });
        }
        Ok(())
    }

    /// The highest integer blob version of the put's thread and namespace (see
    /// [`js_versions_above`]).
    async fn js_version_floor(
        &self,
        conn: &mut PgConnection,
        req: &PutRequest<'_>,
    ) -> Result<Option<i64>, StoreError> {
        query(
            "SELECT max(version::bigint) AS hi FROM checkpoint_blobs \
             WHERE thread_id = $1 AND checkpoint_ns = $2 AND version ~ '^[0-9]{1,18}$'",
        )
        .bind(req.thread_id)
        .bind(req.checkpoint_ns)
        .fetch_one(&mut *conn)
        .bounded(&self.target)
        .await?
        .try_get::<Option<i64>, _>("hi")
        .map_err(|e| self.err(e))
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
                .bounded(&self.target)
                .await?;
        }
        query(UPSERT_CHECKPOINT)
            .bind(req.thread_id)
            .bind(req.checkpoint_ns)
            .bind(req.checkpoint.id.as_str())
            .bind(req.parent_checkpoint_id)
            .bind(&rows.checkpoint)
            .bind(&rows.metadata)
            .execute(&mut *conn)
            .bounded(&self.target)
            .await?;
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
            .bounded(&self.target)
            .await?;
        Ok(())
    }
}

/// The rows of one `put_writes` batch, checked; `None` when there is nothing to write.
fn batch_rows(batch: &WriteBatch<'_>, serde: Serde<'_>) -> Result<Option<WriteRows>, StoreError> {
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
    WriteRows::new(batch.writes, replace, serde).map(Some)
}

/// A JS fork's checkpoint with every integer version (`channel_versions` and `versions_seen`)
/// shifted up by `floor`, the highest integer version of any blob the thread's namespace holds,
/// and every channel with a value stored again at its shifted version; `None` when nothing it
/// stores or JS's next step writes can collide (or the versions are not all integers). LangGraph.js numbers
/// a step's versions max + 1, so a fork of an older checkpoint — its own or JS's `updateState`
/// — would reuse versions of the original branch, whose blobs `ON CONFLICT DO NOTHING` then
/// keeps: the resumed run would read the other branch's values (a JS `PostgresSaver` bug).
/// Shifting all versions by one amount keeps every "newer than seen" comparison JS makes.
fn js_versions_above(req: &PutRequest<'_>, floor: Option<i64>) -> Option<(Checkpoint, Versions)> {
    let floor = floor?;
    let cp = req.checkpoint;
    let all = || {
        cp.channel_versions
            .iter()
            .chain(cp.versions_seen.iter().flat_map(|(_, vs)| vs.iter()))
            .map(|(_, v)| v)
    };
    if !all().all(|v| matches!(v, Version::Int(_))) {
        return None;
    }
    let highest = all().filter_map(Version::counter).max().unwrap_or(0);
    // A copy holding the highest version stores nothing new, and JS's next step (highest + 1)
    // is above every stored version.
    let collides = if req.new_versions.is_empty() {
        highest < floor
    } else {
        highest <= floor
    };
    if !collides {
        return None;
    }
    let shift = |vs: &mut Versions| {
        for (_, v) in vs.iter_mut() {
            if let Version::Int(i) = v {
                *i = i.saturating_add(floor);
            }
        }
    };
    let mut checkpoint = cp.clone();
    shift(&mut checkpoint.channel_versions);
    for (_, seen) in &mut checkpoint.versions_seen {
        shift(seen);
    }
    let versions = checkpoint.channel_versions.clone();
    Some((checkpoint, versions))
}
