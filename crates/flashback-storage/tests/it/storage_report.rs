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

// A `langgraph dev` folder: the pickles' byte strings, summed here from the files themselves.

fn dev_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/py")
}

/// `[checkpoints, document bytes, metadata bytes, blobs, blob bytes, writes, write bytes]` of
/// the folder's three checkpoint pickles (of one thread: `only`), read with the codec's pickle
/// reader and walked here.
fn pickle_sums(only: Option<&str>) -> [u64; 7] {
    use flashback_codec::pickle::{loads, Limits, PyValue};
    let dir = dev_fixture().join(".langgraph_api");
    let load = |n: &str| {
        let bytes = std::fs::read(dir.join(n)).expect("read");
        loads(&bytes, &Limits::default()).expect("pickle")
    };
    let keep = |t: &PyValue| only.is_none_or(|o| t.as_str() == Some(o));
    let pair_len = |p: &PyValue| {
        p.as_seq().expect("pair")[1]
            .as_bytes()
            .expect("bytes")
            .len() as u64
    };
    let mut s = [0u64; 7];
    for (t, nss) in load(".langgraph_checkpoint.1.pckl")
        .as_items()
        .expect("dict")
    {
        if !keep(t) {
            continue;
        }
        for (_, cps) in nss.as_items().expect("dict") {
            for (_, saved) in cps.as_items().expect("dict") {
                let saved = saved.as_seq().expect("tuple");
                s[0] += 1;
                s[1] += pair_len(&saved[0]);
                s[2] += pair_len(&saved[1]);
            }
        }
    }
    for (k, v) in load(".langgraph_checkpoint.3.pckl")
        .as_items()
        .expect("dict")
    {
        if keep(&k.as_seq().expect("key")[0]) {
            s[3] += 1;
            s[4] += pair_len(v);
        }
    }
    for (k, ws) in load(".langgraph_checkpoint.2.pckl")
        .as_items()
        .expect("dict")
    {
        if !keep(&k.as_seq().expect("key")[0]) {
            continue;
        }
        for (_, w) in ws.as_items().expect("dict") {
            s[5] += 1;
            s[6] += pair_len(&w.as_seq().expect("write")[2]);
        }
    }
    s
}

fn usage_array(u: &flashback_storage::report::Usage) -> [u64; 7] {
    [
        u.checkpoints.count,
        u.checkpoints.bytes,
        u.metadata_bytes,
        u.blobs.count,
        u.blobs.bytes,
        u.writes.count,
        u.writes.bytes,
    ]
}

#[tokio::test]
async fn a_dev_folder_is_measured_as_its_pickles_store() {
    let location = dev_fixture();
    let location = location.to_str().expect("utf-8");
    let store = flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open");
    let seen = Arc::new(Seen::default());
    let scope = Scope {
        thread_id: None,
        top: 100,
    };
    let r = measure(location, store.schema(), scope, seen.clone())
        .await
        .expect("report");
    assert_eq!(r.layout, "devserver");
    assert_eq!(r.thread_count, 6);
    assert_eq!(seen.steps.load(Ordering::SeqCst), 7, "one step per thread");
    let sums = pickle_sums(None);
    // The same sums, computed with CPython's pickle.load on the three files.
    assert_eq!(sums, [38, 24307, 19564, 106, 13110, 75, 3850]);
    assert_eq!(usage_array(&r.totals), sums);
    assert_eq!(r.totals.total_bytes, 24307 + 19564 + 13110 + 3850);
    let add = |rows: &[flashback_storage::report::KeyedUsage]| {
        rows.iter().fold([0u64; 7], |mut a, k| {
            for (x, y) in a.iter_mut().zip(usage_array(&k.usage)) {
                *x += y;
            }
            a
        })
    };
    assert_eq!(add(&r.by_thread), sums, "threads add up");
    assert_eq!(add(&r.by_namespace), sums, "namespaces add up");
    let blobs: u64 = r.by_channel.iter().map(|c| c.blobs.bytes).sum();
    let writes: u64 = r.by_channel.iter().map(|c| c.writes.bytes).sum();
    let inline: u64 = r.by_channel.iter().map(|c| c.inline.bytes).sum();
    assert_eq!((blobs, writes, inline), (13110, 3850, 0));
    let by_node: u64 = r.by_node.iter().map(|n| n.writes.bytes).sum();
    assert_eq!(by_node, 3850);
    // Every checkpoint's blobs are the versions it introduced: all of them, once.
    let introduced: u64 = r.largest_checkpoints.iter().map(|c| c.blobs.bytes).sum();
    assert!(introduced <= 13110);
    assert_eq!(r.orphans.writes.count, 0);
    assert_eq!(r.orphans.blobs.count, 0);
    assert!(r.sends.writes.count >= 2, "the research thread's Sends");
    assert!(r.growth.is_empty());
    assert_eq!(r.unmeasured.count, 0, "{:?}", r.unmeasured);
    // The files, as on disk.
    let dir = dev_fixture().join(".langgraph_api");
    assert_eq!(r.space.files.len(), 7);
    for f in &r.space.files {
        let len = std::fs::metadata(dir.join(&f.file)).expect("file").len();
        assert_eq!(f.bytes, len, "{}", f.file);
    }
    assert!(r.space.sqlite.is_none() && r.space.relations.is_empty());

    let cancel = Arc::new(Seen::default());
    cancel.cancel.store(true, Ordering::SeqCst);
    cancel.cancel_after.store(2, Ordering::SeqCst);
    let scope = Scope {
        thread_id: None,
        top: 5,
    };
    let e = measure(location, store.schema(), scope, cancel.clone())
        .await
        .expect_err("cancelled");
    assert!(matches!(&e, StoreError::Query(m) if m == CANCELLED), "{e}");
    assert_eq!(cancel.steps.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn one_thread_of_a_dev_folder_and_its_growth() {
    let location = dev_fixture();
    let location = location.to_str().expect("utf-8");
    let store = flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open");
    // research: a Send fan-out and a subgraph namespace.
    let thread = "ce2c19a0-25dc-5daf-acd6-9ea032397952";
    let scope = Scope {
        thread_id: Some(thread.into()),
        top: 100,
    };
    let r = measure(location, store.schema(), scope, Arc::new(Seen::default()))
        .await
        .expect("report");
    let sums = pickle_sums(Some(thread));
    assert_eq!(sums, [10, 6246, 6248, 28, 789, 21, 560], "CPython's sums");
    assert_eq!(usage_array(&r.totals), sums);
    assert_eq!(r.thread_count, 1);
    assert_eq!(r.by_namespace.len(), 2);
    // Growth: every checkpoint, oldest first per namespace; its document, metadata, the values
    // it introduced and its writes add up to the thread (no orphans here).
    assert_eq!(r.growth.len(), 10);
    let g = |f: fn(&flashback_storage::report::CheckpointSize) -> u64| -> u64 {
        r.growth.iter().map(f).sum()
    };
    assert_eq!(g(|c| c.document_bytes), 6246);
    assert_eq!(g(|c| c.metadata_bytes), 6248);
    assert_eq!(g(|c| c.blobs.bytes), 789);
    assert_eq!(g(|c| c.blobs.count), 28);
    assert_eq!(g(|c| c.writes.bytes), 560);
    assert_eq!(g(|c| c.total_bytes), r.totals.total_bytes);
    for w in r.growth.windows(2) {
        if w[0].checkpoint_ns == w[1].checkpoint_ns {
            assert!(w[0].checkpoint_id < w[1].checkpoint_id);
        }
    }
    assert!(r.largest_values.iter().all(|v| v.thread_id == thread));

    let e = measure(
        location,
        store.schema(),
        Scope {
            thread_id: Some("nope".into()),
            top: 5,
        },
        Arc::new(Seen::default()),
    )
    .await
    .expect_err("no such thread");
    assert!(matches!(e, StoreError::NotFound(_)), "{e}");
}
