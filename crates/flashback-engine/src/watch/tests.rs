use super::*;
use crate::tasks::{derive_tasks_with, DeriveOptions};
use flashback_codec::Decoded;
use flashback_storage::{Checkpoint, CheckpointHeader, PendingWrite, Version};
use serde_json::json;
use std::sync::Arc;

/// Ids that sort by time and are hex (task ids can be computed from them).
fn id(n: u32) -> String {
    format!("1ef00000-0000-6000-8000-{n:012x}")
}

/// A root-namespace checkpoint `n` with parent `parent` and channel values as JSON views.
fn cp(n: u32, parent: Option<u32>, values: serde_json::Value) -> CheckpointTuple {
    let channel_values = values
        .as_object()
        .expect("an object of channels")
        .iter()
        .map(|(c, v)| {
            let value = flashback_codec::unview::from_view(v, None).expect("a JSON view");
            (c.clone(), Arc::new(Decoded::Msgpack(value)))
        })
        .collect();
    CheckpointTuple {
        header: CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: id(n),
            parent_checkpoint_id: parent.map(id),
            ts: format!("2026-01-01T00:00:{n:02}+00:00"),
            metadata: json!({"source": "loop", "step": n}),
            problem: None,
        },
        checkpoint: Checkpoint {
            v: 4,
            id: id(n),
            ts: format!("2026-01-01T00:00:{n:02}+00:00"),
            channel_values,
            channel_versions: Vec::new(),
            versions_seen: Vec::new(),
            updated_channels: None,
            pending_sends: None,
        },
        pending_writes: Vec::new(),
        sealing: Default::default(),
        served: None,
    }
}

fn write(t: &mut CheckpointTuple, task: &str, channel: &str, value: serde_json::Value) {
    let idx = i64::try_from(t.pending_writes.len()).expect("few");
    t.pending_writes.push(PendingWrite {
        task_id: task.into(),
        task_path: String::new(),
        idx,
        channel: channel.into(),
        type_tag: "msgpack".into(),
        value: Decoded::Msgpack(flashback_codec::unview::from_view(&value, None).expect("view")),
    });
}

fn watch_of(tuples: &[CheckpointTuple], path: &str) -> WatchReport {
    watch_along(tuples, path, None).expect("watch")
}

fn watch_along(
    tuples: &[CheckpointTuple],
    path: &str,
    along: Option<u32>,
) -> Result<WatchReport, EngineError> {
    changes(
        tuples,
        &KeyPath::parse(path).expect("path"),
        WatchLimits::default(),
        Dialect::Python,
        along.map(id).as_deref(),
    )
}

/// `checkpoint number:kind` for each change.
fn shape(r: &WatchReport) -> Vec<String> {
    r.changes
        .iter()
        .map(|c| {
            let n = u32::from_str_radix(&c.checkpoint_id[24..], 16).expect("hex");
            format!(
                "{n}:{}",
                serde_json::to_value(c.kind)
                    .expect("kind")
                    .as_str()
                    .expect("str")
            )
        })
        .collect()
}

#[test]
fn a_value_is_listed_where_it_appears_changes_and_disappears() {
    let tuples = [
        cp(1, None, json!({"other": 1})),
        cp(2, Some(1), json!({"plan": {"steps": ["a"]}})),
        cp(3, Some(2), json!({"plan": {"steps": ["a"]}, "other": 2})),
        cp(4, Some(3), json!({"plan": {"steps": ["a", "b"]}})),
        cp(5, Some(4), json!({"plan": {"done": true}})),
        cp(6, Some(5), json!({"plan": {"done": true}})),
    ];
    let r = watch_of(&tuples, "plan.steps");
    assert_eq!(shape(&r), ["2:appeared", "4:changed", "5:removed"]);
    assert_eq!(r.path, "plan.steps");
    assert_eq!(r.channel, "plan");
    assert_eq!(r.checkpoints_read, 6);
    assert_eq!(r.head.as_deref(), Some(id(6).as_str()));
    let c = &r.changes[1];
    assert_eq!(c.parent_checkpoint_id.as_deref(), Some(id(3).as_str()));
    assert_eq!(c.step, Some(4));
    assert_eq!(
        c.value.as_ref().and_then(|v| v.value.clone()),
        Some(json!(["a", "b"]))
    );
    assert_eq!(
        c.value.as_ref().map(|v| v.preview.as_str()),
        Some(r#"["a","b"]"#)
    );
    assert!(r.changes[2].value.is_none());
    assert!(r.changes.iter().all(|c| c.on_head_branch));
    // The whole channel, and an item inside a list.
    assert_eq!(
        shape(&watch_of(&tuples, "plan")),
        ["2:appeared", "4:changed", "5:changed"]
    );
    assert_eq!(
        shape(&watch_of(&tuples, "plan.steps[1]")),
        ["4:appeared", "5:removed"]
    );
    assert_eq!(
        shape(&watch_of(&tuples, "plan.steps[-1]")),
        ["2:appeared", "4:changed", "5:removed"]
    );
    assert!(watch_of(&tuples, "nothing").changes.is_empty());
}

#[test]
fn branches_are_compared_with_their_own_parent_and_marked() {
    // 1 ─ 2 ─ 3          (the run)
    //      ├─ 4          (a copy of 2: same value, nothing to list)
    //      └─ 5 ─ 6      (a fork of 2 that edits the value; 6 is the head)
    let tuples = [
        cp(1, None, json!({"value": 1})),
        cp(2, Some(1), json!({"value": 2})),
        cp(3, Some(2), json!({"value": 20})),
        cp(4, Some(2), json!({"value": 2})),
        cp(5, Some(2), json!({"value": 100})),
        cp(6, Some(5), json!({"value": 1000})),
    ];
    let r = watch_of(&tuples, "value");
    let mut got = shape(&r);
    got.sort();
    assert_eq!(
        got,
        [
            "1:appeared",
            "2:changed",
            "3:changed",
            "5:changed",
            "6:changed"
        ]
    );
    // DAG order: every parent before its children.
    let pos = |n: u32| {
        r.changes
            .iter()
            .position(|c| c.checkpoint_id == id(n))
            .expect("listed")
    };
    assert!(pos(1) < pos(2) && pos(2) < pos(3) && pos(2) < pos(5) && pos(5) < pos(6));
    let on_head: Vec<bool> = [1, 2, 3, 5, 6]
        .map(|n| r.changes[pos(n)].on_head_branch)
        .to_vec();
    assert_eq!(on_head, [true, true, false, true, true]);
    let key = |n: u32| r.changes[pos(n)].branch_key.clone();
    assert_eq!(key(1), key(2));
    assert_eq!(key(5), key(6));
    assert_ne!(key(3), key(5), "the run and the fork are two branches");
    assert_eq!(
        r.changes[pos(5)].parent_checkpoint_id.as_deref(),
        Some(id(2).as_str())
    );
}

#[test]
fn changes_are_listed_along_lineage_then_branch_by_branch() {
    // 1 ─ 2 ─ 3 ─ 6 ─ 7      (the run, resumed after the forks; 7 is the head)
    // │       └─ 4          (a fork of 3)
    // └─ 5                  (a fork of 1)
    let tuples = [
        cp(1, None, json!({"v": 1})),
        cp(2, Some(1), json!({"v": 1})),
        cp(3, Some(2), json!({"v": 3})),
        cp(4, Some(3), json!({"v": 4})),
        cp(5, Some(1), json!({"v": 5})),
        cp(6, Some(3), json!({"v": 6})),
        cp(7, Some(6), json!({"v": 7})),
    ];
    let order = |r: &WatchReport| {
        shape(r)
            .iter()
            .map(|s| s.split(':').next().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Time order would be 1 3 4 5 6 7: the head's line root first, then the fork of 3, then
    // the fork of 1.
    let r = watch_of(&tuples, "v");
    assert_eq!(r.head.as_deref(), Some(id(7).as_str()));
    assert_eq!(order(&r), "1 3 6 7 4 5");
    let on_head: Vec<bool> = r.changes.iter().map(|c| c.on_head_branch).collect();
    assert_eq!(on_head, [true, true, true, true, false, false]);
    // Along the fork of 1: the rest comes branch by branch as the graph draws them (its first
    // lane runs 1 2 3 4; 6 7 is a lane of its own), each after the branch it leaves.
    let r = watch_along(&tuples, "v", Some(5)).expect("watch");
    assert_eq!(order(&r), "1 5 3 4 6 7");
    assert_eq!(r.changes[2].branch_key, r.changes[3].branch_key);
    assert_ne!(r.changes[3].branch_key, r.changes[4].branch_key);
    assert_eq!(r.changes[4].branch_key, r.changes[5].branch_key);
    assert_eq!(
        order(&watch_along(&tuples, "v", Some(4)).expect("watch")),
        "1 3 4 5 6 7"
    );
    assert!(matches!(
        watch_along(&tuples, "v", Some(99)),
        Err(EngineError::UnknownCheckpoint { .. })
    ));
}

#[test]
fn each_change_carries_the_parent_writes_to_its_channel_with_their_node() {
    let mut parent = cp(1, None, json!({"messages": ["hi"]}));
    // A PULL task `agent` due at the parent: its id is what the writes carry.
    parent.checkpoint.channel_values.push((
        "branch:to:agent".into(),
        Arc::new(Decoded::Msgpack(flashback_codec::Value::Nil)),
    ));
    parent
        .checkpoint
        .channel_versions
        .push(("branch:to:agent".into(), Version::Int(1)));
    let tasks = derive_tasks_with(&parent, &DeriveOptions::default());
    let agent = tasks
        .tasks
        .iter()
        .find(|t| t.name == "agent")
        .expect("agent task")
        .id
        .clone();
    write(&mut parent, &agent, "messages", json!(["hello"]));
    write(&mut parent, &agent, "other", json!(5));
    write(&mut parent, "some-update", "messages", json!(["note"]));
    let child = cp(2, Some(1), json!({"messages": ["hi", "hello", "note"]}));
    // An update_state edit beside it: the parent's writes made the other child, not this one.
    let mut edit = cp(3, Some(1), json!({"messages": ["edited"]}));
    edit.header.metadata = json!({"source": "update", "step": 2});
    let r = watch_of(&[parent, child, edit], "messages");
    // The edit is the head: its line first, then the step's child.
    assert_eq!(shape(&r), ["1:appeared", "3:changed", "2:changed"]);
    assert!(r.changes[1].writes.is_empty(), "{:?}", r.changes[1].writes);
    assert_eq!(r.changes[1].source.as_deref(), Some("update"));
    assert!(
        r.changes[0].writes.is_empty(),
        "a root has no parent writes"
    );
    let w = &r.changes[2].writes;
    assert_eq!(w.len(), 2, "only the writes to the watched channel: {w:?}");
    assert_eq!(w[0].node.as_deref(), Some("agent"));
    assert_eq!(w[0].task_id, agent);
    assert_eq!(w[0].value.value, Some(json!(["hello"])));
    assert_eq!(w[1].node, None, "a task that is not derived has no node");
}

#[test]
fn unreadable_checkpoints_are_skipped_and_counted() {
    let mut broken = cp(2, Some(1), json!({}));
    broken.header.problem = Some("the document does not decode".into());
    let tuples = [
        cp(1, None, json!({"x": 1})),
        broken,
        cp(3, Some(2), json!({"x": 1})),
        cp(4, Some(3), json!({"x": 2})),
    ];
    let r = watch_of(&tuples, "x");
    assert_eq!(shape(&r), ["1:appeared", "4:changed"]);
    assert_eq!(r.unreadable, 1);
}

#[test]
fn large_values_are_sent_as_a_preview() {
    let long: Vec<String> = (0..400).map(|i| format!("message number {i}")).collect();
    let tuples = [cp(1, None, json!({"log": long}))];
    let r = changes(
        &tuples,
        &KeyPath::parse("log").expect("path"),
        WatchLimits {
            max_value_bytes: 1000,
        },
        Dialect::Python,
        None,
    )
    .expect("watch");
    let v = r.changes[0].value.as_ref().expect("a value");
    assert!(v.truncated);
    assert_eq!(v.value, None);
    assert!(v.size > 1000);
    assert_eq!(v.preview, r#"[400 items] … "message number 399""#);
    // A message shows its type and text.
    let msg = json!({"$type": "langchain_core.messages.ai.AIMessage", "content": "x".repeat(300)});
    let p = preview(&msg, &msg.to_string());
    assert!(p.starts_with("AIMessage \"xxx"), "{p}");
    assert_eq!(p.chars().count(), PREVIEW_CHARS);
    // A message that only calls tools: their names.
    let calls = json!({"$type": "langchain_core.messages.ai.AIMessage", "content": "",
        "tool_calls": [{"name": "add", "args": {}, "id": "a"}, {"name": "multiply", "args": {}, "id": "b"}],
        "response_metadata": {"pad": "x".repeat(200)}});
    let p = preview(&calls, &calls.to_string());
    assert_eq!(p, "AIMessage tool calls: add, multiply");
}

#[test]
fn no_checkpoints_make_an_empty_report() {
    let r = watch_of(&[], "messages");
    assert!(r.changes.is_empty());
    assert_eq!(r.checkpoints_read, 0);
    assert_eq!(r.head, None);
}
