//! Retention across a database (backend-neutral): what a measured prune removes from each
//! thread, counted from the plan and the stored lengths its snapshot read, and what a VACUUM
//! gave back.
//!
//! A measured prune plans a group of threads at a time (at most [`RETAIN_CHUNK`]), in short
//! writing transactions (`guard.rs`), so memory holds one group's rows however many threads
//! are pruned. Bytes are counted as the
//! storage report counts them (`docs/storage.md`): the stored length of each checkpoint's
//! document and metadata, of each write's value and of each blob's value.

use super::plan::{Plan, Select, Snapshot};
use super::PruneStrategy;
use std::collections::{BTreeMap, HashSet};

/// The most threads planned (and deleted) at a time by a measured prune.
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
    /// Why nothing was removed, when the thread was left alone (see [`super::guard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<super::SkipReason>,
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

/// What a VACUUM would do, read without writing: the bytes it rewrites and, on SQLite,
/// how long it stops every writer (all of it runs under the write lock).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VacuumPreview {
    /// The bytes it works through: SQLite's file (`page_count × page_size`), Postgres's
    /// saver tables.
    pub bytes: u64,
    /// Whether writers wait for it (SQLite's `VACUUM`; Postgres's plain `VACUUM ANALYZE`
    /// does not stop them).
    pub blocks_writers: bool,
    /// About how long it runs, in seconds (from [`SQLITE_VACUUM_BYTES_PER_SEC`]); 0 when
    /// writers do not wait.
    pub seconds: u64,
    /// Other programs with the file open now (pids, 0 when not known; SQLite on Linux, from
    /// `/proc/locks`); `None` when that cannot be known (Postgres: they are not stopped).
    pub open_elsewhere: Option<Vec<u32>>,
}

/// How fast SQLite's `VACUUM` rewrites a LangGraph file, for a preview's estimate (the file's
/// size divided by it). Measured: 37 MB/s for a 225 MB file in issue 28's report (6 s),
/// 200 MB/s on the project's 2-core machine with the file in the page cache; the estimate
/// takes the slower, so it does not promise a writer less waiting than it gets.
pub const SQLITE_VACUUM_BYTES_PER_SEC: u64 = 40_000_000;

impl VacuumPreview {
    /// A SQLite file of `bytes`, open elsewhere by `others` (as far as known).
    pub fn sqlite(bytes: u64, others: Option<Vec<u32>>) -> VacuumPreview {
        VacuumPreview {
            bytes,
            blocks_writers: true,
            seconds: bytes.div_ceil(SQLITE_VACUUM_BYTES_PER_SEC).max(1),
            open_elsewhere: others,
        }
    }

    /// Why a VACUUM is refused now (writers would wait for it and another program has the
    /// file open), in one line; `None` when it may run.
    pub fn refusal(&self) -> Option<String> {
        let pids = self.open_elsewhere.as_ref().filter(|p| !p.is_empty())?;
        if !self.blocks_writers {
            return None;
        }
        let named: Vec<String> = pids
            .iter()
            .filter(|p| **p != 0)
            .map(u32::to_string)
            .collect();
        let who = if named.is_empty() {
            "another program".to_owned()
        } else {
            format!("another program (pid {})", named.join(", "))
        };
        Some(format!(
            "VACUUM refused: {who} has the database open, and VACUUM stops every writer for \
             about {} s ({:.0} MB); a LangGraph program waits 5 s, then fails with \
             \"database is locked\". Stop it first, or force the VACUUM (--force-vacuum)",
            self.seconds,
            self.bytes as f64 / 1e6
        ))
    }
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
                skipped: None,
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
