//! Checkpoint diff on the committed fixture (written by the real LangGraph).

use flashback_codec::ViewOptions;
use flashback_engine::diff::{diff_checkpoints, diff_tuples, Change};
use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, ListQuery};
use std::path::PathBuf;

async fn store() -> SqliteStore {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open fixture")
}

#[tokio::test]
async fn consecutive_chat_checkpoints_show_the_new_messages() {
    let s = store().await;
    let tuples = s
        .list_tuples(&ListQuery {
            checkpoint_ns: Some(String::new()),
            ..ListQuery::thread("chat-tools")
        })
        .await
        .expect("tuples");
    // Newest first: the head and its parent.
    let (b, a) = (&tuples[0], &tuples[1]);
    let d = diff_tuples(a, b, ViewOptions::default());
    let messages = d
        .channels
        .iter()
        .find(|c| c.channel == "messages")
        .expect("messages channel in the diff");
    assert_eq!(
        messages.change,
        Change::Changed,
        "the last step added an answer"
    );
    let items = messages.items.as_ref().expect("item diff for a list");
    let added: Vec<_> = items.iter().filter(|i| i.change == Change::Added).collect();
    assert_eq!(added.len(), 1, "one new message: {items:?}");
    assert!(
        added[0].id.is_some(),
        "messages are matched by their id: {:?}",
        added[0]
    );
    assert!(
        items
            .iter()
            .filter(|i| i.change == Change::Unchanged)
            .all(|i| i.a.is_none() && i.b.is_some()),
        "unchanged items carry one copy of the value"
    );
    // Changed channels come first, unchanged ones last.
    let order: Vec<Change> = d.channels.iter().map(|c| c.change).collect();
    let first_unchanged = order
        .iter()
        .position(|c| *c == Change::Unchanged)
        .unwrap_or(order.len());
    assert!(
        order[first_unchanged..]
            .iter()
            .all(|c| *c == Change::Unchanged),
        "changed channels first: {order:?}"
    );
    let s2 = d.summary;
    assert_eq!(
        (s2.added + s2.removed + s2.changed + s2.unchanged) as usize,
        d.channels.len()
    );
}

#[tokio::test]
async fn a_checkpoint_equals_itself_and_unknown_ids_are_errors() {
    let s = store().await;
    let head = s
        .get_tuple("forked", "", None)
        .await
        .expect("read")
        .expect("head");
    let id = head.header.checkpoint_id.as_str();
    let d = diff_checkpoints(
        &s,
        "forked",
        ("", id),
        ("", id),
        ViewOptions::default(),
        &Default::default(),
    )
    .await
    .expect("diff");
    assert!(
        d.channels.iter().all(|c| c.change == Change::Unchanged),
        "{:?}",
        d.summary
    );
    let err = diff_checkpoints(
        &s,
        "forked",
        ("", id),
        ("", "nope"),
        ViewOptions::default(),
        &Default::default(),
    )
    .await
    .expect_err("unknown checkpoint");
    assert!(err.to_string().contains("nope"), "{err}");
}

#[tokio::test]
async fn branches_of_the_forked_thread_differ_in_their_log() {
    let s = store().await;
    let headers = s
        .list_headers(&ListQuery::thread("forked"))
        .await
        .expect("headers");
    let parents: std::collections::HashSet<_> = headers
        .iter()
        .filter_map(|h| h.parent_checkpoint_id.clone())
        .collect();
    let leaves: Vec<&str> = headers
        .iter()
        .filter(|h| !parents.contains(&h.checkpoint_id))
        .map(|h| h.checkpoint_id.as_str())
        .collect();
    assert!(leaves.len() >= 2, "several branches: {leaves:?}");
    let d = diff_checkpoints(
        &s,
        "forked",
        ("", leaves[0]),
        ("", leaves[1]),
        ViewOptions::default(),
        &Default::default(),
    )
    .await
    .expect("diff");
    assert!(
        d.summary.changed + d.summary.added + d.summary.removed > 0,
        "two branch tips differ: {:?}",
        d.summary
    );
    let json = serde_json::to_value(&d).expect("serialises");
    assert_eq!(json["a_id"], leaves[0]);
    // Where the two lines meet: the newest checkpoint both descend from, with its step.
    let parent: std::collections::HashMap<&str, Option<&str>> = headers
        .iter()
        .map(|h| (h.checkpoint_id.as_str(), h.parent_checkpoint_id.as_deref()))
        .collect();
    let line = |tip: &str| {
        let mut out = Vec::new();
        let mut cur = Some(tip.to_owned());
        while let Some(id) = cur {
            cur = parent
                .get(id.as_str())
                .copied()
                .flatten()
                .map(str::to_owned);
            out.push(id);
        }
        out
    };
    let (la, lb) = (line(leaves[0]), line(leaves[1]));
    let expected = lb.iter().find(|id| la.contains(id)).expect("one root");
    let meet = d.common_ancestor.as_ref().expect("the lines meet");
    assert_eq!(&meet.checkpoint_id, expected);
    let step = headers
        .iter()
        .find(|h| &h.checkpoint_id == expected)
        .and_then(|h| h.step());
    assert_eq!(meet.step, step);
    assert_eq!(json["common_ancestor"]["checkpoint_id"], expected.as_str());
    // On one line: the older checkpoint itself.
    let d = diff_checkpoints(
        &s,
        "forked",
        ("", &la[1]),
        ("", leaves[0]),
        ViewOptions::default(),
        &Default::default(),
    )
    .await
    .expect("diff");
    assert_eq!(
        d.common_ancestor.map(|m| m.checkpoint_id).as_deref(),
        Some(la[1].as_str())
    );
}
