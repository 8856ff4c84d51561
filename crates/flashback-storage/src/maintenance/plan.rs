//! The plan (backend-neutral): what a `prune` or `delete_for_runs` deletes, computed from the
//! rows read, so that a dry run reports exactly what a real run deletes.

use super::{PruneReport, PruneStrategy};
use crate::StoreError;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One checkpoint row, as much as planning needs.
#[derive(Debug, Clone)]
pub(crate) struct CpRow {
    pub(crate) thread: String,
    pub(crate) ns: String,
    pub(crate) id: String,
    pub(crate) parent: Option<String>,
    /// `checkpoint["v"]`, when it is an integer.
    pub(crate) v: Option<i64>,
    /// `metadata["parents"][""]`: the root checkpoint a subgraph call started from.
    pub(crate) root: Option<String>,
    /// `metadata["run_id"]` as text.
    pub(crate) run_id: Option<String>,
    /// `channel_versions` as the texts Postgres joins blobs on (empty on SQLite).
    pub(crate) versions: Vec<(String, String)>,
    /// The channels with a value stored in `channel_values`.
    pub(crate) stored: Vec<String>,
    /// The DeltaChannels this checkpoint shows signs of (metadata counters, snapshots).
    pub(crate) delta: Vec<String>,
}

impl CpRow {
    /// A row known by its keys and parent only: enough to plan `Delete` (whole threads).
    pub(crate) fn keys(thread: &str, ns: String, id: String, parent: Option<String>) -> CpRow {
        CpRow {
            thread: thread.to_owned(),
            ns,
            id,
            parent,
            v: None,
            root: None,
            run_id: None,
            versions: Vec::new(),
            stored: Vec::new(),
            delta: Vec::new(),
        }
    }
}

/// Per `(thread, ns, checkpoint_id)`: the number of write rows and whether one is a Send.
pub(crate) type WriteCounts = HashMap<(String, String, String), (u64, bool)>;
/// Blob keys `(thread, ns, channel, version)`.
pub(crate) type BlobKey = (String, String, String, String);
/// A checkpoint's key `(thread, ns, checkpoint_id)`.
pub(crate) type CpKey = (String, String, String);

/// Everything read about the threads concerned.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) rows: Vec<CpRow>,
    pub(crate) writes: WriteCounts,
    pub(crate) blobs: HashSet<BlobKey>,
    /// The bytes of each checkpoint row as stored (document + metadata), when measured.
    pub(crate) cp_bytes: HashMap<CpKey, u64>,
    /// The bytes of the write values per checkpoint key, when measured.
    pub(crate) write_bytes: HashMap<CpKey, u64>,
    /// The bytes of each blob row's value, when measured.
    pub(crate) blob_bytes: HashMap<BlobKey, u64>,
}

/// What to select for deletion.
pub(crate) enum Select<'a> {
    Delete,
    /// Per namespace the `n` (≥ 1) latest checkpoints along the head's lineage.
    KeepLatest(usize),
    Runs(&'a HashSet<String>),
    /// A checkpoint of namespace `ns` and every checkpoint descending from it, with the
    /// subgraph calls started from any of them.
    Branch {
        ns: &'a str,
        id: &'a str,
    },
}

/// What a maintenance operation was asked to do (both backends; built by the
/// [`SaverMaintenance`](super::SaverMaintenance) methods, carried out by `run_job`).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub enum Job {
    /// `delete_for_runs`.
    Runs(HashSet<String>),
    /// `prune`.
    Prune(Vec<String>, PruneStrategy),
    /// `delete_branch`, with the number of checkpoints it was judged with, if any.
    Branch {
        thread: String,
        ns: String,
        id: String,
        expect: Option<usize>,
    },
}

impl Job {
    pub(crate) fn branch(thread: &str, ns: &str, id: &str, expect: Option<usize>) -> Job {
        Job::Branch {
            thread: thread.to_owned(),
            ns: ns.to_owned(),
            id: id.to_owned(),
            expect,
        }
    }

    /// When `plan`, made inside the writing transaction, is not what the job was judged with
    /// (a branch that grew or shrank since it was previewed): the report of doing nothing.
    pub(crate) fn stale(&self, plan: &Plan, dry_run: bool) -> Option<PruneReport> {
        let skipped = match self {
            Job::Branch {
                expect: Some(n), ..
            } if plan.report.checkpoints.len() != *n => {
                if plan.report.checkpoints.is_empty() {
                    super::SkipReason::Gone
                } else {
                    super::SkipReason::Changed
                }
            }
            _ => return None,
        };
        Some(PruneReport {
            dry_run,
            skipped: Some(skipped),
            ..Default::default()
        })
    }

    /// The threads named outright (`delete_for_runs` finds its own in the database).
    pub(crate) fn threads(&self) -> Option<Vec<String>> {
        match self {
            Job::Runs(_) => None,
            Job::Prune(threads, _) => Some(check_threads(threads)),
            Job::Branch { thread, .. } => Some(vec![thread.clone()]),
        }
    }

    #[cfg(feature = "postgres")] // the Postgres timeouts say what was being done
    /// What the job does, for messages (`pruning 3 threads`).
    pub(crate) fn describe(&self) -> String {
        match self {
            Job::Runs(runs) => format!("deleting the checkpoints of {} runs", runs.len()),
            Job::Prune(threads, _) => format!("pruning {} threads", threads.len()),
            Job::Branch { thread, id, .. } => format!(
                "deleting the branch from checkpoint {} of thread {}",
                id.escape_debug(),
                thread.escape_debug()
            ),
        }
    }

    pub(crate) fn select(&self) -> Select<'_> {
        match self {
            Job::Runs(runs) => Select::Runs(runs),
            Job::Prune(_, PruneStrategy::Delete) => Select::Delete,
            Job::Prune(_, PruneStrategy::KeepLatest) => Select::KeepLatest(1),
            Job::Branch { ns, id, .. } => Select::Branch { ns, id },
        }
    }
}

#[cfg(feature = "postgres")] // the Postgres timeouts say what was being done
/// What copying a thread is called in messages.
pub(crate) fn copying(source: &str, target: &str) -> String {
    format!(
        "copying thread {} to {}",
        source.escape_debug(),
        target.escape_debug()
    )
}

/// The statements a plan runs, and the report it produces.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) report: PruneReport,
    /// Whole threads (strategy `Delete`).
    pub(crate) threads: Vec<String>,
    /// Whole namespaces `(thread, ns)` (subgraph calls).
    pub(crate) namespaces: Vec<(String, String)>,
    /// Single checkpoints `(thread, ns, id)` with their writes.
    pub(crate) checkpoints: Vec<(String, String, String)>,
    /// Kept checkpoints whose parent is cleared.
    pub(crate) parents: Vec<(String, String, String)>,
    /// Blob rows.
    pub(crate) blobs: Vec<BlobKey>,
}

impl Plan {
    pub(crate) fn is_empty(&self) -> bool {
        self.threads.is_empty()
            && self.namespaces.is_empty()
            && self.checkpoints.is_empty()
            && self.parents.is_empty()
            && self.blobs.is_empty()
    }
}

pub(crate) fn plan(snap: &Snapshot, threads: &[String], select: &Select<'_>) -> Plan {
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
        Select::Branch { ns, id } => {
            for (key, rows) in &by_ns {
                let gone = if key.1 == *ns {
                    descendants(rows, id)
                } else {
                    HashSet::new()
                };
                let stay = rows
                    .iter()
                    .map(|r| r.id.as_str())
                    .filter(|i| !gone.contains(i))
                    .collect();
                kept.insert(*key, stay);
            }
            // A subgraph call started from a checkpoint that goes, goes with it.
            for (key @ (thread, call_ns), rows) in &by_ns {
                let root_key = (*thread, *ns);
                let started_from_gone = rows.iter().any(|r| {
                    r.root.as_deref().is_some_and(|root| {
                        by_ns
                            .get(&root_key)
                            .is_some_and(|rs| rs.iter().any(|x| x.id == root))
                            && !kept.get(&root_key).is_some_and(|k| k.contains(root))
                    })
                });
                if ns.is_empty() && call_ns.contains(':') && started_from_gone {
                    calls.insert(*key);
                }
            }
        }
        _ => {
            let mut roots: HashMap<(&str, &str), Option<&str>> = HashMap::new();
            for (key @ (thread, ns), rows) in &by_ns {
                let Some(head) = rows.iter().max_by(|a, b| a.id.cmp(&b.id)) else {
                    continue;
                };
                let n = match select {
                    Select::KeepLatest(n) => *n,
                    _ => 1,
                };
                let (mut stay, oldest) = keep_lineage(rows, head, n);
                keep_delta_history(rows, oldest, &mut stay);
                if oldest.v.is_some_and(|v| v < 4) {
                    if let Some(p) = oldest.parent.as_deref() {
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
        if matches!(select, Select::Delete | Select::KeepLatest(_)) {
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

/// `id` and every row descending from it through parent pointers (nothing when `id` is not
/// among `rows`).
fn descendants<'a>(rows: &[&'a CpRow], id: &str) -> HashSet<&'a str> {
    let mut children: HashMap<&str, Vec<&'a str>> = HashMap::new();
    for r in rows {
        if let Some(p) = r.parent.as_deref() {
            children.entry(p).or_default().push(r.id.as_str());
        }
    }
    let mut gone = HashSet::new();
    let Some(start) = rows.iter().find(|r| r.id == id) else {
        return gone;
    };
    let mut todo = vec![start.id.as_str()];
    while let Some(cur) = todo.pop() {
        if gone.insert(cur) {
            if let Some(kids) = children.get(cur) {
                todo.extend(kids.iter().copied());
            }
        }
    }
    gone
}

/// The head and its ancestors, `n` in all (fewer when the lineage is shorter), with the
/// oldest of them.
fn keep_lineage<'a>(
    rows: &[&'a CpRow],
    head: &'a CpRow,
    n: usize,
) -> (HashSet<&'a str>, &'a CpRow) {
    let by_id: HashMap<&str, &CpRow> = rows.iter().map(|r| (r.id.as_str(), *r)).collect();
    let mut stay = HashSet::from([head.id.as_str()]);
    let mut oldest = head;
    while stay.len() < n {
        match oldest.parent.as_deref().and_then(|p| by_id.get(p).copied()) {
            Some(p) if stay.insert(p.id.as_str()) => oldest = p,
            _ => break,
        }
    }
    (stay, oldest)
}

/// DeltaChannel-safe `keep_latest`: a DeltaChannel's value at the head is rebuilt from the
/// nearest stored value on its parent chain plus the writes since, so the head's ancestors
/// (with their writes) stay back to the one where every DeltaChannel of the namespace has a
/// stored value; the parent of the oldest kept one is then cleared as usual.
fn keep_delta_history<'a>(rows: &[&'a CpRow], head: &'a CpRow, stay: &mut HashSet<&'a str>) {
    let mut need: HashSet<&str> = rows
        .iter()
        .flat_map(|r| r.delta.iter().map(String::as_str))
        .collect();
    if need.is_empty() {
        return;
    }
    let by_id: HashMap<&str, &CpRow> = rows.iter().map(|r| (r.id.as_str(), *r)).collect();
    let mut cur = Some(head);
    while let Some(r) = cur {
        for c in &r.stored {
            need.remove(c.as_str());
        }
        if need.is_empty() {
            break;
        }
        cur = r.parent.as_deref().and_then(|p| by_id.get(p).copied());
        if let Some(p) = cur {
            if !stay.insert(p.id.as_str()) {
                break;
            }
        }
    }
}

/// The metadata key whose keys name a graph's DeltaChannels.
pub(crate) const DELTA_COUNTERS: &str = "counters_since_delta_snapshot";

/// The DeltaChannels named by `metadata.counters_since_delta_snapshot`.
pub(crate) fn delta_counters(metadata: &serde_json::Value) -> Vec<String> {
    metadata
        .get(DELTA_COUNTERS)
        .and_then(|c| c.as_object())
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default()
}

/// `guards` without repeated threads (the first of each kept), in their order.
pub(crate) fn check_guards(guards: &[super::Guarded]) -> Vec<super::Guarded> {
    let mut seen = HashSet::new();
    guards
        .iter()
        .filter(|g| seen.insert(g.thread_id.as_str()))
        .cloned()
        .collect()
}

pub(crate) fn check_threads(thread_ids: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    thread_ids
        .iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

pub(crate) fn copy_args(source: &str, target: &str) -> Result<(), StoreError> {
    if source == target {
        return Err(StoreError::InvalidInput(format!(
            "copy_thread: source and target are the same thread {source:?}"
        )));
    }
    Ok(())
}

pub(crate) fn not_empty(target: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "copy_thread: the target thread {target:?} already holds checkpoints or writes; \
         copy into a new thread id (or delete it first)"
    ))
}

/// `metadata` fields planning needs: the root parent and the run id.
pub(crate) fn metadata_fields(metadata: &serde_json::Value) -> (Option<String>, Option<String>) {
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
    (root, run_id)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
