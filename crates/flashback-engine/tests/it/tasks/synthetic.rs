//! Task derivation edge cases on synthetic checkpoints (integer versions, as the base saver
//! and the conformance suite use).

use flashback_codec::{Decoded, ObjectForm, PyObject, Value};
use flashback_engine::taskid::{pull_task_id, push_task_id};
use flashback_engine::{
    derive_tasks, derive_tasks_with, DeriveOptions, SnapshotMode, TaskStatus, ThreadStatus,
};
use flashback_storage::{
    Checkpoint, CheckpointHeader, CheckpointTuple, PendingWrite, Version, NULL_TASK_ID,
};
use serde_json::json;
use std::sync::Arc;

const CID: &str = "1f1e63f4-36ab-6ea4-8001-3edc500fd290";

struct B {
    t: CheckpointTuple,
}

impl B {
    fn new(step: i64) -> B {
        B {
            t: CheckpointTuple {
                header: CheckpointHeader {
                    thread_id: "t".into(),
                    checkpoint_ns: String::new(),
                    checkpoint_id: CID.into(),
                    parent_checkpoint_id: None,
                    ts: String::new(),
                    metadata: json!({"step": step}),
                    problem: None,
                },
                checkpoint: Checkpoint {
                    v: 4,
                    id: CID.into(),
                    ts: String::new(),
                    channel_values: Vec::new(),
                    channel_versions: Vec::new(),
                    versions_seen: Vec::new(),
                    updated_channels: None,
                    pending_sends: None,
                },
                pending_writes: Vec::new(),
                sealing: Default::default(),
                served: None,
            },
        }
    }
    fn v(mut self, channel: &str, version: i64) -> B {
        self.t
            .checkpoint
            .channel_versions
            .push((channel.into(), Version::Int(version)));
        self
    }
    fn val(mut self, channel: &str, value: Decoded) -> B {
        self.t
            .checkpoint
            .channel_values
            .push((channel.into(), Arc::new(value)));
        self
    }
    fn seen(mut self, node: &str, pairs: &[(&str, i64)]) -> B {
        let vs = pairs
            .iter()
            .map(|(c, v)| (c.to_string(), Version::Int(*v)))
            .collect();
        self.t.checkpoint.versions_seen.push((node.into(), vs));
        self
    }
    fn w(mut self, task: &str, channel: &str, value: Value) -> B {
        let idx = self.t.pending_writes.len() as i64;
        self.t.pending_writes.push(PendingWrite {
            task_id: task.into(),
            task_path: String::new(),
            idx,
            channel: channel.into(),
            type_tag: "msgpack".into(),
            value: Decoded::Msgpack(value),
        });
        self
    }
}

fn send(node: &str, arg: i64) -> Value {
    Value::Object(std::sync::Arc::new(PyObject {
        form: ObjectForm::PosArgs,
        module: "langgraph.types".into(),
        name: "Send".into(),
        payload: Value::Array(vec![Value::Str(node.into()), Value::Int(arg)]),
        extra: None,
    }))
}

fn pull_id(name: &str, step: i64, triggers: &[&str]) -> String {
    let t: Vec<String> = triggers.iter().map(|s| s.to_string()).collect();
    pull_task_id(4, CID, name, step, name, &t).unwrap()
}

#[test]
fn no_channel_versions_means_no_pull_tasks_but_sends_still_run() {
    let t = B::new(0).val("branch:to:a", Decoded::Null).val(
        "__pregel_tasks",
        Decoded::Msgpack(Value::Array(vec![send("w", 1)])),
    );
    let s = derive_tasks(&t.t);
    assert_eq!(s.tasks.len(), 1);
    assert_eq!(s.tasks[0].id, push_task_id(4, CID, "w", 1, "w", 0).unwrap());
}

#[test]
fn version_comparison_and_availability() {
    let base = || {
        B::new(3)
            .v("x", 5)
            .v("branch:to:a", 5)
            .v("branch:to:b", 5)
            .v("branch:to:c", 5)
    };
    // a: saw an older version → runs. b: saw the current one → not. c: never ran → runs.
    // d: newer version but the channel has no value → not available.
    let t = base()
        .v("branch:to:d", 6)
        .val("branch:to:a", Decoded::Null)
        .val("branch:to:b", Decoded::Null)
        .val("branch:to:c", Decoded::Null)
        .val("branch:to:d", Decoded::Empty)
        .seen("a", &[("branch:to:a", 4)])
        .seen("b", &[("branch:to:b", 5)])
        .seen("d", &[]);
    let s = derive_tasks(&t.t);
    let names: Vec<&str> = s.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(s.tasks[0].id, pull_id("a", 4, &["branch:to:a"]));
}

#[test]
fn writes_decide_status() {
    let a = pull_id("a", 1, &["branch:to:a"]);
    let b = pull_id("b", 1, &["branch:to:b"]);
    let c = pull_id("c", 1, &["branch:to:c"]);
    let t = B::new(0)
        .v("branch:to:a", 1)
        .v("branch:to:b", 1)
        .v("branch:to:c", 1)
        .val("branch:to:a", Decoded::Null)
        .val("branch:to:b", Decoded::Null)
        .val("branch:to:c", Decoded::Null)
        // a raised, then wrote on a run that retried it: finished (not in next), recovered,
        // its (first) error kept.
        .w(&a, "x", Value::Int(1))
        .w(&a, "__error__", Value::Str("KeyError('k')".into()))
        .w(&a, "__error__", Value::Str("second".into()))
        // b answered its first interrupt and then finished.
        .w(
            &b,
            "__interrupt__",
            Value::Array(vec![Value::Str("q".into())]),
        )
        .w(
            &b,
            "__resume__",
            Value::Array(vec![Value::Str("yes".into())]),
        )
        .w(&b, "__no_writes__", Value::Nil)
        // c only has resume / error-source control writes: not finished.
        .w(&c, "__resume__", Value::Str("r".into()))
        .w(&c, "__error_source_node__", Value::Str("a".into()))
        // Input and resume writes of the checkpoint itself, and someone else's writes.
        .w(NULL_TASK_ID, "__resume__", Value::Str("r".into()))
        .w("00000000-1111-2222-3333-444444444444", "x", Value::Int(2));
    let s = derive_tasks(&t.t);
    let st: Vec<(&str, TaskStatus, bool)> = s
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), t.status, t.finished))
        .collect();
    assert_eq!(
        st,
        [
            ("a", TaskStatus::Recovered, true),
            ("b", TaskStatus::Done, true),
            ("c", TaskStatus::Pending, false)
        ]
    );
    assert_eq!(s.tasks[0].error, Some(json!("KeyError('k')")));
    assert_eq!(s.next, ["c"]);
    assert!(
        s.tasks[1].interrupts.is_empty(),
        "answered interrupts are not pending in live mode"
    );
    assert_eq!(
        s.unmatched_task_ids,
        ["00000000-1111-2222-3333-444444444444"]
    );
    // A recovered task is no failure: c is still due.
    assert_eq!(s.status(), ThreadStatus::Pending);

    let h = derive_tasks_with(
        &t.t,
        &DeriveOptions {
            mode: SnapshotMode::History,
            ..Default::default()
        },
    );
    assert_eq!(h.tasks[1].interrupts, [json!("q")]);
    assert_eq!(h.next, ["a", "b", "c"]);
}

#[test]
fn non_send_packets_keep_their_index() {
    let t = B::new(0).v("__pregel_tasks", 1).val(
        "__pregel_tasks",
        Decoded::Msgpack(Value::Array(vec![Value::Str("junk".into()), send("w", 7)])),
    );
    let s = derive_tasks(&t.t);
    assert_eq!(s.tasks.len(), 1);
    assert_eq!(s.tasks[0].path, json!(["__pregel_push", 1, false]));
    assert_eq!(s.tasks[0].id, push_task_id(4, CID, "w", 1, "w", 1).unwrap());
    assert_eq!(s.tasks[0].send_arg, Some(json!(7)));
    assert_eq!(s.warnings.len(), 1);
}

#[test]
fn pre_v4_pending_sends_and_pre_v3_channel_names() {
    let mut t = B::new(1)
        .v("start:agent", 2)
        .v("branch:agent:route:tools", 3)
        .v("x", 3);
    t = t
        .val("branch:agent:route:tools", Decoded::Null)
        .seen("tools", &[("branch:agent:route:tools", 1)]);
    t.t.checkpoint.v = 2;
    t.t.checkpoint.pending_sends = Some(vec![Arc::new(Decoded::Msgpack(send("w", 0)))]);
    let s = derive_tasks(&t.t);
    let got: Vec<(&str, &str)> = s
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), t.id.as_str()))
        .collect();
    let push = push_task_id(2, CID, "w", 2, "w", 0).unwrap();
    let tools = pull_id("tools", 2, &["branch:to:tools"]);
    assert_eq!(got, [("w", push.as_str()), ("tools", tools.as_str())]);
}

#[test]
fn extra_channels_complete_trigger_lists() {
    let t = B::new(0)
        .v("branch:to:d", 1)
        .val("branch:to:d", Decoded::Null);
    let plain = derive_tasks(&t.t);
    assert_eq!(plain.tasks[0].triggers, ["branch:to:d"]);
    let opts = DeriveOptions {
        extra_channels: vec!["join:b+c:d".into()],
        ..Default::default()
    };
    let s = derive_tasks_with(&t.t, &opts);
    assert_eq!(s.tasks[0].triggers, ["branch:to:d", "join:b+c:d"]);
    assert_eq!(
        s.tasks[0].id,
        pull_id("d", 1, &["branch:to:d", "join:b+c:d"])
    );
}

#[test]
fn string_versions_compare_as_strings() {
    let v = |s: &str| Version::Str(s.into());
    let mut t = B::new(0);
    t.t.checkpoint.channel_versions = vec![(
        "branch:to:a".into(),
        v("00000000000000000000000000000002.0.5"),
    )];
    t.t.checkpoint.versions_seen = vec![(
        "a".into(),
        vec![(
            "branch:to:a".into(),
            v("00000000000000000000000000000002.0.49"),
        )],
    )];
    t = t.val("branch:to:a", Decoded::Null);
    // "…2.0.5" > "…2.0.49" as strings.
    assert_eq!(derive_tasks(&t.t).tasks.len(), 1);
    t.t.checkpoint.versions_seen[0].1[0].1 = v("00000000000000000000000000000002.0.6");
    assert!(derive_tasks(&t.t).tasks.is_empty());
}

#[test]
fn statuses_serialise_lowercase() {
    assert_eq!(
        serde_json::to_value(ThreadStatus::Interrupted).unwrap(),
        json!("interrupted")
    );
    assert_eq!(
        serde_json::to_value(TaskStatus::Done).unwrap(),
        json!("done")
    );
    let t = B::new(0)
        .v("branch:to:a", 1)
        .val("branch:to:a", Decoded::Null);
    let s = serde_json::to_value(derive_tasks(&t.t)).unwrap();
    assert_eq!(s["tasks"][0]["status"], "pending");
    assert_eq!(s["tasks"][0]["kind"], "pull");
    assert_eq!(s["next"], json!(["a"]));
}
