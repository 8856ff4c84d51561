//! [`SaverMaintenance::prune_measured`](crate::maintenance::SaverMaintenance::prune_measured)
//! for [`ThreeTablePg`]: guarded, in short transactions (`crate::postgres::batches`), planned
//! a group of threads at a time by the backend-neutral plan, blob rows going as
//! `maint.rs` decides.

use super::maint::{apply, orphan_blobs, snapshot};
use super::ThreeTablePg;
use crate::maintenance::plan::{check_guards, plan, Select};
use crate::maintenance::{retain, Guarded, PruneRun, PruneStrategy, ThreadPrune};
use crate::postgres::batches::{self, PruneStep};
use crate::StoreError;
use async_trait::async_trait;
use sqlx::postgres::PgConnection;
use std::collections::HashMap;

pub(super) async fn prune_measured(
    s: &ThreeTablePg,
    threads: &[Guarded],
    strategy: PruneStrategy,
    keep_last: usize,
    dry_run: bool,
) -> Result<PruneRun, StoreError> {
    let threads = check_guards(threads);
    if threads.is_empty() {
        return Ok(PruneRun::default());
    }
    let step = Retain {
        s,
        select: retain::select(strategy, keep_last),
    };
    batches::prune_in_batches(&s.pool, &s.target, &threads, dry_run, &step).await
}

struct Retain<'a> {
    s: &'a ThreeTablePg,
    select: Select<'static>,
}

#[async_trait]
impl PruneStep for Retain<'_> {
    async fn step(
        &self,
        conn: &mut PgConnection,
        chunk: &[String],
        dry_run: bool,
    ) -> Result<Vec<ThreadPrune>, StoreError> {
        let (s, key) = (self.s, self.s.key());
        let snap = snapshot(conn, s, chunk, key.as_deref()).await?;
        let plan = plan(&snap, chunk, &self.select);
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
        if !dry_run && (!plan.is_empty() || !orphans.is_empty()) {
            apply(conn, s, &plan, &orphans).await?;
        }
        Ok(tally)
    }
}
