//! The rights `flashback serve` hands out with its token: without `--allow-run` no command
//! runs, without `--export-dir` no file is written, and with it nothing lands outside it. The
//! desktop app and the CLI keep full rights ([`Policy::full`]).

use crate::common;
use common::*;
use flashback_api::secrets::MemorySecrets;
use flashback_api::*;
use std::path::Path;

fn api_with(dir: &Path, policy: Policy) -> (Api, String) {
    let api = Api::new(ApiConfig {
        host: HostMode::Serve,
        data_dir: dir.join("data"),
        initial: Initial::None,
        secrets: Box::new(MemorySecrets::default()),
        policy,
    })
    .expect("api");
    (api, fixture_copy(dir).to_string_lossy().into_owned())
}

fn rerun(db: &str) -> RerunRequest {
    RerunRequest {
        db: db.to_owned(),
        thread_id: "forked".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: "irrelevant".into(),
        runner: "touch ran".into(),
        timeout_secs: 5,
        resume: None,
    }
}

fn export(db: &str, path: Option<String>) -> ExportRequest {
    ExportRequest {
        db: db.to_owned(),
        thread_id: "forked".into(),
        checkpoint_id: None,
        format: ExportFormat::Json,
        redact: vec![],
        path,
        decrypt: false,
    }
}

#[tokio::test]
async fn serve_without_rights_runs_nothing_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (api, location) = api_with(dir.path(), Policy::serve(false, None).expect("policy"));
    assert!(!api.app_info().await.expect("info").can_run);
    let db = open(&api, &location).await.db;
    let e = api.start_rerun(rerun(&db)).await.expect_err("no run");
    assert_eq!(e.code, ErrorCode::NotAllowed);
    assert!(e.message.contains("--allow-run"), "{e}");
    // Over dispatch (what serve calls) too.
    let args = serde_json::json!({"req": rerun(&db)});
    let e = api
        .dispatch("start_rerun", &args)
        .await
        .expect_err("no run");
    assert_eq!(e.code, ErrorCode::NotAllowed);

    let target = dir.path().join("out.json");
    let e = api
        .start_export(export(&db, Some(target.to_string_lossy().into_owned())))
        .await
        .expect_err("no file");
    assert_eq!(e.code, ErrorCode::NotAllowed);
    assert!(e.message.contains("--export-dir"), "{e}");
    assert!(!target.exists());
    // Without a path the content comes back (the browser downloads it).
    let job = api.start_export(export(&db, None)).await.expect("content");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert!(result.path.is_none());
    assert!(result
        .content
        .is_some_and(|c| c.contains("flashback-audit")));
}

#[tokio::test]
async fn serve_exports_stay_inside_the_export_dir() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).expect("mkdir");
    let policy = Policy::serve(true, Some(&exports)).expect("policy");
    let (api, location) = api_with(dir.path(), policy);
    assert!(api.app_info().await.expect("info").can_run);
    let db = open(&api, &location).await.db;

    let job = api
        .start_export(export(&db, Some("bundle.json".into())))
        .await
        .expect("inside");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    let written = exports
        .canonicalize()
        .expect("canonical")
        .join("bundle.json");
    assert_eq!(
        result.path.as_deref(),
        Some(written.to_string_lossy().as_ref())
    );
    assert!(written.is_file());

    let outside = dir.path().join("escaped.json");
    for path in [
        "../escaped.json".to_owned(),
        outside.to_string_lossy().into_owned(),
    ] {
        let e = api
            .start_export(export(&db, Some(path.clone())))
            .await
            .expect_err(&path);
        assert_eq!(e.code, ErrorCode::NotAllowed, "{path}: {e}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path(), exports.join("up")).expect("symlink");
        let e = api
            .start_export(export(&db, Some("up/escaped.json".into())))
            .await
            .expect_err("through a link");
        assert_eq!(e.code, ErrorCode::NotAllowed, "{e}");
    }
    assert!(!outside.exists());
}

#[tokio::test]
async fn the_desktop_and_the_cli_keep_full_rights() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (api, location) = api_with(dir.path(), Policy::full());
    assert!(api.app_info().await.expect("info").can_run);
    let db = open(&api, &location).await.db;
    let target = dir.path().join("anywhere.json");
    let job = api
        .start_export(export(&db, Some(target.to_string_lossy().into_owned())))
        .await
        .expect("anywhere");
    assert_eq!(finish(&api, &job).await.state, JobState::Succeeded);
    assert!(target.is_file());
    assert!(
        Api::ephemeral()
            .expect("cli")
            .app_info()
            .await
            .expect("info")
            .can_run
    );
}

/// Start `req` as a job and wait for its end (its error, if it failed at start or later).
async fn job_error(api: &Api, started: ApiResult<String>) -> Option<ApiError> {
    match started {
        Err(e) => Some(e),
        Ok(job) => finish(api, &job).await.error,
    }
}

#[cfg(unix)]
#[tokio::test]
async fn serve_writes_no_file_through_a_link_or_onto_a_special_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).expect("mkdir");
    let (api, location) = api_with(
        dir.path(),
        Policy::serve(false, Some(&exports)).expect("policy"),
    );
    let db = open(&api, &location).await.db;
    // Outside the export folder: a file someone would like overwritten.
    let outside = dir.path().join("precious.sqlite");
    std::fs::write(&outside, "precious").expect("write");
    std::fs::hard_link(&outside, exports.join("hard.json")).expect("hard link");
    std::fs::hard_link(&outside, exports.join("hard.sqlite")).expect("hard link");
    std::os::unix::fs::symlink(&outside, exports.join("soft.json")).expect("symlink");
    std::fs::create_dir(exports.join("folder.json")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(exports.join("pipe.json"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    for (name, code) in [
        ("hard.json", ErrorCode::NotAllowed),
        ("soft.json", ErrorCode::NotAllowed),
        ("folder.json", ErrorCode::InvalidInput),
        ("pipe.json", ErrorCode::InvalidInput),
    ] {
        let started = api.start_export(export(&db, Some(name.into()))).await;
        let e = job_error(&api, started).await.expect(name);
        assert_eq!(e.code, code, "{name}: {e}");
    }
    // A conversion opens its SQLite destination: never through a hard link out of the folder.
    let convert = |target: &str| ConvertRequest {
        db: db.clone(),
        target: target.into(),
        to: ConvertTo::ThreeTable,
        whole_blobs: false,
        threads: vec!["forked".into()],
        dry_run: false,
    };
    for (name, code) in [
        ("hard.sqlite", ErrorCode::NotAllowed),
        ("soft.json", ErrorCode::NotAllowed),
        ("pipe.json", ErrorCode::InvalidInput),
        ("folder.json", ErrorCode::InvalidInput),
    ] {
        let started = api.start_convert(convert(name)).await;
        let e = job_error(&api, started).await.expect(name);
        assert_eq!(e.code, code, "{name}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "precious");
    // A plain new name inside still works.
    let started = api.start_convert(convert("fresh.sqlite")).await;
    assert_eq!(job_error(&api, started).await, None);
    assert!(exports.join("fresh.sqlite").is_file());
}
