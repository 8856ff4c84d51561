//! Branch merge, the 3-way view and the rebuild check, on the committed fixture.

use flashback_codec::{Decoded, Value};
use flashback_engine::merge::{merge_branches, rebuild_report, three_way, MergeMode, Reducer};
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointStore, ListQuery};
use std::path::PathBuf;

async fn saver(dir: &tempfile::TempDir) -> SqliteSaver {
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    let dst = dir.path().join("db.sqlite");
    std::fs::copy(src, &dst).expect("copy fixture");
    SqliteSaver::open(dst.to_str().expect("path"))
        .await
        .expect("open")
}

/// Two branch tips of the `forked` thread: the head and another leaf.
async fn two_tips(s: &SqliteSaver) -> (String, String) {
    let headers = s
        .list_headers(&ListQuery::thread("forked"))
        .await
        .expect("headers");
    let parents: std::collections::HashSet<_> = headers
        .iter()
        .filter_map(|h| h.parent_checkpoint_id.clone())
        .collect();
    let leaves: Vec<String> = headers
        .iter()
        .filter(|h| !parents.contains(&h.checkpoint_id))
        .map(|h| h.checkpoint_id.clone())
        .collect();
    assert!(
        leaves.len() >= 2,
        "the forked thread has several branches: {leaves:?}"
    );
    (leaves[0].clone(), leaves[1].clone())
}

fn log_of(v: Option<&std::sync::Arc<Decoded>>) -> Vec<Value> {
    match v.map(|v| v.as_ref()) {
        Some(Decoded::Msgpack(Value::Array(items))) => items.clone(),
        other => panic!("log is a list: {other:?}"),
    }
}

#[tokio::test]
async fn three_way_then_append_merge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = saver(&dir).await;
    let (a, b) = two_tips(&s).await;
    let views = three_way(
        &s,
        "forked",
        "",
        &a,
        &b,
        &["log".to_string()],
        &Default::default(),
    )
    .await
    .expect("3-way");
    let log = &views[0];
    assert!(log.fork_point.is_some(), "the branches share an ancestor");
    let list = log.list.as_ref().expect("log is a list on both sides");
    assert!(
        !list.added_in_b.is_empty() || !list.added_in_a.is_empty(),
        "{log:?}"
    );

    let before_a = s
        .get_tuple("forked", "", Some(&a))
        .await
        .expect("read")
        .expect("A");
    let merged = merge_branches(
        &s,
        "forked",
        "",
        &a,
        &b,
        &[
            ("log".to_string(), MergeMode::AppendB),
            ("value".to_string(), MergeMode::TakeB),
        ],
        &Default::default(),
    )
    .await
    .expect("merge");
    assert_eq!(merged.parent_checkpoint_id, a, "the merge is a child of A");
    let after = s
        .get_tuple("forked", "", Some(&merged.checkpoint_id))
        .await
        .expect("read")
        .expect("merge");
    let b_tuple = s
        .get_tuple("forked", "", Some(&b))
        .await
        .expect("read")
        .expect("B");
    let expected_len = log_of(before_a.checkpoint.value("log")).len() + list.added_in_b.len();
    assert_eq!(
        log_of(after.checkpoint.value("log")).len(),
        expected_len,
        "A's log plus B's additions"
    );
    assert_eq!(
        after.checkpoint.value("value"),
        b_tuple.checkpoint.value("value"),
        "value taken from B"
    );
    assert_eq!(after.header.metadata["flashback"]["action"], "merge");
    assert_ne!(
        after.checkpoint.version("log"),
        before_a.checkpoint.version("log"),
        "version bumped"
    );

    let err = merge_branches(
        &s,
        "forked",
        "",
        &a,
        &b,
        &[("value".to_string(), MergeMode::AppendB)],
        &Default::default(),
    )
    .await;
    assert!(err.is_err(), "append needs lists on both sides");
    let err = merge_branches(&s, "forked", "", &a, &b, &[], &Default::default()).await;
    assert!(err.is_err(), "nothing to merge");
}

#[tokio::test]
async fn rebuild_identifies_the_reducers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = saver(&dir).await;
    let report = rebuild_report(&s, "chat-tools", "", None)
        .await
        .expect("report");
    let messages = report
        .iter()
        .find(|r| r.channel == "messages")
        .expect("messages checked");
    assert_eq!(messages.reducer, Some(Reducer::AddMessages), "{messages:?}");
    assert!(messages.consistent_steps >= 3, "{messages:?}");
    let reducers = rebuild_report(&s, "reducers", "", None)
        .await
        .expect("report");
    assert!(!reducers.is_empty());
    for r in &reducers {
        assert!(
            r.reducer.is_some(),
            "every written channel is explained by some reducer: {r:?}"
        );
    }
}
