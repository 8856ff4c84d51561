//! The rest of `BaseCheckpointSaver`: `copy_thread`, `delete_for_runs` and `prune`, for the
//! SQLite and Postgres savers, plus [`copy_thread_between`] to copy a thread from one database
//! to another (SQLite ↔ Postgres).
//!
//! ```text
//!  copy_thread(src, dst)     one transaction: every checkpoint (all namespaces), write and
//!                            (Postgres) blob of src, byte for byte, under dst; dst must be empty
//!  delete_for_runs(runs)     one transaction: checkpoints whose metadata.run_id is in runs, their
//!                            writes, and (Postgres) the blobs no remaining checkpoint references
//!  prune(threads, strategy)  one transaction (REPEATABLE READ on Postgres), like
//!                            langgraph-checkpoint-postgres 3.2.0's `prune`:
//!                              Delete      every row of the threads
//!                              KeepLatest  per namespace the latest checkpoint (+ its parent when
//!                                          it predates v4 and the parent holds pending sends),
//!                                          their writes and the blobs still referenced; kept rows
//!                                          whose parent goes get parent_checkpoint_id = NULL; a
//!                                          subgraph call's namespace (with ':') goes with the
//!                                          root checkpoint it started from; DeltaChannel threads
//!                                          are refused
//!                            dry_run: the same report, computed in a read-only transaction
//! ```
//!
//! Python's OSS savers implement only Postgres `prune` (3.2.0); `copy_thread` and
//! `delete_for_runs` follow the langgraph-checkpoint-conformance 0.0.2 expectations.
//! Every operation first computes a plan from the rows it reads (the same code for both
//! backends), so a dry run reports exactly what a real run deletes.

use crate::model::{ListQuery, PendingWrite};
use crate::saver::{write_idx, CheckpointSaver, PutRequest, WriteBatch, WRITES_IDX_MAP};
use crate::sqlite_write::SqliteSaver;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{Decoded, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The channel holding Sends; a pre-v4 checkpoint reads its pending sends from its parent's
/// writes to it.
const TASKS: &str = "__pregel_tasks";
/// Metadata keys a DeltaChannel graph leaves (LangGraph Python and JS).
const DELTA_METADATA_KEYS: [&str; 2] = ["counters_since_delta_snapshot", "delta_writes_versioned"];

/// What `prune` does with each thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<PruneReport, StoreError>;

    /// Prune the threads (see the module docs), in one transaction. `KeepLatest` refuses
    /// threads that use a DeltaChannel ([`StoreError::InvalidInput`], nothing is pruned).
    /// With `dry_run`, nothing is written and the report says what would be deleted.
    async fn prune(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
        dry_run: bool,
    ) -> Result<PruneReport, StoreError>;
}

// ---------------------------------------------------------------------------------------------
// The plan (backend-neutral)

/// One checkpoint row, as much as planning needs.
#[derive(Debug, Clone)]
struct CpRow {
    thread: String,
    ns: String,
    id: String,
    parent: Option<String>,
    /// `checkpoint["v"]`, when it is an integer.
    v: Option<i64>,
    /// `metadata["parents"][""]`: the root checkpoint a subgraph call started from.
    root: Option<String>,
    /// `metadata["run_id"]` as text.
    run_id: Option<String>,
    /// `channel_versions` as the texts Postgres joins blobs on (empty on SQLite).
    versions: Vec<(String, String)>,
}

/// Per `(thread, ns, checkpoint_id)`: the number of write rows and whether one is a Send.
type WriteCounts = HashMap<(String, String, String), (u64, bool)>;
/// Blob keys `(thread, ns, channel, version)`.
type BlobKey = (String, String, String, String);

/// Everything read about the threads concerned.
#[derive(Debug, Default)]
struct Snapshot {
    rows: Vec<CpRow>,
    writes: WriteCounts,
    blobs: HashSet<BlobKey>,
}

/// What to select for deletion.
enum Select<'a> {
    Delete,
    KeepLatest,
    Runs(&'a HashSet<String>),
}

/// The statements a plan runs, and the report it produces.
#[derive(Debug, Default)]
struct Plan {
    report: PruneReport,
    /// Whole threads (strategy `Delete`).
    threads: Vec<String>,
    /// Whole namespaces `(thread, ns)` (subgraph calls).
    namespaces: Vec<(String, String)>,
    /// Single checkpoints `(thread, ns, id)` with their writes.
    checkpoints: Vec<(String, String, String)>,
    /// Kept checkpoints whose parent is cleared.
    parents: Vec<(String, String, String)>,
    /// Blob rows.
    blobs: Vec<BlobKey>,
}

impl Plan {
    fn is_empty(&self) -> bool {
        self.threads.is_empty()
            && self.namespaces.is_empty()
            && self.checkpoints.is_empty()
            && self.parents.is_empty()
            && self.blobs.is_empty()
    }
}

fn plan(snap: &Snapshot, threads: &[String], select: &Select<'_>) -> Plan {
    let mut plan = Plan::default();
    if let Select::Delete = select {
        let set: HashSet<&str> = threads.iter().map(String::as_str).collect();
        plan.threads = threads.to_vec();
        plan.report.checkpoints = snap
            .rows
            .iter()
            .filter(|r| set.contains(r.thread.as_str()))
            .map(|r| (r.thread.clone(), r.ns.clone(), r.id.clone()))
            .collect();
        plan.report.writes = snap
            .writes
            .iter()
            .filter(|((t, _, _), _)| set.contains(t.as_str()))
            .map(|(_, (n, _))| *n)
            .sum();
        plan.report.blobs = snap
            .blobs
            .iter()
            .filter(|(t, ..)| set.contains(t.as_str()))
            .count() as u64;
        plan.report.checkpoints.sort();
        return plan;
    }

    // Rows by (thread, ns), in a stable order.
    let mut by_ns: BTreeMap<(&str, &str), Vec<&CpRow>> = BTreeMap::new();
    for r in &snap.rows {
        by_ns.entry((&r.thread, &r.ns)).or_default().push(r);
    }

    // Which rows of each namespace stay; whole namespaces that go.
    let mut kept: HashMap<(&str, &str), HashSet<&str>> = HashMap::new();
    let mut calls: HashSet<(&str, &str)> = HashSet::new();
    match select {
        Select::Runs(runs) => {
            for (key, rows) in &by_ns {
                let stay = rows
                    .iter()
                    .filter(|r| !r.run_id.as_ref().is_some_and(|id| runs.contains(id)))
                    .map(|r| r.id.as_str())
                    .collect();
                kept.insert(*key, stay);
            }
        }
        _ => {
            let mut roots: HashMap<(&str, &str), Option<&str>> = HashMap::new();
            for (key @ (thread, ns), rows) in &by_ns {
                let Some(head) = rows.iter().max_by(|a, b| a.id.cmp(&b.id)) else {
                    continue;
                };
                let mut stay = HashSet::from([head.id.as_str()]);
                if head.v.is_some_and(|v| v < 4) {
                    if let Some(p) = head.parent.as_deref() {
                        let wkey = ((*thread).to_owned(), (*ns).to_owned(), p.to_owned());
                        if snap.writes.get(&wkey).is_some_and(|(_, sends)| *sends) {
                            stay.insert(p);
                        }
                    }
                }
                kept.insert(*key, stay);
                roots.insert(*key, head.root.as_deref());
            }
            for (key @ (thread, ns), root) in &roots {
                let Some(root) = root else { continue };
                let root_key = (*thread, "");
                let root_saved = by_ns
                    .get(&root_key)
                    .is_some_and(|rows| rows.iter().any(|r| r.id == *root));
                let root_kept = kept.get(&root_key).is_some_and(|k| k.contains(root));
                if ns.contains(':') && root_saved && !root_kept {
                    calls.insert(*key);
                }
            }
        }
    }

    for (key @ (thread, ns), rows) in &by_ns {
        if calls.contains(key) {
            plan.namespaces
                .push(((*thread).to_owned(), (*ns).to_owned()));
            for r in rows {
                plan.report
                    .checkpoints
                    .push((r.thread.clone(), r.ns.clone(), r.id.clone()));
            }
            plan.report.writes += snap
                .writes
                .iter()
                .filter(|((t, n, _), _)| t == thread && n == ns)
                .map(|(_, (c, _))| *c)
                .sum::<u64>();
            for b in &snap.blobs {
                if b.0 == *thread && b.1 == *ns {
                    plan.blobs.push(b.clone());
                }
            }
            continue;
        }
        let stay = kept.get(key).cloned().unwrap_or_default();
        let (gone, remain): (Vec<&CpRow>, Vec<&CpRow>) =
            rows.iter().partition(|r| !stay.contains(r.id.as_str()));
        if !matches!(select, Select::Runs(_)) {
            for r in &remain {
                if r.parent.as_deref().is_some_and(|p| !stay.contains(p)) {
                    plan.parents
                        .push((r.thread.clone(), r.ns.clone(), r.id.clone()));
                }
            }
        }
        if gone.is_empty() {
            continue;
        }
        let referenced: HashSet<(&str, &str)> = remain
            .iter()
            .flat_map(|r| r.versions.iter().map(|(c, v)| (c.as_str(), v.as_str())))
            .collect();
        let mut freed: HashSet<(&str, &str)> = HashSet::new();
        for r in &gone {
            let key = (r.thread.clone(), r.ns.clone(), r.id.clone());
            plan.report.writes += snap.writes.get(&key).map_or(0, |(c, _)| *c);
            plan.report.checkpoints.push(key.clone());
            plan.checkpoints.push(key);
            freed.extend(r.versions.iter().map(|(c, v)| (c.as_str(), v.as_str())));
        }
        for (channel, version) in freed.difference(&referenced) {
            let b = (
                (*thread).to_owned(),
                (*ns).to_owned(),
                (*channel).to_owned(),
                (*version).to_owned(),
            );
            if snap.blobs.contains(&b) {
                plan.blobs.push(b);
            }
        }
    }
    plan.blobs.sort();
    plan.parents.sort();
    plan.report.checkpoints.sort();
    plan.report.blobs = plan.blobs.len() as u64;
    plan.report.parents_cleared = plan.parents.len() as u64;
    plan
}

fn delta_error(threads: &BTreeMap<String, ()>) -> StoreError {
    let names: Vec<&str> = threads.keys().map(String::as_str).collect();
    StoreError::InvalidInput(format!(
        "keep_latest can't prune threads that use a DeltaChannel (their latest values are \
         rebuilt from older checkpoints' writes): {}; nothing was pruned",
        names.join(", ")
    ))
}

fn check_threads(thread_ids: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    thread_ids
        .iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

fn copy_args(source: &str, target: &str) -> Result<(), StoreError> {
    if source == target {
        return Err(StoreError::InvalidInput(format!(
            "copy_thread: source and target are the same thread {source:?}"
        )));
    }
    Ok(())
}

fn not_empty(target: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "copy_thread: the target thread {target:?} already holds checkpoints or writes; \
         copy into a new thread id (or delete it first)"
    ))
}

/// `metadata` fields planning needs: the root parent, the run id, and whether DeltaChannel
/// keys are present.
fn metadata_fields(metadata: &serde_json::Value) -> (Option<String>, Option<String>, bool) {
    let root = metadata
        .get("parents")
        .and_then(|p| p.get(""))
        .and_then(|r| r.as_str())
        .map(str::to_owned);
    let run_id = metadata.get("run_id").and_then(|r| match r {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    });
    let delta = metadata
        .as_object()
        .is_some_and(|m| DELTA_METADATA_KEYS.iter().any(|k| m.contains_key(*k)));
    (root, run_id, delta)
}

// ---------------------------------------------------------------------------------------------
// SQLite

mod sqlite {
    use super::*;
    use rusqlite::{params, Connection, OpenFlags, Transaction, TransactionBehavior};
    use std::time::Duration;

    use crate::sqlite_write::write_err as err;

    /// A connection of our own to the saver's file (read-only for dry runs).
    fn open(path: &str, write: bool) -> Result<Connection, StoreError> {
        let flags = if write {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } else {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        };
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(err)?;
        Ok(conn)
    }

    pub(super) async fn run<T, F>(path: &str, write: bool, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || {
            let mut conn = open(&path, write)?;
            let behavior = if write {
                TransactionBehavior::Immediate
            } else {
                TransactionBehavior::Deferred
            };
            let tx = conn.transaction_with_behavior(behavior).map_err(err)?;
            let out = f(&tx)?;
            if write {
                tx.commit().map_err(err)?;
            }
            Ok(out)
        })
        .await
        .map_err(|e| StoreError::Query(format!("maintenance task failed: {e}")))?
    }

    pub(super) fn copy(
        tx: &Transaction<'_>,
        source: &str,
        target: &str,
        task_path: bool,
    ) -> Result<CopyReport, StoreError> {
        let busy: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1) \
                 OR EXISTS (SELECT 1 FROM writes WHERE thread_id = ?1)",
                [target],
                |r| r.get(0),
            )
            .map_err(err)?;
        if busy {
            return Err(not_empty(target));
        }
        let checkpoints = tx
            .execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
                 SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                 FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id",
                params![source, target],
            )
            .map_err(err)?;
        let cols = if task_path {
            "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
        } else {
            "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value"
        };
        let writes = tx
            .execute(
                &format!(
                    "INSERT INTO writes (thread_id, {cols}) SELECT ?2, {cols} FROM writes \
                     WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id, task_id, idx"
                ),
                params![source, target],
            )
            .map_err(err)?;
        Ok(CopyReport {
            checkpoints: checkpoints as u64,
            writes: writes as u64,
            blobs: 0,
        })
    }

    /// The checkpoint rows and write counts of `threads`; the threads that use a DeltaChannel.
    pub(super) fn snapshot(
        tx: &Transaction<'_>,
        threads: &[String],
    ) -> Result<(Snapshot, BTreeMap<String, ()>), StoreError> {
        let mut snap = Snapshot::default();
        let mut delta = BTreeMap::new();
        let mut cps = tx
            .prepare(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                 FROM checkpoints WHERE thread_id = ?",
            )
            .map_err(err)?;
        let mut writes = tx
            .prepare(
                "SELECT checkpoint_ns, checkpoint_id, count(*), max(channel = ?2) \
                 FROM writes WHERE thread_id = ?1 GROUP BY checkpoint_ns, checkpoint_id",
            )
            .map_err(err)?;
        for thread in threads {
            let mut rows = cps.query([thread]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let ns: String = r.get(0).map_err(err)?;
                let id: String = r.get(1).map_err(err)?;
                let parent: Option<String> = r.get(2).map_err(err)?;
                let tag: Option<String> = r.get(3).map_err(err)?;
                let doc: Option<Vec<u8>> = r.get(4).map_err(err)?;
                let metadata: Option<Vec<u8>> = r.get(5).map_err(err)?;
                let metadata = metadata
                    .and_then(|m| serde_json::from_slice::<serde_json::Value>(&m).ok())
                    .unwrap_or(serde_json::Value::Null);
                let (root, run_id, delta_keys) = metadata_fields(&metadata);
                let (v, snapshot) = document_facts(tag.as_deref(), doc.as_deref());
                if delta_keys || snapshot {
                    delta.insert(thread.clone(), ());
                }
                snap.rows.push(CpRow {
                    thread: thread.clone(),
                    ns,
                    id,
                    parent,
                    v,
                    root,
                    run_id,
                    versions: Vec::new(),
                });
            }
            let mut rows = writes.query(params![thread, TASKS]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let ns: String = r.get(0).map_err(err)?;
                let id: String = r.get(1).map_err(err)?;
                let n: i64 = r.get(2).map_err(err)?;
                let sends: Option<i64> = r.get(3).map_err(err)?;
                snap.writes.insert(
                    (thread.clone(), ns, id),
                    (n.max(0) as u64, sends.unwrap_or(0) != 0),
                );
            }
        }
        Ok((snap, delta))
    }

    /// `checkpoint["v"]` and whether a channel value is a `_DeltaSnapshot`.
    fn document_facts(tag: Option<&str>, doc: Option<&[u8]>) -> (Option<i64>, bool) {
        match flashback_codec::decode_typed(tag.unwrap_or("msgpack"), doc) {
            Decoded::Msgpack(Value::Map(entries)) => {
                let mut v = None;
                let mut snapshot = false;
                for (k, val) in &entries {
                    match k.as_str() {
                        Some("v") => v = val.as_i64(),
                        Some("channel_values") => {
                            if let Value::Map(values) = val {
                                snapshot = values
                                    .iter()
                                    .any(|(_, x)| matches!(x, Value::DeltaSnapshot(_)));
                            }
                        }
                        _ => {}
                    }
                }
                (v, snapshot)
            }
            Decoded::Json { value, .. } => (value.get("v").and_then(|v| v.as_i64()), false),
            _ => (None, false),
        }
    }

    /// The threads holding a checkpoint of one of `runs`.
    pub(super) fn run_threads(
        tx: &Transaction<'_>,
        runs: &HashSet<String>,
    ) -> Result<Vec<String>, StoreError> {
        let mut stmt = tx
            .prepare(
                "SELECT DISTINCT thread_id, CAST(metadata AS TEXT) FROM checkpoints \
                 WHERE instr(CAST(metadata AS TEXT), '\"run_id\"') > 0 ORDER BY thread_id",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut out: Vec<String> = Vec::new();
        while let Some(r) = rows.next().map_err(err)? {
            let thread: String = r.get(0).map_err(err)?;
            let metadata: Option<String> = r.get(1).map_err(err)?;
            let metadata = metadata
                .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
                .unwrap_or(serde_json::Value::Null);
            let (_, run_id, _) = metadata_fields(&metadata);
            if run_id.is_some_and(|r| runs.contains(&r)) && out.last() != Some(&thread) {
                out.push(thread);
            }
        }
        Ok(out)
    }

    pub(super) fn apply(tx: &Transaction<'_>, plan: &Plan) -> Result<PruneReport, StoreError> {
        let mut report = PruneReport {
            checkpoints: plan.report.checkpoints.clone(),
            ..Default::default()
        };
        for t in &plan.threads {
            tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [t])
                .map_err(err)?;
            report.writes += tx
                .execute("DELETE FROM writes WHERE thread_id = ?", [t])
                .map_err(err)? as u64;
        }
        for (t, ns) in &plan.namespaces {
            tx.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
                [t, ns],
            )
            .map_err(err)?;
            report.writes += tx
                .execute(
                    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?",
                    [t, ns],
                )
                .map_err(err)? as u64;
        }
        {
            let mut del_writes = tx
                .prepare(
                    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                )
                .map_err(err)?;
            let mut del_cp = tx
                .prepare(
                    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                )
                .map_err(err)?;
            for (t, ns, id) in &plan.checkpoints {
                report.writes += del_writes.execute([t, ns, id]).map_err(err)? as u64;
                del_cp.execute([t, ns, id]).map_err(err)?;
            }
            let mut clear = tx
                .prepare(
                    "UPDATE checkpoints SET parent_checkpoint_id = NULL \
                     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                )
                .map_err(err)?;
            for (t, ns, id) in &plan.parents {
                report.parents_cleared += clear.execute([t, ns, id]).map_err(err)? as u64;
            }
        }
        Ok(report)
    }
}

async fn sqlite_maintain(
    saver: &SqliteSaver,
    threads: Option<Vec<String>>,
    runs: Option<HashSet<String>>,
    strategy: PruneStrategy,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    sqlite::run(saver.path(), !dry_run, move |tx| {
        let threads = match (&threads, &runs) {
            (Some(t), _) => t.clone(),
            (None, Some(r)) => sqlite::run_threads(tx, r)?,
            (None, None) => Vec::new(),
        };
        if threads.is_empty() {
            return Ok(PruneReport {
                dry_run,
                ..Default::default()
            });
        }
        let (snap, delta) = sqlite::snapshot(tx, &threads)?;
        let select = match (&runs, strategy) {
            (Some(r), _) => Select::Runs(r),
            (None, PruneStrategy::Delete) => Select::Delete,
            (None, PruneStrategy::KeepLatest) => {
                if !delta.is_empty() {
                    return Err(delta_error(&delta));
                }
                Select::KeepLatest
            }
        };
        let plan = plan(&snap, &threads, &select);
        if dry_run || plan.is_empty() {
            return Ok(PruneReport {
                dry_run,
                ..plan.report
            });
        }
        sqlite::apply(tx, &plan)
    })
    .await
}

#[async_trait]
impl SaverMaintenance for SqliteSaver {
    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        copy_args(source, target)?;
        let (source, target) = (source.to_owned(), target.to_owned());
        let task_path = self.schema().has_task_path;
        sqlite::run(self.path(), true, move |tx| {
            sqlite::copy(tx, &source, &target, task_path)
        })
        .await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<PruneReport, StoreError> {
        if run_ids.is_empty() {
            return Ok(PruneReport::default());
        }
        let runs: HashSet<String> = run_ids.iter().cloned().collect();
        sqlite_maintain(self, None, Some(runs), PruneStrategy::Delete, false).await
    }

    async fn prune(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
        dry_run: bool,
    ) -> Result<PruneReport, StoreError> {
        let threads = check_threads(thread_ids);
        if threads.is_empty() {
            return Ok(PruneReport {
                dry_run,
                ..Default::default()
            });
        }
        sqlite_maintain(self, Some(threads), None, strategy, dry_run).await
    }
}

// ---------------------------------------------------------------------------------------------
// Postgres

#[cfg(feature = "postgres")]
mod pg {
    use super::*;
    use crate::model::SchemaInfo;
    use crate::postgres::PostgresStore;
    use sqlx::postgres::{PgArguments, PgPool};
    use sqlx::{Postgres, Row as _, Transaction};

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
            copy(self.pool(), self.schema(), source, target).await
        }
        async fn delete_for_runs(&self, run_ids: &[String]) -> Result<PruneReport, StoreError> {
            maintain(self.pool(), self.schema(), Job::Runs(run_ids), false).await
        }
        async fn prune(
            &self,
            thread_ids: &[String],
            strategy: PruneStrategy,
            dry_run: bool,
        ) -> Result<PruneReport, StoreError> {
            maintain(
                self.pool(),
                self.schema(),
                Job::Prune(thread_ids, strategy),
                dry_run,
            )
            .await
        }
    }

    async fn copy(
        pool: &PgPool,
        schema: &SchemaInfo,
        source: &str,
        target: &str,
    ) -> Result<CopyReport, StoreError> {
        copy_args(source, target)?;
        if schema.shallow {
            return Err(shallow_error(schema));
        }
        let mut tx = pool.begin_with(BEGIN_WRITE).await.map_err(err)?;
        let busy: bool = query(
            "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1) \
             OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1) \
             OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = $1)",
        )
        .bind(target)
        .fetch_one(&mut *tx)
        .await
        .map_err(err)?
        .try_get(0)
        .map_err(err)?;
        if busy {
            let _ = tx.rollback().await;
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
        .await
        .map_err(err)?
        .rows_affected();
        let blobs = query(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
             SELECT $2, checkpoint_ns, channel, version, type, blob \
             FROM checkpoint_blobs WHERE thread_id = $1",
        )
        .bind(source)
        .bind(target)
        .execute(&mut *tx)
        .await
        .map_err(err)?
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
            .await
            .map_err(err)?
            .rows_affected();
        tx.commit().await.map_err(err)?;
        Ok(CopyReport {
            checkpoints,
            writes,
            blobs,
        })
    }

    enum Job<'a> {
        Runs(&'a [String]),
        Prune(&'a [String], PruneStrategy),
    }

    async fn maintain(
        pool: &PgPool,
        schema: &SchemaInfo,
        job: Job<'_>,
        dry_run: bool,
    ) -> Result<PruneReport, StoreError> {
        let empty = PruneReport {
            dry_run,
            ..Default::default()
        };
        let ids = match &job {
            Job::Runs(ids) | Job::Prune(ids, _) => check_threads(ids),
        };
        if ids.is_empty() {
            return Ok(empty);
        }
        if schema.shallow {
            return Err(shallow_error(schema));
        }
        let mut tx = pool
            .begin_with(if dry_run { BEGIN_READ } else { BEGIN_WRITE })
            .await
            .map_err(err)?;
        let result = maintain_in(&mut tx, job, ids, dry_run).await;
        match result {
            Ok(Some(report)) => {
                tx.commit().await.map_err(err)?;
                Ok(report)
            }
            Ok(None) => {
                let _ = tx.rollback().await;
                Ok(empty)
            }
            Err(e) => {
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }

    async fn maintain_in(
        tx: &mut Transaction<'static, Postgres>,
        job: Job<'_>,
        ids: Vec<String>,
        dry_run: bool,
    ) -> Result<Option<PruneReport>, StoreError> {
        let runs: HashSet<String>;
        let (threads, select) = match job {
            Job::Runs(_) => {
                runs = ids.iter().cloned().collect();
                let threads: Vec<String> = query(
                    "SELECT DISTINCT thread_id FROM checkpoints \
                     WHERE metadata ->> 'run_id' = ANY($1) ORDER BY thread_id",
                )
                .bind(&ids)
                .fetch_all(&mut **tx)
                .await
                .map_err(err)?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()
                .map_err(err)?;
                (threads, Select::Runs(&runs))
            }
            Job::Prune(_, PruneStrategy::Delete) => (ids, Select::Delete),
            Job::Prune(_, PruneStrategy::KeepLatest) => {
                let delta: BTreeMap<String, ()> = query(
                    "SELECT DISTINCT c.thread_id FROM checkpoints c \
                     WHERE c.thread_id = ANY($1) AND ( \
                       c.metadata -> 'counters_since_delta_snapshot' IS NOT NULL \
                       OR c.metadata -> 'delta_writes_versioned' IS NOT NULL \
                       OR EXISTS ( \
                         SELECT 1 FROM jsonb_each(c.checkpoint -> 'channel_values') AS v \
                         WHERE v.value = 'true'::jsonb AND EXISTS ( \
                           SELECT 1 FROM checkpoint_blobs b \
                           WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
                           AND b.channel = v.key \
                           AND b.version = c.checkpoint -> 'channel_versions' ->> v.key)))",
                )
                .bind(&ids)
                .fetch_all(&mut **tx)
                .await
                .map_err(err)?
                .iter()
                .map(|r| r.try_get::<String, _>(0).map(|t| (t, ())))
                .collect::<Result<_, _>>()
                .map_err(err)?;
                if !delta.is_empty() {
                    return Err(delta_error(&delta));
                }
                (ids, Select::KeepLatest)
            }
        };
        if threads.is_empty() {
            return Ok(None);
        }
        let snap = snapshot(tx, &threads, !matches!(select, Select::Delete)).await?;
        let plan = plan(&snap, &threads, &select);
        if dry_run || plan.is_empty() {
            return Ok(Some(PruneReport {
                dry_run,
                ..plan.report
            }));
        }
        apply(tx, &plan).await.map(Some)
    }

    async fn snapshot(
        tx: &mut Transaction<'static, Postgres>,
        threads: &[String],
        versions: bool,
    ) -> Result<Snapshot, StoreError> {
        let mut snap = Snapshot::default();
        let rows = query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
             checkpoint ->> 'v', metadata -> 'parents' ->> '', metadata ->> 'run_id' \
             FROM checkpoints WHERE thread_id = ANY($1)",
        )
        .bind(threads)
        .fetch_all(&mut **tx)
        .await
        .map_err(err)?;
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
            };
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
            .fetch_all(&mut **tx)
            .await
            .map_err(err)?;
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
            "SELECT thread_id, checkpoint_ns, checkpoint_id, count(*), bool_or(channel = $2) \
             FROM checkpoint_writes WHERE thread_id = ANY($1) \
             GROUP BY thread_id, checkpoint_ns, checkpoint_id",
        )
        .bind(threads)
        .bind(TASKS)
        .fetch_all(&mut **tx)
        .await
        .map_err(err)?;
        for r in &rows {
            let n: i64 = r.try_get(3).map_err(err)?;
            let sends: Option<bool> = r.try_get(4).map_err(err)?;
            snap.writes.insert(
                (
                    r.try_get(0).map_err(err)?,
                    r.try_get(1).map_err(err)?,
                    r.try_get(2).map_err(err)?,
                ),
                (n.max(0) as u64, sends.unwrap_or(false)),
            );
        }
        let rows = query(
            "SELECT thread_id, checkpoint_ns, channel, version FROM checkpoint_blobs \
             WHERE thread_id = ANY($1)",
        )
        .bind(threads)
        .fetch_all(&mut **tx)
        .await
        .map_err(err)?;
        for r in &rows {
            snap.blobs.insert((
                r.try_get(0).map_err(err)?,
                r.try_get(1).map_err(err)?,
                r.try_get(2).map_err(err)?,
                r.try_get(3).map_err(err)?,
            ));
        }
        Ok(snap)
    }

    fn column<T: Clone, const N: usize>(keys: &[[T; N]], i: usize) -> Vec<T> {
        keys.iter().map(|k| k[i].clone()).collect()
    }

    async fn apply(
        tx: &mut Transaction<'static, Postgres>,
        plan: &Plan,
    ) -> Result<PruneReport, StoreError> {
        let mut report = PruneReport {
            checkpoints: plan.report.checkpoints.clone(),
            ..Default::default()
        };
        if !plan.threads.is_empty() {
            query("DELETE FROM checkpoints WHERE thread_id = ANY($1)")
                .bind(&plan.threads)
                .execute(&mut **tx)
                .await
                .map_err(err)?;
            report.blobs += query("DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1)")
                .bind(&plan.threads)
                .execute(&mut **tx)
                .await
                .map_err(err)?
                .rows_affected();
            report.writes += query("DELETE FROM checkpoint_writes WHERE thread_id = ANY($1)")
                .bind(&plan.threads)
                .execute(&mut **tx)
                .await
                .map_err(err)?
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
            .execute(&mut **tx)
            .await
            .map_err(err)?;
            report.writes += query(
                "DELETE FROM checkpoint_writes WHERE (thread_id, checkpoint_ns) IN \
                 (SELECT * FROM unnest($1::text[], $2::text[]))",
            )
            .bind(&t)
            .bind(&n)
            .execute(&mut **tx)
            .await
            .map_err(err)?
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
            .execute(&mut **tx)
            .await
            .map_err(err)?
            .rows_affected();
            query(
                "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) IN \
                 (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))",
            )
            .bind(&t)
            .bind(&n)
            .bind(&i)
            .execute(&mut **tx)
            .await
            .map_err(err)?;
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
            .execute(&mut **tx)
            .await
            .map_err(err)?
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
            .execute(&mut **tx)
            .await
            .map_err(err)?
            .rows_affected();
        }
        Ok(report)
    }
}

// ---------------------------------------------------------------------------------------------
// Cross-database copy

/// `(task_id, task_path, writes)` of one `put_writes` call.
type Batch = (String, String, Vec<(String, Decoded)>);

fn is_special(channel: &str) -> bool {
    WRITES_IDX_MAP.iter().any(|(c, _)| *c == channel)
}

/// The `put_writes` batches that store one checkpoint's writes again with the same `idx`.
///
/// Writes are grouped by `(task_id, task_path)`. A regular write must stand at the position
/// equal to its idx, so the gaps Python's batches left (positions taken by special writes)
/// are filled with one of the task's special writes, which gets its fixed negative idx
/// wherever it stands (a repeat of it is the same row). A gap with no special write to fill it
/// cannot be reproduced: an error, before anything is written.
fn write_batches(checkpoint_id: &str, writes: &[PendingWrite]) -> Result<Vec<Batch>, StoreError> {
    let mut groups: Vec<((&str, &str), Vec<&PendingWrite>)> = Vec::new();
    for w in writes {
        let key = (w.task_id.as_str(), w.task_path.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(w),
            None => groups.push((key, vec![w])),
        }
    }
    let unreproducible = |task: &str, what: String| {
        StoreError::InvalidInput(format!(
            "checkpoint {checkpoint_id}, task {task}: {what}; its writes cannot be stored again \
             with the same idx"
        ))
    };
    let mut out = Vec::new();
    for ((task_id, task_path), group) in groups {
        let specials: Vec<&PendingWrite> = group
            .iter()
            .copied()
            .filter(|w| is_special(&w.channel))
            .collect();
        let mut regular: BTreeMap<i64, &PendingWrite> = BTreeMap::new();
        for w in &group {
            if is_special(&w.channel) {
                if w.idx != write_idx(&w.channel, 0) {
                    return Err(unreproducible(
                        task_id,
                        format!("a {} write has idx {}", w.channel, w.idx),
                    ));
                }
            } else if w.idx < 0 || regular.insert(w.idx, w).is_some() {
                return Err(unreproducible(
                    task_id,
                    format!("a regular write has idx {}", w.idx),
                ));
            }
        }
        let len = regular.keys().next_back().map_or(0, |m| *m as usize + 1);
        let mut batch: Vec<(String, Decoded)> = Vec::with_capacity(len + specials.len());
        let mut filled = false;
        for position in 0..len {
            let w = match regular.get(&(position as i64)) {
                Some(w) => *w,
                None => {
                    let Some(first) = specials.first() else {
                        return Err(unreproducible(
                            task_id,
                            format!("nothing stands at idx {position}"),
                        ));
                    };
                    filled = true;
                    first
                }
            };
            batch.push((w.channel.clone(), w.value.clone()));
        }
        for (i, w) in specials.iter().enumerate() {
            if !(filled && i == 0) {
                batch.push((w.channel.clone(), w.value.clone()));
            }
        }
        out.push((task_id.to_owned(), task_path.to_owned(), batch));
    }
    Ok(out)
}

/// Copy the thread `source` of one database to the thread `target` of another (or the same)
/// database, through the public read and write operations: every checkpoint of every
/// namespace is `put` oldest first (with all its channel versions as new versions), then its
/// pending writes are `put_writes` in batches that reproduce their stored `idx`. Ids, parents,
/// metadata, values and writes are unchanged; the rows are written in the target's own format
/// (SQLite ↔ Postgres).
///
/// `target` must hold no checkpoint. Everything is read and checked first, then written with
/// one [`CheckpointSaver::put_batch`]: one transaction on the destination, so a failed write,
/// a killed process or a dropped connection leaves no partial copy behind.
/// Writes stored without a checkpoint row are not copied (the read side never returns them).
pub async fn copy_thread_between(
    from: &dyn CheckpointStore,
    to: &dyn CheckpointSaver,
    source: &str,
    target: &str,
) -> Result<CopyReport, StoreError> {
    let probe = ListQuery {
        limit: Some(1),
        ..ListQuery::thread(target)
    };
    if !to.list_headers(&probe).await?.is_empty() {
        return Err(not_empty(target));
    }
    let tuples = from.list_tuples(&ListQuery::thread(source)).await?;
    // Everything that can be refused is checked before the first write.
    let mut batches = Vec::with_capacity(tuples.len());
    for t in &tuples {
        batches.push(write_batches(&t.header.checkpoint_id, &t.pending_writes)?);
    }
    let metadata: Vec<serde_json::Map<String, serde_json::Value>> = tuples
        .iter()
        .map(|t| match &t.header.metadata {
            serde_json::Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        })
        .collect();
    // Newest first as listed: put oldest first, as the run did.
    let puts: Vec<PutRequest<'_>> = tuples
        .iter()
        .zip(&metadata)
        .rev()
        .map(|(t, metadata)| PutRequest {
            thread_id: target,
            checkpoint_ns: &t.header.checkpoint_ns,
            parent_checkpoint_id: t.header.parent_checkpoint_id.as_deref(),
            checkpoint: &t.checkpoint,
            metadata,
            new_versions: &t.checkpoint.channel_versions,
        })
        .collect();
    let mut writes = Vec::new();
    let mut report = CopyReport::default();
    for (t, list) in tuples.iter().zip(&batches).rev() {
        let h = &t.header;
        for (task_id, task_path, batch) in list {
            writes.push(WriteBatch {
                thread_id: target,
                checkpoint_ns: &h.checkpoint_ns,
                checkpoint_id: &h.checkpoint_id,
                task_id,
                task_path,
                writes: batch,
            });
        }
        report.writes += t.pending_writes.len() as u64;
    }
    report.checkpoints = puts.len() as u64;
    to.put_batch(&puts, &writes).await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ns: &str, id: &str, parent: Option<&str>, root: Option<&str>) -> CpRow {
        CpRow {
            thread: "t".into(),
            ns: ns.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            v: Some(4),
            root: root.map(Into::into),
            run_id: None,
            versions: vec![("a".into(), format!("v{id}"))],
        }
    }

    #[test]
    fn keep_latest_plan() {
        let mut snap = Snapshot {
            rows: vec![
                row("", "1", None, None),
                row("", "2", Some("1"), None),
                row("", "3", Some("2"), None),
                // A call started from root checkpoint 2 (deleted): goes entirely.
                row("sub:x", "5", None, Some("2")),
                // A call started from the kept head: keeps its latest.
                row("sub:y", "6", None, Some("3")),
                row("sub:y", "7", Some("6"), Some("3")),
                // A persistent subgraph (no ':'): keeps its latest.
                row("persist", "8", None, Some("1")),
                row("persist", "9", Some("8"), Some("2")),
            ],
            ..Default::default()
        };
        snap.writes
            .insert(("t".into(), "".into(), "1".into()), (3, false));
        snap.writes
            .insert(("t".into(), "".into(), "3".into()), (2, false));
        snap.writes
            .insert(("t".into(), "sub:x".into(), "zz".into()), (4, false));
        for (ns, id) in [
            ("", "1"),
            ("", "2"),
            ("", "3"),
            ("sub:x", "5"),
            ("persist", "8"),
        ] {
            snap.blobs
                .insert(("t".into(), ns.into(), "a".into(), format!("v{id}")));
        }
        let p = plan(&snap, &["t".into()], &Select::KeepLatest);
        let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(ids, ["1", "2", "8", "5", "6"]);
        assert_eq!(p.namespaces, [("t".to_string(), "sub:x".to_string())]);
        assert_eq!(p.report.writes, 3 + 4);
        assert_eq!(p.report.blobs, 4); // v1, v2, v5 (whole ns), v8
        let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(cleared, ["3", "9", "7"]);
    }

    #[test]
    fn pre_v4_head_keeps_parent_with_sends() {
        let mut head = row("", "2", Some("1"), None);
        head.v = Some(3);
        let mut snap = Snapshot {
            rows: vec![
                row("", "0", None, None),
                row("", "1", Some("0"), None),
                head,
            ],
            ..Default::default()
        };
        snap.writes
            .insert(("t".into(), "".into(), "1".into()), (1, true));
        let p = plan(&snap, &["t".into()], &Select::KeepLatest);
        let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(ids, ["0"]);
        let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(cleared, ["1"]);
    }

    #[test]
    fn batches_reproduce_idx() {
        let w = |task: &str, idx: i64, channel: &str| PendingWrite {
            task_id: task.into(),
            task_path: String::new(),
            idx,
            channel: channel.into(),
            type_tag: "null".into(),
            value: Decoded::Null,
        };
        let writes = vec![
            w("a", -4, "__resume__"),
            w("a", -3, "__interrupt__"),
            w("a", 1, "x"),
            w("a", 3, "y"),
            w("b", 0, "z"),
        ];
        let out = write_batches("c", &writes).unwrap();
        assert_eq!(out.len(), 2);
        for (task, _, batch) in &out {
            for (pos, (channel, _)) in batch.iter().enumerate() {
                let idx = write_idx(channel, pos);
                assert!(writes
                    .iter()
                    .any(|x| &x.task_id == task && x.idx == idx && &x.channel == channel));
            }
        }
        assert!(write_batches("c", &[w("a", 1, "x")]).is_err());
    }
}
