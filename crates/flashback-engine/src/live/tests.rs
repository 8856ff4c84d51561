//! `apply_pending` and `Reducers` on hand-built checkpoints.

use super::*;
use crate::tasks::{Task, TaskKind, TaskStatus};
use flashback_storage::{Checkpoint, CheckpointHeader};
use serde_json::json;

fn v(j: serde_json::Value) -> Value {
    flashback_codec::unview::from_view(&j, None).expect("a JSON view")
}

fn msg(id: &str, text: &str) -> serde_json::Value {
    json!({"$type": "langchain_core.messages.ai.AIMessage", "content": text, "id": id})
}

fn tuple(
    values: serde_json::Value,
    writes: &[(&str, &str, &str, serde_json::Value)],
) -> CheckpointTuple {
    let channel_values = values
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(c, x)| (c.clone(), Arc::new(Decoded::Msgpack(v(x.clone())))))
                .collect()
        })
        .unwrap_or_default();
    CheckpointTuple {
        header: CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "c".into(),
            parent_checkpoint_id: None,
            ts: String::new(),
            metadata: json!({"step": 1}),
            problem: None,
        },
        checkpoint: Checkpoint {
            v: 4,
            id: "c".into(),
            ts: String::new(),
            channel_values,
            channel_versions: Vec::new(),
            versions_seen: Vec::new(),
            updated_channels: None,
            pending_sends: None,
        },
        pending_writes: writes
            .iter()
            .enumerate()
            .map(|(i, (task, path, channel, value))| PendingWrite {
                task_id: (*task).into(),
                task_path: (*path).into(),
                idx: i as i64,
                channel: (*channel).into(),
                type_tag: "msgpack".into(),
                value: Decoded::Msgpack(v(value.clone())),
            })
            .collect(),
        sealing: Default::default(),
        served: None,
    }
}

fn tasks(done: &[(&str, &str)], waiting: &[(&str, &str)]) -> TaskSet {
    let task = |(id, name): &(&str, &str), finished: bool| Task {
        id: (*id).into(),
        name: (*name).into(),
        kind: TaskKind::Push,
        path: json!([]),
        triggers: vec![],
        checkpoint_ns: String::new(),
        error: None,
        interrupts: vec![],
        state: None,
        writes: vec![],
        finished,
        status: if finished {
            TaskStatus::Done
        } else {
            TaskStatus::Pending
        },
        send_arg: None,
    };
    TaskSet {
        checkpoint_id: "c".into(),
        checkpoint_ns: String::new(),
        step: 2,
        next: vec![],
        tasks: done
            .iter()
            .map(|t| task(t, true))
            .chain(waiting.iter().map(|t| task(t, false)))
            .collect(),
        unmatched_task_ids: vec![],
        warnings: vec![],
    }
}

fn ids(t: &CheckpointTuple, channel: &str) -> usize {
    match value_of(t, channel) {
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    }
}

#[test]
fn live_applies_the_finished_tasks_and_a_step_record_does_not() {
    let writes = [
        (
            "t1",
            "~__pregel_push, 0000000000, 0000000000",
            "messages",
            msg("m3", "result"),
        ),
        (
            "t1",
            "~__pregel_push, 0000000000, 0000000000",
            "jump_to",
            json!("model"),
        ),
        (
            "t2",
            "~__pregel_push, 0000000001, 0000000000",
            "__interrupt__",
            json!([]),
        ),
        (NULL_TASK_ID, "", "todos", json!([{"content": "a"}])),
    ];
    let base = json!({"messages": [msg("m1", "q"), msg("m2", "calls")], "jump_to": "x"});
    let set = tasks(&[("t1", "tools")], &[("t2", "tools")]);
    let mut live = tuple(base.clone(), &writes);
    let out = apply_pending(
        &mut live,
        &set,
        true,
        &Reducers::default(),
        &BTreeMap::new(),
    );
    assert_eq!(
        ids(&live, "messages"),
        3,
        "the approved call's result is applied"
    );
    assert_eq!(
        value_of(&live, "jump_to"),
        Some(&Value::Str("model".into()))
    );
    assert_eq!(ids(&live, "todos"), 1, "input writes are applied");
    assert_eq!(out.applied.len(), 2);
    assert_eq!(out.applied[1].node.as_deref(), Some("tools"));
    assert_eq!(live.pending_writes.len(), 4, "the writes stay listed");

    let mut record = tuple(base, &writes);
    apply_pending(
        &mut record,
        &set,
        false,
        &Reducers::default(),
        &BTreeMap::new(),
    );
    assert_eq!(
        ids(&record, "messages"),
        2,
        "a step record shows the step's start"
    );
    assert_eq!(
        ids(&record, "todos"),
        1,
        "input writes are applied in every view"
    );
}

#[test]
fn a_step_clears_the_ephemeral_channels_it_did_not_write() {
    let writes = [("t1", "~__pregel_pull, model", "messages", msg("m2", "hi"))];
    let mut t = tuple(
        json!({"messages": [msg("m1", "q")], "jump_to": "end"}),
        &writes,
    );
    apply_pending(
        &mut t,
        &tasks(&[("t1", "model")], &[]),
        true,
        &Reducers::default(),
        &BTreeMap::new(),
    );
    assert!(t.checkpoint.value("jump_to").is_none());
}

#[test]
fn aggregate_channels_show_their_empty_start() {
    let mut t = tuple(json!({"__start__": {"messages": []}}), &[]);
    let known: BTreeMap<String, Value> = [
        ("messages".to_owned(), v(json!([msg("m1", "q")]))),
        ("todos".to_owned(), v(json!([{"content": "a"}]))),
        ("files".to_owned(), v(json!({"/a.txt": {"content": ["x"]}}))),
        ("answer".to_owned(), v(json!("42"))),
    ]
    .into();
    let out = apply_pending(
        &mut t,
        &tasks(&[], &[]),
        false,
        &Reducers::default(),
        &known,
    );
    assert_eq!(out.defaults, ["files", "messages"]);
    assert_eq!(value_of(&t, "messages"), Some(&Value::Array(vec![])));
    assert_eq!(value_of(&t, "files"), Some(&Value::Map(vec![])));
}

#[test]
fn steps_teach_a_channels_reducer() {
    let path = "~__pregel_pull, plan";
    let parent = tuple(
        json!({"steps": ["a"]}),
        &[("p", path, "steps", json!(["b"]))],
    );
    let appended = tuple(json!({"steps": ["a", "b"]}), &[]);
    let replaced = tuple(json!({"steps": ["b"]}), &[]);
    let set = tasks(&[("p", "plan")], &[]);
    let mut r = Reducers::default();
    assert!(!r.settled("steps", &v(json!(["a"]))));
    r.learn_step(&parent, &set, &appended);
    assert_eq!(r.of("steps", None), Reducer::ListAppend);
    let mut r = Reducers::default();
    r.learn_step(&parent, &set, &replaced);
    assert_eq!(r.of("steps", None), Reducer::LastValue);
    assert!(r.settled("steps", &v(json!(["a"]))));
}
