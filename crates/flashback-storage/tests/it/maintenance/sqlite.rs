//! `SaverMaintenance` (copy_thread, delete_for_runs, prune) on SQLite, on temporary copies of
//! the Python-written fixture (the hand-built threads run on both backends from `behaviours.rs`).

use flashback_storage::maintenance::{PruneReport, PruneStrategy, SaverMaintenance};
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery, StoreError};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

use super::behaviours::owned;
use super::rows::sqlite as dump;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

/// A temporary copy of the fixture, opened for writing.
async fn fixture_copy() -> (tempfile::TempDir, PathBuf, SqliteSaver) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("copy.sqlite");
    std::fs::copy(fixture(), &path).expect("copy fixture");
    let saver = SqliteSaver::open(path.to_str().unwrap())
        .await
        .expect("open");
    (dir, path, saver)
}

fn count(path: &Path, sql: &str) -> i64 {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open");
    conn.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// The thread's tuples with the thread id blanked out.
async fn tuples(store: &dyn CheckpointStore, thread: &str) -> Vec<CheckpointTuple> {
    let mut list = store
        .list_tuples(&ListQuery::thread(thread))
        .await
        .expect("list");
    for t in &mut list {
        t.header.thread_id = String::new();
    }
    list
}

#[tokio::test]
async fn copy_thread_copies_every_namespace_and_write() {
    let (_dir, path, saver) = fixture_copy().await;
    let before = dump(&path);
    for source in ["subgraph", "send-fanout", "interrupt-resumed", "long"] {
        let target = format!("{source}-copy");
        let report = saver.copy_thread(source, &target).await.expect("copy");
        let src = tuples(&saver, source).await;
        let dst = tuples(&saver, &target).await;
        assert!(!src.is_empty());
        assert_eq!(src, dst, "{source}: copied tuples differ");
        assert_eq!(report.checkpoints as usize, src.len());
        let writes: usize = src.iter().map(|t| t.pending_writes.len()).sum();
        assert_eq!(report.writes as usize, writes);
        // Every namespace is there.
        let threads = saver.list_threads().await.expect("threads");
        let ns = |t: &str| {
            threads
                .iter()
                .find(|i| i.thread_id == t)
                .map(|i| i.namespaces.clone())
        };
        assert_eq!(ns(source), ns(&target));
    }
    // The source rows are untouched and the copy's rows are byte-identical.
    let after = dump(&path);
    let src_rows: Vec<&String> = after
        .iter()
        .filter(|r| !r.split('|').next().unwrap().ends_with("-copy"))
        .collect();
    assert_eq!(src_rows.len(), before.len());
    for row in after.iter().filter(|r| r.starts_with("subgraph-copy|")) {
        let original = row.replacen("subgraph-copy|", "subgraph|", 1);
        assert!(before.contains(&original), "no original for {row}");
    }

    // A non-empty target, and the same thread, are refused; nothing changes.
    let snapshot = dump(&path);
    let e = saver.copy_thread("forked", "subgraph").await.unwrap_err();
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    assert!(e.to_string().contains("already holds"), "{e}");
    let e = saver.copy_thread("forked", "forked").await.unwrap_err();
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    assert_eq!(dump(&path), snapshot);

    // A missing source copies nothing.
    let report = saver
        .copy_thread("no-such-thread", "x")
        .await
        .expect("copy");
    assert_eq!(report.checkpoints, 0);
    assert!(tuples(&saver, "x").await.is_empty());
}

#[tokio::test]
async fn prune_keep_latest_dry_run_then_real() {
    let (_dir, path, saver) = fixture_copy().await;
    let threads = owned(&[
        "subgraph",
        "long",
        "forked",
        "subgraph-persistent",
        "missing",
    ]);
    // The latest checkpoint of every namespace, before.
    let mut heads = Vec::new();
    for info in saver.list_threads().await.expect("threads") {
        if !threads.contains(&info.thread_id) {
            continue;
        }
        for ns in &info.namespaces {
            let t = saver
                .get_tuple(&info.thread_id, ns, None)
                .await
                .expect("get")
                .expect("latest");
            heads.push(t);
        }
    }
    let before = dump(&path);
    let dry = saver
        .prune(&threads, PruneStrategy::KeepLatest, true)
        .await
        .expect("dry run");
    assert!(dry.dry_run);
    assert_eq!(dump(&path), before, "a dry run wrote");
    assert!(dry.checkpoints.len() > 300, "{}", dry.checkpoints.len());
    assert!(dry.writes > 0);
    assert_eq!(dry.blobs, 0);

    let real = saver
        .prune(&threads, PruneStrategy::KeepLatest, false)
        .await
        .expect("prune");
    assert!(!real.dry_run);
    assert_eq!(
        PruneReport {
            dry_run: true,
            ..real.clone()
        },
        dry
    );
    let deleted = i64::try_from(real.checkpoints.len()).unwrap();
    assert_eq!(
        count(&path, "SELECT count(*) FROM checkpoints"),
        381 - deleted
    );

    // The subgraph call started from an older root checkpoint goes with it; every other
    // namespace keeps exactly its latest checkpoint, values and writes intact.
    let after = saver.list_threads().await.expect("threads");
    for t in &heads {
        let h = &t.header;
        let now = saver
            .get_tuple(&h.thread_id, &h.checkpoint_ns, None)
            .await
            .expect("get");
        let call = h.checkpoint_ns.contains(':');
        let root = h.metadata["parents"][""].as_str().map(str::to_owned);
        let root_kept = heads.iter().any(|r| {
            r.header.thread_id == h.thread_id && Some(&r.header.checkpoint_id) == root.as_ref()
        });
        if call && root.is_some() && !root_kept {
            assert!(now.is_none(), "call namespace {} kept", h.checkpoint_ns);
            assert!(real
                .checkpoints
                .iter()
                .any(|c| c.1 == h.checkpoint_ns && c.2 == h.checkpoint_id));
            continue;
        }
        let now = now.expect("latest still there");
        assert_eq!(now.checkpoint, t.checkpoint);
        assert_eq!(now.pending_writes, t.pending_writes);
        assert_eq!(now.header.metadata, h.metadata);
        assert_eq!(now.header.parent_checkpoint_id, None, "parent not cleared");
        let n = saver
            .list_headers(&ListQuery {
                checkpoint_ns: Some(h.checkpoint_ns.clone()),
                ..ListQuery::thread(&h.thread_id)
            })
            .await
            .expect("list");
        assert_eq!(n.len(), 1, "{} {:?}", h.thread_id, h.checkpoint_ns);
    }
    let sub = after.iter().find(|i| i.thread_id == "subgraph").unwrap();
    assert_eq!(
        sub.namespaces,
        [""],
        "the subgraph calls went with their root"
    );
    // Other threads are untouched.
    for thread in ["chat-tools", "reducers", "rich-types"] {
        let n = count(
            &path,
            &format!("SELECT count(*) FROM checkpoints WHERE thread_id = '{thread}'"),
        );
        let was = before
            .iter()
            .filter(|r| r.starts_with(&format!("{thread}|")) && r.split('|').count() == 6)
            .count();
        assert_eq!(n as usize, was, "{thread}");
    }
    // Pruning again deletes nothing.
    let again = saver
        .prune(&threads, PruneStrategy::KeepLatest, false)
        .await
        .expect("again");
    assert!(
        again.checkpoints.is_empty() && again.writes == 0,
        "{again:?}"
    );
}

#[tokio::test]
async fn prune_delete_removes_the_threads() {
    let (_dir, path, saver) = fixture_copy().await;
    let writes_before = count(
        &path,
        "SELECT count(*) FROM writes WHERE thread_id = 'long'",
    );
    let threads = owned(&["long", "subgraph"]);
    let dry = saver
        .prune(&threads, PruneStrategy::Delete, true)
        .await
        .expect("dry");
    assert_eq!(dry.checkpoints.len(), 300 + 13);
    let real = saver
        .prune(&threads, PruneStrategy::Delete, false)
        .await
        .expect("delete");
    assert_eq!(real.writes, dry.writes);
    assert!(real.writes as i64 > writes_before);
    assert_eq!(
        count(
            &path,
            "SELECT count(*) FROM checkpoints WHERE thread_id IN ('long', 'subgraph')"
        ),
        0
    );
    assert_eq!(
        count(
            &path,
            "SELECT count(*) FROM writes WHERE thread_id IN ('long', 'subgraph')"
        ),
        0
    );
    assert_eq!(count(&path, "SELECT count(*) FROM checkpoints"), 381 - 313);
    // Nothing to do is fine.
    let none = saver
        .prune(&[], PruneStrategy::KeepLatest, false)
        .await
        .expect("empty");
    assert_eq!(none, PruneReport::default());
}
