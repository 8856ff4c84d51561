//! Jobs that go wrong in unusual ways: a job whose work panics ends as `failed` with a clear
//! error (not "running" forever), cancelling it afterwards is harmless, and the backend keeps
//! answering.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::Value as Json;

async fn settle(api: &Api, job: &str) -> JobSnapshot {
    for _ in 0..500 {
        let s = api
            .job_poll(JobPollRequest {
                job: job.to_owned(),
                cursor: 0,
            })
            .await
            .expect("poll");
        if s.state != JobState::Running {
            return s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("job {job} is still running after 5 s");
}

#[tokio::test]
async fn a_panicking_job_fails_cleanly_and_cancel_after_it_is_harmless() {
    let OpenedFixture { api, db, .. } = opened_fixture().await;
    let job = api.run_as_job(JobKind::Export, || panic!("boom in the job"));
    let done = settle(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    let error = done.error.expect("an error");
    assert_eq!(error.code, ErrorCode::Internal);
    assert!(
        error.message.contains("export job failed"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("boom in the job"),
        "{}",
        error.message
    );
    assert_eq!(error.message.lines().count(), 1, "{}", error.message);

    // Cancelling a job that already failed changes nothing.
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel of a failed job");
    let again = settle(&api, &job).await;
    assert_eq!(again.state, JobState::Failed);
    assert_eq!(again.error.map(|e| e.code), Some(ErrorCode::Internal));

    // A panic with a non-text payload says so too.
    let job = api.run_as_job(JobKind::Rerun, || std::panic::panic_any(42_u8));
    let done = settle(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    assert!(
        done.error
            .expect("error")
            .message
            .contains("re-run job failed"),
        "re-run named"
    );

    // A job that succeeds, then is cancelled, keeps its result.
    let job = api.run_as_job(JobKind::Export, || Ok(Json::from("fine")));
    assert_eq!(settle(&api, &job).await.state, JobState::Succeeded);
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel of a finished job");
    let kept = settle(&api, &job).await;
    assert_eq!(kept.state, JobState::Succeeded);
    assert_eq!(kept.result, Some(Json::from("fine")));

    // The backend still answers.
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert_eq!(threads.len(), 12);
}
