//! The storage report's reads (`report::measure`) on SQLite: it reports its progress per
//! thread, stops between threads when cancelled, and never writes.

use flashback_storage::report::{measure, Progress, Scope, CANCELLED};
use flashback_storage::StoreError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

#[derive(Default)]
struct Seen {
    steps: AtomicU64,
    last_total: AtomicU64,
    cancel_after: AtomicU64,
    cancel: AtomicBool,
}

impl Progress for Seen {
    fn step(&self, _done: u64, total: u64, _label: &str) {
        let n = self.steps.fetch_add(1, Ordering::SeqCst) + 1;
        self.last_total.store(total, Ordering::SeqCst);
        if self.cancel.load(Ordering::SeqCst) && n >= self.cancel_after.load(Ordering::SeqCst) {
            self.cancel_after.store(0, Ordering::SeqCst);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst) && self.cancel_after.load(Ordering::SeqCst) == 0
    }
}

fn scope() -> Scope {
    Scope {
        thread_id: None,
        top: 5,
    }
}

#[tokio::test]
async fn progress_per_thread_cancel_between_threads_and_nothing_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db.sqlite");
    std::fs::copy(fixture(), &path).expect("copy");
    let before = std::fs::read(&path).expect("read");
    let location = path.to_str().expect("utf-8");
    let store = flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open");

    let seen = Arc::new(Seen::default());
    let report = measure(location, store.schema(), scope(), seen.clone())
        .await
        .expect("report");
    assert_eq!(report.thread_count, 12);
    // One step per thread, and the last one.
    assert_eq!(seen.steps.load(Ordering::SeqCst), 13);
    assert_eq!(seen.last_total.load(Ordering::SeqCst), 12);

    let cancel = Arc::new(Seen::default());
    cancel.cancel.store(true, Ordering::SeqCst);
    cancel.cancel_after.store(3, Ordering::SeqCst);
    let e = measure(location, store.schema(), scope(), cancel.clone())
        .await
        .expect_err("cancelled");
    assert!(matches!(&e, StoreError::Query(m) if m == CANCELLED), "{e}");
    assert_eq!(
        cancel.steps.load(Ordering::SeqCst),
        3,
        "stopped between threads"
    );

    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "nothing written"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "nothing created beside the file: {names:?}");
}

#[tokio::test]
async fn every_thread_is_measured_across_batches_including_an_empty_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db.sqlite");
    std::fs::copy(fixture(), &path).expect("copy");
    let c = rusqlite::Connection::open(&path).expect("sqlite");
    // 1 200 more one-checkpoint threads (more than two batches of ids), one with the id ''.
    c.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) \
         INSERT INTO checkpoints SELECT printf('t%04d', i), checkpoint_ns, checkpoint_id, \
           parent_checkpoint_id, type, checkpoint, metadata FROM n, \
           (SELECT * FROM checkpoints WHERE thread_id = 'chat-tools' LIMIT 1); \
         INSERT INTO checkpoints SELECT '', checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
           type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'chat-tools' LIMIT 1;",
    )
    .expect("threads");
    drop(c);
    let location = path.to_str().expect("utf-8");
    let store = flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open");
    let seen = Arc::new(Seen::default());
    let report = measure(location, store.schema(), scope(), seen.clone())
        .await
        .expect("report");
    assert_eq!(report.thread_count, 1213);
    assert_eq!(
        seen.steps.load(Ordering::SeqCst),
        1214,
        "every thread, then done"
    );
    assert_eq!(report.totals.checkpoints.count, 381 + 1201);
}
