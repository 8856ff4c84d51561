//! Finding threads through the API (`list_threads` with `filter`/`since`/`until`/`status`/
//! `after`) and the metadata keys it suggests, on the databases the real savers wrote with run
//! metadata (`filters.sqlite`, `filters-postgres.sql`): the same answers from SQLite and
//! Postgres, and from the same threads converted into the three-table store on each.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::json;

async fn check(api: &Api, db: &DbInfo) {
    let find = |filter: serde_json::Value, status: Vec<ThreadStatus>| ThreadsRequest {
        db: db.db.clone(),
        filter: filter.as_object().cloned().unwrap_or_default(),
        status,
        ..Default::default()
    };
    let ids = |t: &[ThreadSummary]| t.iter().map(|t| t.thread_id.clone()).collect::<Vec<_>>();
    let found = api
        .list_threads(find(json!({"user_id": "u-48213"}), vec![]))
        .await
        .expect("find");
    assert_eq!(ids(&found), ["handover", "support-2", "support-1"]);
    assert!(found
        .iter()
        .all(|t| t.cursor.is_some() && t.matched_checkpoint_id.is_some()));
    let waiting = api
        .list_threads(find(
            json!({"user_id": "u-48213"}),
            vec![ThreadStatus::Interrupted],
        ))
        .await
        .expect("find");
    assert_eq!(ids(&waiting), ["support-2"]);
    // Paged: one at a time, each after the last.
    let mut req = find(json!({"graph_id": "support"}), vec![ThreadStatus::Finished]);
    req.limit = Some(1);
    let mut seen = Vec::new();
    loop {
        let page = api.list_threads(req.clone()).await.expect("page");
        let Some(last) = page.last() else { break };
        req.after = last.cursor.clone();
        seen.extend(ids(&page));
    }
    assert_eq!(seen, ["handover", "other-user", "support-1"]);
    // A plain list is unchanged.
    let all = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(all.len(), 5);
    assert!(all
        .iter()
        .all(|t| t.cursor.is_none() && t.matched_checkpoint_id.is_none()));
    let e = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            since: Some("last week".into()),
            ..Default::default()
        })
        .await
        .expect_err("not a time");
    assert_eq!(e.code, ErrorCode::InvalidInput);

    let keys = api
        .metadata_keys(MetadataKeysRequest { db: db.db.clone() })
        .await
        .expect("keys");
    let user = keys.iter().find(|k| k.key == "user_id").expect("user_id");
    assert!(user.values.contains(&json!("u-48213")), "{user:?}");
    for k in ["assistant_id", "graph_id", "run_id", "source", "step"] {
        assert!(keys.iter().any(|x| x.key == k), "{k}: {keys:?}");
    }
}

#[tokio::test]
async fn sqlite_finds_threads_and_suggests_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let path = fixtures().join("filters.sqlite");
    let db = open(&api, path.to_str().expect("utf-8")).await;
    check(&api, &db).await;
}

#[tokio::test]
async fn postgres_finds_threads_and_suggests_keys() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("filters-postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    check(&api, &db).await;
}

/// `filters.sqlite` opened, and converted into the three-table store at `target`, opened too.
async fn three_table(api: &Api, dir: &std::path::Path, target: &str) -> DbInfo {
    let path = fixtures().join("filters.sqlite");
    let copy = dir.join("filters.sqlite");
    std::fs::copy(&path, &copy).expect("copy");
    let db = open(api, copy.to_str().expect("utf-8")).await;
    let to = std::path::PathBuf::from(target);
    let done = common::three::convert(api, &db.db, &to, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    open(api, target).await
}

#[tokio::test]
async fn the_three_table_store_on_sqlite_finds_the_same_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let target = dir.path().join("three.sqlite");
    let db = three_table(&api, dir.path(), target.to_str().expect("utf-8")).await;
    check(&api, &db).await;
}

#[tokio::test]
async fn the_three_table_store_on_postgres_finds_the_same_threads() {
    let pg = flashback_testkit::pg_or_skip!();
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = three_table(&api, dir.path(), pg.url()).await;
    check(&api, &db).await;
}
