//! The value search job on the SQLite fixture: matches with their paths, the limit, a subset of
//! threads, bad queries, and a cancel between batches.

use crate::common;
use common::*;
use flashback_api::*;

fn request(db: &DbInfo, query: &str) -> ValueSearchRequest {
    ValueSearchRequest {
        db: db.db.clone(),
        query: query.into(),
        limit: None,
        threads: None,
    }
}

/// The `search_hit` events of a finished search and its summary.
async fn search(
    api: &Api,
    req: ValueSearchRequest,
) -> (Vec<(String, String, Vec<ValueHit>)>, ValueSearchSummary) {
    let job = api.start_search(req).await.expect("start");
    let done = finish(api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    assert_eq!(done.kind, JobKind::Search);
    let hits = done
        .events
        .into_iter()
        .map(|e| match e {
            JobEvent::SearchHit {
                thread_id,
                checkpoint_id,
                matches,
                ..
            } => (thread_id, checkpoint_id, matches),
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    let summary = serde_json::from_value(done.result.expect("result")).expect("summary");
    (hits, summary)
}

#[tokio::test]
async fn finds_a_value_in_the_one_thread_that_holds_it() {
    let OpenedFixture { api, db, .. } = opened_fixture().await;
    let threads = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    let latest = threads
        .iter()
        .find(|t| t.thread_id == "rich-types")
        .and_then(|t| t.latest_checkpoint_id.clone())
        .expect("rich-types");

    // In any case; the thread's latest checkpoint, with the path and a snippet.
    let (hits, summary) = search(&api, request(&db, "LOVELACE")).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let (thread, checkpoint, matches) = &hits[0];
    assert_eq!((thread.as_str(), checkpoint), ("rich-types", &latest));
    assert_eq!(
        matches,
        &[ValueHit {
            path: "customer.address.city".into(),
            snippet: "Lovelace".into(),
        }]
    );
    assert_eq!(summary.threads_total, threads.len() as u32);
    assert_eq!(summary.threads_searched, summary.threads_total);
    assert_eq!(summary.threads_matched, 1);
    assert!(!summary.truncated);
    assert_eq!((summary.threads_locked, summary.threads_unreadable), (0, 0));

    // Inside messages: the path the state view and `watch_key` use.
    let (hits, _) = search(&api, request(&db, "multiply the two")).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, "chat-tools");
    let path = &hits[0].2[0].path;
    assert!(
        path.starts_with("messages[") && path.ends_with("].content"),
        "{path}"
    );

    // Only the threads asked for.
    let (hits, summary) = search(
        &api,
        ValueSearchRequest {
            threads: Some(vec!["chat-tools".into(), "long".into()]),
            ..request(&db, "lovelace")
        },
    )
    .await;
    assert!(hits.is_empty());
    assert_eq!((summary.threads_total, summary.threads_searched), (2, 2));

    // Nothing anywhere.
    let (hits, summary) = search(&api, request(&db, "no such text zq")).await;
    assert!(hits.is_empty());
    assert_eq!(summary.threads_matched, 0);
}

#[tokio::test]
async fn stops_at_the_limit_newest_thread_first() {
    let OpenedFixture { api, db, .. } = opened_fixture().await;
    // Every thread's state has a key or value with an "e" in it.
    let (all, summary) = search(&api, request(&db, "e")).await;
    assert!(all.len() > 3, "{all:?}");
    assert!(!summary.truncated);
    let (hits, summary) = search(
        &api,
        ValueSearchRequest {
            limit: Some(2),
            ..request(&db, "e")
        },
    )
    .await;
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].0, all[0].0);
    assert_eq!(hits[1].0, all[1].0);
    assert!(summary.truncated);
    assert_eq!(summary.threads_matched, 2);
    assert!(summary.threads_searched < summary.threads_total);
    // Newest first: by the latest checkpoint id.
    let ids: Vec<&String> = all.iter().map(|h| &h.1).collect();
    assert!(ids.windows(2).all(|w| w[0] >= w[1]), "{ids:?}");
    // At most five matches per thread.
    assert!(all.iter().all(|h| !h.2.is_empty() && h.2.len() <= 5));
}

#[tokio::test]
async fn bad_requests_are_refused_before_any_work() {
    let OpenedFixture { api, db, .. } = opened_fixture().await;
    for (req, what) in [
        (request(&db, "   "), "enter some text"),
        (request(&db, &"x".repeat(500)), "too long"),
        (
            ValueSearchRequest {
                limit: Some(0),
                ..request(&db, "x")
            },
            "at least 1",
        ),
    ] {
        let e = api.start_search(req).await.expect_err(what);
        assert_eq!(e.code, ErrorCode::InvalidInput, "{e:?}");
        assert!(e.message.contains(what), "{e:?}");
    }
    let e = api
        .start_search(ValueSearchRequest {
            db: "nope".into(),
            ..request(&db, "x")
        })
        .await
        .expect_err("not open");
    assert_eq!(e.code, ErrorCode::NotOpen);
}

#[tokio::test]
async fn a_cancel_stops_the_search_between_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    // 1,000 more threads (copies of a small one): several batches.
    rusqlite::Connection::open(&path)
        .expect("open rw")
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
             INSERT INTO checkpoints
               SELECT 'bulk-' || i, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
                      checkpoint, metadata
               FROM checkpoints, n WHERE thread_id = 'durability-exit';",
        )
        .expect("copies");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;

    let job = api.start_search(request(&db, "e")).await.expect("start");
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Cancelled, "{:?}", done.result);
    let e = done.error.expect("error");
    assert_eq!(e.code, ErrorCode::Cancelled);
    assert!(e.message.contains("of 1012 threads"), "{e:?}");
    // What was found before the stop stays readable; well short of every thread.
    assert!(done.events.len() < 1012);

    // Not cancelled, the same search goes through every batch.
    let (hits, summary) = search(
        &api,
        ValueSearchRequest {
            limit: Some(5000),
            ..request(&db, "e")
        },
    )
    .await;
    assert_eq!(summary.threads_total, 1012);
    assert_eq!(summary.threads_searched, 1012);
    assert!(hits.len() > 1000);
}
