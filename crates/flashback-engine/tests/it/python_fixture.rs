//! Every checkpoint of several real LangGraph 1.2.22 threads (`InMemorySaver`), with what
//! `get_state` (live) and `get_state_history` (history) reported for it. Regenerate with
//! `tests/fixtures/gen_python_snapshots.py` and the project's Python venv.

use flashback_codec::decode_typed;
use flashback_engine::{derive_tasks_with, DeriveOptions, SnapshotMode, ThreadDag};
use flashback_storage::{
    Checkpoint, CheckpointHeader, CheckpointTuple, PendingWrite, Version, Versions,
};
use serde_json::Value as Json;
use std::sync::Arc;

const FIXTURE: &str = include_str!("../fixtures/python_snapshots.json");

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn versions(j: &Json) -> Versions {
    j.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), Version::from_json(v).unwrap()))
        .collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn s(j: &Json) -> &str {
    j.as_str().unwrap()
}

fn tuple(r: &Json) -> CheckpointTuple {
    let header = CheckpointHeader {
        thread_id: s(&r["scenario"]).into(),
        checkpoint_ns: s(&r["ns"]).into(),
        checkpoint_id: s(&r["cid"]).into(),
        parent_checkpoint_id: r["parent"].as_str().map(str::to_owned),
        ts: String::new(),
        metadata: r["metadata"].clone(),
        problem: None,
    };
    let channel_values = r["channel_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                s(&c[0]).to_owned(),
                Arc::new(decode_typed(s(&c[1]), Some(&hex(s(&c[2]))))),
            )
        })
        .collect();
    let pending_writes = r["pending_writes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, w)| PendingWrite {
            task_id: s(&w[0]).into(),
            task_path: String::new(),
            idx: i as i64,
            channel: s(&w[1]).into(),
            type_tag: s(&w[2]).into(),
            value: decode_typed(s(&w[2]), Some(&hex(s(&w[3])))),
        })
        .collect();
    CheckpointTuple {
        checkpoint: Checkpoint {
            v: r["v"].as_i64().unwrap(),
            id: header.checkpoint_id.clone(),
            ts: String::new(),
            channel_values,
            channel_versions: versions(&r["channel_versions"]),
            versions_seen: r["versions_seen"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), versions(v)))
                .collect(),
            updated_channels: None,
            pending_sends: None,
        },
        header,
        pending_writes,
        sealing: Default::default(),
        served: None,
    }
}

#[test]
fn derived_tasks_match_python_for_every_checkpoint() {
    let records: Vec<Json> = serde_json::from_str(FIXTURE).unwrap();
    assert!(records.len() >= 30);
    let mut namespaces: Vec<String> = records.iter().map(|r| s(&r["ns"]).to_owned()).collect();
    namespaces.sort();
    namespaces.dedup();
    for r in &records {
        let what = format!(
            "{} {} {} {}",
            s(&r["scenario"]),
            s(&r["mode"]),
            s(&r["ns"]),
            s(&r["cid"])
        );
        let mode = if s(&r["mode"]) == "live" {
            SnapshotMode::Live
        } else {
            SnapshotMode::History
        };
        let opts = DeriveOptions {
            mode,
            namespaces: namespaces.clone(),
            ..Default::default()
        };
        let got = derive_tasks_with(&tuple(r), &opts);
        let exp = &r["expected"];
        // PULL order follows the graph's node order, which is not stored: compare as sets,
        // but PUSH tasks must come first in index order exactly as in Python.
        let want: Vec<(&str, &str)> = exp["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (s(&t["name"]), s(&t["id"])))
            .collect();
        let have: Vec<(&str, &str)> = got
            .tasks
            .iter()
            .map(|t| (t.name.as_str(), t.id.as_str()))
            .collect();
        assert_eq!(
            sorted(have.clone()),
            sorted(want.clone()),
            "tasks of {what}"
        );
        let pushes = got
            .tasks
            .iter()
            .filter(|t| t.path[0] == "__pregel_push")
            .count();
        assert_eq!(have[..pushes], want[..pushes], "PUSH order of {what}");
        let mut next: Vec<&str> = exp["next"].as_array().unwrap().iter().map(s).collect();
        let mut got_next: Vec<&str> = got.next.iter().map(String::as_str).collect();
        next.sort();
        got_next.sort();
        assert_eq!(got_next, next, "next of {what}");
        let by_id = |id: &str| {
            exp["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["id"] == id)
                .unwrap()
        };
        for t in &got.tasks {
            let e = by_id(&t.id);
            assert_eq!(t.path, e["path"], "path of {} in {what}", t.name);
            assert_eq!(
                t.error.is_some(),
                e["error"].as_bool().unwrap(),
                "error of {} in {what}",
                t.name
            );
            assert_eq!(
                t.interrupts.len() as u64,
                e["interrupts"].as_u64().unwrap(),
                "interrupts of {} in {what}",
                t.name
            );
        }
        if got.tasks.iter().any(|t| t.name == "mid") {
            assert!(
                got.tasks
                    .iter()
                    .filter(|t| t.name == "mid")
                    .all(|t| t.state.is_some()),
                "state of mid in {what}"
            );
        }
    }
}

#[test]
fn fixture_threads_build_clean_dags() {
    let records: Vec<Json> = serde_json::from_str(FIXTURE).unwrap();
    let mut by_thread: std::collections::BTreeMap<&str, Vec<CheckpointHeader>> = Default::default();
    for r in records.iter().filter(|r| s(&r["mode"]) == "history") {
        by_thread
            .entry(s(&r["scenario"]))
            .or_default()
            .push(tuple(r).header);
    }
    for (thread, headers) in by_thread {
        let dag = ThreadDag::build(&headers).unwrap();
        assert!(dag.warnings().is_empty(), "{thread}: {:?}", dag.warnings());
        assert!(dag.head().is_some(), "{thread}");
    }
}

#[test]
fn update_state_forks_layout() {
    let records: Vec<Json> = serde_json::from_str(FIXTURE).unwrap();
    let headers: Vec<CheckpointHeader> = records
        .iter()
        .filter(|r| s(&r["scenario"]) == "fork" && s(&r["mode"]) == "history")
        .map(|r| tuple(r).header)
        .collect();
    let dag = ThreadDag::build(&headers).unwrap();
    let l = flashback_engine::layout(&dag, &Default::default()).unwrap();
    let text = flashback_engine::render_text(&l.rows, |r| {
        let n = dag.node(&r.ns, &r.id).unwrap();
        format!(
            "{} {}",
            n.source.as_deref().unwrap_or("?"),
            n.step.unwrap_or(0)
        )
    });
    // update_state(as_node="a") on loop 1 forks a sibling of loop 2; update_state(as_node=
    // "__copy__") on loop 3 forks a sibling of loop 3 (its parent is the source's parent).
    // The run as it first went keeps lane 0; each fork takes the next lane, in the order made.
    let expected = &r"
    * loop 5
    * fork 4
  * | loop 3
  |/
  * update 2
* | loop 2
|/
* loop 1
* loop 0
* input -1
"[1..];
    assert_eq!(text, expected);
}
