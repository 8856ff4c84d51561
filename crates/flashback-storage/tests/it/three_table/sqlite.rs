//! The three-table store on SQLite only (its behaviours on both backends are in
//! `behaviours.rs`): files open read-only without side files; `open` with `Read` / `Write` detects
//! the schema.

use super::behaviours::chat;
use crate::common;

use common::three::*;
use flashback_storage::three::sqlite::ThreeTableStore;
use flashback_storage::three::Blobs;
use flashback_storage::CheckpointStore;
use flashback_testkit::backends::Backend;
use rusqlite::Connection;
use std::path::PathBuf;

#[tokio::test]
async fn opened_read_only_without_side_files_and_writable_as_three_table() {
    let db = Backend::Sqlite.scratch().await;
    let path = db.path().expect("a file");
    drop(chat(&db, Blobs::Incremental, 5).await);
    {
        let conn = Connection::open(path).expect("open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .expect("wal");
        assert_eq!(mode, "wal");
    }
    let p = path.to_str().expect("path");
    let side = |s: &str| PathBuf::from(format!("{p}{s}")).exists();
    assert!(!side("-wal") && !side("-shm"));
    let store = ThreeTableStore::try_open(p)
        .await
        .expect("open")
        .expect("three-table");
    assert_eq!(store.list_threads().await.expect("threads").len(), 1);
    assert!(store
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .is_some());
    assert!(
        !side("-wal") && !side("-shm"),
        "nothing created beside the file"
    );
    // A LangGraph file is not taken for one.
    assert!(ThreeTableStore::try_open(fixture().to_str().expect("path"))
        .await
        .expect("probe")
        .is_none());
    let writable = flashback_storage::open(p, flashback_storage::Write::default())
        .await
        .expect("writable");
    assert!(writable
        .schema()
        .description
        .starts_with("three-table store"));
    // copy_thread and prune through the maintenance trait.
    let copied = writable.copy_thread("chat", "copy").await.expect("copy");
    assert_eq!((copied.checkpoints, copied.blobs > 0), (5, true));
    let report = writable
        .prune(
            &["copy".to_string()],
            flashback_storage::maintenance::PruneStrategy::KeepLatest,
            false,
        )
        .await
        .expect("prune");
    assert_eq!(report.checkpoints.len(), 4);
    let kept = writable
        .get_tuple("copy", "", None)
        .await
        .expect("get")
        .expect("kept");
    let original = writable
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .expect("head");
    assert_eq!(kept.header.problem, None);
    assert!(
        split(original).0 == split(kept).0,
        "the kept head still reads whole"
    );
    writable.delete_thread("chat").await.expect("delete");
    assert_eq!(writable.list_threads().await.expect("threads").len(), 1);
}
