//! [`SaverMaintenance`] for [`ThreeTablePg`]: each job in its own transaction, its steps in
//! `maint.rs`, guarded pruning in `retain.rs`.

use super::maint::{copy, maintain, replace, snapshot, thread_blobs};
use super::retain::prune_measured;
use super::ThreeTablePg;
use crate::maintenance::plan::{copy_args, copying, Job};
use crate::maintenance::{BlobFix, CopyReport, DamagedBlob, PruneReport, SaverMaintenance};
use crate::maintenance::{Guarded, Mark, PruneRun, PruneStrategy, VacuumPreview, VacuumReport};
use crate::postgres::wait::Bounded as _;
use crate::three::repair::damaged;
use crate::StoreError;
use async_trait::async_trait;
use std::collections::HashMap;

#[async_trait]
impl SaverMaintenance for ThreeTablePg {
    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        let step = async {
            copy_args(source, target)?;
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            let report = copy(&mut tx, self, source, target).await?;
            tx.commit().bounded(&self.target).await?;
            Ok(report)
        };
        step.await
            .map_err(|e: StoreError| e.during(|| copying(source, target)))
    }

    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError> {
        prune_measured(self, threads, strategy, keep_last, dry_run).await
    }

    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<HashMap<String, Mark>, StoreError> {
        crate::postgres::batches::thread_marks(&self.pool, &self.target, thread_ids).await
    }

    async fn vacuum(&self, _force: bool) -> Result<VacuumReport, StoreError> {
        crate::postgres::maintenance::vacuum_tables(&self.pool, &self.target).await
    }

    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError> {
        crate::postgres::maintenance::vacuum_preview_tables(&self.pool, &self.target).await
    }

    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError> {
        let what = job.describe();
        let step = async {
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            if !dry_run {
                // Writers wait until this commits: planned from every committed row.
                crate::postgres::batches::lock_tables(&mut tx, &self.target).await?;
            }
            let report = maintain(&mut tx, self, job, dry_run).await?;
            if dry_run {
                // A dry run writes nothing.
                tx.rollback().bounded(&self.target).await?;
            } else {
                tx.commit().bounded(&self.target).await?;
            }
            Ok(report)
        };
        step.await.map_err(|e: StoreError| e.during(|| what))
    }

    async fn damaged_blobs(&self, thread_id: &str) -> Result<Vec<DamagedBlob>, StoreError> {
        let step = async {
            // One snapshot of both tables.
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .execute(&mut *tx)
                .bounded(&self.target)
                .await?;
            let key = self.key();
            let threads = [thread_id.to_owned()];
            let snap = snapshot(&mut tx, self, &threads, key.as_deref()).await?;
            let blobs = thread_blobs(&mut tx, self, thread_id).await?;
            tx.rollback().bounded(&self.target).await?;
            Ok(damaged(&snap.rows, &blobs, key.as_deref()))
        };
        step.await.map_err(|e: StoreError| {
            e.during(|| format!("checking the blobs of thread {}", thread_id.escape_debug()))
        })
    }

    async fn replace_blobs(&self, thread_id: &str, fixes: &[BlobFix]) -> Result<u64, StoreError> {
        let step = async {
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            let n = replace(&mut tx, self, thread_id, fixes).await?;
            tx.commit().bounded(&self.target).await?;
            Ok(n)
        };
        step.await.map_err(|e: StoreError| {
            e.during(|| format!("repairing the blobs of thread {}", thread_id.escape_debug()))
        })
    }
}
