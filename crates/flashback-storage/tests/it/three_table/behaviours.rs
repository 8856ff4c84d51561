//! The three-table store (`docs/three-table.md`), the same behaviours on SQLite and Postgres:
//! every fixture checkpoint and write stored through the saver (method A and B) reads back
//! equal to what LangGraph's store gives; method B stores a growing list once; damage stays
//! local. Each runs once per backend (`<behaviour>::sqlite`, `<behaviour>::postgres`); the
//! Postgres case is skipped when no PostgreSQL is available, unless CI=true or
//! FLASHBACK_REQUIRE_PG=1 (each case creates and drops its own databases).

use crate::common;

use common::three::*;
use flashback_codec::Value;
use flashback_storage::maintenance::SaverMaintenance;
use flashback_storage::three::postgres::ThreeTablePg;
use flashback_storage::three::sqlite::ThreeTableSaver;
use flashback_storage::three::Blobs;
use flashback_storage::{Checkpoint, CheckpointSaver, Decoded, ListQuery, PutRequest, Version};
use flashback_testkit::backends::{Backend, Scratch};
use flashback_testkit::for_each_backend;
use std::sync::Arc;

/// An empty three-table store of `blobs` at `db`, made the way each backend's saver makes one.
pub(super) async fn created(db: &Scratch, blobs: Blobs) -> Box<dyn SaverMaintenance> {
    match db.backend() {
        Backend::Sqlite => Box::new(
            ThreeTableSaver::create(db.location(), opts(blobs))
                .await
                .expect("create"),
        ),
        Backend::Postgres => {
            let saver = ThreeTablePg::connect_for_setup(db.location(), opts(blobs))
                .await
                .expect("connect");
            saver.setup().await.expect("setup");
            Box::new(saver)
        }
    }
}

async fn blob_bytes(db: &Scratch) -> i64 {
    db.query_i64("SELECT coalesce(sum(length(blob_data)), 0) FROM checkpoint_blobs")
        .await
}

/// Every fixture checkpoint put through a saver of `blobs`, read back through `open` and
/// compared with LangGraph's SQLite store.
async fn round_trip(db: &Scratch, blobs: Blobs) {
    let source = flashback_storage::open(
        fixture().to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("fixture");
    let saver = created(db, blobs).await;
    assert_eq!(copy_fixture(source.as_ref(), saver.as_ref()).await, 381);
    drop(saver);

    let three = flashback_storage::open(db.location(), flashback_storage::Read::default())
        .await
        .expect("open");
    assert!(
        three.schema().description.starts_with("three-table store"),
        "{}",
        three.schema().description
    );
    assert_reads_equal(source.as_ref(), three.as_ref(), blobs).await;
}

async fn the_fixture_round_trips_with_method_a_and_b(backend: Backend) {
    let (a, b) = (backend.scratch().await, backend.scratch().await);
    round_trip(&a, Blobs::Whole).await;
    round_trip(&b, Blobs::Incremental).await;
    let deltas = b
        .query_i64("SELECT count(*) FROM checkpoint_blobs WHERE kind <> 'full'")
        .await;
    assert!(deltas > 0, "method B stored deltas");
    assert!(blob_bytes(&b).await < blob_bytes(&a).await);
    // Every migration of the backend, once: 0..=3 on SQLite, 0..=4 on Postgres.
    let last = match backend {
        Backend::Sqlite => 3,
        Backend::Postgres => 4,
    };
    let migrations = |what: &str| format!("SELECT {what}(v) FROM three_table_migrations");
    assert_eq!(b.query_i64(&migrations("count")).await, last + 1);
    assert_eq!(b.query_i64(&migrations("min")).await, 0);
    assert_eq!(b.query_i64(&migrations("max")).await, last);
}
for_each_backend!(the_fixture_round_trips_with_method_a_and_b: sqlite, postgres);

pub(super) fn message(i: usize) -> Value {
    let s = |x: &str| Value::Str(x.into());
    Value::Map(vec![
        (
            s("type"),
            s(if i.is_multiple_of(2) { "human" } else { "ai" }),
        ),
        (s("id"), Value::Str(format!("msg-{i:05}").into())),
        (
            s("content"),
            Value::Str(format!("message {i}: {}", "some words of a chat ".repeat(8)).into()),
        ),
    ])
}

/// A chat of `n` steps, each appending one message (run `run-<step / 10>`), put through a new
/// saver of `blobs` at `db`.
pub(super) async fn chat(db: &Scratch, blobs: Blobs, n: usize) -> Box<dyn SaverMaintenance> {
    let saver = created(db, blobs).await;
    let mut parent: Option<String> = None;
    for step in 0..n {
        let id = format!("1f000000-0000-6000-8000-{step:012}");
        let messages = Value::Array((0..=step).map(message).collect());
        let cp = Checkpoint {
            v: 4,
            id: id.clone(),
            ts: format!("2026-01-01T00:00:{:02}.000000+00:00", step % 60),
            channel_values: vec![
                ("messages".into(), Arc::new(Decoded::Msgpack(messages))),
                (
                    "step".into(),
                    Arc::new(Decoded::Msgpack(Value::Int(step as i64))),
                ),
            ],
            channel_versions: vec![
                ("messages".into(), Version::Int(step as i64 + 1)),
                ("step".into(), Version::Int(step as i64 + 1)),
                ("branch:to:agent".into(), Version::Int(step as i64 + 1)),
            ],
            versions_seen: vec![],
            updated_channels: Some(vec!["messages".into()]),
            pending_sends: None,
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("step".into(), (step as i64).into());
        metadata.insert("run_id".into(), format!("run-{}", step / 10).into());
        saver
            .put(PutRequest {
                thread_id: "chat",
                checkpoint_ns: "",
                parent_checkpoint_id: parent.as_deref(),
                checkpoint: &cp,
                metadata: &metadata,
                new_versions: &cp.channel_versions,
            })
            .await
            .expect("put");
        parent = Some(id);
    }
    saver
}

async fn method_b_stores_each_message_once(backend: Backend) {
    let (a, b) = (backend.scratch().await, backend.scratch().await);
    let n = 200;
    let sa = chat(&a, Blobs::Whole, n).await;
    let sb = chat(&b, Blobs::Incremental, n).await;
    let (ba, bb) = (blob_bytes(&a).await, blob_bytes(&b).await);
    assert!(bb * 20 < ba, "method B {bb} bytes, method A {ba} bytes");
    // Deltas stop at MAX_DEPTH: a full value every 65 versions.
    assert_eq!(
        b.query_i64("SELECT max(depth) FROM checkpoint_blobs").await,
        64
    );
    // Both read back the same values, every checkpoint.
    let q = ListQuery::thread("chat");
    let (ta, tb) = (
        sa.list_tuples(&q).await.expect("a"),
        sb.list_tuples(&q).await.expect("b"),
    );
    assert_eq!(ta.len(), n);
    assert_same(ta, tb.clone(), "chat");
    let last = tb[0].checkpoint.value("messages").expect("messages");
    assert_eq!(
        **last,
        Decoded::Msgpack(Value::Array((0..n).map(message).collect()))
    );
    // A point read in the middle of a chain.
    let mid = sb
        .get_tuple("chat", "", Some("1f000000-0000-6000-8000-000000000100"))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(
        **mid.checkpoint.value("messages").expect("messages"),
        Decoded::Msgpack(Value::Array((0..=100).map(message).collect()))
    );
    // put_writes: regular writes keep the first, special ones are replaced.
    let w = |v: i64| vec![("messages".to_string(), Decoded::Msgpack(Value::Int(v)))];
    let id = "1f000000-0000-6000-8000-000000000199";
    sb.put_writes("chat", "", id, "task", "~path", &w(1))
        .await
        .expect("w");
    sb.put_writes("chat", "", id, "task", "~path", &w(2))
        .await
        .expect("w");
    let e = |v: i64| vec![("__error__".to_string(), Decoded::Msgpack(Value::Int(v)))];
    sb.put_writes("chat", "", id, "task", "~path", &e(1))
        .await
        .expect("w");
    sb.put_writes("chat", "", id, "task", "~path", &e(2))
        .await
        .expect("w");
    let head = sb
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .expect("head");
    let got: Vec<(i64, String, Decoded)> = head
        .pending_writes
        .iter()
        .map(|w| (w.idx, w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (-1, "__error__".into(), Decoded::Msgpack(Value::Int(2))),
            (0, "messages".into(), Decoded::Msgpack(Value::Int(1))),
        ]
    );
    // delete_thread removes every row of every table.
    sb.delete_thread("chat").await.expect("delete");
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        let n = b.query_i64(&format!("SELECT count(*) FROM {table}")).await;
        assert_eq!(n, 0, "{table}");
    }
}
for_each_backend!(method_b_stores_each_message_once: sqlite, postgres);

async fn damaged_rows_and_blobs_are_local_problems(backend: Backend) {
    let db = backend.scratch().await;
    drop(chat(&db, Blobs::Incremental, 30).await);
    // A delta that is not msgpack (version 20), a missing row (version 10's step), a broken
    // document (checkpoint 5).
    let c1 = match backend {
        Backend::Sqlite => "x'c1'",
        Backend::Postgres => "'\\xc1'",
    };
    for sql in [
        format!("UPDATE checkpoint_blobs SET blob_data = {c1} WHERE channel = 'messages' AND version = '20'"),
        "DELETE FROM checkpoint_blobs WHERE channel = 'step' AND version = '10'".to_owned(),
        format!("UPDATE checkpoints SET checkpoint = {c1} WHERE checkpoint_id LIKE '%000000000005'"),
    ] {
        db.execute(&sql).await;
    }
    let store = flashback_storage::open(db.location(), flashback_storage::Read::default())
        .await
        .expect("open");
    let tuples = store
        .list_tuples(&ListQuery::thread("chat"))
        .await
        .expect("a damaged database still lists");
    assert_eq!(tuples.len(), 30);
    let problem = |step: usize| tuples[29 - step].header.problem.clone();
    // Versions 20.. of messages build on the damaged delta: each says so.
    for step in 19..30 {
        let p = problem(step).unwrap_or_default();
        assert!(p.contains("messages"), "step {step}: {p}");
        assert!(tuples[29 - step].checkpoint.value("step").is_some());
    }
    assert!(problem(9).unwrap_or_default().contains("\"step\""));
    assert!(problem(5).unwrap_or_default().contains("document"));
    for step in [0, 1, 4, 6, 8, 10, 18] {
        assert_eq!(problem(step), None, "step {step}");
    }
    let headers = store
        .list_headers(&ListQuery::thread("chat"))
        .await
        .expect("headers");
    assert!(headers[29 - 5].problem.is_some());
}
for_each_backend!(damaged_rows_and_blobs_are_local_problems: sqlite, postgres);
