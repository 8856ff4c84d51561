//! [`SaverMaintenance::prune_measured`](crate::maintenance::SaverMaintenance::prune_measured)
//! for [`ThreeTablePg`]: one transaction (read-only for a dry run), planned a chunk of threads
//! at a time by the backend-neutral plan, blob rows going as `postgres_maint.rs` decides.

use super::postgres::ThreeTablePg;
use super::postgres_maint::{apply, orphan_blobs, snapshot};
use crate::maintenance::plan::{check_threads, plan};
use crate::maintenance::{retain, PruneStrategy, ThreadPrune};
use crate::postgres::limits::Bounded as _;
use crate::StoreError;
use sqlx::postgres::PgConnection;
use std::collections::HashMap;

pub(super) async fn prune_measured(
    s: &ThreeTablePg,
    thread_ids: &[String],
    strategy: PruneStrategy,
    keep_last: usize,
    dry_run: bool,
) -> Result<Vec<ThreadPrune>, StoreError> {
    let threads = check_threads(thread_ids);
    if threads.is_empty() {
        return Ok(Vec::new());
    }
    let pruning = async {
        let mut tx = s.target.begin(&s.pool, "BEGIN").await?;
        if dry_run {
            // A dry run reads in one snapshot and cannot write.
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .execute(&mut *tx)
                .bounded(&s.target)
                .await?;
        }
        // An error drops the transaction: rolled back before the connection is reused.
        let out = chunks(&mut tx, s, &threads, strategy, keep_last, dry_run).await?;
        if dry_run {
            tx.rollback().bounded(&s.target).await?;
        } else {
            tx.commit().bounded(&s.target).await?;
        }
        Ok(out)
    };
    pruning
        .await
        .map_err(|e: StoreError| e.during(|| format!("pruning {} threads", threads.len())))
}

async fn chunks(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    threads: &[String],
    strategy: PruneStrategy,
    keep_last: usize,
    dry_run: bool,
) -> Result<Vec<ThreadPrune>, StoreError> {
    let key = s.key();
    let select = retain::select(strategy, keep_last);
    let mut out = Vec::with_capacity(threads.len());
    for chunk in threads.chunks(retain::RETAIN_CHUNK) {
        let snap = snapshot(conn, s, chunk, key.as_deref()).await?;
        let plan = plan(&snap, chunk, &select);
        let orphans = orphan_blobs(conn, s, &snap, &plan, chunk).await?;
        let mut tally = retain::tally(&snap, &plan, chunk);
        let at: HashMap<&str, usize> = chunk
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        for (thread, _, bytes) in &orphans {
            if let Some(e) = at.get(thread.as_str()).and_then(|i| tally.get_mut(*i)) {
                e.blobs += 1;
                e.bytes += bytes;
            }
        }
        out.extend(tally);
        if !dry_run && (!plan.is_empty() || !orphans.is_empty()) {
            apply(conn, s, &plan, &orphans).await?;
        }
    }
    Ok(out)
}
