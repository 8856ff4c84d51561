//! The replay API on the committed fixture (written by the real LangGraph).

use flashback_engine::replay::replay;
use flashback_storage::sqlite::SqliteStore;
use flashback_storage::CheckpointStore;
use std::path::PathBuf;

async fn fixture() -> SqliteStore {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    SqliteStore::open(path.to_str().expect("path"))
        .await
        .expect("open fixture")
}

#[tokio::test]
async fn the_head_branch_replays_root_first_with_writes_and_changes() {
    let store = fixture().await;
    let steps = replay(&store, "reducers", "", None, &Default::default())
        .await
        .expect("replay");
    assert!(steps.len() >= 5, "{} steps", steps.len());
    assert_eq!(
        steps[0].source.as_deref(),
        Some("input"),
        "starts at the input checkpoint"
    );
    assert_eq!(steps[0].step, Some(-1));
    for pair in steps.windows(2) {
        assert_eq!(
            pair[0].next_checkpoint_id.as_deref(),
            Some(pair[1].checkpoint_id.as_str())
        );
        assert!(
            !pair[0].changed_channels.is_empty(),
            "every step changes something"
        );
    }
    let last = steps.last().expect("tip");
    assert_eq!(last.next_checkpoint_id, None);
    assert!(last.changed_channels.is_empty());
    // The tasks due at each step wrote the channels that changed in the next checkpoint.
    let step0 = &steps[1];
    assert!(!step0.tasks.tasks.is_empty(), "tasks due after step 0");
    let written: Vec<&str> = step0.writes.iter().map(|w| w.channel.as_str()).collect();
    assert!(
        !written.is_empty(),
        "writes recorded against the checkpoint"
    );
}

#[tokio::test]
async fn a_fork_branch_replays_through_its_fork_point() {
    let store = fixture().await;
    let head = replay(&store, "forked", "", None, &Default::default())
        .await
        .expect("head branch");
    // Every branch tip replays; branches share their prefix up to the fork point.
    let tips: Vec<String> = store
        .list_headers(&flashback_storage::ListQuery::thread("forked"))
        .await
        .expect("headers")
        .into_iter()
        .map(|h| h.checkpoint_id)
        .collect();
    let mut lengths = Vec::new();
    for tip in &tips {
        let steps = replay(&store, "forked", "", Some(tip), &Default::default())
            .await
            .expect("branch");
        assert_eq!(
            steps.last().map(|s| s.checkpoint_id.as_str()),
            Some(tip.as_str())
        );
        assert_eq!(steps[0].checkpoint_id, head[0].checkpoint_id, "same root");
        lengths.push(steps.len());
    }
    assert!(
        lengths.iter().any(|&l| l != head.len()),
        "branches differ in length"
    );
    let err = replay(&store, "forked", "", Some("nope"), &Default::default())
        .await
        .expect_err("unknown tip");
    assert!(err.to_string().contains("nope"), "{err}");
    assert!(
        replay(&store, "no-such-thread", "", None, &Default::default())
            .await
            .expect("empty")
            .is_empty()
    );
}
