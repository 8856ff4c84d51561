//! Retention across a database (backend-neutral): what a measured prune removes from each
//! thread, counted from the plan and the stored lengths its snapshot read, and what a VACUUM
//! gave back.
//!
//! A measured prune plans [`RETAIN_CHUNK`] threads at a time inside its one transaction, so
//! memory holds one chunk's rows however many threads are pruned. Bytes are counted as the
//! storage report counts them (`docs/storage.md`): the stored length of each checkpoint's
//! document and metadata, of each write's value and of each blob's value.

use super::plan::{Plan, Select, Snapshot};
use super::PruneStrategy;
use std::collections::{BTreeMap, HashSet};

/// Threads planned (and deleted) at a time inside a measured prune's one transaction.
pub(crate) const RETAIN_CHUNK: usize = 500;

/// What a measured prune removes from one thread (or, in a dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ThreadPrune {
    /// Thread id.
    pub thread_id: String,
    /// Checkpoints that go (all namespaces).
    pub checkpoints: u64,
    /// Checkpoints that stay.
    pub kept: u64,
    /// Pending-write rows that go.
    pub writes: u64,
    /// Blob rows that go (none on LangGraph's SQLite schema).
    pub blobs: u64,
    /// The bytes of all of them as stored (documents, metadata, write and blob values).
    pub bytes: u64,
}

/// What a VACUUM gave back: SQLite's `page_count × page_size` (the file's size), Postgres's
/// `pg_total_relation_size` of the saver's tables summed, before and after.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VacuumReport {
    /// Bytes before.
    pub bytes_before: u64,
    /// Bytes after.
    pub bytes_after: u64,
}

/// What a measured prune selects in each thread: `keep_last` (≥ 1) checkpoints per namespace
/// along the head's lineage (`KeepLatest`), or everything (`Delete`).
pub(crate) fn select(strategy: PruneStrategy, keep_last: usize) -> Select<'static> {
    match strategy {
        PruneStrategy::Delete => Select::Delete,
        PruneStrategy::KeepLatest => Select::KeepLatest(keep_last.max(1)),
    }
}

/// Per thread of `threads` (in their order), what `plan` removes, measured with the lengths
/// `snap` read: the checkpoints it lists, the writes of whole threads, of whole namespaces and
/// of single checkpoints that go, and the blob rows it deletes (`Delete`: every blob of the
/// thread). The three-table store adds its own blob rows afterwards ([`ThreadPrune::blobs`]).
pub(crate) fn tally(snap: &Snapshot, plan: &Plan, threads: &[String]) -> Vec<ThreadPrune> {
    let mut by: BTreeMap<&str, ThreadPrune> = BTreeMap::new();
    for t in threads {
        by.entry(t.as_str()).or_insert_with(|| ThreadPrune {
            thread_id: t.clone(),
            ..Default::default()
        });
    }
    let mut rows: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &snap.rows {
        *rows.entry(r.thread.as_str()).or_default() += 1;
    }
    for key in &plan.report.checkpoints {
        if let Some(e) = by.get_mut(key.0.as_str()) {
            e.checkpoints += 1;
            e.bytes += snap.cp_bytes.get(key).copied().unwrap_or(0);
        }
    }
    let whole: HashSet<&str> = plan.threads.iter().map(String::as_str).collect();
    let spaces: HashSet<(&str, &str)> = plan
        .namespaces
        .iter()
        .map(|(t, n)| (t.as_str(), n.as_str()))
        .collect();
    let single: HashSet<(&str, &str, &str)> = plan
        .checkpoints
        .iter()
        .map(|(t, n, i)| (t.as_str(), n.as_str(), i.as_str()))
        .collect();
    for (key @ (t, n, i), (count, _)) in &snap.writes {
        let goes = whole.contains(t.as_str())
            || spaces.contains(&(t.as_str(), n.as_str()))
            || single.contains(&(t.as_str(), n.as_str(), i.as_str()));
        if let (true, Some(e)) = (goes, by.get_mut(t.as_str())) {
            e.writes += count;
            e.bytes += snap.write_bytes.get(key).copied().unwrap_or(0);
        }
    }
    let freed: HashSet<_> = plan.blobs.iter().collect();
    for b in &snap.blobs {
        if whole.contains(b.0.as_str()) || freed.contains(b) {
            if let Some(e) = by.get_mut(b.0.as_str()) {
                e.blobs += 1;
                e.bytes += snap.blob_bytes.get(b).copied().unwrap_or(0);
            }
        }
    }
    threads
        .iter()
        .filter_map(|t| by.remove(t.as_str()))
        .map(|mut e| {
            let all = rows.get(e.thread_id.as_str()).copied().unwrap_or(0);
            e.kept = all.saturating_sub(e.checkpoints);
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::plan::{plan, CpRow};
    use super::*;

    fn row(thread: &str, ns: &str, id: &str, parent: Option<&str>) -> CpRow {
        CpRow {
            thread: thread.into(),
            ns: ns.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            v: Some(4),
            root: None,
            run_id: None,
            versions: vec![("a".into(), format!("v{id}"))],
            stored: Vec::new(),
            delta: Vec::new(),
        }
    }

    #[test]
    fn tally_counts_what_the_plan_removes_per_thread() {
        let mut snap = Snapshot {
            rows: vec![
                row("a", "", "1", None),
                row("a", "", "2", Some("1")),
                row("a", "", "3", Some("2")),
                row("b", "", "7", None),
            ],
            ..Default::default()
        };
        let key = |t: &str, i: &str| (t.to_owned(), String::new(), i.to_owned());
        for (t, i, b) in [
            ("a", "1", 10),
            ("a", "2", 20),
            ("a", "3", 30),
            ("b", "7", 70),
        ] {
            snap.cp_bytes.insert(key(t, i), b);
        }
        snap.writes.insert(key("a", "1"), (2, false));
        snap.write_bytes.insert(key("a", "1"), 5);
        snap.writes.insert(key("a", "3"), (1, false));
        snap.write_bytes.insert(key("a", "3"), 7);
        for (t, i) in [("a", "1"), ("a", "2"), ("a", "3")] {
            let b = (t.to_owned(), String::new(), "a".to_owned(), format!("v{i}"));
            snap.blob_bytes.insert(b.clone(), 100);
            snap.blobs.insert(b);
        }
        let threads = ["a".to_owned(), "b".to_owned()];
        let p = plan(&snap, &threads, &select(PruneStrategy::KeepLatest, 2));
        let t = tally(&snap, &p, &threads);
        assert_eq!(
            t[0],
            ThreadPrune {
                thread_id: "a".into(),
                checkpoints: 1,
                kept: 2,
                writes: 2,
                blobs: 1,
                bytes: 10 + 5 + 100,
            }
        );
        assert_eq!((t[1].checkpoints, t[1].kept, t[1].bytes), (0, 1, 0));
        let p = plan(&snap, &threads, &select(PruneStrategy::Delete, 1));
        let t = tally(&snap, &p, &threads);
        assert_eq!((t[0].checkpoints, t[0].kept, t[0].writes), (3, 0, 3));
        assert_eq!((t[0].blobs, t[0].bytes), (3, 60 + 12 + 300));
        assert_eq!((t[1].checkpoints, t[1].bytes), (1, 70));
    }
}
