//! `start_index_apply`: the index advisor's build as a job — it ends with the same
//! `IndexApplyReport` as `index_apply` (the indexes there, the reads timed before and after),
//! says each statement as its progress, and a bad index name is refused before any job starts.
//! (Stopping a build mid-statement is `flashback-storage`'s `indexes` tests, on both backends.)

use crate::common;
use common::*;
use flashback_api::*;

#[tokio::test]
async fn the_index_build_runs_as_a_job_and_ends_with_its_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("filters.sqlite");
    std::fs::copy(fixtures().join("filters.sqlite"), &copy).expect("copy");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, copy.to_str().expect("utf-8")).await;
    let req = |names: &[&str], dry_run| IndexApplyRequest {
        db: db.db.clone(),
        action: IndexAction::Create,
        names: names.iter().map(|n| n.to_string()).collect(),
        dry_run,
    };
    let e = api
        .start_index_apply(req(&["no_such_index"], false))
        .await
        .expect_err("refused");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);

    let job = api
        .start_index_apply(req(&["all"], false))
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    assert_eq!(done.kind, JobKind::Index);
    let report: IndexApplyReport =
        serde_json::from_value(done.result.expect("a result")).expect("a report");
    assert!(!report.dry_run && report.seconds.is_some(), "{report:?}");
    assert_eq!(report.before.len(), report.after.len());
    let advice = report.advice.expect("the advice after");
    assert!(
        advice
            .indexes
            .iter()
            .all(|i| i.state == IndexState::Present),
        "{advice:?}"
    );
    let progress = done.progress.expect("progress");
    assert_eq!(
        (progress.done, progress.total),
        (
            report.plan.statements.len() as u32,
            report.plan.statements.len() as u32
        )
    );
    // Again: nothing left to build, the same report shape at once.
    let job = api
        .start_index_apply(req(&["all"], false))
        .await
        .expect("start");
    let again = finish(&api, &job).await;
    let report: IndexApplyReport =
        serde_json::from_value(again.result.expect("a result")).expect("a report");
    assert!(report.plan.statements.is_empty(), "{report:?}");
}
