//! Branches keep their lane and colour key as forks, merges and re-runs are added, and each
//! branch tip says what the branch is.

use crate::common;

use common::*;
use flashback_engine::{layout, GraphRow, LayoutOptions, ThreadDag};
use flashback_storage::CheckpointHeader;
use serde_json::json;
use std::collections::HashMap;

fn with_action(mut h: CheckpointHeader, note: serde_json::Value) -> CheckpointHeader {
    h.metadata["flashback"] = note;
    h
}

fn rows(headers: &[CheckpointHeader]) -> Vec<GraphRow> {
    let dag = ThreadDag::build(headers).unwrap();
    layout(&dag, &LayoutOptions::default()).unwrap().rows
}

fn lanes(rows: &[GraphRow]) -> HashMap<String, (usize, String)> {
    rows.iter()
        .map(|r| (r.id.clone(), (r.lane, r.branch_key.clone())))
        .collect()
}

/// a01…a06, a copy fork b01 of a03 continued by b02, an edit fork c01 of a05.
fn base() -> Vec<CheckpointHeader> {
    let mut v = chain("a", 6, None);
    v.push(with_action(
        h("b01", Some("a03")),
        json!({"action": "copy_fork"}),
    ));
    v.push(h("b02", Some("b01")));
    v.push(with_action(
        h("c01", Some("a05")),
        json!({"action": "edit_fork"}),
    ));
    v
}

#[test]
fn existing_branches_keep_lane_and_key_as_branches_are_added() {
    let before = lanes(&rows(&base()));
    let mut more = base();
    // A re-run forks a02 and runs three steps; then a merge lands on b02 taking from c01.
    more.push(with_action(
        h("d01", Some("a02")),
        json!({"action": "rerun"}),
    ));
    more.push(h("d02", Some("d01")));
    more.push(h("d03", Some("d02")));
    more.push(with_action(
        h("e01", Some("b02")),
        json!({"action": "merge", "from": "c01", "into": "b02"}),
    ));
    let after = rows(&more);
    let after_lanes = lanes(&after);
    for (id, (lane, key)) in &before {
        assert_eq!(
            after_lanes.get(id),
            Some(&(*lane, key.clone())),
            "{id} moved: {before:?} → {after_lanes:?}"
        );
    }
    // The trunk is the run as it first went, in lane 0, whatever the head is.
    for i in 1..=6 {
        let id = format!("a{i:02}");
        assert_eq!(after_lanes[&id], (0, "a01".to_owned()), "{id}");
    }
    // The merge points at the row of the checkpoint it took from.
    let row_of = |id: &str| after.iter().position(|r| r.id == id).unwrap();
    assert_eq!(after[row_of("e01")].merged_from_row, Some(row_of("c01")));
    assert_eq!(after[row_of("b01")].merged_from_row, None);
}

#[test]
fn branch_tips_are_labelled_and_keys_follow_the_branch() {
    let mut v = base();
    v.push(with_action(
        h("d01", Some("a02")),
        json!({"action": "rerun"}),
    ));
    v.push(h("d02", Some("d01")));
    v.push(with_action(
        h("e01", Some("b02")),
        json!({"action": "merge", "from": "c01", "into": "b02"}),
    ));
    let r = rows(&v);
    let get = |id: &str| r.iter().find(|x| x.id == id).unwrap();
    let label = |id: &str| get(id).branch_label.clone();
    // e01 (the head) is a merge into branch b: the latest thing done on that branch.
    assert_eq!(label("e01").as_deref(), Some("merge"));
    assert_eq!(label("d02").as_deref(), Some("re-run"));
    assert_eq!(label("c01").as_deref(), Some("edit"));
    assert_eq!(label("a06"), None, "the trunk's tip is the plain run");
    // Only tips carry a label.
    for id in ["a01", "a03", "b01", "b02", "d01"] {
        assert_eq!(label(id), None, "{id}");
    }
    assert_eq!(get("d02").branch_key, "d01");
    assert_eq!(get("d01").branch_key, "d01");
    assert_eq!(get("b02").branch_key, "b01");
    // e01 continues b02's lane: the merge extends branch b.
    assert_eq!(get("e01").branch_key, get("b02").branch_key);
}
