//! The thread list's read for statuses (`get_tuples_selecting` with the task and trigger
//! channels; on Postgres, for many checkpoints, only the blobs that exist fetched, found by
//! one index-only scan) gives what a summary is made of exactly as the full read does, for
//! every checkpoint of every fixture the real libraries wrote: Python's chats, interrupts,
//! errors, `Send`s, subgraphs and forks, the thread filters', the storage report's, encrypted
//! ones read without their key, LangGraph.js's — on Postgres and SQLite.

use crate::common::library;
use flashback_engine::tasks::{derive_tasks_with, reads_value_of, DeriveOptions};
use flashback_storage::{ChannelFilter, CheckpointStore, ListQuery};
use std::sync::Arc;

/// Every checkpoint read whole and read for a status: the same header, time, versions,
/// locked state and pending writes, and the same tasks (ids, names, triggers, writes, errors, interrupts),
/// `next` and status. Returns the checkpoints compared.
async fn compare(store: &dyn CheckpointStore, what: &str) -> usize {
    let threads = store.list_threads().await.expect("threads");
    let mut keys: Vec<(String, String, Option<String>)> = Vec::new();
    for t in &threads {
        let query = ListQuery::thread(&t.thread_id);
        for h in store.list_headers(&query).await.expect("headers") {
            keys.push((t.thread_id.clone(), h.checkpoint_ns, Some(h.checkpoint_id)));
        }
    }
    let keys: Vec<(&str, &str, Option<&str>)> = keys
        .iter()
        .map(|(t, n, c)| (t.as_str(), n.as_str(), c.as_deref()))
        .collect();
    let full = store.get_tuples(&keys).await.expect("get_tuples");
    let keep: ChannelFilter = Arc::new(reads_value_of);
    let slim = store
        .get_tuples_selecting(&keys, keep)
        .await
        .expect("get_tuples_selecting");
    assert_eq!(full.len(), slim.len(), "{what}");
    let opts = DeriveOptions {
        dialect: store.schema().dialect,
        ..Default::default()
    };
    for (key, (f, s)) in keys.iter().zip(full.iter().zip(&slim)) {
        let (Some(f), Some(s)) = (f, s) else {
            assert_eq!(f.is_some(), s.is_some(), "{what} {key:?}");
            continue;
        };
        assert_eq!(f.header, s.header, "{what} {key:?}");
        assert_eq!(f.checkpoint.ts, s.checkpoint.ts, "{what} {key:?}");
        assert_eq!(
            f.checkpoint.channel_versions, s.checkpoint.channel_versions,
            "{what} {key:?}"
        );
        // A summary is `locked` when nothing could be read (no versions): the state's own
        // sealed values are not read for a status at all.
        let locked = |t: &flashback_storage::CheckpointTuple| {
            t.sealing.locked && t.checkpoint.channel_versions.is_empty()
        };
        assert_eq!(locked(f), locked(s), "{what} {key:?}");
        // (As text: a value may hold a NaN, which equals nothing.)
        assert_eq!(
            format!("{:?}", f.pending_writes),
            format!("{:?}", s.pending_writes),
            "{what} {key:?}"
        );
        let (ft, st) = (derive_tasks_with(f, &opts), derive_tasks_with(s, &opts));
        assert_eq!(
            serde_json::to_value(&ft).expect("json"),
            serde_json::to_value(&st).expect("json"),
            "{what} {key:?}: tasks differ"
        );
        assert_eq!(ft.status(), st.status(), "{what} {key:?}");
    }
    keys.len()
}

#[tokio::test]
async fn status_reads_derive_what_full_reads_derive_on_every_postgres_fixture() {
    let Some(stores) = library::each_pg().await else {
        return;
    };
    let mut compared = 0;
    for (what, store, _pg) in &stores {
        let n = compare(store, what).await;
        assert!(n > 0, "{what}: no checkpoints");
        compared += n;
    }
    assert!(compared > 400, "compared only {compared} checkpoints");
}

#[tokio::test]
async fn status_reads_derive_what_full_reads_derive_on_every_sqlite_fixture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut compared = 0;
    for (what, store) in library::each_sqlite(dir.path()).await {
        compared += compare(&store, &what).await;
    }
    assert!(compared > 400, "compared only {compared} checkpoints");
}
