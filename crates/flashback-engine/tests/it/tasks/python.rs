//! Task derivation checked against what LangGraph 1.2.22 printed for real graphs
//! (`graph.get_state(config)` with `InMemorySaver`; ids, versions and payloads copied verbatim,
//! payloads as `JsonPlusSerializer.dumps_typed` bytes).

use flashback_codec::{decode_typed, Decoded};
use flashback_engine::taskid::{interrupt_id, task_id};
use flashback_engine::{
    derive_tasks, derive_tasks_with, thread_status, DeriveOptions, SnapshotMode, TaskKind, TaskSet,
    TaskStatus, ThreadStatus,
};
use flashback_storage::{
    Checkpoint, CheckpointHeader, CheckpointTuple, PendingWrite, Version, Versions,
};
use serde_json::{json, Value as Json};
use std::sync::Arc;

const SEND_W0: &str = "c71a0193af6c616e6767726170682e7479706573a453656e6492a17700";
const SEND_W1: &str = "c71a0193af6c616e6767726170682e7479706573a453656e6492a17701";
const SEND_W2: &str = "c71a0193af6c616e6767726170682e7479706573a453656e6492a17702";
const INT_QUESTION: &str = "91c7620293af6c616e6767726170682e7479706573a9496e7465727275707483a576616c7565a97175657374696f6e3fa26964d9206130356362363033383032353239306332366531373533336531626132336165af726573706f6e73655f736368656d61c0";
const INT_W1: &str = "91c75b0293af6c616e6767726170682e7479706573a9496e7465727275707483a576616c7565a27731a26964d9203537383934313462333935666338373434653733393663613230343462383265af726573706f6e73655f736368656d61c0";
const SET_BC: &str = "c7130093a86275696c74696e73a373657492a162a163";
const DEFER_FALSE: &str = "92c0c2";
const DEFER_TRUE: &str = "92c0c3";
const ERR_BOOM: &str = "b256616c75654572726f722827626f6f6d2729";
const LIST_C: &str = "91a163";
const NONE: &str = "";

fn dec(hex: &str) -> Decoded {
    if hex.is_empty() {
        return decode_typed("null", Some(&[]));
    }
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    decode_typed("msgpack", Some(&bytes))
}

fn versions(j: &Json) -> Versions {
    j.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), Version::from_json(v).unwrap()))
        .collect()
}

/// A tuple from the Python dump: `{"cid", "ns", "step", "cv", "vs"}` plus values and writes.
fn tuple(py: Json, values: &[(&str, &str)], writes: &[(&str, &str, &str)]) -> CheckpointTuple {
    let cid = py["cid"].as_str().unwrap().to_owned();
    let ns = py["ns"].as_str().unwrap_or("").to_owned();
    CheckpointTuple {
        header: CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: ns,
            checkpoint_id: cid.clone(),
            parent_checkpoint_id: None,
            ts: String::new(),
            metadata: json!({"source": "loop", "step": py["step"], "parents": {}}),
            problem: None,
        },
        checkpoint: Checkpoint {
            v: 4,
            id: cid,
            ts: String::new(),
            channel_values: values
                .iter()
                .map(|(c, hex)| (c.to_string(), Arc::new(dec(hex))))
                .collect(),
            channel_versions: versions(&py["cv"]),
            versions_seen: py["vs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), versions(v)))
                .collect(),
            updated_channels: None,
            pending_sends: None,
        },
        pending_writes: writes
            .iter()
            .enumerate()
            .map(|(i, (task, channel, hex))| PendingWrite {
                task_id: task.to_string(),
                task_path: String::new(),
                idx: i as i64,
                channel: channel.to_string(),
                type_tag: "msgpack".into(),
                value: dec(hex),
            })
            .collect(),
        sealing: Default::default(),
        served: None,
    }
}

fn ids(set: &TaskSet) -> Vec<(&str, &str)> {
    set.tasks
        .iter()
        .map(|t| (t.name.as_str(), t.id.as_str()))
        .collect()
}

#[test]
fn interrupt_before_pull_task() {
    let t = tuple(
        json!({"cid": "1f1e63f4-36ab-6ea4-8001-3edc500fd290", "step": 1,
          "cv": {"__start__": "00000000000000000000000000000002.0.14808061379889736", "x": "00000000000000000000000000000003.0.5618918263516848", "branch:to:a": "00000000000000000000000000000003.0.5618918263516848", "branch:to:b": "00000000000000000000000000000003.0.5618918263516848"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.09296190179840136"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.14808061379889736"}}}),
        &[("x", LIST_C), ("branch:to:b", NONE)],
        &[],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("b", "94dff4fb-5185-d265-0517-4fb60ae23695")]);
    assert_eq!(s.next, ["b"]);
    assert_eq!(s.step, 2);
    assert_eq!(s.tasks[0].path, json!(["__pregel_pull", "b"]));
    assert_eq!(s.tasks[0].triggers, ["branch:to:b"]);
    assert_eq!(s.tasks[0].status, TaskStatus::Pending);
    assert_eq!(
        s.tasks[0].checkpoint_ns,
        "b:94dff4fb-5185-d265-0517-4fb60ae23695"
    );
    assert_eq!(thread_status(&t), ThreadStatus::Pending);
}

#[test]
fn dynamic_interrupt() {
    let task = "5fa63699-7287-0bae-f9be-137cb8526efd";
    let t = tuple(
        json!({"cid": "1f1e63f4-36b5-602d-8001-32010be0734b", "step": 1,
          "cv": {"__start__": "00000000000000000000000000000002.0.01476133621053699", "x": "00000000000000000000000000000003.0.6743075578083586", "branch:to:a": "00000000000000000000000000000003.0.6743075578083586", "branch:to:ask": "00000000000000000000000000000003.0.6743075578083586"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.1169442462560577"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.01476133621053699"}}}),
        &[("x", LIST_C), ("branch:to:ask", NONE)],
        &[(task, "__interrupt__", INT_QUESTION)],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("ask", task)]);
    assert_eq!(s.next, ["ask"]);
    let ask = &s.tasks[0];
    assert_eq!(ask.status, TaskStatus::Interrupted);
    assert_eq!(
        ask.interrupts,
        [
            json!({"$type": "langgraph.types.Interrupt", "value": "question?", "id": "a05cb6038025290c26e17533e1ba23ae", "response_schema": null})
        ]
    );
    // The interrupt id is the hash of the task's namespace.
    assert_eq!(
        interrupt_id(&ask.checkpoint_ns, 0),
        "a05cb6038025290c26e17533e1ba23ae"
    );
    assert_eq!(s.status(), ThreadStatus::Interrupted);
}

#[test]
fn sends_and_a_pull_task_with_mixed_statuses() {
    let (w0, w1, w2, c) = (
        "18ac45dd-d272-4240-5beb-a3368f58e3dc",
        "29d86172-56ab-402b-9620-174ffe101532",
        "3dfb35b6-4482-e88d-8f5f-7af3e6cd4509",
        "58326ef9-5dca-b74c-0dfb-d026b0170956",
    );
    let t = tuple(
        json!({"cid": "1f1e63f4-36be-6b53-8001-77af20bbfb62", "step": 1,
          "cv": {"__start__": "00000000000000000000000000000002.0.18587709454703016", "x": "00000000000000000000000000000003.0.5575563729763187", "branch:to:a": "00000000000000000000000000000003.0.5575563729763187", "branch:to:c": "00000000000000000000000000000003.0.5575563729763187", "__pregel_tasks": "00000000000000000000000000000003.0.5575563729763187"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.27427407112930413"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.18587709454703016"}}}),
        &[("x", LIST_C), ("branch:to:c", NONE), ("__pregel_tasks", "")],
        &[
            (c, "x", LIST_C),
            (w0, "x", LIST_C),
            (w1, "__interrupt__", INT_W1),
            (w2, "x", LIST_C),
        ],
    );
    // The Topic value is a list of Sends.
    let mut t = t;
    let sends: Vec<_> = [SEND_W0, SEND_W1, SEND_W2]
        .iter()
        .map(|h| dec(h).as_value().unwrap().clone())
        .collect();
    t.checkpoint.channel_values[2].1 =
        Arc::new(Decoded::Msgpack(flashback_codec::Value::Array(sends)));

    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("w", w0), ("w", w1), ("w", w2), ("c", c)]);
    assert_eq!(s.next, ["w"]);
    let paths: Vec<&Json> = s.tasks.iter().map(|t| &t.path).collect();
    assert_eq!(
        paths,
        [
            &json!(["__pregel_push", 0, false]),
            &json!(["__pregel_push", 1, false]),
            &json!(["__pregel_push", 2, false]),
            &json!(["__pregel_pull", "c"])
        ]
    );
    let statuses: Vec<TaskStatus> = s.tasks.iter().map(|t| t.status).collect();
    assert_eq!(
        statuses,
        [
            TaskStatus::Done,
            TaskStatus::Interrupted,
            TaskStatus::Done,
            TaskStatus::Done
        ]
    );
    assert_eq!(s.tasks[0].kind, TaskKind::Push);
    assert_eq!(s.tasks[0].send_arg, Some(json!(0)));
    assert_eq!(s.tasks[3].writes[0].value, Some(json!(["c"])));
    assert_eq!(
        interrupt_id(&s.tasks[1].checkpoint_ns, 0),
        "5789414b395fc8744e7396ca2044b82e"
    );
    assert!(s.unmatched_task_ids.is_empty());

    let h = derive_tasks_with(
        &t,
        &DeriveOptions {
            mode: SnapshotMode::History,
            ..Default::default()
        },
    );
    assert_eq!(h.next, ["w", "w", "w", "c"]);
}

#[test]
fn join_barrier_task_includes_the_implicit_branch_trigger() {
    let t = tuple(
        json!({"cid": "1f1e63f4-36d1-69e1-8002-85cc5c67cd14", "step": 2,
          "cv": {"__start__": "00000000000000000000000000000002.0.527294449241862", "x": "00000000000000000000000000000004.0.4703405404321792", "branch:to:a": "00000000000000000000000000000003.0.026355918325595362", "branch:to:b": "00000000000000000000000000000004.0.4703405404321792", "branch:to:c": "00000000000000000000000000000004.0.4703405404321792", "join:b+c:d": "00000000000000000000000000000004.0.4703405404321792"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8675899634462385"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.527294449241862"}, "b": {"branch:to:b": "00000000000000000000000000000003.0.026355918325595362"}, "c": {"branch:to:c": "00000000000000000000000000000003.0.026355918325595362"}}}),
        &[("x", LIST_C), ("join:b+c:d", SET_BC)],
        &[],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("d", "0105159a-15c9-5c21-a7ac-9a89463e4a11")]);
    assert_eq!(s.tasks[0].triggers, ["branch:to:d", "join:b+c:d"]);

    // Half a barrier is not available.
    let mut half = t.clone();
    let only_b = dec("c7110093a86275696c74696e73a373657491a162");
    assert!(matches!(only_b, Decoded::Msgpack(_)), "{only_b:?}");
    half.checkpoint.channel_values[1].1 = Arc::new(only_b);
    assert!(derive_tasks(&half).tasks.is_empty());
}

fn deferred_cv(d: &str) -> Json {
    json!({"__start__": "00000000000000000000000000000002.0.6008225400997834", "x": "00000000000000000000000000000005.0.3107860054905295", "branch:to:a": "00000000000000000000000000000003.0.9871054104719611", "branch:to:b": "00000000000000000000000000000004.0.5420198689118193", "branch:to:d": d, "branch:to:c": "00000000000000000000000000000005.0.3107860054905295"})
}

#[test]
fn deferred_node_waits_for_finished() {
    // interrupt_before=["c"]: d (defer=True) has [None, False] and is not due yet.
    let t = tuple(
        json!({"cid": "1f1e6405-e84b-6baa-8002-fff19ab4a18d", "step": 2,
          "cv": {"__start__": "00000000000000000000000000000002.0.6008225400997834", "x": "00000000000000000000000000000004.0.5420198689118193", "branch:to:a": "00000000000000000000000000000003.0.9871054104719611", "branch:to:b": "00000000000000000000000000000004.0.5420198689118193", "branch:to:d": "00000000000000000000000000000003.0.9871054104719611", "branch:to:c": "00000000000000000000000000000004.0.5420198689118193"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8581140510978652"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.6008225400997834"}, "b": {"branch:to:b": "00000000000000000000000000000003.0.9871054104719611"}}}),
        &[
            ("x", LIST_C),
            ("branch:to:d", DEFER_FALSE),
            ("branch:to:c", NONE),
        ],
        &[],
    );
    assert_eq!(
        ids(&derive_tasks(&t)),
        [("c", "dfa8ac94-a9ac-3268-f594-c2c39fa94d3f")]
    );

    // One step later the barrier finished: d runs (and its write marks it done).
    let seen = json!({"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8581140510978652"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.6008225400997834"}, "b": {"branch:to:b": "00000000000000000000000000000003.0.9871054104719611"}, "__interrupt__": {"x": "00000000000000000000000000000004.0.5420198689118193", "__start__": "00000000000000000000000000000002.0.6008225400997834", "branch:to:a": "00000000000000000000000000000003.0.9871054104719611", "branch:to:b": "00000000000000000000000000000004.0.5420198689118193", "branch:to:c": "00000000000000000000000000000004.0.5420198689118193", "branch:to:d": "00000000000000000000000000000003.0.9871054104719611"}, "c": {"branch:to:c": "00000000000000000000000000000004.0.5420198689118193"}});
    let d = "a25a65a2-f37a-9546-5f62-3aa62489376d";
    let t = tuple(
        json!({"cid": "1f1e6405-e852-6faa-8003-8111431c4d5d", "step": 3, "cv": deferred_cv("00000000000000000000000000000005.0.3107860054905295"), "vs": seen}),
        &[("x", LIST_C), ("branch:to:d", DEFER_TRUE)],
        &[(d, "x", LIST_C)],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("d", d)]);
    assert!(s.next.is_empty());
    assert_eq!(s.status(), ThreadStatus::Finished);
}

#[test]
fn failed_task() {
    let task = "83fd90ad-f97b-1ec2-a7e9-75e880a619c5";
    let t = tuple(
        json!({"cid": "1f1e63f4-36e7-6797-8001-89967a6beab3", "step": 1,
          "cv": {"__start__": "00000000000000000000000000000002.0.11198244903422583", "x": "00000000000000000000000000000003.0.27099407324585856", "branch:to:a": "00000000000000000000000000000003.0.27099407324585856", "branch:to:boom": "00000000000000000000000000000003.0.27099407324585856"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7403204873670446"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.11198244903422583"}}}),
        &[("x", LIST_C), ("branch:to:boom", NONE)],
        &[(task, "__error__", ERR_BOOM)],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("boom", task)]);
    assert_eq!(s.next, ["boom"]);
    assert_eq!(s.tasks[0].error, Some(json!("ValueError('boom')")));
    assert_eq!(s.tasks[0].status, TaskStatus::Failed);
    assert_eq!(thread_status(&t), ThreadStatus::Failed);
}

#[test]
fn subgraph_tasks_use_the_checkpoint_namespace() {
    let mid = "a9c9a086-8ba7-65a8-c514-91ad96ec2b8a";
    let parent = tuple(
        json!({"cid": "1f1e63f4-36d9-6ed4-8001-f75465ccec73", "step": 1,
          "cv": {"__start__": "00000000000000000000000000000002.0.8233333297964672", "x": "00000000000000000000000000000003.0.028350729465024704", "branch:to:a": "00000000000000000000000000000003.0.028350729465024704", "branch:to:mid": "00000000000000000000000000000003.0.028350729465024704"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.2677432130883902"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.8233333297964672"}}}),
        &[("x", LIST_C), ("branch:to:mid", NONE)],
        &[(mid, "__interrupt__", INT_QUESTION)],
    );
    let sub_ns = format!("mid:{mid}");
    let opts = DeriveOptions {
        namespaces: vec![String::new(), sub_ns.clone()],
        ..Default::default()
    };
    let s = derive_tasks_with(&parent, &opts);
    assert_eq!(ids(&s), [("mid", mid)]);
    assert_eq!(s.tasks[0].state.as_deref(), Some(sub_ns.as_str()));
    assert_eq!(derive_tasks(&parent).tasks[0].state, None);

    let child = tuple(
        json!({"cid": "1f1e63f4-36dc-6cce-8000-c876141a6af3", "ns": sub_ns, "step": 0,
          "cv": {"__start__": "00000000000000000000000000000002.0.11444251669667382", "x": "00000000000000000000000000000002.0.11444251669667382", "branch:to:inner": "00000000000000000000000000000002.0.11444251669667382"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.3440598156127411"}}}),
        &[("x", LIST_C), ("branch:to:inner", NONE)],
        &[],
    );
    let s = derive_tasks(&child);
    assert_eq!(ids(&s), [("inner", "1156c54c-3670-f122-7371-707ab1313f56")]);
    assert_eq!(
        s.tasks[0].checkpoint_ns,
        format!("{sub_ns}|inner:1156c54c-3670-f122-7371-707ab1313f56")
    );

    // Two levels down, and a checkpointer=True namespace without task ids.
    let nested = tuple(
        json!({"cid": "1f1e63f4-ac9e-64eb-8000-87da8ac91e6b", "ns": "mid:0c62a029-c0b1-febc-ebc3-1919e37ce438|sub:d9d3df8e-d82a-5f4f-7298-6fa2bd437e9a", "step": 0,
          "cv": {"__start__": "00000000000000000000000000000002.0.5552970007526146", "x": "00000000000000000000000000000002.0.5552970007526146", "branch:to:inner": "00000000000000000000000000000002.0.5552970007526146"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7512820976481583"}}}),
        &[("x", LIST_C), ("branch:to:inner", NONE)],
        &[],
    );
    assert_eq!(
        ids(&derive_tasks(&nested)),
        [("inner", "753f986c-38d2-6d0b-c786-9898876b0d22")]
    );
    let persist = tuple(
        json!({"cid": "1f1e63f4-acb0-67d9-8000-91cd31bf183c", "ns": "persist", "step": 0,
          "cv": {"__start__": "00000000000000000000000000000002.0.5956825837748341", "x": "00000000000000000000000000000002.0.5956825837748341", "branch:to:p1": "00000000000000000000000000000002.0.5956825837748341"},
          "vs": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.2914713906927602"}}}),
        &[("x", LIST_C), ("branch:to:p1", NONE)],
        &[],
    );
    assert_eq!(
        ids(&derive_tasks(&persist)),
        [("p1", "fbcfe757-53fa-79b1-f32e-f4e7fb6e4965")]
    );
}

#[test]
fn input_checkpoint_start_task() {
    // The step -1 input checkpoint: __start__ has no versions_seen entry; its writes finish it.
    let start = "e96ca1b5-7689-5eb1-4a9c-e2e32906864f";
    let t = tuple(
        json!({"cid": "1f1e6405-e842-673f-bfff-56b013ff314d", "step": -1,
          "cv": {"__start__": "00000000000000000000000000000001.0.8581140510978652"}, "vs": {"__input__": {}}}),
        &[("__start__", "81a17890")],
        &[(start, "x", LIST_C), (start, "branch:to:a", NONE)],
    );
    let s = derive_tasks(&t);
    assert_eq!(ids(&s), [("__start__", start)]);
    assert_eq!(s.tasks[0].triggers, ["__start__"]);
    assert!(s.next.is_empty());
    assert_eq!(s.status(), ThreadStatus::Finished);
    let h = derive_tasks_with(
        &t,
        &DeriveOptions {
            mode: SnapshotMode::History,
            ..Default::default()
        },
    );
    assert_eq!(h.next, ["__start__"]);
}

#[test]
fn v1_checkpoints_use_sha1_ids() {
    // `_uuid5_str(cid_bytes, "b", "2", "b", "__pregel_pull", "branch:to:b")` in Python.
    let parts = ["b", "2", "b", "__pregel_pull", "branch:to:b"];
    let cid = "1f1e63f4-36ab-6ea4-8001-3edc500fd290";
    assert_eq!(
        task_id(1, cid, &parts).unwrap(),
        "fb557089-7b60-0b6e-123d-502629af94a7"
    );
    assert_eq!(
        task_id(4, cid, &parts).unwrap(),
        "94dff4fb-5185-d265-0517-4fb60ae23695"
    );
}
