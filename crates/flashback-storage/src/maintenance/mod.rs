//! The rest of `BaseCheckpointSaver`: `copy_thread`, `delete_for_runs` and `prune`, for the
//! SQLite and Postgres savers, plus [`copy_thread_between`] to copy a thread from one database
//! to another (SQLite ↔ Postgres).
//!
//! ```text
//!  copy_thread(src, dst)     one transaction: every checkpoint (all namespaces), write and
//!                            (Postgres) blob of src, byte for byte, under dst; dst must be empty
//!  delete_for_runs(runs)     one transaction: checkpoints whose metadata.run_id is in runs, their
//!                            writes, and (Postgres) the blobs no remaining checkpoint references
//!  prune(threads, strategy)  groups of threads, one transaction each (REPEATABLE READ on
//!                            Postgres), sized to hold the lock about 150 ms
//!                            (`guard::prune_in_groups`), like langgraph-checkpoint-postgres
//!                            3.2.0's `prune`:
//!                              Delete      every row of the threads
//!                              KeepLatest  per namespace the latest checkpoint (+ its parent when
//!                                          it predates v4 and the parent holds pending sends),
//!                                          their writes and the blobs still referenced; kept rows
//!                                          whose parent goes get parent_checkpoint_id = NULL; a
//!                                          subgraph call's namespace (with ':') goes with the
//!                                          root checkpoint it started from; a DeltaChannel
//!                                          thread also keeps the head's ancestors back to
//!                                          where every DeltaChannel has a stored value
//!                                          (Python 3.2.0 refuses such threads)
//!                            dry_run: the same report, computed in a read-only transaction
//!  prune_measured(guarded,  prune's plan, with KeepLatest keeping `keep_last` checkpoints per
//!    strategy, keep_last)    namespace along the head's lineage (and what DeltaChannels and
//!                            pre-v4 sends need of the oldest kept one); short transactions
//!                            (`guard.rs`), each re-reading its threads' marks first and
//!                            skipping those that changed since they were judged; reports per
//!                            thread what goes (or why it was skipped), with the stored bytes
//!  thread_marks(threads)     what each thread looks like now, read before judging it
//!  vacuum(force)             after a commit, outside any transaction: SQLite `VACUUM` (refused
//!                            while another program has the file open, unless forced),
//!                            Postgres `VACUUM ANALYZE` of the saver's three tables
//!  vacuum_preview()          what a VACUUM would rewrite and how long SQLite's stops writers
//!  delete_branch(t, ns, id)  one transaction: the checkpoint, its descendants, their writes,
//!                            the subgraph calls started from them and the blobs left
//!                            unreferenced (a failed re-run's fork); dry_run as for prune;
//!                            `delete_branch_as_judged` does nothing when the branch no longer
//!                            holds the checkpoints its preview counted
//!
//! Every writing transaction plans from rows nobody can change under it: SQLite's begin with
//! the write lock (`BEGIN IMMEDIATE`), Postgres's lock the saver's tables against writers
//! first (`postgres/batches.rs`).
//! ```
//!
//! Python's OSS savers implement only Postgres `prune` (3.2.0); `copy_thread` and
//! `delete_for_runs` follow the langgraph-checkpoint-conformance 0.0.2 expectations.
//! Every operation first computes a plan from the rows it reads (the same code for both
//! backends), so a dry run reports exactly what a real run deletes.

use crate::saver::CheckpointSaver;
use crate::StoreError;
use async_trait::async_trait;

mod copy;
pub(crate) mod guard;
pub(crate) mod plan;
pub(crate) mod retain;

pub use crate::three::repair::{BlobFix, DamagedBlob};
pub use copy::{check_copyable, copy_thread_between};
pub use guard::{Guarded, Mark, PruneRun, SkipReason};
pub use plan::Job;
pub use retain::{ThreadPrune, VacuumPreview, VacuumReport, SQLITE_VACUUM_BYTES_PER_SEC};

/// The channel holding Sends; a pre-v4 checkpoint reads its pending sends from its parent's
/// writes to it.
pub(crate) use flashback_codec::reserved::TASKS;

/// What `prune` does with each thread; serialized as Python names it (`keep_latest`,
/// `delete`), the same text as [`PruneStrategy::as_str`] and [`std::str::FromStr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum PruneStrategy {
    /// Keep the latest checkpoint of each namespace (Python's `"keep_latest"`).
    KeepLatest,
    /// Delete every row of the threads (Python's `"delete"`).
    Delete,
}

impl PruneStrategy {
    /// Python's name for the strategy.
    pub fn as_str(self) -> &'static str {
        match self {
            PruneStrategy::KeepLatest => "keep_latest",
            PruneStrategy::Delete => "delete",
        }
    }
}

impl std::str::FromStr for PruneStrategy {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keep_latest" => Ok(PruneStrategy::KeepLatest),
            "delete" => Ok(PruneStrategy::Delete),
            other => Err(StoreError::InvalidInput(format!(
                "unknown prune strategy {other:?} (expected \"keep_latest\" or \"delete\")"
            ))),
        }
    }
}

/// What a `prune` or `delete_for_runs` deletes (dry run) or deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PruneReport {
    /// The checkpoints deleted, as `(thread_id, checkpoint_ns, checkpoint_id)`, sorted.
    pub checkpoints: Vec<(String, String, String)>,
    /// Pending-write rows deleted.
    pub writes: u64,
    /// Blob rows deleted (always 0 on SQLite, which has no blob table).
    pub blobs: u64,
    /// Kept checkpoints whose `parent_checkpoint_id` is set to NULL (their parent went).
    pub parents_cleared: u64,
    /// Whether nothing was written (the report says what a real run would do).
    pub dry_run: bool,
    /// Why nothing was done: the rows planned inside the transaction were not the ones the
    /// operation was judged with (a branch that changed since its preview).
    pub skipped: Option<SkipReason>,
}

/// What a `copy_thread` copied.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CopyReport {
    /// Checkpoint rows copied.
    pub checkpoints: u64,
    /// Pending-write rows copied.
    pub writes: u64,
    /// Blob rows copied (Postgres; 0 on SQLite).
    pub blobs: u64,
    /// The new thread's id, when the source chose it (an Agent Server's `POST
    /// /threads/{id}/copy` names its own); absent when it is the id asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// The saver operations beyond [`CheckpointSaver`]: `copy_thread`, `delete_for_runs`, `prune`.
#[async_trait]
pub trait SaverMaintenance: CheckpointSaver {
    /// Copy every checkpoint (all namespaces), write and blob of `source` to the thread
    /// `target`, ids and parents unchanged, in one transaction. `target` must hold no rows
    /// ([`StoreError::InvalidInput`] otherwise). An empty or missing `source` copies nothing.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError>;

    /// Delete the checkpoints whose `metadata.run_id` is one of `run_ids` (every thread and
    /// namespace), their writes, and the blobs no remaining checkpoint references, in one
    /// transaction. The remaining checkpoints are not modified (a child of a deleted
    /// checkpoint keeps its `parent_checkpoint_id`). An empty list does nothing.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<PruneReport, StoreError> {
        if run_ids.is_empty() {
            return Ok(PruneReport::default());
        }
        let runs = run_ids.iter().cloned().collect();
        self.run_job(Job::Runs(runs), false).await
    }

    /// Prune the threads (see the module docs): each thread in one transaction, a group of
    /// threads per transaction, the groups sized to hold the lock about
    /// [`guard::BATCH_BUDGET`] (`guard::prune_in_groups`). `KeepLatest` keeps what a
    /// DeltaChannel needs to rebuild the head's value. With `dry_run`, nothing is written and
    /// the report (one read-only transaction) says what would be deleted.
    async fn prune(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
        dry_run: bool,
    ) -> Result<PruneReport, StoreError> {
        let threads = plan::check_threads(thread_ids);
        if threads.is_empty() {
            return Ok(PruneReport {
                dry_run,
                ..Default::default()
            });
        }
        if dry_run || threads.len() == 1 {
            return self.run_job(Job::Prune(threads, strategy), dry_run).await;
        }
        guard::prune_in_groups(threads, |group| {
            self.run_job(Job::Prune(group, strategy), false)
        })
        .await
    }

    /// Prune `threads` as [`prune`](Self::prune) does, keeping under `KeepLatest` the
    /// `keep_last` (≥ 1) latest checkpoints of each namespace along its head's lineage, in
    /// short writing transactions (`guard.rs`: each holds the lock about
    /// [`guard::BATCH_BUDGET`], planning a group of threads at a time). Inside each, a thread
    /// whose [`Mark`] is no longer the one it was chosen with is skipped
    /// ([`ThreadPrune::skipped`]). Returns per thread, in the order given, what goes and what
    /// stays, with the bytes as stored. With `dry_run`, nothing is written (one read-only
    /// transaction). A failure after some transactions committed says so in its message.
    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError>;

    /// Each thread's [`Mark`] now (a thread without rows has the empty mark), read without
    /// writing: what a prune's judgment is guarded with. Read it before judging the thread.
    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<std::collections::HashMap<String, Mark>, StoreError>;

    /// Give the space freed back: SQLite `VACUUM` of the file, Postgres `VACUUM ANALYZE` of
    /// the saver's tables. Never inside a transaction; run it after a prune committed.
    /// SQLite's stops every writer while it runs: unless `force`, it is refused
    /// ([`StoreError::InUse`]) while another program has the file open (`sqlite/holders.rs`).
    async fn vacuum(&self, force: bool) -> Result<VacuumReport, StoreError>;

    /// What [`vacuum`](Self::vacuum) would do, read without writing.
    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError>;

    /// Delete the checkpoint `checkpoint_id` of namespace `checkpoint_ns` and every checkpoint
    /// descending from it (a branch: a fork and what ran on it), their writes, the subgraph
    /// calls started from them, and the blobs no remaining checkpoint references, in one
    /// transaction. Nothing else changes: the branch's ancestors and sibling branches keep
    /// every row. An id that is not there deletes nothing. With `dry_run`, nothing is written.
    async fn delete_branch(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        dry_run: bool,
    ) -> Result<PruneReport, StoreError> {
        let job = Job::branch(thread_id, checkpoint_ns, checkpoint_id, None);
        self.run_job(job, dry_run).await
    }

    /// [`delete_branch`](Self::delete_branch), judged with `expect` checkpoints (what its
    /// preview showed): when the branch planned inside the writing transaction holds another
    /// number, nothing is deleted and the report says why ([`PruneReport::skipped`]).
    async fn delete_branch_as_judged(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        expect: usize,
    ) -> Result<PruneReport, StoreError> {
        let job = Job::branch(thread_id, checkpoint_ns, checkpoint_id, Some(expect));
        self.run_job(job, false).await
    }

    /// The blob rows `thread_id`'s checkpoints name (all namespaces) that cannot be read: no
    /// row, a broken delta chain, or bytes that do not decode — what `rebuild --repair`
    /// re-creates from the writes. Only the three-table store keeps channel values in rows of
    /// their own ([`crate::three::repair`]); the other schemas say so.
    async fn damaged_blobs(&self, thread_id: &str) -> Result<Vec<DamagedBlob>, StoreError> {
        let _ = thread_id;
        Err(no_blob_repair())
    }

    /// Store each of `fixes` as a whole blob row of `thread_id`, replacing the row with its key
    /// (a delta based on it then builds on the new value), in one transaction. Returns the
    /// rows written.
    async fn replace_blobs(&self, thread_id: &str, fixes: &[BlobFix]) -> Result<u64, StoreError> {
        let _ = (thread_id, fixes);
        Err(no_blob_repair())
    }

    /// Plan `job` from the rows read and carry it out (or, with `dry_run`, only report it), in
    /// one transaction: what each backend provides for the three above.
    #[doc(hidden)]
    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError>;
}

/// What the schemas without blob rows of their own say to a repair.
fn no_blob_repair() -> StoreError {
    StoreError::InvalidInput(
        "repairing values from the writes works on the three-table store, whose values are \
         rows of their own; this database keeps LangGraph's schema (`flashback convert` copies \
         threads into a three-table store)"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_strategy_names() {
        for s in [PruneStrategy::KeepLatest, PruneStrategy::Delete] {
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, serde_json::Value::from(s.as_str()));
            assert_eq!(serde_json::from_value::<PruneStrategy>(json).unwrap(), s);
            assert_eq!(s.as_str().parse::<PruneStrategy>().unwrap(), s);
        }
        assert!(serde_json::from_str::<PruneStrategy>("\"KeepLatest\"").is_err());
    }
}
