//! The Postgres write side (`CheckpointSaver for PostgresStore`) against real databases:
//! `put`, `put_writes` and `delete_thread` behaviour (Python's layout read back, replace and
//! ignore semantics, NUL characters and failures that write nothing, one thread deleted).
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/saver.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::saver::*;
use flashback_codec::{Decoded, Value};
use flashback_storage::{CheckpointSaver, CheckpointStore, PutRequest, StoreError};
use serde_json::{json, Map};

#[tokio::test]
async fn put_stores_pythons_layout_and_reads_see_it() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");

    let v1 = versions(&[("a", 1), ("l", 1), ("n", 1), ("bs", 1)]);
    let c1 = checkpoint(
        "c1",
        vec![
            ("a", s("x")),
            ("l", list(&[1, 2])),
            ("n", Decoded::Null),
            ("bs", Decoded::Bytes(b"raw".to_vec())),
        ],
        &v1,
    );
    let meta = md(json!({"source": "input", "step": -1, "writes": {"x": 1}, "run": "r\u{0}1"}));
    put(&store, "t1", None, &c1, &meta, &v1)
        .await
        .expect("put c1");

    assert_eq!(
        texts(
            &pool,
            "SELECT concat_ws('|', checkpoint_id, coalesce(parent_checkpoint_id, '<null>'), \
             coalesce(type, '<null>'), checkpoint::text, metadata::text) FROM checkpoints"
        )
        .await,
        vec![concat!(
            "c1|<null>|<null>|",
            r#"{"v": 4, "id": "c1", "ts": "2026-01-01T00:00:00.000000+00:00", "versions_seen": {"node": {"a": "00000000000000000000000000000001.0.5001"}, "__input__": {}}, "#,
            r#""channel_values": {"a": "x", "n": null}, "#,
            r#""channel_versions": {"a": "00000000000000000000000000000001.0.5001", "l": "00000000000000000000000000000001.0.5001", "n": "00000000000000000000000000000001.0.5001", "bs": "00000000000000000000000000000001.0.5001"}, "#,
            r#""updated_channels": ["a"]}|{"run": "r1", "step": -1, "source": "input"}"#
        )]
    );
    assert_eq!(
        texts(
            &pool,
            "SELECT concat_ws('|', channel, version, type, encode(blob, 'hex')) \
             FROM checkpoint_blobs ORDER BY channel"
        )
        .await,
        vec![
            "bs|00000000000000000000000000000001.0.5001|bytes|726177",
            "l|00000000000000000000000000000001.0.5001|msgpack|920102",
        ]
    );

    // c2: `l` gets a new value at a version that already has a blob (first writer wins);
    // `bs` is unchanged (not in new_versions, so no new blob row).
    let v2 = versions(&[("a", 2), ("l", 1), ("n", 1), ("bs", 1)]);
    let c2 = checkpoint(
        "c2",
        vec![
            ("a", int(7)),
            ("l", list(&[9])),
            ("n", Decoded::Null),
            ("bs", Decoded::Bytes(b"raw".to_vec())),
        ],
        &v2,
    );
    let new = versions(&[("a", 2), ("l", 1)]);
    put(&store, "t1", Some("c1"), &c2, &md(json!({"step": 0})), &new)
        .await
        .expect("put c2");
    assert_eq!(
        count(&pool, "SELECT count(*) FROM checkpoint_blobs").await,
        2
    );
    let latest = store
        .get_tuple("t1", "", None)
        .await
        .expect("get")
        .expect("some");
    assert_eq!(latest.header.checkpoint_id, "c2");
    assert_eq!(latest.header.parent_checkpoint_id.as_deref(), Some("c1"));
    assert_eq!(latest.checkpoint.value("a").map(|v| &**v), Some(&int(7)));
    assert_eq!(
        latest.checkpoint.value("l").map(|v| &**v),
        Some(&list(&[1, 2]))
    );
    assert_eq!(
        latest.checkpoint.value("bs").map(|v| &**v),
        Some(&Decoded::Bytes(b"raw".to_vec()))
    );

    // Re-putting a checkpoint updates its document and metadata, not its parent.
    put(
        &store,
        "t1",
        Some("other"),
        &c2,
        &md(json!({"step": 5})),
        &new,
    )
    .await
    .expect("re-put c2");
    let latest = store
        .get_tuple("t1", "", None)
        .await
        .expect("get")
        .expect("some");
    assert_eq!(latest.header.metadata, json!({"step": 5}));
    assert_eq!(latest.header.parent_checkpoint_id.as_deref(), Some("c1"));
    assert_eq!(count(&pool, "SELECT count(*) FROM checkpoints").await, 2);

    // A DeltaChannel snapshot: a blob plus the inline marker `true`; reads give the snapshot.
    let snapshot = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(Value::Array(vec![
        Value::Int(1),
    ]))));
    let v3 = versions(&[("d", 3)]);
    let c3 = checkpoint("c3", vec![("d", snapshot.clone())], &v3);
    put(&store, "t1", Some("c2"), &c3, &Map::new(), &v3)
        .await
        .expect("put c3");
    assert_eq!(
        texts(
            &pool,
            "SELECT (checkpoint->'channel_values')::text FROM checkpoints WHERE checkpoint_id = 'c3'"
        )
        .await,
        vec![r#"{"d": true}"#]
    );
    let c3_read = store
        .get_tuple("t1", "", Some("c3"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c3_read.checkpoint.value("d").map(|v| &**v), Some(&snapshot));
    store.close().await;
}

#[tokio::test]
async fn put_writes_replace_and_ignore_semantics() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("a", 1)]);
    put(
        &store,
        "t",
        None,
        &checkpoint("c1", vec![("a", s("x"))], &v),
        &Map::new(),
        &v,
    )
    .await
    .expect("put");
    let w = |c: &str, d: Decoded| (c.to_owned(), d);
    let rows = || {
        texts(
            &pool,
            "SELECT concat_ws('|', task_id, task_path, idx, channel, type, encode(blob, 'hex')) \
             FROM checkpoint_writes ORDER BY task_id, idx",
        )
    };

    // Mixed batch (IGNORE): idx = position, specials at their fixed idx; None is 'null', ''.
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[
                w("a", int(1)),
                w("__interrupt__", int(1)),
                w("b", Decoded::Null),
            ],
        )
        .await
        .expect("batch 1");
    assert_eq!(
        rows().await,
        vec![
            "task|~p|-3|__interrupt__|msgpack|01",
            "task|~p|0|a|msgpack|01",
            "task|~p|2|b|null|"
        ]
    );
    // A second mixed batch keeps every first writer.
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[w("a", int(2)), w("__interrupt__", int(2))],
        )
        .await
        .expect("batch 2");
    assert_eq!(
        rows().await[..2],
        [
            "task|~p|-3|__interrupt__|msgpack|01",
            "task|~p|0|a|msgpack|01"
        ]
    );
    // Only special channels (REPLACE): the newer write replaces the older.
    store
        .put_writes("t", "", "c1", "task", "~p", &[w("__interrupt__", int(3))])
        .await
        .expect("batch 3");
    // A special channel repeated in a REPLACE batch: the last one wins (as row-by-row upserts).
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[w("__error__", s("e1")), w("__error__", s("e2"))],
        )
        .await
        .expect("batch 4");
    // Another task's writes are separate rows.
    store
        .put_writes("t", "", "c1", "other", "", &[w("a", int(4))])
        .await
        .expect("batch 5");
    assert_eq!(
        rows().await,
        vec![
            "other||0|a|msgpack|04",
            "task|~p|-3|__interrupt__|msgpack|03",
            "task|~p|-1|__error__|msgpack|a26532",
            "task|~p|0|a|msgpack|01",
            "task|~p|2|b|null|",
        ]
    );
    // Reads see them, sorted by (task_path, task_id, idx).
    let t = store.get_tuple("t", "", Some("c1")).await.unwrap().unwrap();
    let seen: Vec<(String, i64, Decoded)> = t
        .pending_writes
        .into_iter()
        .map(|p| (p.task_id, p.idx, p.value))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("other".into(), 0, int(4)),
            ("task".into(), -3, int(3)),
            ("task".into(), -1, s("e2")),
            ("task".into(), 0, int(1)),
            ("task".into(), 2, Decoded::Null),
        ]
    );
    // An empty batch writes nothing.
    store
        .put_writes("t", "", "c1", "task", "", &[])
        .await
        .expect("empty");
    assert_eq!(rows().await.len(), 5);
    store.close().await;
}

#[tokio::test]
async fn nul_characters_and_failures_write_nothing() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("text", 1), ("l", 1)]);
    let all_rows =
        "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM checkpoint_blobs) \
                    + (SELECT count(*) FROM checkpoint_writes)";

    // A NUL in an inline string: JSONB cannot hold it (Python fails too).
    let bad = checkpoint("c1", vec![("text", s("a\u{0}b")), ("l", list(&[1]))], &v);
    let err = put(&store, "t", None, &bad, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("\"text\"") && m.contains("NUL")),
        "{err}"
    );
    // A NUL nested in metadata (only top-level strings are stripped).
    let good = checkpoint("c1", vec![("text", s("ab")), ("l", list(&[1]))], &v);
    let err = put(
        &store,
        "t",
        None,
        &good,
        &md(json!({"x": {"y": "a\u{0}"}})),
        &v,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("x.y")),
        "{err}"
    );
    // NaN cannot be stored inline either.
    let nan = checkpoint(
        "c1",
        vec![
            ("text", Decoded::Msgpack(Value::Float(f64::NAN))),
            ("l", list(&[1])),
        ],
        &v,
    );
    let err = put(&store, "t", None, &nan, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("NaN")),
        "{err}"
    );
    assert_eq!(count(&pool, all_rows).await, 0);

    // A failure after the blobs were inserted rolls the whole put back.
    exec(
        &pool,
        "ALTER TABLE checkpoints ADD CONSTRAINT no_poison CHECK (checkpoint_id <> 'poison')",
    )
    .await;
    let poison = checkpoint("poison", vec![("l", list(&[1]))], &v);
    let err = put(&store, "t", None, &poison, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Query(_)), "{err}");
    assert_eq!(count(&pool, all_rows).await, 0);

    // The valid checkpoint goes in.
    put(&store, "t", None, &good, &Map::new(), &v)
        .await
        .expect("put");
    assert_eq!(count(&pool, all_rows).await, 2);
    store.close().await;
}

#[tokio::test]
async fn delete_thread_removes_one_thread_only() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("l", 1)]);
    for thread in ["keep", "drop"] {
        for (id, parent, ns) in [
            ("c1", None, ""),
            ("c2", Some("c1"), ""),
            ("s1", None, "sub:1"),
        ] {
            let cp = checkpoint(id, vec![("l", list(&[1]))], &v);
            store
                .put(PutRequest {
                    thread_id: thread,
                    checkpoint_ns: ns,
                    parent_checkpoint_id: parent,
                    checkpoint: &cp,
                    metadata: &Map::new(),
                    new_versions: &v,
                })
                .await
                .expect("put");
            store
                .put_writes(thread, ns, id, "task", "", &[("a".into(), int(1))])
                .await
                .expect("put_writes");
        }
    }
    let per_thread = "SELECT count(*) FROM (SELECT thread_id FROM checkpoints UNION ALL \
                      SELECT thread_id FROM checkpoint_blobs UNION ALL \
                      SELECT thread_id FROM checkpoint_writes) r WHERE thread_id = ";
    let before = count(&pool, &format!("{per_thread}'keep'")).await;
    assert_eq!(before, 3 + 2 + 3);
    store.delete_thread("drop").await.expect("delete");
    assert_eq!(count(&pool, &format!("{per_thread}'drop'")).await, 0);
    assert_eq!(count(&pool, &format!("{per_thread}'keep'")).await, before);
    assert!(store.get_tuple("drop", "", None).await.unwrap().is_none());
    let threads: Vec<String> = store
        .list_threads()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.thread_id)
        .collect();
    assert_eq!(threads, vec!["keep"]);
    // Deleting an unknown thread is fine.
    store.delete_thread("nobody").await.expect("delete nothing");
    store.close().await;
}
