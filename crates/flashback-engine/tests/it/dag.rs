//! DAG structure: heads, roots, branches, orphans, duplicates and subgraph attachment.

use crate::common;
use common::*;
use flashback_engine::{EngineError, SpawnRef, ThreadDag};
use flashback_storage::CheckpointHeader;
use serde_json::json;

#[test]
fn branches_forks_and_head() {
    let mut v = chain("a", 4, None);
    v.extend([
        h("b01", Some("a02")),
        h("b02", Some("b01")),
        h("c01", Some("a02")),
        h("d01", Some("b01")),
    ]);
    // Shuffle: the DAG must not depend on input order.
    v.reverse();
    let dag = ThreadDag::build(&v).unwrap();
    assert_eq!(dag.head(), Some("d01"));
    assert_eq!(dag.len(), 8);
    assert_eq!(dag.fork_points(""), ["a02", "b01"]);
    assert_eq!(dag.node("", "a02").unwrap().children, ["a03", "b01", "c01"]);
    let br: Vec<(usize, &str, &str, Option<&str>, usize)> = dag
        .branches()
        .iter()
        .map(|b| {
            (
                b.id,
                b.first.as_str(),
                b.tip.as_str(),
                b.forked_from.as_deref(),
                b.len,
            )
        })
        .collect();
    assert_eq!(
        br,
        [
            (0, "a01", "a04", None, 4),
            (1, "b01", "b02", Some("a02"), 2),
            (2, "c01", "c01", Some("a02"), 1),
            (3, "d01", "d01", Some("b01"), 1)
        ]
    );
    assert_eq!(dag.node("", "b02").unwrap().branch, 1);
    let lineage: Vec<&str> = dag
        .lineage("", "d01")
        .iter()
        .map(|n| n.checkpoint_id.as_str())
        .collect();
    assert_eq!(lineage, ["d01", "b01", "a02", "a01"]);
    assert!(dag.node("", "d01").unwrap().is_head);
    assert_eq!(dag.parent("", "b01").unwrap().checkpoint_id, "a02");
    assert_eq!(dag.children("", "b01").len(), 2);
    assert!(dag.warnings().is_empty());
}

#[test]
fn mixed_threads_are_rejected_and_duplicates_reported() {
    let mut other = h("x01", None);
    other.thread_id = "other".into();
    let err = ThreadDag::build(&[h("a01", None), other]).unwrap_err();
    assert!(
        matches!(&err, EngineError::MixedThreads { expected, found } if expected == "t" && found == "other"),
        "{err:?}"
    );

    let dag = ThreadDag::build(&[h("a01", None), h("a01", Some("zz"))]).unwrap();
    assert_eq!(dag.len(), 1);
    assert_eq!(dag.node("", "a01").unwrap().orphan_parent, None);
    assert_eq!(dag.warnings().len(), 1);

    let empty = ThreadDag::build(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.head(), None);
    assert_eq!(
        flashback_engine::layout(&empty, &Default::default())
            .unwrap()
            .rows
            .len(),
        0
    );
}

fn py(ns: &str, id: &str, parent: Option<&str>, parents: serde_json::Value) -> CheckpointHeader {
    CheckpointHeader {
        thread_id: "n".into(),
        checkpoint_ns: ns.into(),
        checkpoint_id: id.into(),
        parent_checkpoint_id: parent.map(str::to_owned),
        ts: String::new(),
        metadata: json!({"source": "loop", "step": 0, "parents": parents}),
        problem: None,
    }
}

/// `graph.invoke` on outer → mid → sub(inner, interrupt), as `InMemorySaver.list` returned it.
fn nested_python_thread() -> Vec<CheckpointHeader> {
    let mid = "mid:0c62a029-c0b1-febc-ebc3-1919e37ce438";
    let sub = "mid:0c62a029-c0b1-febc-ebc3-1919e37ce438|sub:d9d3df8e-d82a-5f4f-7298-6fa2bd437e9a";
    vec![
        py(
            "",
            "1f1e63f4-ac98-6539-8000-f9559e445e16",
            Some("1f1e63f4-ac89-6361-bfff-bfc547907b8b"),
            json!({}),
        ),
        py("", "1f1e63f4-ac89-6361-bfff-bfc547907b8b", None, json!({})),
        py(
            mid,
            "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7",
            Some("1f1e63f4-ac9a-69c0-bfff-56511cbe91bb"),
            json!({"": "1f1e63f4-ac98-6539-8000-f9559e445e16"}),
        ),
        py(
            mid,
            "1f1e63f4-ac9a-69c0-bfff-56511cbe91bb",
            None,
            json!({"": "1f1e63f4-ac98-6539-8000-f9559e445e16"}),
        ),
        py(
            sub,
            "1f1e63f4-ac9e-64eb-8000-87da8ac91e6b",
            Some("1f1e63f4-ac9d-6516-bfff-5cf342c6b077"),
            json!({"": "1f1e63f4-ac98-6539-8000-f9559e445e16", mid: "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7"}),
        ),
        py(
            sub,
            "1f1e63f4-ac9d-6516-bfff-5cf342c6b077",
            None,
            json!({"": "1f1e63f4-ac98-6539-8000-f9559e445e16", mid: "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7"}),
        ),
    ]
}

#[test]
fn nested_subgraphs_attach_to_their_spawning_checkpoints() {
    let dag = ThreadDag::build(&nested_python_thread()).unwrap();
    let mid = "mid:0c62a029-c0b1-febc-ebc3-1919e37ce438";
    let sub = format!("{mid}|sub:d9d3df8e-d82a-5f4f-7298-6fa2bd437e9a");
    assert_eq!(dag.head(), Some("1f1e63f4-ac98-6539-8000-f9559e445e16"));
    let ns: Vec<(&str, usize, Option<&str>)> = dag
        .namespaces()
        .iter()
        .map(|n| (n.ns.as_str(), n.depth, n.parent_ns.as_deref()))
        .collect();
    assert_eq!(
        ns,
        [
            ("", 0, None),
            (mid, 1, Some("")),
            (sub.as_str(), 2, Some(mid))
        ]
    );
    let root = dag
        .node("", "1f1e63f4-ac98-6539-8000-f9559e445e16")
        .unwrap();
    assert_eq!(root.subgraphs, [mid]);
    assert_eq!(
        dag.subgraphs_under("", &root.checkpoint_id),
        [mid, sub.as_str()]
    );
    let mid_ckpt = dag
        .node(mid, "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7")
        .unwrap();
    assert_eq!(mid_ckpt.subgraphs, [sub.as_str()]);
    assert_eq!(
        dag.namespace(&sub).unwrap().spawned_by,
        Some(SpawnRef {
            ns: mid.into(),
            checkpoint_id: "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7".into(),
            present: true
        })
    );
    assert_eq!(
        dag.namespace(mid).unwrap().checkpoint_ids,
        [
            "1f1e63f4-ac9b-6aef-8000-aed5a3b47fb7",
            "1f1e63f4-ac9a-69c0-bfff-56511cbe91bb"
        ]
    );
    assert!(dag.warnings().is_empty(), "{:?}", dag.warnings());
}

#[test]
fn unusual_namespaces_attach() {
    let v = vec![
        h("a01", None),
        h("a02", Some("a01")),
        h("a03", Some("a02")),
        // checkpointer=True: no task id; two calls continue one history.
        sub("persist", "a01p1", None, Some(("", "a01"))),
        sub("persist", "a02p1", Some("a01p1"), Some(("", "a02"))),
        // Second subgraph call inside one task: numeric segment, parent graph is the root.
        sub("mid:t|1", "a02m1", None, Some(("", "a02"))),
        // parents lacks the exact key: a key with the same task-id-free form is used …
        py_meta(
            "deep:x|in:y",
            "a02d1",
            json!({"": "a02", "deep:x:T": "a02m1"}),
        ),
        // … or else the deepest recorded ancestor.
        py_meta("odd|in:y", "a02o1", json!({"": "a02", "mid:t|1": "a02m1"})),
        // The spawning checkpoint is gone.
        sub("lost:z", "a03l1", None, Some(("", "a00"))),
    ];
    let dag = ThreadDag::build(&v).unwrap();
    assert_eq!(dag.node("", "a01").unwrap().subgraphs, ["persist"]);
    assert_eq!(
        dag.node("", "a02").unwrap().subgraphs,
        ["mid:t|1", "persist"]
    );
    assert_eq!(
        dag.node("persist", "a02p1")
            .unwrap()
            .spawned_by
            .as_ref()
            .unwrap()
            .checkpoint_id,
        "a02"
    );
    let deep = dag.node("deep:x|in:y", "a02d1").unwrap();
    assert_eq!(
        deep.spawned_by
            .as_ref()
            .map(|s| (s.ns.as_str(), s.checkpoint_id.as_str(), s.present)),
        Some(("deep:x:T", "a02m1", false))
    );
    let odd = dag
        .node("odd|in:y", "a02o1")
        .unwrap()
        .spawned_by
        .clone()
        .unwrap();
    assert_eq!(
        (odd.ns.as_str(), odd.checkpoint_id.as_str(), odd.present),
        ("mid:t|1", "a02m1", true)
    );
    assert_eq!(
        dag.node("mid:t|1", "a02m1").unwrap().subgraphs,
        ["odd|in:y"]
    );
    let lost = dag.node("lost:z", "a03l1").unwrap();
    assert!(!lost.spawned_by.as_ref().unwrap().present);
    assert_eq!(dag.warnings().len(), 2, "{:?}", dag.warnings());
}

fn py_meta(ns: &str, id: &str, parents: serde_json::Value) -> CheckpointHeader {
    let mut h = sub(ns, id, None, None);
    h.metadata["parents"] = parents;
    h
}

#[test]
fn hostile_parents_metadata_cannot_create_cycles() {
    // Each namespace claims to be spawned by the other; only the shallower one may spawn.
    let v = vec![
        h("a01", None),
        py_meta("a:x", "a01a", json!({"a:x|b:y": "a01b"})),
        py_meta("a:x|b:y", "a01b", json!({"": "a01", "a:x": "a01a"})),
    ];
    let dag = ThreadDag::build(&v).unwrap();
    assert_eq!(dag.node("a:x", "a01a").unwrap().spawned_by, None);
    assert_eq!(dag.node("a:x", "a01a").unwrap().subgraphs, ["a:x|b:y"]);
    let l = flashback_engine::layout(&dag, &flashback_engine::LayoutOptions::nested()).unwrap();
    assert_eq!(l.rows.len(), 3);
}
