//! Guarded prunes on Postgres in short transactions (`maintenance/guard.rs`), shared by
//! LangGraph's schema and the three-table store. Each batch locks the saver's tables against
//! writers first (`SHARE ROW EXCLUSIVE`: readers go on; LangGraph's `INSERT … ON CONFLICT`
//! waits, which row locks alone would not make it do), then reads the chosen threads' marks
//! again, plans and deletes the threads still as judged, and commits. A dry run reads
//! everything in one `REPEATABLE READ READ ONLY` transaction and locks nothing.

use super::target::Target;
use crate::maintenance::guard::{Batches, Guarded, Mark, PruneRun};
use crate::maintenance::{retain, ThreadPrune};
use crate::postgres::wait::Bounded as _;
use crate::StoreError;
use async_trait::async_trait;
use sqlx::postgres::{PgConnection, PgPool};
use sqlx::Row as _;
use std::collections::HashMap;

/// Threads planned at a time inside a writing batch (the budget is checked between groups).
const GROUP: usize = 32;

/// What a writing transaction takes first, before any read (so its reads see every committed
/// row, and no insert can land until it commits). The order is the one LangGraph's `put`
/// writes in (blobs, then the checkpoint), so a program's transaction never waits on us
/// while holding what we wait for. `lock_timeout` bounds the wait behind a long writer.
pub(crate) const LOCK_SAVER_TABLES: &str = "SET LOCAL lock_timeout = '30s'; \
     LOCK TABLE checkpoint_blobs, checkpoints, checkpoint_writes IN SHARE ROW EXCLUSIVE MODE";

const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

fn err(e: sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

/// Lock the saver's tables against writers for the rest of the transaction on `conn`.
pub(crate) async fn lock_tables(conn: &mut PgConnection, db: &Target) -> Result<(), StoreError> {
    sqlx::raw_sql(LOCK_SAVER_TABLES)
        .execute(&mut *conn)
        .bounded(db)
        .await?;
    Ok(())
}

/// Each thread's [`Mark`]: its rows in `checkpoints`, and in `checkpoint_writes` and
/// `checkpoint_blobs` together (both layouts name them so), counted, with the newest
/// checkpoint id and the newest `xmin` (every insert and upsert writes a new row version).
/// The blobs count because LangGraph's `put` commits a checkpoint's new blobs before the
/// checkpoint itself.
pub(crate) async fn marks(
    conn: &mut PgConnection,
    db: &Target,
    threads: &[String],
) -> Result<HashMap<String, Mark>, StoreError> {
    let rows = sqlx::query(
        "SELECT t.id, \
         (SELECT count(*) FROM checkpoints c WHERE c.thread_id = t.id)::int8, \
         (SELECT coalesce(max(c.checkpoint_id), '') FROM checkpoints c WHERE c.thread_id = t.id), \
         (SELECT coalesce(max(c.xmin::text::int8), 0) FROM checkpoints c WHERE c.thread_id = t.id), \
         ((SELECT count(*) FROM checkpoint_writes w WHERE w.thread_id = t.id) \
          + (SELECT count(*) FROM checkpoint_blobs b WHERE b.thread_id = t.id))::int8, \
         greatest( \
           (SELECT coalesce(max(w.xmin::text::int8), 0) FROM checkpoint_writes w WHERE w.thread_id = t.id), \
           (SELECT coalesce(max(b.xmin::text::int8), 0) FROM checkpoint_blobs b WHERE b.thread_id = t.id)) \
         FROM unnest($1::text[]) AS t(id)",
    )
    .persistent(false)
    .bind(threads)
    .fetch_all(&mut *conn)
    .bounded(db)
    .await?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        let id: String = r.try_get(0).map_err(err)?;
        let mark = Mark {
            checkpoints: r.try_get(1).map_err(err)?,
            newest: r.try_get(2).map_err(err)?,
            version: (r.try_get(3).map_err(err)?, r.try_get(5).map_err(err)?),
            writes: r.try_get(4).map_err(err)?,
        };
        out.insert(id, mark);
    }
    Ok(out)
}

/// What a layout does with a group of threads still as judged, inside the open transaction:
/// plan, delete unless `dry_run`, and say what goes from each.
#[async_trait]
pub(crate) trait PruneStep: Send + Sync {
    async fn step(
        &self,
        conn: &mut PgConnection,
        threads: &[String],
        dry_run: bool,
    ) -> Result<Vec<ThreadPrune>, StoreError>;
}

/// Each thread's [`Mark`], read on a pooled connection (see [`marks`]).
pub(crate) async fn thread_marks(
    pool: &PgPool,
    db: &Target,
    threads: &[String],
) -> Result<HashMap<String, Mark>, StoreError> {
    let reading = async {
        let mut conn = db.acquire(pool).await?;
        marks(&mut conn, db, threads).await
    };
    reading
        .await
        .map_err(|e| e.during(|| format!("reading what changed in {} threads", threads.len())))
}

/// Run a guarded prune of `guards` in short transactions on one connection of `pool`.
pub(crate) async fn prune_in_batches(
    pool: &PgPool,
    db: &Target,
    guards: &[Guarded],
    dry_run: bool,
    step: &dyn PruneStep,
) -> Result<PruneRun, StoreError> {
    let pruning = || format!("pruning {} threads", guards.len());
    let mut b = Batches::new(guards, dry_run);
    let group = if dry_run { retain::RETAIN_CHUNK } else { GROUP };
    while b.more() {
        let begin = if dry_run { BEGIN_READ } else { "BEGIN" };
        let mut tx = db
            .begin(pool, begin)
            .await
            .map_err(|e| b.failed(e.during(pruning)))?;
        b.begin();
        let done = async {
            if !dry_run {
                lock_tables(&mut tx, db).await?;
            }
            while let Some(guards) = b.group(group) {
                let ids: Vec<String> = guards.iter().map(|g| g.thread_id.clone()).collect();
                let now = marks(&mut tx, db, &ids).await?;
                let go = b.judge(guards, &now);
                if !go.is_empty() {
                    let tallies = step.step(&mut tx, &go, dry_run).await?;
                    b.pruned(tallies);
                }
            }
            Ok::<_, StoreError>(())
        }
        .await;
        // An error drops the transaction: rolled back before the connection is reused.
        if let Err(e) = done {
            return Err(b.failed(e.during(pruning)));
        }
        let end = if dry_run {
            tx.rollback().bounded(db).await
        } else {
            tx.commit().bounded(db).await
        };
        end.map_err(|e| b.failed(e.during(pruning)))?;
        b.committed();
    }
    Ok(b.finish())
}
