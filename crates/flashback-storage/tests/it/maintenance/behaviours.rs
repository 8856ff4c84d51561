//! `SaverMaintenance` behaviours both backends share, on hand-built threads (written once, run
//! on SQLite and Postgres), and the helpers that build those threads. What only one backend
//! does, and the fixture-based checks, are in its file.

use flashback_codec::Value;
use flashback_storage::maintenance::{PruneReport, PruneStrategy, SaverMaintenance};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{Checkpoint, CheckpointSaver, Decoded, ListQuery, PutRequest, Version};
use flashback_testkit::backends::{Backend, Scratch};
use flashback_testkit::for_each_backend;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// A checkpoint holding `values`, each at a version set by the id's length (so on Postgres
/// checkpoints with ids of one length share their blobs).
pub(super) fn checkpoint(id: &str, values: Vec<(&str, Decoded)>) -> Checkpoint {
    Checkpoint {
        v: 4,
        id: id.to_owned(),
        ts: "2026-01-01T00:00:00.000000+00:00".into(),
        channel_versions: values
            .iter()
            .map(|(c, _)| {
                (
                    (*c).to_owned(),
                    Version::Str(format!("{:032}.0.5", id.len())),
                )
            })
            .collect(),
        channel_values: values
            .into_iter()
            .map(|(c, v)| (c.to_owned(), Arc::new(v)))
            .collect(),
        versions_seen: Vec::new(),
        updated_channels: None,
        pending_sends: None,
    }
}

pub(super) async fn put<S: CheckpointSaver + ?Sized>(
    saver: &S,
    thread: &str,
    ns: &str,
    parent: Option<&str>,
    cp: &Checkpoint,
    metadata: Json,
) {
    let metadata: Map<String, Json> = metadata.as_object().cloned().unwrap();
    saver
        .put(PutRequest {
            thread_id: thread,
            checkpoint_ns: ns,
            parent_checkpoint_id: parent,
            checkpoint: cp,
            metadata: &metadata,
            new_versions: &cp.channel_versions,
        })
        .await
        .expect("put");
}

fn s(x: &str) -> Decoded {
    Decoded::Msgpack(Value::Str(x.into()))
}

fn list(items: &[i64]) -> Decoded {
    Decoded::Msgpack(Value::Array(items.iter().map(|i| Value::Int(*i)).collect()))
}

/// How many pending writes there are (SQLite's table is `writes`, Postgres's
/// `checkpoint_writes`).
fn writes_count(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "SELECT count(*) FROM writes",
        Backend::Postgres => "SELECT count(*) FROM checkpoint_writes",
    }
}

pub(super) fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// An empty checkpoint store of the scratch's backend, set up for writing.
async fn new_saver(db: &Scratch) -> Box<dyn SaverMaintenance> {
    match db.backend() {
        Backend::Sqlite => Box::new(SqliteSaver::create(db.location()).await.expect("create")),
        Backend::Postgres => {
            let setup = PostgresStore::connect_for_setup(db.location())
                .await
                .expect("connect");
            setup.setup().await.expect("setup");
            setup.close().await;
            Box::new(
                PostgresStore::connect(db.location())
                    .await
                    .expect("connect"),
            )
        }
    }
}

/// Every row of every table, as text, in key order (each backend's own dump).
async fn dump(db: &Scratch) -> Vec<String> {
    match db.backend() {
        Backend::Sqlite => super::rows::sqlite(db.path().expect("a file")),
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(db.location()).await.expect("pool");
            let rows = super::rows::postgres(&pool).await;
            pool.close().await;
            rows
        }
    }
}

async fn keep_latest_keeps_what_delta_channels_need(backend: Backend) {
    let db = backend.scratch().await;
    let saver = new_saver(&db).await;
    let saver = saver.as_ref();
    let chain = |ids: &[&'static str]| {
        ids.iter()
            .enumerate()
            .map(|(i, id)| (*id, if i == 0 { None } else { Some(ids[i - 1]) }))
            .collect::<Vec<_>>()
    };
    // Plain thread: only the head stays.
    for (id, parent) in chain(&["1", "2"]) {
        put(
            saver,
            "plain",
            "",
            parent,
            &checkpoint(id, vec![]),
            json!({}),
        )
        .await;
    }
    // A plain inline `true` is no snapshot, and no counters: only the head stays.
    let yes = Decoded::Msgpack(Value::Bool(true));
    for (id, parent) in chain(&["1", "2"]) {
        let cp = checkpoint(id, vec![("a", yes.clone())]);
        put(saver, "yes", "", parent, &cp, json!({})).await;
    }
    // DeltaChannel counters, nothing ever stored: the whole line stays.
    for (id, parent) in chain(&["1", "2"]) {
        let meta = json!({"counters_since_delta_snapshot": {"a": [1, 1]}});
        put(saver, "counters", "", parent, &checkpoint(id, vec![]), meta).await;
    }
    // A `_DeltaSnapshot` at 1 (on Postgres the inline `true` marker with a blob behind it):
    // 1..3 stay, 0 goes and 1 becomes the root; with counters as without.
    let snapshot = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(Value::Array(vec![
        Value::Int(1),
    ]))));
    for (thread, ids, meta) in [
        ("snap", &["0", "1", "2", "3"][..], json!({})),
        (
            "snap-counted",
            &["0", "1", "2"][..],
            json!({"counters_since_delta_snapshot": {"a": [1, 1]}}),
        ),
    ] {
        for (id, parent) in chain(ids) {
            let values = if id == "1" {
                vec![("a", snapshot.clone())]
            } else {
                vec![]
            };
            put(
                saver,
                thread,
                "",
                parent,
                &checkpoint(id, values),
                meta.clone(),
            )
            .await;
        }
    }
    if backend == Backend::Postgres {
        assert_eq!(
            db.query_i64(
                "SELECT count(*) FROM checkpoints \
                 WHERE checkpoint -> 'channel_values' -> 'a' = 'true'::jsonb"
            )
            .await,
            4
        );
    }

    let threads = owned(&["counters", "plain", "snap", "snap-counted", "yes"]);
    let before = dump(&db).await;
    let dry = saver
        .prune(&threads, PruneStrategy::KeepLatest, true)
        .await
        .expect("dry run");
    assert_eq!(dump(&db).await, before, "a dry run wrote");
    let r = saver
        .prune(&threads, PruneStrategy::KeepLatest, false)
        .await
        .expect("prune");
    assert_eq!(r.checkpoints, dry.checkpoints);
    assert_eq!(
        r.checkpoints,
        [
            ("plain".into(), "".into(), "1".into()),
            ("snap".into(), "".into(), "0".into()),
            ("snap-counted".into(), "".into(), "0".into()),
            ("yes".into(), "".into(), "1".into()),
        ]
    );
    assert_eq!(r.parents_cleared, 4);
    for (thread, expected) in [
        (
            "snap",
            &[("3", Some("2")), ("2", Some("1")), ("1", None)][..],
        ),
        ("snap-counted", &[("2", Some("1")), ("1", None)][..]),
    ] {
        let headers = saver
            .list_headers(&ListQuery::thread(thread))
            .await
            .expect("list");
        let ids: Vec<(&str, Option<&str>)> = headers
            .iter()
            .map(|h| (h.checkpoint_id.as_str(), h.parent_checkpoint_id.as_deref()))
            .collect();
        assert_eq!(ids, expected, "{thread}");
    }
    if backend == Backend::Postgres {
        // The snapshots' blobs stay.
        assert_eq!(
            db.query_i64(
                "SELECT count(*) FROM checkpoint_blobs WHERE thread_id IN ('snap', 'snap-counted')"
            )
            .await,
            2
        );
    }
}
for_each_backend!(keep_latest_keeps_what_delta_channels_need: sqlite, postgres);

async fn delete_for_runs_deletes_the_runs_checkpoints_and_writes(backend: Backend) {
    let db = backend.scratch().await;
    let saver = new_saver(&db).await;
    let saver = saver.as_ref();
    let ids = ["1f0-1", "1f0-2", "1f0-3"];
    let runs = ["run-1", "run-2", "run-3"];
    let mut parent = None;
    for (id, run) in ids.iter().zip(runs) {
        let cp = checkpoint(id, vec![("a", s(run))]);
        put(
            saver,
            "t",
            "",
            parent,
            &cp,
            json!({"run_id": run, "step": 1}),
        )
        .await;
        saver
            .put_writes("t", "", id, "task", "", &[("ch".into(), s("w"))])
            .await
            .expect("writes");
        parent = Some(*id);
    }
    // run-1 also has a checkpoint in a child namespace and in another thread.
    for (thread, ns, parent, id, run) in [
        ("t", "child:1", None, "1f0-4", "run-1"),
        ("u", "", None, "1f0-5", "run-1"),
        ("u", "", Some("1f0-5"), "1f0-6", "other"),
    ] {
        let cp = checkpoint(id, vec![]);
        put(saver, thread, ns, parent, &cp, json!({"run_id": run})).await;
    }

    let report = saver
        .delete_for_runs(&owned(&["run-1", "run-2", "nope"]))
        .await
        .expect("delete");
    let deleted: Vec<(&str, &str, &str)> = report
        .checkpoints
        .iter()
        .map(|(t, n, i)| (t.as_str(), n.as_str(), i.as_str()))
        .collect();
    assert_eq!(
        deleted,
        [
            ("t", "", "1f0-1"),
            ("t", "", "1f0-2"),
            ("t", "child:1", "1f0-4"),
            ("u", "", "1f0-5")
        ]
    );
    assert_eq!(report.writes, 2);
    let left: Vec<String> = saver
        .list_headers(&ListQuery::default())
        .await
        .expect("list")
        .into_iter()
        .map(|h| h.checkpoint_id)
        .collect();
    assert_eq!(left, ["1f0-6", "1f0-3"]);
    assert_eq!(db.query_i64(writes_count(backend)).await, 1);
    // run-3's checkpoint keeps its writes and (dangling) parent.
    let t = saver.get_tuple("t", "", None).await.unwrap().unwrap();
    assert_eq!(t.pending_writes.len(), 1);
    assert_eq!(t.header.parent_checkpoint_id.as_deref(), Some("1f0-2"));
    // Empty and unknown lists are no-ops.
    assert_eq!(
        saver.delete_for_runs(&[]).await.unwrap(),
        PruneReport::default()
    );
    assert!(saver
        .delete_for_runs(&owned(&["nope"]))
        .await
        .unwrap()
        .checkpoints
        .is_empty());
}
for_each_backend!(delete_for_runs_deletes_the_runs_checkpoints_and_writes: sqlite, postgres);

async fn delete_for_runs_takes_orphaned_blobs(backend: Backend) {
    let db = backend.scratch().await;
    let store = new_saver(&db).await;
    let store = store.as_ref();
    // Versions are per id length, so "c1"/"c2" share the blob of `a`, "c333" has its own.
    for (ns, parent, id, a, run) in [
        ("", None, "c1", Some(1), "r1"),
        ("", Some("c1"), "c2", Some(1), "r2"),
        ("", Some("c2"), "c333", Some(2), "r1"),
        ("child:1", None, "c4", None, "r1"),
    ] {
        let values = a.map(|a| ("a", list(&[a]))).into_iter().collect();
        let cp = checkpoint(id, values);
        put(store, "t", ns, parent, &cp, json!({"run_id": run})).await;
    }
    for id in ["c1", "c2", "c333"] {
        store
            .put_writes("t", "", id, "task", "", &[("ch".into(), list(&[7]))])
            .await
            .expect("writes");
    }
    if backend == Backend::Postgres {
        assert_eq!(
            db.query_i64("SELECT count(*) FROM checkpoint_blobs").await,
            2
        );
    }
    let report = store
        .delete_for_runs(&owned(&["r1"]))
        .await
        .expect("delete");
    let ids: Vec<&str> = report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["c1", "c333", "c4"]);
    assert_eq!(report.writes, 2);
    // On Postgres c333's blob is orphaned, c1's still used by c2; SQLite keeps values inline.
    let orphaned = match backend {
        Backend::Sqlite => 0,
        Backend::Postgres => 1,
    };
    assert_eq!(report.blobs, orphaned);
    let left = store.get_tuple("t", "", None).await.unwrap().unwrap();
    assert_eq!(left.header.checkpoint_id, "c2");
    assert_eq!(
        left.checkpoint.value("a").map(|v| (**v).clone()),
        Some(list(&[1]))
    );
    assert_eq!(left.pending_writes.len(), 1);
    assert!(store
        .get_tuple("t", "child:1", None)
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        store.delete_for_runs(&[]).await.unwrap(),
        PruneReport::default()
    );
    assert!(store
        .delete_for_runs(&owned(&["r1", "zz"]))
        .await
        .unwrap()
        .checkpoints
        .is_empty());
}
for_each_backend!(delete_for_runs_takes_orphaned_blobs: sqlite, postgres);
