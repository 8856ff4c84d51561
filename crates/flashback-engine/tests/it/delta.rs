//! DeltaChannel values rebuilt without the graph, on hand-built threads (the real-library
//! comparison is tests/interop/delta_test.py): replay from the snapshot, provenance, a replay
//! contradicting the next snapshot, a missing ancestor, the reducer override, whole-thread
//! rebuilding, and forks stored as snapshots.

use flashback_codec::Value;
use flashback_engine::delta::{materialize, materialize_all, DeltaOptions};
use flashback_engine::fork::copy_fork;
use flashback_engine::merge::Reducer;
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{
    Checkpoint, CheckpointSaver, CheckpointStore, CheckpointTuple, Decoded, ListQuery, PutRequest,
    Version,
};
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

fn id(n: u32) -> String {
    format!("1f000000-0000-6000-8000-{n:012}")
}

fn list(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::Str((*s).into())).collect())
}

fn checkpoint(n: u32, values: Vec<(&str, Value)>) -> Checkpoint {
    Checkpoint {
        v: 4,
        id: id(n),
        ts: "2026-01-01T00:00:00.000000+00:00".into(),
        channel_values: values
            .into_iter()
            .map(|(c, v)| (c.to_owned(), Arc::new(Decoded::Msgpack(v))))
            .collect(),
        channel_versions: vec![("log".into(), Version::Int(i64::from(n) + 1))],
        versions_seen: Vec::new(),
        updated_channels: None,
        pending_sends: None,
    }
}

/// One step of a thread: checkpoint `n` (child of `n - 1`), the values stored there, and the
/// writes its next step makes to `log`.
struct Step<'a> {
    values: Vec<(&'a str, Value)>,
    writes: Vec<Value>,
    source: &'a str,
}

async fn build(saver: &SqliteSaver, thread: &str, steps: Vec<Step<'_>>, first_parent: Option<u32>) {
    for (i, step) in steps.into_iter().enumerate() {
        let n = i as u32;
        let cp = checkpoint(n, step.values);
        let metadata: Map<String, Json> = json!({
            "source": step.source,
            "step": n,
            "counters_since_delta_snapshot": {"log": [1, 1]},
        })
        .as_object()
        .cloned()
        .unwrap();
        let parent = if n == 0 {
            first_parent.map(id)
        } else {
            Some(id(n - 1))
        };
        saver
            .put(PutRequest {
                thread_id: thread,
                checkpoint_ns: "",
                parent_checkpoint_id: parent.as_deref(),
                checkpoint: &cp,
                metadata: &metadata,
                new_versions: &cp.channel_versions,
            })
            .await
            .expect("put");
        for (k, w) in step.writes.into_iter().enumerate() {
            saver
                .put_writes(
                    thread,
                    "",
                    &id(n),
                    &format!("task-{n}-{k}"),
                    "~__pregel_pull, step",
                    &[("log".to_owned(), Decoded::Msgpack(w))],
                )
                .await
                .expect("put_writes");
        }
    }
}

fn snapshot(v: Value) -> Value {
    Value::DeltaSnapshot(Box::new(v))
}

async fn state(store: &dyn CheckpointStore, thread: &str, n: u32) -> CheckpointTuple {
    store
        .get_tuple(thread, "", Some(&id(n)))
        .await
        .expect("read")
        .expect("exists")
}

fn log_of(t: &CheckpointTuple) -> Result<Value, String> {
    match t.checkpoint.value("log").map(|v| v.as_ref()) {
        Some(Decoded::Msgpack(v)) => Ok(v.clone()),
        Some(Decoded::Error { message, .. }) => Err(message.clone()),
        other => Err(format!("{other:?}")),
    }
}

async fn saver() -> (tempfile::TempDir, SqliteSaver) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("delta.sqlite");
    let saver = SqliteSaver::create(path.to_str().unwrap())
        .await
        .expect("create");
    (dir, saver)
}

fn loop_step<'a>(values: Vec<(&'a str, Value)>, writes: Vec<Value>) -> Step<'a> {
    Step {
        values,
        writes,
        source: "loop",
    }
}

#[tokio::test]
async fn replays_from_the_snapshot_with_provenance() {
    let (_dir, saver) = saver().await;
    build(
        &saver,
        "t",
        vec![
            loop_step(vec![("log", snapshot(list(&["a"])))], vec![list(&["b"])]),
            loop_step(vec![], vec![list(&["c"]), Value::Str("d".into())]),
            loop_step(vec![], vec![list(&["e"])]),
            loop_step(
                vec![("log", snapshot(list(&["a", "b", "c", "d", "e"])))],
                vec![],
            ),
        ],
        None,
    )
    .await;
    let mut t = state(&saver, "t", 2).await;
    assert!(
        t.checkpoint.value("log").is_none(),
        "stored without the channel"
    );
    let info = materialize(&saver, &mut t, &DeltaOptions::default())
        .await
        .expect("materialize");
    assert_eq!(log_of(&t), Ok(list(&["a", "b", "c", "d"])));
    let r = &info["log"];
    assert_eq!(
        (r.from_checkpoint.as_deref(), r.from_step, r.writes),
        (Some(id(0).as_str()), Some(0), 3)
    );
    assert_eq!(
        (r.reducer, r.inferred, r.error.as_deref()),
        (Reducer::ListAppend, true, None)
    );

    // A stored snapshot is unwrapped, with no writes.
    let mut t = state(&saver, "t", 3).await;
    let info = materialize(&saver, &mut t, &DeltaOptions::default())
        .await
        .unwrap();
    assert_eq!(log_of(&t), Ok(list(&["a", "b", "c", "d", "e"])));
    assert_eq!(info["log"].writes, 0);

    // The whole thread at once gives the same values.
    let mut all = saver
        .list_tuples(&ListQuery::thread("t"))
        .await
        .expect("list");
    let infos = materialize_all(&mut all, &DeltaOptions::default());
    assert_eq!(infos.len(), 4);
    let two = all
        .iter()
        .find(|t| t.header.checkpoint_id == id(2))
        .unwrap();
    assert_eq!(log_of(two), Ok(list(&["a", "b", "c", "d"])));
    let zero = all
        .iter()
        .find(|t| t.header.checkpoint_id == id(0))
        .unwrap();
    assert_eq!(log_of(zero), Ok(list(&["a"])));
}

#[tokio::test]
async fn a_replay_that_contradicts_the_next_snapshot_is_not_shown() {
    let (_dir, saver) = saver().await;
    // The graph's reducer keeps only the last write; the snapshot at 3 says so.
    build(
        &saver,
        "t",
        vec![
            loop_step(vec![("log", snapshot(list(&["a"])))], vec![list(&["b"])]),
            loop_step(vec![], vec![list(&["c"])]),
            loop_step(vec![], vec![list(&["d"])]),
            loop_step(vec![("log", snapshot(list(&["d"])))], vec![]),
        ],
        None,
    )
    .await;
    for n in [1, 2] {
        let mut t = state(&saver, "t", n).await;
        let info = materialize(&saver, &mut t, &DeltaOptions::default())
            .await
            .unwrap();
        let err = log_of(&t).unwrap_err();
        assert!(
            err.contains("does not give the snapshot stored at step 3"),
            "{err}"
        );
        assert!(info["log"].error.is_some());
    }
    // With the right reducer every value is shown.
    let opts = DeltaOptions {
        reducers: [("log".to_owned(), Reducer::LastValue)].into(),
    };
    let mut t = state(&saver, "t", 2).await;
    let info = materialize(&saver, &mut t, &opts).await.unwrap();
    assert_eq!(log_of(&t), Ok(list(&["c"])));
    assert!(!info["log"].inferred);
}

#[tokio::test]
async fn a_missing_ancestor_is_an_error_in_place() {
    let (_dir, saver) = saver().await;
    // The thread starts at a parent that is not in the database (pruned by hand).
    build(
        &saver,
        "t",
        vec![
            loop_step(vec![], vec![list(&["b"])]),
            loop_step(vec![], vec![]),
        ],
        Some(99),
    )
    .await;
    let mut t = state(&saver, "t", 1).await;
    materialize(&saver, &mut t, &DeltaOptions::default())
        .await
        .unwrap();
    let err = log_of(&t).unwrap_err();
    assert!(err.contains("is missing"), "{err}");
}

#[tokio::test]
async fn a_fork_stores_the_rebuilt_value_as_a_snapshot() {
    let (_dir, saver) = saver().await;
    build(
        &saver,
        "t",
        vec![
            loop_step(vec![("log", snapshot(list(&["a"])))], vec![list(&["b"])]),
            // Checkpoint 1's writes belong to its original next step; a fork of 1 must not
            // replay them.
            loop_step(vec![], vec![list(&["c"])]),
            loop_step(vec![], vec![]),
        ],
        None,
    )
    .await;
    let fork = copy_fork(&saver, "t", "", &id(1)).await.expect("fork");
    let stored = saver
        .get_tuple("t", "", Some(&fork.checkpoint_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.checkpoint.value("log").map(|v| v.as_ref().clone()),
        Some(Decoded::Msgpack(snapshot(list(&["a", "b"]))))
    );
    let mut t = stored;
    materialize(&saver, &mut t, &DeltaOptions::default())
        .await
        .unwrap();
    assert_eq!(log_of(&t), Ok(list(&["a", "b"])));
}
