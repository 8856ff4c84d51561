//! A checkpoint that is not msgpack (pickled, an unknown tag) is reported in one short line:
//! its tag, size and a short hash, never its bytes (a 21 MB checkpoint used to make a 63 MB
//! error line). An encrypted one read without a key is not a fault: it is marked locked.

use flashback_storage::sqlite::SqliteStore;
use flashback_storage::CheckpointStore;
use rusqlite::Connection;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

#[tokio::test]
async fn a_checkpoint_that_is_not_msgpack_is_described_not_dumped() {
    let blob: Vec<u8> = (0..1_000_000u32).map(|i| (i * 31 + i / 7) as u8).collect();
    let long_tag = format!("{}+aes", "x".repeat(100_000));
    for tag in [
        "msgpack+aes",
        "pickle",
        "bytes",
        long_tag.as_str(),
        "no-such-tag",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        std::fs::copy(fixture(), &path).unwrap();
        let (thread, ns, id): (String, String, String) = {
            let conn = Connection::open(&path).unwrap();
            let row = conn
                .query_row(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints \
                     WHERE thread_id = 'forked' ORDER BY checkpoint_id DESC LIMIT 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            conn.execute(
                "UPDATE checkpoints SET type = ?1, checkpoint = ?2 WHERE checkpoint_id = ?3",
                rusqlite::params![tag, blob, row.2],
            )
            .unwrap();
            row
        };
        let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
        if tag.contains('+') {
            let t = store.get_tuple(&thread, &ns, Some(&id)).await.unwrap();
            let t = t.unwrap_or_else(|| panic!("{tag:.20}: the checkpoint disappeared"));
            assert!(t.sealing.locked, "{tag:.20}: locked");
            assert_eq!(t.header.problem, None, "{tag:.20}: locked is not a fault");
            continue;
        }
        // The checkpoint loads, marked: one bad row damages only itself.
        let err = match store.get_tuple(&thread, &ns, Some(&id)).await {
            Err(e) => e.to_string(),
            Ok(Some(t)) => t
                .header
                .problem
                .unwrap_or_else(|| panic!("{tag:.20}: a 1 MB blob was read as a checkpoint")),
            Ok(None) => panic!("{tag:.20}: the checkpoint disappeared"),
        };
        assert!(
            err.len() < 300,
            "{tag:.20}: {} chars: {err:.400}",
            err.len()
        );
        assert!(!err.contains('\n'), "{err}");
        if tag != "no-such-tag" {
            assert!(err.contains("value of 1.0 MB (xxh3 "), "{err}");
        }
    }
}
