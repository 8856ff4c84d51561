//! Decide inside the transaction (backend-neutral): a thread chosen for a prune carries the
//! [`Mark`] it had when it was judged (by age and status, outside any transaction); the prune
//! reads the mark again inside its writing transaction — SQLite under the write lock, Postgres
//! with the saver's tables locked against inserts — and skips the thread when it differs, so a
//! thread LangGraph wrote to after it was judged is never pruned on a stale judgment.
//!
//! Writes run in short transactions ([`Batches`]): a batch commits once it has held the lock
//! for [`BATCH_BUDGET`], so a program writing beside Flashback (Python's `sqlite3` waits 5 s
//! for a lock by default) never waits long. A dry run reads everything in one read-only
//! transaction, so its preview is exact.

use super::retain::ThreadPrune;
use super::PruneReport;
use crate::StoreError;
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long one batch may hold the write lock before it commits (checked between groups of
/// threads, so one batch can run over by one group).
pub(crate) const BATCH_BUDGET: Duration = Duration::from_millis(150);

/// How many stored bytes one batch may delete before it commits: a commit writes every page
/// the batch freed (SQLite appends them to the WAL), so its cost follows the bytes, which
/// the time spent before it does not show.
pub(crate) const BATCH_BYTES: u64 = 16_000_000;

/// How long a SQLite prune leaves the lock free between two batches. SQLite has no queue of
/// waiters: a program waiting for the lock polls it (the default busy handler, which
/// Python's `sqlite3` uses, sleeps at most 100 ms between tries), so a pause longer than that
/// lets every waiting writer in before the next batch.
pub(crate) const SQLITE_PAUSE: Duration = Duration::from_millis(120);

/// What a thread looked like: its checkpoint rows and its other rows (pending writes; on
/// Postgres also blobs), counted, with the newest checkpoint id and the newest row versions
/// (SQLite: the largest `rowid`, which every insert and `INSERT OR REPLACE` raises; Postgres:
/// the largest `xmin`, which every insert and upsert sets). Any checkpoint, blob or write
/// LangGraph puts changes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mark {
    pub(crate) checkpoints: i64,
    pub(crate) newest: String,
    /// Pending writes (and, on Postgres, blobs).
    pub(crate) writes: i64,
    /// The newest row version of the checkpoints and of the other rows.
    pub(crate) version: (i64, i64),
}

impl Mark {
    /// No row of the thread is left.
    pub fn is_gone(&self) -> bool {
        self.checkpoints == 0 && self.writes == 0
    }

    /// The number of checkpoint rows (all namespaces): a listing that counted another
    /// number was read before a write this mark includes.
    pub fn checkpoints(&self) -> u64 {
        u64::try_from(self.checkpoints).unwrap_or(0)
    }
}

/// A thread to prune, with the [`Mark`] it had when it was chosen (`None`: prune it as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    /// Thread id.
    pub thread_id: String,
    /// Its mark when it was judged.
    pub mark: Option<Mark>,
}

/// Why a chosen thread was left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum SkipReason {
    /// Checkpoints or writes were put (or removed) after it was judged: the judgment is stale.
    Changed,
    /// Its rows were gone when the prune reached it.
    Gone,
}

impl SkipReason {
    /// The reason for people.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Changed => "written to after it was chosen",
            SkipReason::Gone => "gone before the prune reached it",
        }
    }
}

/// A prune of threads named by id (no judgment to guard), in transactions of a group of
/// threads each: `job` prunes a group in one transaction. The group grows while a
/// transaction takes under half of [`BATCH_BUDGET`] and shrinks (to one thread) while one
/// takes longer; a pause of [`SQLITE_PAUSE`] after each lets a waiting SQLite writer in. The
/// reports are merged; a failure says how many threads had been pruned and committed.
pub(crate) async fn prune_in_groups<F, Fut>(
    threads: Vec<String>,
    mut job: F,
) -> Result<PruneReport, StoreError>
where
    F: FnMut(Vec<String>) -> Fut,
    Fut: Future<Output = Result<PruneReport, StoreError>>,
{
    let mut out = PruneReport::default();
    let (mut at, mut size) = (0, 1usize);
    while at < threads.len() {
        let group: Vec<String> = threads[at..(at + size).min(threads.len())].to_vec();
        let started = Instant::now();
        let report = job(group.clone()).await.map_err(|e| {
            if at == 0 {
                return e;
            }
            partly_done(
                e,
                format!(
                    "after {at} of {} threads were pruned and committed; the database is \
                     consistent: run the prune again for the rest",
                    threads.len()
                ),
            )
        })?;
        at += group.len();
        out.checkpoints.extend(report.checkpoints);
        out.writes += report.writes;
        out.blobs += report.blobs;
        out.parents_cleared += report.parents_cleared;
        let took = started.elapsed();
        if took < BATCH_BUDGET / 2 {
            size = size.saturating_mul(2).min(super::retain::RETAIN_CHUNK);
        } else if took > BATCH_BUDGET {
            size = (size / 2).max(1);
        }
        if at < threads.len() {
            tokio::time::sleep(SQLITE_PAUSE).await;
        }
    }
    out.checkpoints.sort();
    Ok(out)
}

/// `e`, which stopped a prune after some of it was committed, saying so (`note`): a timeout
/// stays one (worth trying again), anything else becomes a query error.
fn partly_done(e: StoreError, note: String) -> StoreError {
    match e {
        StoreError::Timeout {
            server,
            after,
            during,
        } => StoreError::Timeout {
            server,
            after,
            during: Some(format!(
                "{} ({note})",
                during.as_deref().unwrap_or("pruning")
            )),
        },
        e => StoreError::Query(format!("{e} ({note})")),
    }
}

/// The verdict on a guarded thread given its mark read inside the writing transaction.
pub(crate) fn verdict(guard: &Guarded, now: &Mark) -> Option<SkipReason> {
    let seen = guard.mark.as_ref()?;
    if seen == now {
        None
    } else if now.is_gone() {
        Some(SkipReason::Gone)
    } else {
        Some(SkipReason::Changed)
    }
}

/// A measured prune's outcome: per thread (in the order given) what went or why it was
/// skipped, and how the writing transactions held the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneRun {
    /// Per thread, in the order given.
    pub threads: Vec<ThreadPrune>,
    /// Writing transactions committed (0 for a dry run).
    pub transactions: u32,
    /// The longest a writing transaction held the lock, in milliseconds.
    pub longest_ms: u64,
}

/// The bookkeeping of a batched, guarded prune: which threads went into which transaction,
/// how long each held the lock, and the outcome in the order given.
pub(crate) struct Batches<'a> {
    guards: &'a [Guarded],
    next: usize,
    done: HashMap<String, ThreadPrune>,
    pending: Vec<ThreadPrune>,
    started: Option<Instant>,
    groups: usize,
    bytes: u64,
    dry_run: bool,
    run: PruneRun,
}

impl<'a> Batches<'a> {
    pub(crate) fn new(guards: &'a [Guarded], dry_run: bool) -> Self {
        Batches {
            guards,
            next: 0,
            done: HashMap::new(),
            pending: Vec::new(),
            started: None,
            groups: 0,
            bytes: 0,
            dry_run,
            run: PruneRun::default(),
        }
    }

    /// Whether threads are left.
    pub(crate) fn more(&self) -> bool {
        self.next < self.guards.len()
    }

    /// A transaction begins (the lock is held from now).
    pub(crate) fn begin(&mut self) {
        self.started = Some(Instant::now());
        self.groups = 0;
        self.bytes = 0;
    }

    /// The next group of at most `n` threads, while the transaction is within its budgets of
    /// time and bytes (a dry run has none: one transaction reads everything).
    pub(crate) fn group(&mut self, n: usize) -> Option<&'a [Guarded]> {
        let within = self.dry_run
            || self.groups == 0
            || (self.bytes < BATCH_BYTES
                && self.started.is_none_or(|t| t.elapsed() < BATCH_BUDGET));
        if !within || !self.more() {
            return None;
        }
        let end = (self.next + n.max(1)).min(self.guards.len());
        let group = &self.guards[self.next..end];
        self.next = end;
        self.groups += 1;
        Some(group)
    }

    /// Split `group` by verdict, given each thread's mark now (a thread without a guard
    /// always goes on); the skipped ones are recorded. Returns the ids to prune.
    pub(crate) fn judge(
        &mut self,
        group: &[Guarded],
        marks: &HashMap<String, Mark>,
    ) -> Vec<String> {
        let mut go = Vec::with_capacity(group.len());
        for g in group {
            let now = marks.get(&g.thread_id).cloned().unwrap_or_default();
            match verdict(g, &now) {
                None => go.push(g.thread_id.clone()),
                Some(reason) => self.pending.push(ThreadPrune {
                    thread_id: g.thread_id.clone(),
                    skipped: Some(reason),
                    ..Default::default()
                }),
            }
        }
        go
    }

    /// What the transaction removed from the threads it pruned.
    pub(crate) fn pruned(&mut self, tallies: Vec<ThreadPrune>) {
        self.bytes += tallies.iter().map(|t| t.bytes).sum::<u64>();
        self.pending.extend(tallies);
    }

    /// The transaction committed (or, for a dry run, was rolled back after reading).
    pub(crate) fn committed(&mut self) {
        if let Some(t) = self.started.take() {
            if !self.dry_run {
                self.run.transactions += 1;
                let ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.run.longest_ms = self.run.longest_ms.max(ms);
            }
        }
        for p in self.pending.drain(..) {
            self.done.insert(p.thread_id.clone(), p);
        }
    }

    /// A transaction failed and was rolled back: the error, saying what had been committed.
    pub(crate) fn failed(&self, e: crate::StoreError) -> crate::StoreError {
        let committed = self.done.len();
        if committed == 0 || self.dry_run {
            return e;
        }
        let note = format!(
            "after {committed} of {} threads were pruned and committed in {} transactions; \
             the database is consistent: run the prune again for the rest",
            self.guards.len(),
            self.run.transactions
        );
        partly_done(e, note)
    }

    /// The outcome, in the order given.
    pub(crate) fn finish(mut self) -> PruneRun {
        let guards = self.guards;
        self.run.threads = guards
            .iter()
            .map(|g| {
                self.done
                    .remove(&g.thread_id)
                    .unwrap_or_else(|| ThreadPrune {
                        thread_id: g.thread_id.clone(),
                        ..Default::default()
                    })
            })
            .collect();
        self.run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(checkpoints: i64, version: i64) -> Mark {
        Mark {
            checkpoints,
            newest: format!("id{checkpoints}"),
            writes: 1,
            version: (version, 0),
        }
    }

    #[test]
    fn a_thread_is_skipped_when_its_mark_changed_or_it_is_gone() {
        let g = Guarded {
            thread_id: "t".into(),
            mark: Some(mark(3, 9)),
        };
        assert_eq!(verdict(&g, &mark(3, 9)), None);
        assert_eq!(verdict(&g, &mark(4, 10)), Some(SkipReason::Changed));
        assert_eq!(verdict(&g, &mark(3, 10)), Some(SkipReason::Changed));
        assert_eq!(verdict(&g, &Mark::default()), Some(SkipReason::Gone));
        let unguarded = Guarded {
            thread_id: "t".into(),
            mark: None,
        };
        assert_eq!(verdict(&unguarded, &mark(5, 1)), None);
    }

    #[tokio::test]
    async fn groups_grow_while_quick_and_the_reports_merge() {
        let threads: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let mut sizes = Vec::new();
        let report = prune_in_groups(threads, |group| {
            sizes.push(group.len());
            async move {
                Ok(PruneReport {
                    checkpoints: group
                        .iter()
                        .rev()
                        .map(|t| (t.clone(), String::new(), "1".to_owned()))
                        .collect(),
                    writes: group.len() as u64,
                    ..Default::default()
                })
            }
        })
        .await
        .expect("pruned");
        assert_eq!(sizes, [1, 2, 4, 3]);
        assert_eq!(report.writes, 10);
        let ids: Vec<&str> = report.checkpoints.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            ids,
            ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
        );

        let mut calls = 0;
        let e = prune_in_groups(vec!["a".into(), "b".into()], |_| {
            calls += 1;
            let fail = calls == 2;
            async move {
                if fail {
                    Err(StoreError::Query("disk full".into()))
                } else {
                    Ok(PruneReport::default())
                }
            }
        })
        .await
        .expect_err("the second group fails");
        assert!(
            e.to_string()
                .contains("after 1 of 2 threads were pruned and committed"),
            "{e}"
        );
    }

    #[test]
    fn a_prune_cut_off_by_a_timeout_stays_a_timeout() {
        let timeout = StoreError::Timeout {
            server: "db:5432/app".into(),
            after: std::time::Duration::from_secs(30),
            during: Some("pruning 3 threads".into()),
        };
        let e = partly_done(timeout, "after 1 of 3 threads were pruned".into());
        assert_eq!(e.code(), "timeout");
        assert_eq!(
            e.to_string(),
            "Postgres at db:5432/app did not answer within 30 s while pruning 3 threads (after \
             1 of 3 threads were pruned)"
        );
        let e = partly_done(StoreError::Query("disk full".into()), "after 1".into());
        assert_eq!(e.code(), "query");
        assert!(e.to_string().ends_with("disk full (after 1)"), "{e}");
    }

    #[test]
    fn batches_keep_the_order_given_and_count_transactions() {
        let guards: Vec<Guarded> = ["a", "b", "c"]
            .iter()
            .map(|t| Guarded {
                thread_id: (*t).into(),
                mark: Some(mark(1, 1)),
            })
            .collect();
        let mut b = Batches::new(&guards, false);
        let mut marks = HashMap::new();
        marks.insert("a".to_owned(), mark(1, 1));
        marks.insert("b".to_owned(), mark(2, 2));
        b.begin();
        let g = b.group(2).unwrap();
        let go = b.judge(g, &marks);
        assert_eq!(go, vec!["a".to_owned()]);
        b.pruned(vec![ThreadPrune {
            thread_id: "a".into(),
            checkpoints: 1,
            ..Default::default()
        }]);
        b.committed();
        b.begin();
        let g = b.group(2).unwrap();
        assert_eq!(b.judge(g, &marks), Vec::<String>::new());
        assert!(b.group(2).is_none());
        b.committed();
        let run = b.finish();
        assert_eq!(run.transactions, 2);
        let got: Vec<_> = run
            .threads
            .iter()
            .map(|t| (t.thread_id.as_str(), t.checkpoints, t.skipped))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", 1, None),
                ("b", 0, Some(SkipReason::Changed)),
                ("c", 0, Some(SkipReason::Gone)),
            ]
        );
    }
}
