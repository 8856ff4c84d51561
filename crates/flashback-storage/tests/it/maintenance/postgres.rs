//! `SaverMaintenance` on Postgres, on the fixture's dump (the hand-built threads run on both
//! backends from `behaviours.rs`), and the cross-database copy
//! SQLite → Postgres → SQLite. Skipped when no PostgreSQL is available, unless CI=true or
//! FLASHBACK_REQUIRE_PG=1.

use flashback_codec::Value;
use flashback_storage::maintenance::{
    copy_thread_between, PruneReport, PruneStrategy, SaverMaintenance,
};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{
    CheckpointSaver, CheckpointStore, CheckpointTuple, Decoded, ListQuery, StoreError,
};
use flashback_testkit::TestPg;
use serde_json::Value as Json;
use sqlx::{AssertSqlSafe, PgPool};
use std::path::PathBuf;
use std::sync::Arc;

use super::behaviours::owned;
use super::rows::postgres as dump;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

async fn loaded(pg: &TestPg) -> PostgresStore {
    let dump = std::fs::read_to_string(repo_root().join("tests/fixtures/postgres.sql"))
        .expect("read tests/fixtures/postgres.sql");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load dump");
    PostgresStore::connect(pg.url()).await.expect("connect")
}

async fn empty_store(pg: &TestPg) -> PostgresStore {
    let setup = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect");
    setup.setup().await.expect("setup");
    setup.close().await;
    PostgresStore::connect(pg.url()).await.expect("connect")
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .expect(sql)
}

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

/// Equality through `Debug` (NaN values compare equal), with a short report of the first
/// difference.
#[track_caller]
fn same<T: std::fmt::Debug>(a: &T, b: &T, what: &str) {
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    if a != b {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = a.floor_char_boundary(at.saturating_sub(300));
        panic!(
            "{what} differs at byte {at}:\n  left: …{}\n right: …{}",
            &a[from..a.ceil_char_boundary((at + 200).min(a.len()))],
            &b[from..b.ceil_char_boundary((at + 200).min(b.len()))]
        );
    }
}

/// JSON with every object's keys sorted (Postgres JSONB stores metadata keys in its own order).
fn sorted(v: &Json) -> Json {
    match v {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Json::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn sorted_metadata(mut list: Vec<CheckpointTuple>) -> Vec<CheckpointTuple> {
    // ... and the keys of channel_values, channel_versions and versions_seen too.
    for t in &mut list {
        t.header.metadata = sorted(&t.header.metadata);
        let cp = &mut t.checkpoint;
        cp.channel_values.sort_by(|a, b| a.0.cmp(&b.0));
        // An inline float with an integral value comes back from JSONB as an integer
        // (`1e16` → `10000000000000000`), for Python's saver too.
        for (_, v) in &mut cp.channel_values {
            if let Decoded::Msgpack(Value::Float(f)) = &**v {
                if f.fract() == 0.0 && f.abs() < 9e18 {
                    *v = Arc::new(Decoded::Msgpack(Value::Int(*f as i64)));
                }
            }
        }
        cp.channel_versions.sort_by(|a, b| a.0.cmp(&b.0));
        cp.versions_seen.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, seen) in &mut cp.versions_seen {
            seen.sort_by(|a, b| a.0.cmp(&b.0));
        }
    }
    list
}

#[tokio::test]
async fn copy_thread_copies_rows_and_refuses_a_busy_target() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = loaded(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let before = dump(&pool).await;
    for info in store.list_threads().await.expect("threads") {
        let source = info.thread_id;
        let target = format!("{source}-copy");
        let report = store.copy_thread(&source, &target).await.expect("copy");
        let src = tuples(&store, &source).await;
        same(&src, &tuples(&store, &target).await, &source);
        assert_eq!(report.checkpoints as usize, src.len());
        let blobs = count(
            &pool,
            &format!("SELECT count(*) FROM checkpoint_blobs WHERE thread_id = '{source}'"),
        )
        .await;
        assert_eq!(report.blobs as i64, blobs);
    }
    // Byte-identical rows under the new ids; the originals untouched.
    let after = dump(&pool).await;
    assert_eq!(after.len(), 2 * before.len());
    for row in &before {
        // `(thread,…` → `(thread-copy,…`
        let comma = row.find(',').unwrap();
        let copied = format!("{}-copy{}", &row[..comma], &row[comma..]);
        assert!(after.contains(row) && after.contains(&copied), "{row}");
    }
    let e = store.copy_thread("forked", "subgraph").await.unwrap_err();
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    assert_eq!(dump(&pool).await, after);

    // A bare PostgresStore copies through the public operations (same tuples).
    let bare = PostgresStore::connect(pg.url()).await.expect("connect");
    bare.copy_thread("subgraph", "bare-copy")
        .await
        .expect("bare copy");
    same(
        &tuples(&bare, "subgraph").await,
        &tuples(&bare, "bare-copy").await,
        "bare copy",
    );
    let e = bare.copy_thread("forked", "bare-copy").await.unwrap_err();
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    bare.close().await;
    store.close().await;
}

#[tokio::test]
async fn prune_keep_latest_dry_run_then_real() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = loaded(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let threads: Vec<String> = store
        .list_threads()
        .await
        .expect("threads")
        .into_iter()
        .map(|t| t.thread_id)
        .collect();
    let mut heads = Vec::new();
    for info in store.list_threads().await.expect("threads") {
        for ns in &info.namespaces {
            heads.push(
                store
                    .get_tuple(&info.thread_id, ns, None)
                    .await
                    .expect("get")
                    .expect("latest"),
            );
        }
    }
    let before = dump(&pool).await;
    let blobs_before = count(&pool, "SELECT count(*) FROM checkpoint_blobs").await;
    let dry = store
        .prune(&threads, PruneStrategy::KeepLatest, true)
        .await
        .expect("dry run");
    assert!(dry.dry_run);
    assert_eq!(dump(&pool).await, before, "a dry run wrote");
    assert!(
        dry.checkpoints.len() > 300 && dry.writes > 0 && dry.blobs > 0,
        "{dry:?}"
    );

    let real = store
        .prune(&threads, PruneStrategy::KeepLatest, false)
        .await
        .expect("prune");
    assert_eq!(
        PruneReport {
            dry_run: true,
            ..real.clone()
        },
        dry
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM checkpoint_blobs").await,
        blobs_before - real.blobs as i64
    );
    // Every blob left is referenced by a checkpoint left.
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM checkpoint_blobs b WHERE NOT EXISTS ( \
               SELECT 1 FROM checkpoints c \
               WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns \
               AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
        )
        .await,
        0
    );
    let mut kept = 0;
    for t in &heads {
        let h = &t.header;
        let now = store
            .get_tuple(&h.thread_id, &h.checkpoint_ns, None)
            .await
            .expect("get");
        let gone = real
            .checkpoints
            .iter()
            .any(|c| c.0 == h.thread_id && c.1 == h.checkpoint_ns && c.2 == h.checkpoint_id);
        if gone {
            assert!(
                h.checkpoint_ns.contains(':'),
                "head of {:?} deleted",
                h.checkpoint_ns
            );
            assert!(now.is_none());
            continue;
        }
        let now = now.expect("latest still there");
        kept += 1;
        same(&now.checkpoint, &t.checkpoint, &h.checkpoint_id);
        same(&now.pending_writes, &t.pending_writes, "writes");
        assert_eq!(now.header.metadata, h.metadata);
    }
    assert_eq!(count(&pool, "SELECT count(*) FROM checkpoints").await, kept);
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM checkpoints WHERE parent_checkpoint_id IS NOT NULL"
        )
        .await,
        0
    );
    let again = store
        .prune(&threads, PruneStrategy::KeepLatest, false)
        .await
        .expect("again");
    assert!(again.checkpoints.is_empty() && again.writes == 0 && again.blobs == 0);

    let del = store
        .prune(&owned(&["long", "nope"]), PruneStrategy::Delete, false)
        .await
        .expect("delete");
    assert_eq!(del.checkpoints.len(), 1);
    assert_eq!(
        count(
            &pool,
            "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'long') \
             + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'long') \
             + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'long')"
        )
        .await,
        0
    );
    store.close().await;
}

#[tokio::test]
async fn cross_database_round_trip_sqlite_postgres_sqlite() {
    let pg = flashback_testkit::pg_or_skip!();
    let middle = empty_store(&pg).await;
    let source = flashback_storage::sqlite::SqliteStore::open(
        repo_root()
            .join("tests/fixtures/langgraph.sqlite")
            .to_str()
            .unwrap(),
    )
    .await
    .expect("open fixture");
    let dir = tempfile::tempdir().expect("tempdir");
    let back = SqliteSaver::create(dir.path().join("back.sqlite").to_str().unwrap())
        .await
        .expect("create");
    let mut total = 0;
    for info in source.list_threads().await.expect("threads") {
        let thread = info.thread_id;
        let original = sorted_metadata(tuples(&source, &thread).await);
        let there = copy_thread_between(&source, &middle, &thread, "pg-copy")
            .await
            .unwrap_or_else(|e| panic!("{thread} to Postgres: {e}"));
        assert_eq!(there.checkpoints as usize, original.len());
        let in_pg = tuples(&middle, "pg-copy").await;
        assert_eq!(in_pg.len(), original.len());
        for (a, b) in original.iter().zip(&in_pg) {
            assert_eq!(a.header, b.header, "{thread}");
            assert_eq!(a.pending_writes.len(), b.pending_writes.len(), "{thread}");
        }
        copy_thread_between(&middle, &back, "pg-copy", &format!("{thread}-back"))
            .await
            .unwrap_or_else(|e| panic!("{thread} back to SQLite: {e}"));
        let round = sorted_metadata(tuples(&back, &format!("{thread}-back")).await);
        same(&original, &round, &thread);
        // A second copy into the same thread is refused.
        let e = copy_thread_between(&source, &middle, &thread, "pg-copy")
            .await
            .unwrap_err();
        assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
        middle.delete_thread("pg-copy").await.expect("delete");
        total += original.len();
    }
    assert_eq!(total, 381);
    middle.close().await;
}
