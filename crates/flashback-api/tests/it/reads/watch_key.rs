//! `watch_key` on the SQLite fixture (written by the real LangGraph): where a value changed,
//! across branches, with the node whose write produced it; bad paths are usage errors.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::json;
use std::collections::BTreeSet;

fn req(db: &DbInfo, thread: &str, path: &str) -> WatchRequest {
    WatchRequest {
        db: db.db.clone(),
        thread_id: thread.into(),
        checkpoint_ns: String::new(),
        path: path.into(),
        max_value_bytes: None,
        along: None,
    }
}

/// Whether each branch's changes (past the leading line) are listed together.
fn grouped_by_branch(changes: &[WatchChange]) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    for c in changes {
        match seen.last() {
            Some(last) if *last == c.branch_key => {}
            _ if seen.contains(&c.branch_key.as_str()) => return false,
            _ => seen.push(&c.branch_key),
        }
    }
    true
}

fn value_of(c: &WatchChange) -> serde_json::Value {
    c.value
        .as_ref()
        .and_then(|v| v.value.clone())
        .unwrap_or(serde_json::Value::Null)
}

#[tokio::test]
async fn a_value_is_followed_along_every_branch_with_the_nodes_that_wrote_it() {
    let f = opened_fixture().await;
    let before = fingerprint(&f.path);
    // `forked`: 1 → step1 +1 → step2 ×10 → step3 −3, an update_state(value=100) branch run on,
    // a copy fork run on, a time-travel replay, and a note at the head.
    let r = f
        .api
        .watch_key(req(&f.db, "forked", r#"["value"]"#))
        .await
        .expect("watch");
    assert_eq!(r.path, "value", "the path comes back in its canonical form");
    assert_eq!(r.channel, "value");
    let history = root_history(&f.api, &f.db, "forked").await;
    assert_eq!(r.checkpoints_read as usize, history.len());
    assert_eq!(r.head.as_deref(), Some(history[0].checkpoint_id.as_str()));

    // The first value comes from the input, written by the `__start__` task.
    let first = &r.changes[0];
    assert_eq!(first.kind, ChangeKind::Appeared);
    assert_eq!(value_of(first), json!(1));
    assert_eq!(first.step, Some(0));
    assert_eq!(first.writes[0].node.as_deref(), Some("__start__"));

    // Parents come before children, every change differs from its parent's value.
    let index: std::collections::HashMap<&str, usize> = r
        .changes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.checkpoint_id.as_str(), i))
        .collect();
    for (i, c) in r.changes.iter().enumerate() {
        if let Some(p) = c.parent_checkpoint_id.as_deref().and_then(|p| index.get(p)) {
            assert!(*p < i, "{} listed after its parent", c.checkpoint_id);
        }
        let kind = if i == 0 {
            ChangeKind::Appeared
        } else {
            ChangeKind::Changed
        };
        assert_eq!(c.kind, kind, "{}", c.checkpoint_id);
    }

    let values: Vec<serde_json::Value> = r.changes.iter().map(value_of).collect();
    for v in [
        json!(2),
        json!(20),
        json!(17),
        json!(100),
        json!(1000),
        json!(997),
    ] {
        assert!(values.contains(&v), "{v} in {values:?}");
    }
    // The edit is an update_state (no task of the graph wrote it); the others name their node.
    let edit = r
        .changes
        .iter()
        .find(|c| value_of(c) == json!(100))
        .expect("edit");
    assert_eq!(edit.source.as_deref(), Some("update"));
    let nodes: BTreeSet<&str> = r
        .changes
        .iter()
        .flat_map(|c| c.writes.iter().filter_map(|w| w.node.as_deref()))
        .collect();
    for n in ["__start__", "step1", "step2", "step3"] {
        assert!(nodes.contains(n), "{n} in {nodes:?}");
    }
    // Several branches, the head's among them.
    let branches: BTreeSet<&str> = r.changes.iter().map(|c| c.branch_key.as_str()).collect();
    assert!(branches.len() >= 3, "{branches:?}");
    assert!(r.changes.iter().any(|c| c.on_head_branch));
    assert!(r.changes.iter().any(|c| !c.on_head_branch));
    // Along lineage: the head's line first, then branch by branch (not time order across them).
    let line = r.changes.iter().take_while(|c| c.on_head_branch).count();
    assert!(r.changes[line..].iter().all(|c| !c.on_head_branch));
    assert!(grouped_by_branch(&r.changes[line..]), "{:?}", r.changes);
    // Forks: the time-travel copy keeps its parent's value (not listed); the `__copy__` fork of
    // a sibling is listed, made by no step (no writes), like the update_state edit.
    let forks: Vec<&str> = history
        .iter()
        .filter(|h| h.source.as_deref() == Some("fork"))
        .map(|h| h.checkpoint_id.as_str())
        .collect();
    assert!(forks.iter().any(|c| !index.contains_key(c)), "{forks:?}");
    for c in r
        .changes
        .iter()
        .filter(|c| c.source.as_deref() != Some("loop"))
    {
        assert!(c.writes.is_empty(), "{}: {:?}", c.checkpoint_id, c.writes);
    }
    assert!(edit.writes.is_empty());
    assert_eq!(fingerprint(&f.path), before, "watching reads only");
}

#[tokio::test]
async fn the_line_listed_first_is_the_one_asked_for() {
    let f = opened_fixture().await;
    let head = f
        .api
        .watch_key(req(&f.db, "forked", "value"))
        .await
        .expect("watch");
    // The tip of a branch off the head's line.
    let other = head
        .changes
        .iter()
        .rev()
        .find(|c| !c.on_head_branch)
        .expect("a change off the head's line");
    let r = f
        .api
        .watch_key(WatchRequest {
            along: Some(other.checkpoint_id.clone()),
            ..req(&f.db, "forked", "value")
        })
        .await
        .expect("watch");
    assert_eq!(r.changes.len(), head.changes.len(), "the same changes");
    // Its line from the root: every change before it is one of its ancestors' (parents first).
    let at = r
        .changes
        .iter()
        .position(|c| c.checkpoint_id == other.checkpoint_id)
        .expect("listed");
    let history = root_history(&f.api, &f.db, "forked").await;
    let parent: std::collections::HashMap<&str, Option<&str>> = history
        .iter()
        .map(|h| (h.checkpoint_id.as_str(), h.parent_checkpoint_id.as_deref()))
        .collect();
    let mut line = BTreeSet::new();
    let mut cur = Some(other.checkpoint_id.as_str());
    while let Some(id) = cur {
        line.insert(id);
        cur = parent.get(id).copied().flatten();
    }
    assert!(r.changes[..=at]
        .iter()
        .all(|c| line.contains(c.checkpoint_id.as_str())));
    assert!(r.changes[at + 1..]
        .iter()
        .all(|c| !line.contains(c.checkpoint_id.as_str())));
    assert!(grouped_by_branch(&r.changes[at + 1..]));
    assert_ne!(
        r.changes
            .iter()
            .map(|c| &c.checkpoint_id)
            .collect::<Vec<_>>(),
        head.changes
            .iter()
            .map(|c| &c.checkpoint_id)
            .collect::<Vec<_>>(),
        "another order than the head's"
    );
    // A checkpoint the namespace does not have: not found.
    let e = f
        .api
        .watch_key(WatchRequest {
            along: Some("1f000000-0000-6000-8000-000000000000".into()),
            ..req(&f.db, "forked", "value")
        })
        .await
        .expect_err("unknown checkpoint");
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn the_last_message_of_a_chat_changes_with_each_node_that_spoke() {
    let f = opened_fixture().await;
    let r = f
        .api
        .watch_key(req(&f.db, "chat-tools", "messages[-1].content"))
        .await
        .expect("watch");
    let texts: Vec<serde_json::Value> = r.changes.iter().map(value_of).collect();
    assert_eq!(texts[0], json!("What is 2+3 and 4*5?"));
    assert!(texts.contains(&json!("5 × 20 = 100.")), "{texts:?}");
    let by: BTreeSet<&str> = r
        .changes
        .iter()
        .flat_map(|c| c.writes.iter().filter_map(|w| w.node.as_deref()))
        .collect();
    assert!(by.contains("agent") && by.contains("tools"), "{by:?}");
    assert!(r
        .changes
        .iter()
        .all(|c| c.writes.iter().all(|w| w.channel == "messages")));
    // An item inside: the first message never changes after it appears.
    let first = f
        .api
        .watch_key(req(&f.db, "chat-tools", "messages[0].id"))
        .await
        .expect("watch");
    assert_eq!(first.changes.len(), 1);
    assert_eq!(value_of(&first.changes[0]), json!("human-1"));
    // Large values come as a preview.
    let all = f
        .api
        .watch_key(WatchRequest {
            max_value_bytes: Some(64),
            ..req(&f.db, "chat-tools", "messages")
        })
        .await
        .expect("watch");
    let last = all
        .changes
        .last()
        .and_then(|c| c.value.as_ref())
        .expect("value");
    assert!(last.truncated && last.value.is_none() && last.size > 64);
    assert!(last.preview.starts_with('['), "{}", last.preview);
}

#[tokio::test]
async fn bad_paths_are_usage_errors_and_unknown_threads_not_found() {
    let f = opened_fixture().await;
    for path in ["", "messages[", "messages..x", "messages[two]", "[0]"] {
        let e = f
            .api
            .watch_key(req(&f.db, "chat-tools", path))
            .await
            .expect_err(path);
        assert_eq!(e.code, ErrorCode::InvalidInput, "{path}: {e}");
        assert!(e.message.starts_with("bad path"), "{path}: {e}");
        assert!(!e.message.contains('\n'), "{path}: one line");
        assert_eq!(e.code.exit_code(), 2);
    }
    let e = f
        .api
        .watch_key(req(&f.db, "no-such-thread", "messages"))
        .await
        .expect_err("unknown thread");
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = f
        .api
        .watch_key(WatchRequest {
            checkpoint_ns: "nope:1".into(),
            ..req(&f.db, "chat-tools", "messages")
        })
        .await
        .expect_err("unknown namespace");
    assert_eq!(e.code, ErrorCode::NotFound);
    // A path with no value anywhere: no changes, not an error.
    let r = f
        .api
        .watch_key(req(&f.db, "chat-tools", "plan.steps"))
        .await
        .expect("watch");
    assert!(r.changes.is_empty());
    assert!(r.checkpoints_read > 0);
    // Through dispatch (the HTTP and Tauri doors), the same error.
    let e = f
        .api
        .dispatch(
            "watch_key",
            &json!({"req": {"db": f.db.db, "thread_id": "chat-tools", "path": "a b"}}),
        )
        .await
        .expect_err("dispatch");
    assert_eq!(e.code, ErrorCode::InvalidInput);
}
