//! The three-table store on Postgres only (its behaviours on both backends are in
//! `behaviours.rs`): setting it up again is a no-op and a LangGraph database is refused;
//! `open` with `Read` / `Write` / `Create` detects the schema; maintenance keeps the blobs a
//! remaining checkpoint or delta needs. Skipped when no PostgreSQL is available, unless
//! CI=true or FLASHBACK_REQUIRE_PG=1 (each test creates and drops its own database).

use super::behaviours::{chat, created, message};
use crate::common;

use common::three::*;
use flashback_codec::Value;
use flashback_storage::maintenance::PruneStrategy;
use flashback_storage::three::postgres::ThreeTablePg;
use flashback_storage::three::Blobs;
use flashback_storage::{CheckpointSaver, Decoded};
use flashback_testkit::backends::Backend;
use flashback_testkit::for_each_backend;

async fn detected_writable_and_maintained(backend: Backend) {
    let pg = backend.scratch().await;
    drop(chat(&pg, Blobs::Incremental, 30).await);
    // Setup again is a no-op; a LangGraph database is refused.
    created(&pg, Blobs::Incremental).await;
    let lg = backend.scratch().await;
    let langgraph = flashback_storage::postgres::PostgresStore::connect_for_setup(lg.location())
        .await
        .expect("connect");
    langgraph.setup().await.expect("langgraph setup");
    let refused = ThreeTablePg::connect_for_setup(lg.location(), opts(Blobs::Incremental)).await;
    assert!(
        refused.is_err(),
        "a LangGraph database is not set up as three-table"
    );
    let refused = flashback_storage::open(
        lg.location(),
        flashback_storage::Create {
            create: true,
            three: Some(opts(Blobs::Whole)),
        },
    )
    .await;
    assert!(refused.is_err());

    let writable = flashback_storage::open(pg.location(), flashback_storage::Write::default())
        .await
        .expect("writable");
    assert!(writable
        .schema()
        .description
        .starts_with("three-table store"));
    let saver = flashback_storage::open(
        pg.location(),
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
    let left = pg
        .query_i64("SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'copy'")
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
        pg.query_i64("SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'copy'")
            .await,
        0
    );
    writable.delete_thread("chat").await.expect("delete");
    assert!(writable.list_threads().await.expect("threads").is_empty());
}
for_each_backend!(detected_writable_and_maintained: postgres);
