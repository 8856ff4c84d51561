//! PostgresStore against hand-built databases: `get_tuples` against `get_tuple`, and listing
//! with Python's semantics (namespaces, `before`, limits, metadata filters, every thread, and
//! the thread list).
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/store.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_codec::Value;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery};
use serde_json::json;

#[tokio::test]
async fn get_tuples_matches_get_tuple_key_by_key() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2) = (cid(1), cid(2));
    let keys = [
        (T1, "", None),
        (T1, "", Some(c1.as_str())),
        (T1, "", Some(c2.as_str())),
        (T1, "", Some("nope")),
        ("no-such-thread", "", None),
        // The same key twice, and one of another thread with the same id.
        (T1, "", Some(c1.as_str())),
        ("no-such-thread", "", Some(c1.as_str())),
    ];
    let many = store.get_tuples(&keys).await.unwrap();
    assert_eq!(many.len(), keys.len());
    for ((t, ns, id), got) in keys.iter().zip(&many) {
        assert_eq!(
            got,
            &store.get_tuple(t, ns, *id).await.unwrap(),
            "{t} {id:?}"
        );
    }
    assert_eq!(many.iter().filter(|t| t.is_some()).count(), 4);
    // Over several batches (read two at a time): the same answers, in the keys' order.
    let long: Vec<_> = keys
        .iter()
        .cycle()
        .take(keys.len() * 250)
        .copied()
        .collect();
    let answers = store.get_tuples(&long).await.unwrap();
    assert_eq!(answers.len(), long.len());
    for (i, got) in answers.iter().enumerate() {
        assert_eq!(got, &many[i % keys.len()], "key {i}");
    }
}

#[tokio::test]
async fn list_semantics_match_python() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2, c3, s1) = (cid(1), cid(2), cid(3), cid(10));

    // No ns in the query: every namespace, newest first by id.
    let all = store.list_tuples(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(
        ids(&all),
        vec![s1.clone(), c3.clone(), c2.clone(), c1.clone()]
    );
    let headers = store.list_headers(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(
        headers,
        all.iter().map(|t| t.header.clone()).collect::<Vec<_>>()
    );
    assert_eq!(headers[0].checkpoint_ns, "child:1");

    let root = |f: fn(&mut ListQuery)| {
        let mut q = ListQuery {
            thread_id: Some(T1.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        };
        f(&mut q);
        q
    };
    let q = root(|_| {});
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c3.clone(), c2.clone(), c1.clone()]
    );
    let q = root(|q| q.before = Some(cid(3)));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c2.clone(), c1.clone()]
    );
    let q = root(|q| q.limit = Some(1));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![c3.clone()]);
    let q = root(|q| {
        q.before = Some(cid(3));
        q.limit = Some(1);
    });
    assert_eq!(
        hids(&store.list_headers(&q).await.unwrap()),
        vec![c2.clone()]
    );
    let q = root(|q| q.checkpoint_id = Some(cid(2)));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![c2.clone()]);

    // Metadata containment (`metadata @> filter`), nested objects and arrays included.
    let with_filter = |filter: serde_json::Value| ListQuery {
        thread_id: Some(T1.into()),
        filter: filter.as_object().unwrap().clone(),
        ..Default::default()
    };
    let q = with_filter(json!({"source": "loop"}));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![s1.clone(), c3.clone(), c2.clone()]
    );
    let q = with_filter(json!({"run": {"user": "ann"}}));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c3.clone(), c1.clone()]
    );
    let q = with_filter(json!({"run": {"user": "ann", "tags": ["y"]}, "step": 1}));
    assert_eq!(
        hids(&store.list_headers(&q).await.unwrap()),
        vec![c3.clone()]
    );
    let q = with_filter(json!({"parents": {"": c2}}));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![s1.clone()]);
    let q = with_filter(json!({"source": "nope"}));
    assert!(store.list_tuples(&q).await.unwrap().is_empty());

    // No thread: every thread.
    let everything = store.list_headers(&ListQuery::default()).await.unwrap();
    assert_eq!(everything.len(), 5);
    assert_eq!(everything[0].checkpoint_id, cid(20));
    let everything = store.list_tuples(&ListQuery::default()).await.unwrap();
    assert_eq!(everything.len(), 5);
    assert_eq!(
        **value(&everything[0], "count").unwrap(),
        msg(Value::Int(7))
    );

    // Threads: one row each, root namespace first, count over all namespaces.
    let threads = store.list_threads().await.unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0].thread_id, "thread-0");
    assert_eq!(threads[0].checkpoint_count, 1);
    assert_eq!(threads[1].thread_id, T1);
    assert_eq!(
        threads[1].namespaces,
        vec!["".to_owned(), "child:1".to_owned()]
    );
    assert_eq!(threads[1].checkpoint_count, 4);
    assert_eq!(
        threads[1].latest_checkpoint_id.as_deref(),
        Some(c3.as_str())
    );
}
