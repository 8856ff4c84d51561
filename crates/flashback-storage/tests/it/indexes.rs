//! The index advisor (`flashback_storage::indexes`): the advice on a bare and an indexed
//! database, creating and dropping Flashback's indexes (and nothing else), the planner using
//! them, and the reads they serve answering exactly as without them — the newest threads
//! (namespaces, forks, ties of ids across threads) and `find_threads`' filters and time ranges.

use flashback_storage::indexes::{
    self, sqlite_metadata_index, IndexAction, IndexReport, IndexState, RECENT,
};
use flashback_storage::{CheckpointStore, SchemaInfo, ThreadInfo};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// A copy of a fixture in a temporary folder.
fn copied(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::copy(fixture(name), &path).expect("copy");
    let path = path.to_str().expect("path").to_owned();
    (dir, path)
}

async fn open(location: &str) -> Box<dyn CheckpointStore> {
    flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open")
}

async fn run(location: &str, schema: &SchemaInfo, action: IndexAction, names: &[&str]) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let plan = indexes::plan(location, schema, action, &names)
        .await
        .expect("plan");
    indexes::apply(location, schema, &plan, std::sync::Arc::new(indexes::Quiet))
        .await
        .expect("apply");
}

fn state(r: &IndexReport, name: &str) -> IndexState {
    r.indexes
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("{name} is not proposed: {r:?}"))
        .state
}

/// The index names on `checkpoints` in a SQLite file.
fn sqlite_indexes(path: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
        .expect("prepare");
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("names");
    names
}

fn explain(path: &str, sql: &str) -> String {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("prepare");
    let lines = stmt
        .query_map([], |r| r.get::<_, String>(3))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("plan");
    lines.join("; ")
}

/// Every first page, 1 thread to all of them and one more.
async fn pages(store: &dyn CheckpointStore) -> Vec<Vec<ThreadInfo>> {
    let all = store.list_threads().await.expect("threads").len();
    let mut out = Vec::new();
    for n in 1..=all + 1 {
        out.push(store.list_recent_threads(n).await.expect("recent"));
    }
    out
}

#[tokio::test]
async fn sqlite_advice_create_and_drop_on_the_filters_fixture() {
    let (_dir, path) = copied("filters.sqlite");
    let before_indexes = sqlite_indexes(&path);
    let store = open(&path).await;
    let schema = store.schema().clone();
    let bare = indexes::advise(&path, &schema).await.expect("advice");
    assert!(bare.applicable);
    assert_eq!(state(&bare, RECENT), IndexState::Missing);
    let user = sqlite_metadata_index("user_id");
    assert_eq!(state(&bare, &user), IndexState::Missing);
    // A fixture of 23 checkpoints needs none.
    assert!(bare.recommended().is_empty(), "{bare:?}");
    assert!(bare.summary.starts_with("not needed"), "{}", bare.summary);
    let recent = bare
        .indexes
        .iter()
        .find(|i| i.name == RECENT)
        .expect("recent");
    let e = recent.estimate.as_ref().expect("estimate");
    assert!(e.scans && !e.uses_index, "{e:?}");
    // Advice writes nothing.
    assert_eq!(sqlite_indexes(&path), before_indexes);

    let first_pages = pages(store.as_ref()).await;
    run(&path, &schema, IndexAction::Create, &["all"]).await;
    let indexed = indexes::advise(&path, &schema).await.expect("advice");
    assert!(indexed
        .indexes
        .iter()
        .all(|i| i.state == IndexState::Present));
    assert!(indexed.summary.contains("is there"), "{}", indexed.summary);
    let e = indexed.indexes[0].estimate.as_ref().expect("estimate");
    assert!(e.uses_index && !e.scans, "{e:?}");

    // The planner uses them (the metadata filter's own query: `indexes::tests`).
    let plan = explain(
        &path,
        "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints \
         WHERE checkpoint_id >= '1' AND checkpoint_id < '2' GROUP BY thread_id",
    );
    assert!(plan.contains(RECENT), "{plan}");

    // The same answers with the indexes, through the store opened before they existed.
    assert_eq!(pages(store.as_ref()).await, first_pages);
    crate::find_threads::check(store.as_ref()).await;
    crate::find_threads::check(open(&path).await.as_ref()).await;

    // Drop: nothing of Flashback's remains, nothing else goes.
    run(&path, &schema, IndexAction::Drop, &["all"]).await;
    assert_eq!(sqlite_indexes(&path), before_indexes);
    let dropped = indexes::advise(&path, &schema).await.expect("advice");
    assert!(dropped
        .indexes
        .iter()
        .all(|i| i.state == IndexState::Missing));
    assert_eq!(pages(store.as_ref()).await, first_pages);
}

/// Threads that share every checkpoint id (as copied threads do), subgraph namespaces, forks
/// and a thread with subgraph checkpoints only: the newest threads through the index are the
/// primary key's, for every page size.
#[tokio::test]
async fn sqlite_newest_threads_are_the_same_with_and_without_the_index() {
    let (_dir, path) = copied("langgraph.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "INSERT INTO checkpoints SELECT 'copy-' || n.v || '-' || thread_id, checkpoint_ns, \
               checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
             FROM checkpoints, (SELECT 1 AS v UNION SELECT 2 UNION SELECT 3) n;
             INSERT INTO checkpoints SELECT 'sub-only', checkpoint_ns, checkpoint_id, \
               parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints \
             WHERE checkpoint_ns != '' AND thread_id NOT LIKE 'copy-%';",
        )
        .expect("copies");
    }
    let store = open(&path).await;
    let schema = store.schema().clone();
    let bare = pages(store.as_ref()).await;
    assert!(bare.len() > 40, "{}", bare.len());
    run(&path, &schema, IndexAction::Create, &[RECENT]).await;
    assert_eq!(
        sqlite_indexes(&path)
            .iter()
            .filter(|n| n.starts_with("flashback_"))
            .count(),
        1
    );
    let plan = explain(
        &path,
        &format!(
            "SELECT thread_id FROM checkpoints INDEXED BY {RECENT} WHERE checkpoint_ns = '' \
             ORDER BY checkpoint_id DESC, thread_id"
        ),
    );
    assert!(
        plan.contains("COVERING INDEX") && !plan.contains("TEMP B-TREE"),
        "{plan}"
    );
    let indexed = pages(store.as_ref()).await;
    for (n, (a, b)) in bare.iter().zip(&indexed).enumerate() {
        assert_eq!(a, b, "first page of {}", n + 1);
    }
}

/// A damaged metadata row neither fails the index's build nor the filter through it.
#[tokio::test]
async fn a_damaged_metadata_row_does_not_stop_the_metadata_index() {
    let (_dir, path) = copied("filters.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute(
            "UPDATE checkpoints SET metadata = x'c1c1ff7b' WHERE rowid = (SELECT min(rowid) FROM checkpoints)",
            [],
        )
        .expect("damage");
    }
    let store = open(&path).await;
    let schema = store.schema().clone();
    let user = sqlite_metadata_index("user_id");
    run(&path, &schema, IndexAction::Create, &[&user]).await;
    let q = flashback_storage::ThreadQuery {
        filter: serde_json::json!({"user_id": "u-48213"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        limit: 10,
        ..Default::default()
    };
    let found = store.find_threads(&q).await.expect("find");
    assert!(!found.is_empty());
    let none = flashback_storage::ThreadQuery {
        filter: serde_json::json!({"user_id": null})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..q
    };
    store
        .find_threads(&none)
        .await
        .expect("IS NULL still guarded");
}

#[tokio::test]
async fn sources_without_sql_indexes_are_not_applicable() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/py");
    let store = open(dir.to_str().expect("path")).await;
    let r = indexes::advise("", store.schema()).await.expect("advice");
    assert!(
        !r.applicable && r.summary.starts_with("not applicable"),
        "{r:?}"
    );
    let e = indexes::plan("", store.schema(), IndexAction::Create, &["all".into()])
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("not applicable"), "{e}");
}

#[tokio::test]
async fn postgres_advice_create_concurrently_and_drop() {
    let pg = flashback_testkit::pg_or_skip!();
    let (store, schema) = filters_pg(pg.url()).await;
    let bare = indexes::advise(pg.url(), &schema).await.expect("advice");
    assert!(bare.applicable, "{bare:?}");
    assert_eq!(state(&bare, RECENT), IndexState::Missing);
    assert_eq!(state(&bare, indexes::METADATA_GIN), IndexState::Missing);
    let first_pages = pages(store.as_ref()).await;

    run(pg.url(), &schema, IndexAction::Create, &["all"]).await;
    let indexed = indexes::advise(pg.url(), &schema).await.expect("advice");
    assert!(
        indexed
            .indexes
            .iter()
            .all(|i| i.state == IndexState::Present),
        "{indexed:?}"
    );
    assert!(indexed.indexes.iter().all(|i| i.size_bytes.is_some()));
    assert_eq!(pages(store.as_ref()).await, first_pages);
    crate::find_threads::check(store.as_ref()).await;

    // The planner walks the index for the newest threads (sequential scans off: the fixture
    // is tiny, so the planner would rather read it whole).
    let mut conn = pg_conn(pg.url()).await;
    sqlx::query("SET enable_seqscan = off")
        .execute(&mut conn)
        .await
        .expect("set");
    let plan: (serde_json::Value,) = sqlx::query_as(
        "EXPLAIN (FORMAT JSON) SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
         ORDER BY checkpoint_id DESC, thread_id LIMIT 10",
    )
    .fetch_one(&mut conn)
    .await
    .expect("explain");
    assert!(plan.0.to_string().contains(RECENT), "{}", plan.0);

    // An INVALID leftover (a cancelled CONCURRENTLY build) is reported, and rebuilt.
    sqlx::query(
        "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'flashback_checkpoints_metadata'::regclass",
    )
    .execute(&mut conn)
    .await
    .expect("invalidate");
    let invalid = indexes::advise(pg.url(), &schema).await.expect("advice");
    assert_eq!(state(&invalid, indexes::METADATA_GIN), IndexState::Invalid);
    assert!(invalid
        .recommended()
        .contains(&indexes::METADATA_GIN.to_owned()));
    run(pg.url(), &schema, IndexAction::Create, &["all"]).await;
    let rebuilt = indexes::advise(pg.url(), &schema).await.expect("advice");
    assert_eq!(state(&rebuilt, indexes::METADATA_GIN), IndexState::Present);

    run(pg.url(), &schema, IndexAction::Drop, &["all"]).await;
    let left: Vec<(String,)> = sqlx::query_as(
        "SELECT indexname::text FROM pg_indexes WHERE indexname LIKE 'flashback\\_%'",
    )
    .fetch_all(&mut conn)
    .await
    .expect("indexes");
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(pages(store.as_ref()).await, first_pages);
}

/// The filters fixture's dump loaded into the database at `url`, opened, with its schema.
async fn filters_pg(url: &str) -> (Box<dyn CheckpointStore>, SchemaInfo) {
    let dump = std::fs::read_to_string(fixture("filters-postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(url, &dump)
        .await
        .expect("load");
    let store = open(url).await;
    let schema = store.schema().clone();
    (store, schema)
}

async fn pg_conn(url: &str) -> sqlx::PgConnection {
    use sqlx::Connection as _;
    sqlx::PgConnection::connect(url).await.expect("connect")
}

/// Progress that asks to stop once `after` steps were reported, and records them.
struct StopAfter {
    after: usize,
    steps: std::sync::Mutex<Vec<String>>,
    asked: std::sync::atomic::AtomicBool,
}

impl StopAfter {
    fn new(after: usize) -> std::sync::Arc<StopAfter> {
        std::sync::Arc::new(StopAfter {
            after,
            steps: Default::default(),
            asked: Default::default(),
        })
    }

    /// Ask to stop now.
    fn stop(&self) {
        self.asked.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Ask to stop in `ms` milliseconds (while a statement runs).
    fn stop_in(self: &std::sync::Arc<Self>, ms: u64) -> tokio::task::JoinHandle<()> {
        let p = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            p.stop();
        })
    }
}

impl indexes::Progress for StopAfter {
    fn step(&self, done: u64, total: u64, label: &str) {
        let mut steps = self.steps.lock().unwrap();
        steps.push(format!("{done}/{total} {label}"));
        if steps.len() > self.after {
            self.stop();
        }
    }
    fn cancelled(&self) -> bool {
        self.asked.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A plan of `statements` (each naming Flashback's prefix, as `apply` requires).
fn plan_of(statements: &[&str]) -> indexes::IndexPlan {
    indexes::IndexPlan {
        action: IndexAction::Create,
        names: vec!["flashback_slow".into()],
        statements: statements.iter().map(|s| s.to_string()).collect(),
        estimated_bytes: 0,
        estimated_seconds: 0.0,
        note: String::new(),
    }
}

#[tokio::test]
async fn sqlite_a_cancelled_build_stops_its_statement_and_changes_nothing() {
    let (_dir, path) = copied("filters.sqlite");
    let store = open(&path).await;
    let schema = store.schema().clone();
    // Asked before the second statement: the first one's index is rolled back with it.
    let progress = StopAfter::new(1);
    let plan = indexes::plan(&path, &schema, IndexAction::Create, &["all".into()])
        .await
        .expect("plan");
    assert!(plan.statements.len() >= 2, "{plan:?}");
    let e = indexes::apply(&path, &schema, &plan, progress.clone())
        .await
        .expect_err("cancelled");
    assert!(e.to_string().contains(indexes::CANCELLED), "{e}");
    let ours = |path: &str| -> Vec<String> {
        sqlite_indexes(path)
            .into_iter()
            .filter(|n| n.starts_with("flashback_"))
            .collect()
    };
    assert!(ours(&path).is_empty(), "{:?}", ours(&path));
    assert!(progress.steps.lock().unwrap()[0].starts_with("0/"));
    // Asked while a statement runs (one that would never end): interrupted, rolled back.
    let forever = plan_of(&[
        "CREATE TABLE flashback_slow AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
    ]);
    let progress = StopAfter::new(usize::MAX);
    let stopping = progress.stop_in(300);
    let started = std::time::Instant::now();
    let e = indexes::apply(&path, &schema, &forever, progress.clone())
        .await
        .expect_err("interrupted");
    stopping.await.unwrap();
    assert!(e.to_string().contains(indexes::CANCELLED), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let conn = rusqlite::Connection::open(&path).expect("open");
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'flashback%'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(tables, 0, "the interrupted statement left nothing");
    // Not asked: it builds, saying each statement.
    let progress = StopAfter::new(usize::MAX);
    indexes::apply(&path, &schema, &plan, progress.clone())
        .await
        .expect("built");
    let steps = progress.steps.lock().unwrap().clone();
    assert!(
        steps[0].starts_with("0/") && steps[0].contains("creating flashback_"),
        "{steps:?}"
    );
    assert_eq!(
        steps.last().map(String::as_str),
        Some(&*format!("{0}/{0} committing", plan.statements.len()))
    );
    assert_eq!(ours(&path).len(), plan.statements.len());
}

#[tokio::test]
async fn postgres_a_cancelled_build_stops_its_statement_on_the_server() {
    let pg = flashback_testkit::pg_or_skip!();
    let (_store, schema) = filters_pg(pg.url()).await;
    // A statement that would run for a minute, cancelled on the server after 300 ms.
    let slow = plan_of(&["SELECT pg_sleep(60) /* flashback_slow */"]);
    let progress = StopAfter::new(usize::MAX);
    let stopping = progress.stop_in(300);
    let started = std::time::Instant::now();
    let e = indexes::apply(pg.url(), &schema, &slow, progress.clone())
        .await
        .expect_err("cancelled");
    stopping.await.unwrap();
    assert!(e.to_string().contains(indexes::CANCELLED), "{e}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "stopped on the server, not waited out: {:?}",
        started.elapsed()
    );
    let mut conn = pg_conn(pg.url()).await;
    let running: (i64,) = sqlx::query_as(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()",
    )
    .fetch_one(&mut conn)
    .await
    .expect("activity");
    assert_eq!(running.0, 0, "the statement no longer runs");
    // Asked before the second index: the first is whole, the second never begun.
    let plan = indexes::plan(pg.url(), &schema, IndexAction::Create, &["all".into()])
        .await
        .expect("plan");
    assert_eq!(plan.statements.len(), 2, "{plan:?}");
    let e = indexes::apply(pg.url(), &schema, &plan, StopAfter::new(1))
        .await
        .expect_err("cancelled");
    assert!(e.to_string().contains(indexes::CANCELLED), "{e}");
    let advice = indexes::advise(pg.url(), &schema).await.expect("advice");
    let states: Vec<IndexState> = advice.indexes.iter().map(|i| i.state).collect();
    assert_eq!(
        states,
        [IndexState::Present, IndexState::Missing],
        "{advice:?}"
    );
}
