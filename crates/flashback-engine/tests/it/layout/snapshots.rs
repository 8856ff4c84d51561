//! Text snapshots of the lane layout (plain expected strings).

use crate::common;
use common::*;
use flashback_engine::{layout, LayoutOptions, ThreadDag};

fn root() -> LayoutOptions {
    LayoutOptions::default()
}

/// Compare a rendering with an expected block (leading newline of the literal ignored).
fn check(actual: &str, expected: &str) {
    let expected = expected.strip_prefix('\n').unwrap_or(expected);
    assert_eq!(
        actual, expected,
        "\n--- actual ---\n{actual}--- expected ---\n{expected}"
    );
}

#[test]
fn linear_chain() {
    check(
        &draw(&chain("a", 4, None), &root()),
        r"
* a04 (head)
* a03
* a02
* a01
",
    );
}

#[test]
fn one_fork() {
    let mut v = chain("a", 4, None);
    v.push(h("f01", Some("a02")));
    check(
        &draw(&v, &root()),
        r"
  * f01 (head)
* | a04
* | a03
|/
* a02 [fork]
* a01
",
    );
}

#[test]
fn two_forks_from_the_same_parent() {
    let mut v = chain("a", 3, None);
    v.extend([
        h("b01", Some("a02")),
        h("b02", Some("b01")),
        h("c01", Some("a02")),
    ]);
    check(
        &draw(&v, &root()),
        r"
    * c01 (head)
  * | b02
  * | b01
* | | a03
|/ /
|/
* a02 [fork]
* a01
",
    );
}

#[test]
fn fork_of_a_fork() {
    let mut v = chain("a", 3, None);
    v.extend([
        h("b01", Some("a02")),
        h("b02", Some("b01")),
        h("c01", Some("b01")),
        h("c02", Some("c01")),
    ]);
    check(
        &draw(&v, &root()),
        r"
    * c02 (head)
    * c01
  * | b02
  |/
  * b01 [fork]
* | a03
|/
* a02 [fork]
* a01
",
    );
}

#[test]
fn the_trunk_keeps_lane_zero() {
    // a04 forks from a02 while the original branch goes on to the head a05.
    let v = vec![
        h("a05", Some("a03")),
        h("a02", Some("a01")),
        h("a03", Some("a02")),
        h("a01", None),
        h("a04", Some("a02")),
    ];
    check(
        &draw(&v, &root()),
        r"
* a05 (head)
| * a04
* | a03
|/
* a02 [fork]
* a01
",
    );
}

#[test]
fn orphans() {
    let v = vec![
        h("a02", Some("a01")),
        h("a03", Some("a02")),
        h("a04", Some("a03")),
        h("b01", Some("gone")),
        h("b02", Some("b01")),
    ];
    check(
        &draw(&v, &root()),
        r"
* b02 (head)
* b01 orphan of gone
* a04
* a03
* a02 orphan of a01
",
    );
    let dag = ThreadDag::build(&v).unwrap();
    assert_eq!(dag.warnings().len(), 2, "{:?}", dag.warnings());
    assert_eq!(dag.namespace("").unwrap().roots, ["a02", "b01"]);
}

#[test]
fn parent_cycles_are_broken() {
    let v = vec![
        h("a01", None),
        h("a02", Some("a01")),
        h("c01", Some("c03")),
        h("c02", Some("c01")),
        h("c03", Some("c02")),
        h("d01", Some("d01")),
    ];
    check(
        &draw(&v, &root()),
        r"
* d01 (head) cycle-broken from d01
* c03
* c02
* c01 cycle-broken from c03
* a02
* a01
",
    );
    let dag = ThreadDag::build(&v).unwrap();
    let w = dag.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w.iter()
            .any(|m| m.contains(r#"["c01", "c02", "c03"]"#) && m.contains(r#""c01" -> "c03""#)),
        "{w:?}"
    );
    assert!(w.iter().any(|m| m.contains(r#""d01" -> "d01""#)), "{w:?}");
    assert_eq!(dag.lineage("", "c03").len(), 3);
}

fn nested_thread() -> Vec<flashback_storage::CheckpointHeader> {
    vec![
        h("a01", None),
        h("a02", Some("a01")),
        h("a03", Some("a02")),
        h("a04", Some("a03")),
        sub("mid:t1", "a03m1", None, Some(("", "a03"))),
        sub("mid:t1", "a03m2", Some("a03m1"), Some(("", "a03"))),
        sub(
            "mid:t1|inner:t2",
            "a03m1x1",
            None,
            Some(("mid:t1", "a03m1")),
        ),
        sub(
            "mid:t1|inner:t2",
            "a03m1x2",
            Some("a03m1x1"),
            Some(("mid:t1", "a03m1")),
        ),
    ]
}

#[test]
fn subgraph_namespaces_nest_under_their_spawning_checkpoint() {
    let v = nested_thread();
    check(
        &draw(&v, &LayoutOptions::nested()),
        r"
* a04 (head)
| * a03m2 @mid:t1
| | * a03m1x2 @mid:t1|inner:t2
| | * a03m1x1 @mid:t1|inner:t2
| |/
| * a03m1 @mid:t1
|/
* a03
* a02
* a01
",
    );
    check(
        &draw(&v, &root()),
        r"
* a04 (head)
* a03
* a02
* a01
",
    );
    check(
        &draw(
            &v,
            &LayoutOptions {
                ns: "mid:t1".into(),
                nested: true,
                ..Default::default()
            },
        ),
        r"
* a03m2 @mid:t1
| * a03m1x2 @mid:t1|inner:t2
| * a03m1x1 @mid:t1|inner:t2
|/
* a03m1 @mid:t1
",
    );
    // Collapsing `mid:t1` hides it and everything below it; the rest keeps its lanes.
    check(
        &draw(
            &v,
            &LayoutOptions {
                collapsed: vec!["mid:t1".into()],
                ..LayoutOptions::nested()
            },
        ),
        r"
* a04 (head)
* a03
* a02
* a01
",
    );
    check(
        &draw(
            &v,
            &LayoutOptions {
                collapsed: vec!["mid:t1|inner:t2".into()],
                ..LayoutOptions::nested()
            },
        ),
        r"
* a04 (head)
| * a03m2 @mid:t1
| * a03m1 @mid:t1
|/
* a03
* a02
* a01
",
    );
    let dag = ThreadDag::build(&v).unwrap();
    let l = layout(&dag, &LayoutOptions::nested()).unwrap();
    let depths: Vec<usize> = l.rows.iter().map(|r| r.depth).collect();
    assert_eq!(depths, [0, 1, 2, 2, 1, 0, 0, 0]);
    let kinds: Vec<_> = l
        .rows
        .iter()
        .map(|r| r.parent_kind.map(|k| format!("{k:?}")))
        .collect();
    assert_eq!(kinds[4].as_deref(), Some("Subgraph"));
    assert_eq!(kinds[3].as_deref(), Some("Subgraph"));
    assert_eq!(kinds[1].as_deref(), Some("Parent"));
}

#[test]
fn out_of_order_ids_keep_children_above_parents() {
    // a05 and a01 are children of b01 although their ids sort below it (another process).
    let v = vec![
        h("b01", None),
        h("a05", Some("b01")),
        h("c01", Some("a05")),
        h("a01", Some("b01")),
    ];
    check(
        &draw(&v, &root()),
        r"
  * c01 (head)
  * a05
* | a01
|/
* b01 [fork]
",
    );
}

#[test]
fn subgraph_lines_are_dotted_while_they_pass_other_rows() {
    // The subgraph's root spawned by a02 is written before a03 exists (ids out of order across
    // processes), so its line passes a03's row.
    let v = vec![
        h("a01", None),
        h("a02", Some("a01")),
        h("a03", Some("a02")),
        sub("s:1", "a04", None, Some(("", "a02"))),
    ];
    check(
        &draw(&v, &LayoutOptions::nested()),
        r"
  * a04 @s:1
* : a03 (head)
|/
* a02
* a01
",
    );
}

#[test]
fn unknown_namespace_is_an_error() {
    let dag = ThreadDag::build(&chain("a", 2, None)).unwrap();
    let err = layout(
        &dag,
        &LayoutOptions {
            ns: "nope".into(),
            nested: false,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"namespace "nope" not found in this thread"#
    );
}

#[test]
fn layout_serialises_for_the_gui() {
    let mut v = chain("a", 2, None);
    v.push(h("b01", Some("a01")));
    let dag = ThreadDag::build(&v).unwrap();
    let l = layout(&dag, &root()).unwrap();
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(json["width"], 2);
    assert_eq!(json["rows"][0]["id"], "b01");
    // Each row carries its own line: b01 (lane 1, a fork) down to a01 in row 2, bending into
    // the trunk's lane 0 on the way.
    assert_eq!(json["rows"][0]["lane"], 1);
    assert_eq!(json["rows"][0]["parent_row"], 2);
    assert_eq!(json["rows"][0]["parent_lane"], 0);
    assert_eq!(json["rows"][0]["parent_kind"], "parent");
    assert_eq!(json["rows"][0]["branch_key"], "b01");
    assert_eq!(json["rows"][0]["branch_label"], serde_json::Value::Null);
    // a02, the trunk (the run as it first went), keeps lane 0 straight down into row 2.
    assert_eq!(json["rows"][1]["lane"], 0);
    assert_eq!(json["rows"][1]["parent_row"], 2);
    assert_eq!(json["rows"][1]["parent_lane"], 0);
    assert_eq!(json["rows"][1]["branch_key"], "a01");
    assert_eq!(json["rows"][2]["fork_point"], true);
    assert_eq!(json["rows"][2]["parent_row"], serde_json::Value::Null);
    assert!(
        json["rows"][0].get("edges").is_none(),
        "no per-row list of passing lines"
    );
}

#[test]
fn twenty_thousand_checkpoints_with_forks() {
    let n = 20_000;
    let mut v = Vec::with_capacity(n + n / 50 * 3);
    let mut parent: Option<String> = None;
    for i in 0..n {
        let id = format!("m{i:06}");
        v.push(h(&id, parent.as_deref()));
        if i % 50 == 25 {
            // A short fork every 50 checkpoints, written later than the main line.
            let f1 = format!("z{i:06}a");
            let f2 = format!("z{i:06}b");
            v.push(h(&f1, Some(&id)));
            v.push(h(&f2, Some(&f1)));
        }
        parent = Some(id);
    }
    let dag = ThreadDag::build(&v).unwrap();
    assert!(dag.warnings().is_empty());
    let l = layout(&dag, &LayoutOptions::nested()).unwrap();
    assert_eq!(l.rows.len(), v.len());
    assert_eq!(dag.fork_points("").len(), n / 50);
    assert_eq!(dag.branches().len(), 1 + n / 50);
    let text = flashback_engine::render_text(&l.rows, |r| r.id.clone());
    assert_eq!(text.lines().filter(|l| l.contains('*')).count(), v.len());
}
