//! Tests of the plan (`plan.rs`).

use super::*;

fn row(ns: &str, id: &str, parent: Option<&str>, root: Option<&str>) -> CpRow {
    CpRow {
        thread: "t".into(),
        ns: ns.into(),
        id: id.into(),
        parent: parent.map(Into::into),
        v: Some(4),
        root: root.map(Into::into),
        run_id: None,
        versions: vec![("a".into(), format!("v{id}"))],
        stored: Vec::new(),
        delta: Vec::new(),
    }
}

#[test]
fn keep_latest_plan() {
    let mut snap = Snapshot {
        rows: vec![
            row("", "1", None, None),
            row("", "2", Some("1"), None),
            row("", "3", Some("2"), None),
            // A call started from root checkpoint 2 (deleted): goes entirely.
            row("sub:x", "5", None, Some("2")),
            // A call started from the kept head: keeps its latest.
            row("sub:y", "6", None, Some("3")),
            row("sub:y", "7", Some("6"), Some("3")),
            // A persistent subgraph (no ':'): keeps its latest.
            row("persist", "8", None, Some("1")),
            row("persist", "9", Some("8"), Some("2")),
        ],
        ..Default::default()
    };
    snap.writes
        .insert(("t".into(), "".into(), "1".into()), (3, false));
    snap.writes
        .insert(("t".into(), "".into(), "3".into()), (2, false));
    snap.writes
        .insert(("t".into(), "sub:x".into(), "zz".into()), (4, false));
    for (ns, id) in [
        ("", "1"),
        ("", "2"),
        ("", "3"),
        ("sub:x", "5"),
        ("persist", "8"),
    ] {
        snap.blobs
            .insert(("t".into(), ns.into(), "a".into(), format!("v{id}")));
    }
    let p = plan(&snap, &["t".into()], &Select::KeepLatest(1));
    let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["1", "2", "8", "5", "6"]);
    assert_eq!(p.namespaces, [("t".to_string(), "sub:x".to_string())]);
    assert_eq!(p.report.writes, 3 + 4);
    assert_eq!(p.report.blobs, 4); // v1, v2, v5 (whole ns), v8
    let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(cleared, ["3", "9", "7"]);
}

#[test]
fn branch_plan_takes_the_checkpoint_its_descendants_and_their_calls() {
    // 1 ← 2 ← 3 (head); the fork 4 off 2, then 5 ← 6 after it; a call started from 5.
    let mut snap = Snapshot {
        rows: vec![
            row("", "1", None, None),
            row("", "2", Some("1"), None),
            row("", "3", Some("2"), None),
            row("", "4", Some("2"), None),
            row("", "5", Some("4"), None),
            row("", "6", Some("5"), None),
            row("sub:x", "7", None, Some("5")),
            row("sub:y", "8", None, Some("3")),
        ],
        ..Default::default()
    };
    snap.writes
        .insert(("t".into(), "".into(), "4".into()), (2, false));
    snap.writes
        .insert(("t".into(), "".into(), "2".into()), (5, false));
    for id in ["2", "4", "6"] {
        snap.blobs
            .insert(("t".into(), "".into(), "a".into(), format!("v{id}")));
    }
    let p = plan(&snap, &["t".into()], &Select::Branch { ns: "", id: "4" });
    let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["4", "5", "6", "7"]);
    assert_eq!(p.namespaces, [("t".to_string(), "sub:x".to_string())]);
    assert_eq!(p.report.writes, 2);
    assert_eq!(p.report.blobs, 2); // v4, v6
    assert!(p.parents.is_empty());
    // An id that is not there deletes nothing.
    let p = plan(&snap, &["t".into()], &Select::Branch { ns: "", id: "9" });
    assert!(p.is_empty());
}

#[test]
fn keep_latest_keeps_what_a_delta_channel_needs() {
    // 1 ← 2 (snapshot of m) ← 3 ← 4 (head); a side branch 25 off 2.
    let mut rows: Vec<CpRow> = [
        ("1", None),
        ("2", Some("1")),
        ("3", Some("2")),
        ("4", Some("3")),
        ("25", Some("2")),
    ]
    .into_iter()
    .map(|(id, p)| row("", id, p, None))
    .collect();
    for r in &mut rows {
        r.delta = vec!["m".into()];
    }
    rows[1].stored = vec!["m".into()];
    let snap = Snapshot {
        rows,
        ..Default::default()
    };
    let p = plan(&snap, &["t".into()], &Select::KeepLatest(1));
    let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["1", "25"]);
    let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(cleared, ["2"]);
    // Never stored: the whole line stays.
    let mut snap = snap;
    snap.rows[1].stored.clear();
    let p = plan(&snap, &["t".into()], &Select::KeepLatest(1));
    let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["25"]);
}

#[test]
fn pre_v4_head_keeps_parent_with_sends() {
    let mut head = row("", "2", Some("1"), None);
    head.v = Some(3);
    let mut snap = Snapshot {
        rows: vec![
            row("", "0", None, None),
            row("", "1", Some("0"), None),
            head,
        ],
        ..Default::default()
    };
    snap.writes
        .insert(("t".into(), "".into(), "1".into()), (1, true));
    let p = plan(&snap, &["t".into()], &Select::KeepLatest(1));
    let ids: Vec<&str> = p.report.checkpoints.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(ids, ["0"]);
    let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(cleared, ["1"]);
}

#[test]
fn keep_latest_n_keeps_the_heads_lineage() {
    // 1 ← 2 ← 3 ← 5 (head); a side branch 4 off 2 (newer than 3, not on the head's line).
    let snap = Snapshot {
        rows: vec![
            row("", "1", None, None),
            row("", "2", Some("1"), None),
            row("", "3", Some("2"), None),
            row("", "4", Some("2"), None),
            row("", "5", Some("3"), None),
        ],
        ..Default::default()
    };
    let gone = |n: usize| -> Vec<String> {
        let p = plan(&snap, &["t".into()], &Select::KeepLatest(n));
        p.report.checkpoints.iter().map(|c| c.2.clone()).collect()
    };
    assert_eq!(gone(1), ["1", "2", "3", "4"]);
    assert_eq!(gone(2), ["1", "2", "4"]);
    assert_eq!(gone(3), ["1", "4"]);
    // Longer than the lineage: the line stays, the side branch goes.
    assert_eq!(gone(9), ["4"]);
    let p = plan(&snap, &["t".into()], &Select::KeepLatest(3));
    let cleared: Vec<&str> = p.parents.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(cleared, ["2"]);
}

#[test]
fn keep_latest_n_keeps_what_the_oldest_kept_delta_needs() {
    // 1 (snapshot of m) ← 2 ← 3 (snapshot) ← 4 (head): keeping 2 (3, 4) needs nothing older
    // than 3; keeping 3 (2, 3, 4) needs 1.
    let mut rows: Vec<CpRow> = [
        ("1", None),
        ("2", Some("1")),
        ("3", Some("2")),
        ("4", Some("3")),
    ]
    .into_iter()
    .map(|(id, p)| row("", id, p, None))
    .collect();
    for r in &mut rows {
        r.delta = vec!["m".into()];
    }
    rows[0].stored = vec!["m".into()];
    rows[2].stored = vec!["m".into()];
    let snap = Snapshot {
        rows,
        ..Default::default()
    };
    let gone = |n: usize| -> Vec<String> {
        let p = plan(&snap, &["t".into()], &Select::KeepLatest(n));
        p.report.checkpoints.iter().map(|c| c.2.clone()).collect()
    };
    assert_eq!(gone(1), ["1", "2"]);
    assert_eq!(gone(2), ["1", "2"]);
    assert!(gone(3).is_empty());
}
