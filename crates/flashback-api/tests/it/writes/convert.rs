//! `start_convert`: the fixture into the three-table store and back to LangGraph's schema
//! reads equal, checkpoint by checkpoint; a dry run writes nothing and says what the values
//! take; a destination in the other schema is refused.

use crate::common;
use common::three::{checkpoints, convert};
use common::*;
use flashback_api::*;

#[tokio::test]
async fn the_fixture_converted_to_three_table_and_back_reads_equal() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;
    let three = dir.path().join("three.sqlite");

    let dry = convert(&api, &db.db, &three, ConvertTo::ThreeTable, true).await;
    assert_eq!(dry.state, JobState::Succeeded, "{:?}", dry.error);
    let dry: ConvertReport = serde_json::from_value(dry.result.expect("report")).expect("shape");
    assert!(dry.dry_run && !three.exists(), "a dry run writes nothing");
    let smaller = dry.three_table_bytes.expect("three-table estimate");
    assert!(
        dry.checkpoints > 300 && smaller > 0.0 && smaller < dry.value_bytes,
        "{dry:?}"
    );

    let done = convert(&api, &db.db, &three, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let report: ConvertReport =
        serde_json::from_value(done.result.expect("report")).expect("shape");
    assert_eq!(
        (report.threads, report.checkpoints, report.writes),
        (dry.threads, dry.checkpoints, dry.writes)
    );
    let progress = done.progress.expect("progress");
    assert_eq!(
        (progress.done, progress.total),
        (report.threads, report.threads)
    );

    let three_db = open(&api, three.to_str().expect("utf-8")).await;
    assert!(
        three_db.schema.starts_with("three-table store"),
        "{}",
        three_db.schema
    );
    let back = dir.path().join("back.sqlite");
    let done = convert(&api, &three_db.db, &back, ConvertTo::Langgraph, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let back_db = open(&api, back.to_str().expect("utf-8")).await;

    let original = checkpoints(&api, &db.db).await;
    assert_eq!(original.len() as u32, report.checkpoints);
    assert_eq!(
        checkpoints(&api, &three_db.db).await,
        original,
        "the three-table copy"
    );
    assert_eq!(
        checkpoints(&api, &back_db.db).await,
        original,
        "converted back"
    );

    // The source itself is refused before anything starts.
    let e = api
        .start_convert(ConvertRequest {
            db: three_db.db.clone(),
            target: three.to_string_lossy().into_owned(),
            to: ConvertTo::Langgraph,
            whole_blobs: false,
            threads: Vec::new(),
            dry_run: false,
        })
        .await
        .expect_err("the source");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    // A destination already in the other schema is refused, and nothing is added to it.
    let other = dir.path().join("other.sqlite");
    let done = convert(&api, &db.db, &other, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let refused = convert(&api, &three_db.db, &other, ConvertTo::Langgraph, false).await;
    assert_eq!(refused.state, JobState::Failed);
    assert!(refused
        .error
        .expect("why")
        .message
        .contains("already holds"));
}

/// One checkpoint document of `long` made unreadable.
fn damage_long(path: &std::path::Path) {
    let damaged = rusqlite::Connection::open(path)
        .and_then(|c| {
            c.execute(
                "UPDATE checkpoints SET checkpoint = x'c1ffff' WHERE thread_id = 'long' \
                 AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints \
                 WHERE thread_id = 'long')",
                [],
            )
        })
        .expect("damage");
    assert_eq!(damaged, 1);
}

#[tokio::test]
async fn a_thread_that_cannot_be_read_as_stored_is_left_out_and_named() {
    let OpenedFixture { dir, api, db, path } = opened_fixture().await;
    damage_long(&path);
    let three = dir.path().join("three.sqlite");
    for dry_run in [true, false] {
        let done = convert(&api, &db.db, &three, ConvertTo::ThreeTable, dry_run).await;
        assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
        let report: ConvertReport =
            serde_json::from_value(done.result.expect("report")).expect("shape");
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        assert_eq!(report.skipped[0].thread_id, "long");
        assert!(
            report.skipped[0]
                .reason
                .contains("cannot be read as stored"),
            "{report:?}"
        );
        assert!(report.threads >= 10, "the others are converted: {report:?}");
    }
    let copy = open(&api, three.to_str().expect("utf-8")).await;
    let threads = api
        .list_threads(ThreadsRequest {
            db: copy.db,
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    assert!(threads.iter().all(|t| t.thread_id != "long"));
    assert!(threads.iter().any(|t| t.thread_id == "chat-tools"));
}

#[tokio::test]
async fn a_conversion_that_leaves_out_every_thread_fails_and_leaves_nothing() {
    let OpenedFixture { dir, api, db, path } = opened_fixture().await;
    damage_long(&path);
    let three = dir.path().join("three.sqlite");
    let converted = |thread: &str, dry_run: bool| {
        let req = ConvertRequest {
            db: db.db.clone(),
            target: three.to_string_lossy().into_owned(),
            to: ConvertTo::ThreeTable,
            whole_blobs: false,
            threads: vec![thread.to_owned()],
            dry_run,
        };
        let api = &api;
        async move {
            let job = api.start_convert(req).await.expect("start");
            finish(api, &job).await
        }
    };
    for dry_run in [true, false] {
        let done = converted("long", dry_run).await;
        assert_eq!(done.state, JobState::Failed, "dry run {dry_run}");
        let e = done.error.expect("why");
        assert_eq!(e.code, ErrorCode::Corrupt, "{e}");
        assert!(e.message.contains("every thread was left out"), "{e}");
        assert!(
            e.message
                .contains("left out — thread \"long\": checkpoint "),
            "{e}"
        );
        // The file this conversion created is gone again (a dry run creates none).
        assert!(!three.exists(), "dry run {dry_run}");
    }
    // A thread that is not there: not found, before anything is created.
    let e = converted("no-such-thread", false).await.error.expect("why");
    assert_eq!(e.code, ErrorCode::NotFound, "{e}");
    assert!(!three.exists());
}
