//! [`SaverMaintenance`] for [`PostgresStore`]: `copy_thread`, `delete_for_runs` and `prune`,
//! each in one `REPEATABLE READ` transaction.

use super::batches;
use super::target::Target;
use super::PostgresStore;
use crate::maintenance::plan::{
    check_guards, copy_args, copying, not_empty, plan, BlobKey, CpRow, Job, Plan, Select, Snapshot,
};
use crate::maintenance::{
    retain, Guarded, Mark, PruneRun, ThreadPrune, VacuumPreview, VacuumReport,
};
use crate::maintenance::{CopyReport, PruneReport, PruneStrategy, SaverMaintenance, TASKS};
use crate::model::SchemaInfo;
use crate::postgres::wait::Bounded as _;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use sqlx::postgres::{PgArguments, PgConnection, PgPool};
use sqlx::{Postgres, Row as _};
use std::collections::HashMap;

const BEGIN_WRITE: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ";
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

fn err(e: sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

fn query(sql: &'static str) -> sqlx::query::Query<'static, Postgres, PgArguments> {
    sqlx::query(sql).persistent(false)
}

fn shallow_error(schema: &SchemaInfo) -> StoreError {
    StoreError::UnsupportedSchema {
        found: format!(
            "{}: copy_thread, delete_for_runs and prune need the full saver's tables",
            schema.description
        ),
    }
}

#[async_trait]
impl SaverMaintenance for PostgresStore {
    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        copy(self.pool(), &self.target, self.schema(), source, target)
            .await
            .map_err(|e| e.during(|| copying(source, target)))
    }
    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError> {
        let what = job.describe();
        maintain(self.pool(), &self.target, self.schema(), job, dry_run)
            .await
            .map_err(|e| e.during(|| what))
    }
    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError> {
        let threads = check_guards(threads);
        if threads.is_empty() {
            return Ok(PruneRun::default());
        }
        if self.schema().shallow() {
            return Err(shallow_error(self.schema()));
        }
        let step = Retain(retain::select(strategy, keep_last), &self.target);
        batches::prune_in_batches(self.pool(), &self.target, &threads, dry_run, &step).await
    }
    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<HashMap<String, Mark>, StoreError> {
        if self.schema().shallow() {
            return Err(shallow_error(self.schema()));
        }
        batches::thread_marks(self.pool(), &self.target, thread_ids).await
    }
    async fn vacuum(&self, _force: bool) -> Result<VacuumReport, StoreError> {
        vacuum_tables(self.pool(), &self.target).await
    }
    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError> {
        vacuum_preview_tables(self.pool(), &self.target).await
    }
}

/// A measured prune's step on LangGraph's schema: snapshot, plan, tally, delete.
struct Retain<'a>(Select<'static>, &'a Target);

#[async_trait]
impl batches::PruneStep for Retain<'_> {
    async fn step(
        &self,
        conn: &mut PgConnection,
        threads: &[String],
        dry_run: bool,
    ) -> Result<Vec<ThreadPrune>, StoreError> {
        let versions = !matches!(self.0, Select::Delete);
        let snap = snapshot(conn, self.1, threads, versions).await?;
        let plan = plan(&snap, threads, &self.0);
        if !dry_run && !plan.is_empty() {
            apply(conn, self.1, &plan).await?;
        }
        Ok(retain::tally(&snap, &plan, threads))
    }
}

/// The saver's tables, as the connection's `search_path` finds them (LangGraph's and the
/// three-table store's alike).
const SAVER_TABLES: [&str; 3] = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];

/// `pg_total_relation_size` of [`SAVER_TABLES`], summed.
async fn tables_size(conn: &mut sqlx::PgConnection, db: &Target) -> Result<u64, StoreError> {
    let mut total = 0u64;
    for table in SAVER_TABLES {
        let row = query("SELECT coalesce(pg_total_relation_size(to_regclass($1)), 0)::int8")
            .bind(table)
            .fetch_one(&mut *conn)
            .bounded(db)
            .await?;
        let n: i64 = row.try_get(0).map_err(err)?;
        total += n.max(0) as u64;
    }
    Ok(total)
}

/// What `VACUUM ANALYZE` would work through; it does not stop writers (a plain VACUUM takes
/// `SHARE UPDATE EXCLUSIVE`). Shared with the three-table store on Postgres.
pub(crate) async fn vacuum_preview_tables(
    pool: &PgPool,
    db: &Target,
) -> Result<VacuumPreview, StoreError> {
    let measuring = async {
        let mut conn = db.acquire(pool).await?;
        tables_size(&mut conn, db).await
    };
    let bytes = measuring
        .await
        .map_err(|e| e.during(|| "measuring the checkpoint tables".into()))?;
    Ok(VacuumPreview {
        bytes,
        blocks_writers: false,
        seconds: 0,
        open_elsewhere: None,
    })
}

/// `VACUUM ANALYZE` of the saver's tables (outside any transaction: the simple protocol on
/// one connection), with their total size before and after. Shared with the three-table
/// store on Postgres.
pub(crate) async fn vacuum_tables(pool: &PgPool, db: &Target) -> Result<VacuumReport, StoreError> {
    vacuum_measured(pool, db)
        .await
        .map_err(|e| e.during(|| "vacuuming the checkpoint tables".into()))
}

async fn vacuum_measured(pool: &PgPool, db: &Target) -> Result<VacuumReport, StoreError> {
    let mut conn = db.acquire(pool).await?;
    let bytes_before = tables_size(&mut conn, db).await?;
    let sql = "VACUUM ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes";
    db.wait_maintenance(&mut conn, bytes_before, sql).await?;
    Ok(VacuumReport {
        bytes_before,
        bytes_after: tables_size(&mut conn, db).await?,
    })
}

async fn copy(
    pool: &PgPool,
    db: &Target,
    schema: &SchemaInfo,
    source: &str,
    target: &str,
) -> Result<CopyReport, StoreError> {
    copy_args(source, target)?;
    if schema.shallow() {
        return Err(shallow_error(schema));
    }
    let mut tx = db.begin(pool, BEGIN_WRITE).await?;
    let busy: bool = query(
        "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1) \
         OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1) \
         OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = $1)",
    )
    .bind(target)
    .fetch_one(&mut *tx)
    .bounded(db)
    .await?
    .try_get(0)
    .map_err(err)?;
    if busy {
        drop(tx);
        return Err(not_empty(target));
    }
    let checkpoints = query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
         FROM checkpoints WHERE thread_id = $1",
    )
    .bind(source)
    .bind(target)
    .execute(&mut *tx)
    .bounded(db)
    .await?
    .rows_affected();
    let blobs = query(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
         SELECT $2, checkpoint_ns, channel, version, type, blob \
         FROM checkpoint_blobs WHERE thread_id = $1",
    )
    .bind(source)
    .bind(target)
    .execute(&mut *tx)
    .bounded(db)
    .await?
    .rows_affected();
    let writes_sql = if schema.has_task_path {
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
         SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob \
         FROM checkpoint_writes WHERE thread_id = $1"
    } else {
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
         SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob \
         FROM checkpoint_writes WHERE thread_id = $1"
    };
    let writes = query(writes_sql)
        .bind(source)
        .bind(target)
        .execute(&mut *tx)
        .bounded(db)
        .await?
        .rows_affected();
    tx.commit().bounded(db).await?;
    Ok(CopyReport {
        checkpoints,
        writes,
        blobs,
        thread_id: None,
    })
}

async fn maintain(
    pool: &PgPool,
    db: &Target,
    schema: &SchemaInfo,
    job: Job,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    let empty = PruneReport {
        dry_run,
        ..Default::default()
    };
    let nothing = match &job {
        Job::Runs(runs) => runs.is_empty(),
        other => other.threads().unwrap_or_default().is_empty(),
    };
    if nothing {
        return Ok(empty);
    }
    if schema.shallow() {
        return Err(shallow_error(schema));
    }
    let begin = if dry_run { BEGIN_READ } else { BEGIN_WRITE };
    let mut tx = db.begin(pool, begin).await?;
    // Writers wait until this commits: the plan is made from every committed row and
    // carried out before anything new lands (`batches::LOCK_SAVER_TABLES`).
    if !dry_run {
        batches::lock_tables(&mut tx, db).await?;
    }
    // An error drops the transaction: rolled back before the connection is reused.
    match maintain_in(&mut tx, db, &job, dry_run).await? {
        Some(report) => {
            tx.commit().bounded(db).await?;
            Ok(report)
        }
        None => {
            db.end_read(tx).await;
            Ok(empty)
        }
    }
}

async fn maintain_in(
    tx: &mut PgConnection,
    db: &Target,
    job: &Job,
    dry_run: bool,
) -> Result<Option<PruneReport>, StoreError> {
    let threads = match (job.threads(), job) {
        (Some(threads), _) => threads,
        (None, Job::Runs(runs)) => {
            let ids: Vec<String> = runs.iter().cloned().collect();
            query(
                "SELECT DISTINCT thread_id FROM checkpoints \
                 WHERE metadata ->> 'run_id' = ANY($1) ORDER BY thread_id",
            )
            .bind(&ids)
            .fetch_all(&mut *tx)
            .bounded(db)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(err)?
        }
        (None, _) => Vec::new(),
    };
    let select = job.select();
    if threads.is_empty() {
        return Ok(None);
    }
    let snap = snapshot(tx, db, &threads, !matches!(select, Select::Delete)).await?;
    let plan = plan(&snap, &threads, &select);
    if let Some(report) = job.stale(&plan, dry_run) {
        return Ok(report.into());
    }
    if dry_run || plan.is_empty() {
        return Ok(Some(PruneReport {
            dry_run,
            ..plan.report
        }));
    }
    apply(tx, db, &plan).await.map(Some)
}

async fn snapshot(
    tx: &mut PgConnection,
    db: &Target,
    threads: &[String],
    versions: bool,
) -> Result<Snapshot, StoreError> {
    let mut snap = Snapshot::default();
    // Besides the links: the channels stored inline, and the DeltaChannels (metadata counters,
    // snapshot markers `true`) for a DeltaChannel-safe keep_latest.
    let rows = query(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
         checkpoint ->> 'v', metadata -> 'parents' ->> '', metadata ->> 'run_id', \
         ARRAY(SELECT v.key FROM jsonb_each(CASE WHEN jsonb_typeof(checkpoint -> 'channel_values') \
           = 'object' THEN checkpoint -> 'channel_values' ELSE '{}'::jsonb END) AS v), \
         ARRAY(SELECT v.key FROM jsonb_each(CASE WHEN jsonb_typeof(checkpoint -> 'channel_values') \
           = 'object' THEN checkpoint -> 'channel_values' ELSE '{}'::jsonb END) AS v \
           WHERE v.value = 'true'::jsonb \
           UNION SELECT k FROM jsonb_object_keys(CASE WHEN jsonb_typeof( \
             metadata -> 'counters_since_delta_snapshot') = 'object' \
             THEN metadata -> 'counters_since_delta_snapshot' ELSE '{}'::jsonb END) AS k), \
         (coalesce(octet_length(checkpoint::text), 0) + coalesce(octet_length(metadata::text), 0))::int8 \
         FROM checkpoints WHERE thread_id = ANY($1)",
    )
    .bind(threads)
    .fetch_all(&mut *tx)
    .bounded(db)
    .await?;
    let mut index: HashMap<(String, String, String), usize> = HashMap::new();
    for r in &rows {
        let v: Option<String> = r.try_get(4).map_err(err)?;
        let row = CpRow {
            thread: r.try_get(0).map_err(err)?,
            ns: r.try_get(1).map_err(err)?,
            id: r.try_get(2).map_err(err)?,
            parent: r.try_get(3).map_err(err)?,
            v: v.and_then(|v| v.parse().ok()),
            root: r.try_get(5).map_err(err)?,
            run_id: r.try_get(6).map_err(err)?,
            versions: Vec::new(),
            stored: r.try_get(7).map_err(err)?,
            delta: r.try_get(8).map_err(err)?,
        };
        let bytes: i64 = r.try_get(9).map_err(err)?;
        snap.cp_bytes.insert(
            (row.thread.clone(), row.ns.clone(), row.id.clone()),
            bytes.max(0) as u64,
        );
        index.insert(
            (row.thread.clone(), row.ns.clone(), row.id.clone()),
            snap.rows.len(),
        );
        snap.rows.push(row);
    }
    if versions {
        let rows = query(
            "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, v.key, v.value \
             FROM checkpoints c \
             CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v \
             WHERE c.thread_id = ANY($1)",
        )
        .bind(threads)
        .fetch_all(&mut *tx)
        .bounded(db)
        .await?;
        for r in &rows {
            let key: (String, String, String) = (
                r.try_get(0).map_err(err)?,
                r.try_get(1).map_err(err)?,
                r.try_get(2).map_err(err)?,
            );
            let channel: String = r.try_get(3).map_err(err)?;
            let version: Option<String> = r.try_get(4).map_err(err)?;
            if let (Some(i), Some(version)) = (index.get(&key), version) {
                snap.rows[*i].versions.push((channel, version));
            }
        }
    }
    let rows = query(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, count(*), bool_or(channel = $2), \
         coalesce(sum(octet_length(blob)), 0)::int8 FROM checkpoint_writes WHERE thread_id = ANY($1) \
         GROUP BY thread_id, checkpoint_ns, checkpoint_id",
    )
    .bind(threads)
    .bind(TASKS)
    .fetch_all(&mut *tx)
    .bounded(db)
    .await?;
    for r in &rows {
        let n: i64 = r.try_get(3).map_err(err)?;
        let sends: Option<bool> = r.try_get(4).map_err(err)?;
        let bytes: i64 = r.try_get(5).map_err(err)?;
        let key: (String, String, String) = (
            r.try_get(0).map_err(err)?,
            r.try_get(1).map_err(err)?,
            r.try_get(2).map_err(err)?,
        );
        snap.write_bytes.insert(key.clone(), bytes.max(0) as u64);
        snap.writes
            .insert(key, (n.max(0) as u64, sends.unwrap_or(false)));
    }
    let rows = query(
        "SELECT thread_id, checkpoint_ns, channel, version, \
         coalesce(octet_length(blob), 0)::int8 FROM checkpoint_blobs WHERE thread_id = ANY($1)",
    )
    .bind(threads)
    .fetch_all(&mut *tx)
    .bounded(db)
    .await?;
    for r in &rows {
        let key: BlobKey = (
            r.try_get(0).map_err(err)?,
            r.try_get(1).map_err(err)?,
            r.try_get(2).map_err(err)?,
            r.try_get(3).map_err(err)?,
        );
        let bytes: i64 = r.try_get(4).map_err(err)?;
        snap.blob_bytes.insert(key.clone(), bytes.max(0) as u64);
        snap.blobs.insert(key);
    }
    Ok(snap)
}

fn column<T: Clone, const N: usize>(keys: &[[T; N]], i: usize) -> Vec<T> {
    keys.iter().map(|k| k[i].clone()).collect()
}

async fn apply(tx: &mut PgConnection, db: &Target, plan: &Plan) -> Result<PruneReport, StoreError> {
    let mut report = PruneReport {
        checkpoints: plan.report.checkpoints.clone(),
        ..Default::default()
    };
    if !plan.threads.is_empty() {
        query("DELETE FROM checkpoints WHERE thread_id = ANY($1)")
            .bind(&plan.threads)
            .execute(&mut *tx)
            .bounded(db)
            .await?;
        report.blobs += query("DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1)")
            .bind(&plan.threads)
            .execute(&mut *tx)
            .bounded(db)
            .await?
            .rows_affected();
        report.writes += query("DELETE FROM checkpoint_writes WHERE thread_id = ANY($1)")
            .bind(&plan.threads)
            .execute(&mut *tx)
            .bounded(db)
            .await?
            .rows_affected();
    }
    if !plan.namespaces.is_empty() {
        let keys: Vec<[String; 2]> = plan
            .namespaces
            .iter()
            .map(|(t, n)| [t.clone(), n.clone()])
            .collect();
        let (t, n) = (column(&keys, 0), column(&keys, 1));
        query(
            "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns) IN \
             (SELECT * FROM unnest($1::text[], $2::text[]))",
        )
        .bind(&t)
        .bind(&n)
        .execute(&mut *tx)
        .bounded(db)
        .await?;
        report.writes += query(
            "DELETE FROM checkpoint_writes WHERE (thread_id, checkpoint_ns) IN \
             (SELECT * FROM unnest($1::text[], $2::text[]))",
        )
        .bind(&t)
        .bind(&n)
        .execute(&mut *tx)
        .bounded(db)
        .await?
        .rows_affected();
    }
    if !plan.checkpoints.is_empty() {
        let keys: Vec<[String; 3]> = plan
            .checkpoints
            .iter()
            .map(|(t, n, i)| [t.clone(), n.clone(), i.clone()])
            .collect();
        let (t, n, i) = (column(&keys, 0), column(&keys, 1), column(&keys, 2));
        report.writes += query(
            "DELETE FROM checkpoint_writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN \
             (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))",
        )
        .bind(&t)
        .bind(&n)
        .bind(&i)
        .execute(&mut *tx)
        .bounded(db)
        .await?
        .rows_affected();
        query(
            "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) IN \
             (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))",
        )
        .bind(&t)
        .bind(&n)
        .bind(&i)
        .execute(&mut *tx)
        .bounded(db)
        .await?;
    }
    if !plan.parents.is_empty() {
        let keys: Vec<[String; 3]> = plan
            .parents
            .iter()
            .map(|(t, n, i)| [t.clone(), n.clone(), i.clone()])
            .collect();
        report.parents_cleared += query(
            "UPDATE checkpoints SET parent_checkpoint_id = NULL \
             WHERE (thread_id, checkpoint_ns, checkpoint_id) IN \
             (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))",
        )
        .bind(column(&keys, 0))
        .bind(column(&keys, 1))
        .bind(column(&keys, 2))
        .execute(&mut *tx)
        .bounded(db)
        .await?
        .rows_affected();
    }
    if !plan.blobs.is_empty() {
        let keys: Vec<[String; 4]> = plan
            .blobs
            .iter()
            .map(|(t, n, c, v)| [t.clone(), n.clone(), c.clone(), v.clone()])
            .collect();
        report.blobs += query(
            "DELETE FROM checkpoint_blobs WHERE (thread_id, checkpoint_ns, channel, version) IN \
             (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))",
        )
        .bind(column(&keys, 0))
        .bind(column(&keys, 1))
        .bind(column(&keys, 2))
        .bind(column(&keys, 3))
        .execute(&mut *tx)
        .bounded(db)
        .await?
        .rows_affected();
    }
    Ok(report)
}
