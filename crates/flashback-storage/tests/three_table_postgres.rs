//! The three-table store on Postgres (`docs/three-table.md`): every fixture checkpoint and
//! write stored through the saver (method A and B) reads back equal to what LangGraph's store
//! gives; method B stores a growing list once; damage stays local; `open` with `Read` / `Write` /
//! `Create` detect the schema; maintenance keeps the blobs a remaining checkpoint or
//! delta needs. Skipped when no PostgreSQL is available, unless CI=true or
//! FLASHBACK_REQUIRE_PG=1 (each test creates and drops its own database).

mod common;

use common::three::*;
use flashback_codec::Value;
use flashback_storage::maintenance::PruneStrategy;
use flashback_storage::three::postgres::ThreeTablePg;
use flashback_storage::three::Blobs;
use flashback_storage::{
    Checkpoint, CheckpointSaver, CheckpointStore, Decoded, ListQuery, PutRequest, Version,
};
use flashback_testkit::TestPg;
use sqlx::{AssertSqlSafe, PgPool};
use std::sync::Arc;

async fn created(pg: &TestPg, blobs: Blobs) -> ThreeTablePg {
    let saver = ThreeTablePg::connect_for_setup(pg.url(), opts(blobs))
        .await
        .expect("connect");
    saver.setup().await.expect("setup");
    saver
}

async fn scalar(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .expect(sql)
}

async fn blob_bytes(pg: &TestPg) -> i64 {
    let pool = pg.pool().await.expect("pool");
    scalar(
        &pool,
        "SELECT coalesce(sum(octet_length(blob_data)), 0)::int8 FROM checkpoint_blobs",
    )
    .await
}

/// Every fixture checkpoint put through a saver of `blobs`, read back through `open` and
/// compared with LangGraph's SQLite store.
async fn round_trip(pg: &TestPg, blobs: Blobs) {
    let source = flashback_storage::open(
        fixture().to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("fixture");
    let saver = created(pg, blobs).await;
    let mut count = 0;
    for thread in source.list_threads().await.expect("threads") {
        let mut tuples = source
            .list_tuples(&ListQuery::thread(&thread.thread_id))
            .await
            .expect("list");
        tuples.reverse();
        for t in &tuples {
            put_tuple(&saver, t).await;
            count += 1;
        }
    }
    assert_eq!(count, 381);
    drop(saver);

    let three = flashback_storage::open(pg.url(), flashback_storage::Read::default())
        .await
        .expect("open");
    assert!(
        three.schema().description.starts_with("three-table store"),
        "{}",
        three.schema().description
    );
    assert_reads_equal(source.as_ref(), three.as_ref(), blobs).await;
}

#[tokio::test]
async fn the_fixture_round_trips_with_method_a_and_b() {
    let a = flashback_testkit::pg_or_skip!();
    let b = flashback_testkit::pg_or_skip!();
    round_trip(&a, Blobs::Whole).await;
    round_trip(&b, Blobs::Incremental).await;
    let pool = b.pool().await.expect("pool");
    let deltas = scalar(
        &pool,
        "SELECT count(*)::int8 FROM checkpoint_blobs WHERE kind <> 'full'",
    )
    .await;
    assert!(deltas > 0, "method B stored deltas");
    assert!(blob_bytes(&b).await < blob_bytes(&a).await);
    let versions: Vec<i32> = sqlx::query_scalar("SELECT v FROM three_table_migrations ORDER BY v")
        .fetch_all(&pool)
        .await
        .expect("versions");
    assert_eq!(versions, vec![0, 1, 2, 3, 4]);
    // Setup again is a no-op; a LangGraph database is refused.
    created(&b, Blobs::Incremental).await;
    let lg = flashback_testkit::pg_or_skip!();
    let langgraph = flashback_storage::postgres::PostgresStore::connect_for_setup(lg.url())
        .await
        .expect("connect");
    langgraph.setup().await.expect("langgraph setup");
    let refused = ThreeTablePg::connect_for_setup(lg.url(), opts(Blobs::Incremental)).await;
    assert!(
        refused.is_err(),
        "a LangGraph database is not set up as three-table"
    );
    let refused = flashback_storage::open(
        lg.url(),
        flashback_storage::Create {
            create: true,
            three: Some(opts(Blobs::Whole)),
        },
    )
    .await;
    assert!(refused.is_err());
}

fn message(i: usize) -> Value {
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

/// A chat of `n` steps, each appending one message, put through a saver of `blobs`.
async fn chat(pg: &TestPg, blobs: Blobs, n: usize) -> ThreeTablePg {
    let saver = created(pg, blobs).await;
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

#[tokio::test]
async fn method_b_stores_each_message_once() {
    let a = flashback_testkit::pg_or_skip!();
    let b = flashback_testkit::pg_or_skip!();
    let n = 200;
    let sa = chat(&a, Blobs::Whole, n).await;
    let sb = chat(&b, Blobs::Incremental, n).await;
    let (ba, bb) = (blob_bytes(&a).await, blob_bytes(&b).await);
    assert!(bb * 20 < ba, "method B {bb} bytes, method A {ba} bytes");
    let pool = b.pool().await.expect("pool");
    assert_eq!(
        scalar(&pool, "SELECT max(depth)::int8 FROM checkpoint_blobs").await,
        64
    );
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
        let n = scalar(&pool, &format!("SELECT count(*)::int8 FROM {table}")).await;
        assert_eq!(n, 0, "{table}");
    }
}

#[tokio::test]
async fn damaged_rows_and_blobs_are_local_problems() {
    let pg = flashback_testkit::pg_or_skip!();
    drop(chat(&pg, Blobs::Incremental, 30).await);
    let pool = pg.pool().await.expect("pool");
    for sql in [
        "UPDATE checkpoint_blobs SET blob_data = '\\xc1' WHERE channel = 'messages' AND version = '20'",
        "DELETE FROM checkpoint_blobs WHERE channel = 'step' AND version = '10'",
        "UPDATE checkpoints SET checkpoint = '\\xc1' WHERE checkpoint_id LIKE '%000000000005'",
    ] {
        sqlx::query(AssertSqlSafe(sql.to_owned()))
            .execute(&pool)
            .await
            .expect(sql);
    }
    let store = flashback_storage::open(pg.url(), flashback_storage::Read::default())
        .await
        .expect("open");
    let tuples = store
        .list_tuples(&ListQuery::thread("chat"))
        .await
        .expect("a damaged database still lists");
    assert_eq!(tuples.len(), 30);
    let problem = |step: usize| tuples[29 - step].header.problem.clone();
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

#[tokio::test]
async fn detected_writable_and_maintained() {
    let pg = flashback_testkit::pg_or_skip!();
    drop(chat(&pg, Blobs::Incremental, 30).await);
    let writable = flashback_storage::open(pg.url(), flashback_storage::Write::default())
        .await
        .expect("writable");
    assert!(writable
        .schema()
        .description
        .starts_with("three-table store"));
    let saver = flashback_storage::open(
        pg.url(),
        flashback_storage::Create {
            create: false,
            three: None,
        },
    )
    .await
    .expect("saver");
    assert!(saver.schema().description.starts_with("three-table store"));
    // copy_thread, then prune the copy to its head: the head still reads whole.
    let copied = writable.copy_thread("chat", "copy").await.expect("copy");
    assert_eq!((copied.checkpoints, copied.blobs > 0), (30, true));
    let dry = writable
        .prune(&["copy".to_string()], PruneStrategy::KeepLatest, true)
        .await
        .expect("dry run");
    assert!(dry.dry_run && dry.blobs > 0);
    let report = writable
        .prune(&["copy".to_string()], PruneStrategy::KeepLatest, false)
        .await
        .expect("prune");
    assert_eq!(report.checkpoints.len(), 29);
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
    // The head's delta chain was kept, the rest of the copy's blobs went.
    let pool = pg.pool().await.expect("pool");
    let left = scalar(
        &pool,
        "SELECT count(*)::int8 FROM checkpoint_blobs WHERE thread_id = 'copy'",
    )
    .await;
    assert!(left > 3 && left < 60, "{left} blob rows left");
    // delete_for_runs: the checkpoints of run-2 (steps 20-29 of chat, the copy's head) go;
    // what remains still reads whole, and the copy's blobs are all gone.
    let gone = writable
        .delete_for_runs(&["run-2".to_string()])
        .await
        .expect("delete_for_runs");
    assert_eq!(gone.checkpoints.len(), 11, "{gone:?}");
    let head = writable
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .expect("head");
    assert_eq!(head.header.problem, None);
    assert_eq!(
        **head.checkpoint.value("messages").expect("messages"),
        Decoded::Msgpack(Value::Array((0..20).map(message).collect()))
    );
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(*)::int8 FROM checkpoint_blobs WHERE thread_id = 'copy'"
        )
        .await,
        0
    );
    writable.delete_thread("chat").await.expect("delete");
    assert!(writable.list_threads().await.expect("threads").is_empty());
}
