//! Jobs on the SQLite fixture: export with progress and cancel, re-run with a live tail.

use crate::common;
use common::*;
use flashback_api::*;

#[tokio::test]
async fn export_job_reports_progress_and_the_file_verifies() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;

    // To a file, as HTML.
    let out = dir.path().join("long.html");
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Html,
            redact: vec!["*token*".into()],
            path: Some(out.to_string_lossy().into_owned()),
            decrypt: false,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let progress = done.progress.expect("progress");
    assert_eq!((progress.done, progress.total), (300, 300));
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert_eq!(result.checkpoints, 300);
    assert!(result.content.is_none());
    let report = api
        .verify_export(VerifyRequest {
            path: result.path.clone(),
            content: None,
        })
        .await
        .expect("verify");
    assert!(report.ok, "{:?}", report.problems);

    // As content (the browser downloads it), then tampered with.
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: None,
            decrypt: false,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert_eq!(result.file_name, "chat-tools-tree.json");
    let content = result.content.expect("content");
    assert!(
        api.verify_export(VerifyRequest {
            path: None,
            content: Some(content.clone()),
        })
        .await
        .expect("verify")
        .ok
    );
    let tampered = content.replacen("What is 2+3", "What is 9+9", 1);
    let report = api
        .verify_export(VerifyRequest {
            path: None,
            content: Some(tampered),
        })
        .await
        .expect("verify");
    assert!(!report.ok);

    // A folder that does not exist is refused before any work.
    let err = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: Some(
                dir.path()
                    .join("nope/x.json")
                    .to_string_lossy()
                    .into_owned(),
            ),
            decrypt: false,
        })
        .await
        .expect_err("missing folder");
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn an_export_can_be_cancelled() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;
    let out = dir.path().join("never.json");
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: Some(out.to_string_lossy().into_owned()),
            decrypt: false,
        })
        .await
        .expect("start");
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel");
    // `#[tokio::test]` runs on one thread and neither call above yields to the spawned job, so
    // the cancel is set before the export reads its first checkpoint: the outcome is certain.
    // (Cancelling part-way through hashing is the engine's `export_bundle` test.)
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Cancelled, "{:?}", done.error);
    let err = done.error.expect("a cancelled job carries an error");
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(!out.exists(), "a cancelled export leaves no file");
    assert!(
        std::fs::read_dir(dir.path()).expect("list").all(|e| !e
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .contains("never")),
        "nor a temporary file"
    );
}

#[tokio::test]
async fn rerun_tails_new_checkpoints_and_output_and_can_be_stopped() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let g = graph(&api, &db, "forked").await;
    let from = g.rows[2].id.clone();
    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from.clone(),
            runner: "echo \"resuming $FLASHBACK_THREAD_ID from $FLASHBACK_CHECKPOINT_ID\"; echo oops >&2; echo \"resume=$FLASHBACK_RESUME\"".into(),
            timeout_secs: 30,
            resume: Some(serde_json::json!({"answer": "yes", "n": 2})),
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let fork: ForkResult = serde_json::from_value(done.result.expect("fork")).expect("shape");
    assert_eq!(fork.parent_checkpoint_id, from);
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Checkpoint { checkpoint_id, .. } if *checkpoint_id == fork.checkpoint_id)));
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Output { stream, line } if stream == "stdout" && line.contains(&fork.checkpoint_id))));
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Output { stream, line } if stream == "stderr" && line == "oops")));
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Output { line, .. } if line == r#"resume={"answer":"yes","n":2}"#)));
    // The runner is remembered for this database.
    let info = api.app_info().await.expect("info");
    assert!(info.settings.iter().any(|s| s.key.starts_with("runner:")));

    let started = std::time::Instant::now();
    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from.clone(),
            runner: "sleep 60 & sleep 60; wait".into(),
            timeout_secs: 120,
            resume: None,
        })
        .await
        .expect("start");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Cancelled);
    assert!(started.elapsed().as_secs() < 20, "stopped promptly");
    assert!(done.error.expect("why").message.contains("kept"));

    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from,
            runner: "exit 3".into(),
            timeout_secs: 30,
            resume: None,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    assert!(done.error.expect("why").message.contains("runner failed"));

    // The failed re-run's fork (its first checkpoint event) goes with delete_branch, nothing else.
    let fork_id = done
        .events
        .iter()
        .find_map(|e| match e {
            JobEvent::Checkpoint { checkpoint_id, .. } => Some(checkpoint_id.clone()),
            JobEvent::Output { .. } | JobEvent::SearchHit { .. } => None,
        })
        .expect("the fork");
    let before = graph(&api, &db, "forked").await.rows.len();
    let req = |dry_run| DeleteBranchRequest {
        db: db.db.clone(),
        thread_id: "forked".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: fork_id.clone(),
        dry_run,
        expect_checkpoints: None,
    };
    let preview = api.delete_branch(req(true)).await.expect("preview");
    assert_eq!(preview.checkpoints.len(), 1, "{preview:?}");
    assert!(preview.dry_run);
    assert_eq!(graph(&api, &db, "forked").await.rows.len(), before);
    let gone = api.delete_branch(req(false)).await.expect("delete");
    assert_eq!(gone.checkpoints, preview.checkpoints);
    let after = graph(&api, &db, "forked").await;
    assert_eq!(after.rows.len(), before - 1);
    assert!(after.rows.iter().all(|r| r.id != fork_id));
    // Again: not found. The thread's first checkpoint: refused (that is Delete thread).
    let again = api.delete_branch(req(false)).await.expect_err("gone");
    assert_eq!(again.code, ErrorCode::NotFound);
    let first = after
        .rows
        .iter()
        .find(|r| r.parent_id.is_none())
        .expect("a root")
        .id
        .clone();
    let refused = api
        .delete_branch(DeleteBranchRequest {
            checkpoint_id: first,
            ..req(false)
        })
        .await
        .expect_err("the root");
    assert_eq!(refused.code, ErrorCode::InvalidInput, "{refused:?}");
    assert!(refused.message.contains("delete the thread"));
}
