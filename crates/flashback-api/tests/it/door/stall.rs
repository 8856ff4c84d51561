//! A Postgres server that stops answering while a session is open: commands end with
//! `{code: "timeout"}` in about the location's time limit, a job waiting on the server ends
//! with that error, and cancelling one ends it without waiting for the server. Through
//! flashback-testkit's stalling proxy, on the database written by the real `PostgresSaver`.

use crate::common;
use common::*;
use flashback_api::*;
use flashback_testkit::stall::{Stall, StallProxy};
use flashback_testkit::{postgres_fixture_or_skip, TestPg};
use std::time::{Duration, Instant};

/// The proxy's URL with one-second limits (libpq's `connect_timeout` and `options`).
fn one_second(proxy: &StallProxy, pg: &TestPg) -> String {
    format!(
        "{}&connect_timeout=1&options=-c%20statement_timeout%3D1s",
        proxy.url(pg.url())
    )
}

/// The fixture, a forwarding proxy in front of it, and an API (its data in a temporary
/// directory).
async fn behind_proxy() -> Option<(TestPg, StallProxy, tempfile::TempDir, Api)> {
    let pg = postgres_fixture_or_skip().await?;
    let proxy = StallProxy::start_for(pg.url(), Stall::Never).expect("proxy");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    Some((pg, proxy, dir, api))
}

fn search(db: &str) -> ValueSearchRequest {
    ValueSearchRequest {
        db: db.to_owned(),
        query: "hello".into(),
        limit: None,
        threads: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_and_jobs_end_with_the_timeout() {
    let Some((pg, proxy, _dir, api)) = behind_proxy().await else {
        return;
    };
    let db = open(&api, &one_second(&proxy, &pg)).await;
    let threads = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads before the stall");
    let server = format!("Postgres at 127.0.0.1:{}/{}", proxy.port(), pg.database());
    proxy.stall_now();

    let started = Instant::now();
    let e = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: Some(50),
            ..Default::default()
        })
        .await
        .expect_err("stalled");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.code, ErrorCode::Timeout);
    assert_eq!(e.code.exit_code(), 1);
    assert_eq!(
        e.message,
        format!("{server} did not answer within 1 s while reading the thread list")
    );

    // The activity of many threads stops at the first that the server does not answer for.
    let started = Instant::now();
    let e = api
        .thread_activity(ThreadActivityRequest {
            db: db.db.clone(),
            thread_ids: threads.iter().map(|t| t.thread_id.clone()).collect(),
        })
        .await
        .expect_err("stalled");
    assert_eq!(e.code, ErrorCode::Timeout, "{}", e.message);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{} threads took {:?}",
        threads.len(),
        started.elapsed()
    );

    // A job waiting on the server ends with the error.
    let job = api.start_search(search(&db.db)).await.expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    let e = done.error.expect("the error");
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(e.message.starts_with(&server), "{}", e.message);
    let job = api
        .start_storage_report(StorageRequest {
            db: db.db.clone(),
            thread_id: None,
            top: None,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    let e = done.error.expect("the error");
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(e.message.starts_with(&server), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_ends_a_job_that_waits_on_the_server() {
    let Some((pg, proxy, _dir, api)) = behind_proxy().await else {
        return;
    };
    // The default limits (10 s to connect, 30 s a statement): far longer than the cancel.
    let db = open(&api, &proxy.url(pg.url())).await;
    proxy.stall_now();
    for start in [
        api.start_search(search(&db.db)).await,
        api.start_storage_report(StorageRequest {
            db: db.db.clone(),
            thread_id: None,
            top: None,
        })
        .await,
    ] {
        let job = start.expect("start");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = Instant::now();
        api.job_cancel(JobRequest { job: job.clone() })
            .await
            .expect("cancel");
        let done = finish(&api, &job).await;
        let took = asked.elapsed();
        assert_eq!(done.state, JobState::Cancelled, "{:?}", done.error);
        assert!(took < Duration::from_secs(4), "cancelling took {took:?}");
        let e = done.error.expect("why");
        assert_eq!(e.code, ErrorCode::Cancelled);
        assert!(
            e.message
                .ends_with("was cancelled while waiting for the database"),
            "{}",
            e.message
        );
    }
}
