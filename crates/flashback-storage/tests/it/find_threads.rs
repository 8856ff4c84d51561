//! `find_threads` on the databases the real savers wrote with run metadata
//! (`tests/fixtures/filters_fixture.py`: `filters.sqlite`, `filters-postgres.sql`): the
//! metadata filter as LangGraph's `list(filter=)` matches it, per checkpoint; the time range
//! from the checkpoint ids; newest match first; pages after a cursor. The same answers from
//! SQLite, Postgres and the generic path (`find::find_threads`, which the sources read whole
//! use).

use flashback_storage::find::{self, parse_time, time_bound};
use flashback_storage::{CheckpointStore, ListQuery, ThreadQuery};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn filter(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

async fn ids(store: &dyn CheckpointStore, q: &ThreadQuery) -> Vec<String> {
    let found = store.find_threads(q).await.expect("find_threads");
    // The generic path (every header the filter matches, grouped in memory) agrees.
    let generic = find::find_threads(store, q).await.expect("generic");
    assert_eq!(found, generic, "{q:?}");
    found.into_iter().map(|f| f.info.thread_id).collect()
}

/// The time the first checkpoint of `thread` was made, as the id says.
async fn first_made(store: &dyn CheckpointStore, thread: &str) -> i64 {
    let headers = store
        .list_headers(&ListQuery::thread(thread))
        .await
        .expect("headers");
    let first = headers.last().expect("a checkpoint");
    let at = flashback_storage::pyfmt::uuid6_time(&first.checkpoint_id).expect("v6");
    parse_time(&at).expect("time")
}

pub(crate) async fn check(store: &dyn CheckpointStore) {
    let q = |f: Value| ThreadQuery {
        filter: filter(f),
        limit: 100,
        ..Default::default()
    };
    let user = json!({"user_id": "u-48213"});
    // One of its checkpoints matching is enough: `handover` matches through its second run.
    assert_eq!(
        ids(store, &q(user.clone())).await,
        ["handover", "support-2", "support-1"]
    );
    assert_eq!(
        ids(
            store,
            &q(json!({"user_id": "u-48213", "assistant_id": "asst-support"}))
        )
        .await,
        ["handover", "support-1"]
    );
    // Every key of one checkpoint at once, not keys matched by different checkpoints.
    assert!(ids(
        store,
        &q(json!({"user_id": "u-1", "run_id": "run-handover-2"}))
    )
    .await
    .is_empty());
    assert_eq!(
        ids(store, &q(json!({"source": "input", "step": 3}))).await,
        ["handover"]
    );
    assert!(ids(store, &q(json!({"user_id": "nobody"})))
        .await
        .is_empty());
    // No filter: every thread, newest first.
    assert_eq!(
        ids(store, &q(json!({}))).await,
        ["handover", "plain", "other-user", "support-2", "support-1"]
    );

    // The newest matching checkpoint, and the thread as the thread list describes it.
    let found = store.find_threads(&q(user.clone())).await.expect("find");
    let listed = store.list_threads().await.expect("list");
    for f in &found {
        let info = listed.iter().find(|t| t.thread_id == f.info.thread_id);
        assert_eq!(Some(&f.info), info);
        let newest = store
            .list_headers(&ListQuery {
                thread_id: Some(f.info.thread_id.clone()),
                filter: filter(user.clone()),
                limit: Some(1),
                ..Default::default()
            })
            .await
            .expect("headers");
        assert_eq!(f.matched_checkpoint_id, newest[0].checkpoint_id);
    }

    // Times: threads written about a second apart.
    let other = first_made(store, "other-user").await;
    let since = ThreadQuery {
        since: Some(time_bound(other)),
        ..q(json!({}))
    };
    assert_eq!(
        ids(store, &since).await,
        ["handover", "plain", "other-user"]
    );
    let until = ThreadQuery {
        until: Some(time_bound(other)),
        ..q(user.clone())
    };
    assert_eq!(ids(store, &until).await, ["support-2", "support-1"]);
    // `handover`'s first run (u-1) is before `plain`; its u-48213 run after.
    let plain = first_made(store, "plain").await;
    let window = ThreadQuery {
        since: Some(time_bound(other)),
        until: Some(time_bound(plain)),
        ..q(json!({}))
    };
    assert_eq!(ids(store, &window).await, ["other-user"]);
    let later = ThreadQuery {
        since: Some(time_bound(plain)),
        ..q(json!({"user_id": "u-1"}))
    };
    assert_eq!(ids(store, &later).await, ["handover"]);

    // Pages: two at a time, each after the previous page's last row.
    let mut page = ThreadQuery {
        limit: 2,
        ..q(json!({}))
    };
    let mut all = Vec::new();
    loop {
        let found = store.find_threads(&page).await.expect("page");
        let Some(last) = found.last() else { break };
        page.after = Some((
            last.matched_checkpoint_id.clone(),
            last.info.thread_id.clone(),
        ));
        all.extend(found.into_iter().map(|f| f.info.thread_id));
    }
    assert_eq!(
        all,
        ["handover", "plain", "other-user", "support-2", "support-1"]
    );

    // A key Python's saver would refuse is refused here too.
    let bad = q(json!({"user id": "x"}));
    let e = store.find_threads(&bad).await;
    if store.schema().layout().backend == flashback_storage::layout::Backend::Sqlite {
        assert!(e.expect_err("refused").to_string().contains("user id"));
    }
}

#[tokio::test]
async fn sqlite_finds_threads_by_metadata_and_time() {
    let path = fixture("filters.sqlite");
    let store = flashback_storage::open(
        path.to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("open");
    check(store.as_ref()).await;
}

#[tokio::test]
async fn postgres_finds_threads_by_metadata_and_time() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixture("filters-postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let store = flashback_storage::open(pg.url(), flashback_storage::Read::default())
        .await
        .expect("open");
    check(store.as_ref()).await;
}

/// A checkpoint whose metadata is damaged (not JSON) matches no filter; the other threads are
/// still found (SQLite's `json_extract` would fail the whole query on it).
#[tokio::test]
async fn a_damaged_metadata_row_damages_only_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &path).expect("copy");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute(
        "UPDATE checkpoints SET metadata = x'c1c1ff7b' WHERE rowid = \
         (SELECT min(rowid) FROM checkpoints WHERE thread_id = 'forked')",
        [],
    )
    .expect("damage");
    drop(conn);
    let store = flashback_storage::open(
        path.to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("open");
    let q = ThreadQuery {
        filter: filter(json!({"tenant": "acme"})),
        limit: 100,
        ..Default::default()
    };
    let found = store.find_threads(&q).await.expect("find_threads");
    let ids: Vec<_> = found.iter().map(|f| f.info.thread_id.as_str()).collect();
    assert_eq!(ids, ["chat-tools"]);
    let history = ListQuery {
        filter: filter(json!({"source": "fork"})),
        ..ListQuery::thread("forked")
    };
    assert!(!store
        .list_headers(&history)
        .await
        .expect("history")
        .is_empty());
}
