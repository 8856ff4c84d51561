//! The layout's lines and the size of its output: each row carries only its own line (to its
//! parent), so the output stays O(rows) however wide the graph (issue 9: 5,000 siblings of one
//! checkpoint used to list 12.5 million passing-line segments, half a gigabyte of JSON).
//! Timings are in `bench/layout.sh`, not here: these tests assert on sizes and shapes.

use crate::common;
use common::*;
use flashback_engine::{layout, render_text, GraphRow, LayoutOptions, ThreadDag};
use flashback_storage::CheckpointHeader;
use serde_json::json;

/// A 10-checkpoint line whose 5th checkpoint is forked `n` times (an eval harness).
fn siblings(n: usize) -> Vec<CheckpointHeader> {
    let mut v = chain("a", 10, None);
    v.extend((0..n).map(|i| h(&format!("f{i:05}"), Some("a05"))));
    v
}

/// Serialised size of a layout's rows.
fn json_len(rows: &[GraphRow]) -> usize {
    serde_json::to_vec(rows).expect("json").len()
}

#[test]
fn five_thousand_siblings_lay_out_in_linear_space() {
    let n = 5_000;
    let dag = ThreadDag::build(&siblings(n)).unwrap();
    let l = layout(&dag, &LayoutOptions::nested()).unwrap();
    assert_eq!(l.rows.len(), n + 10);
    // Every sibling keeps its own lane down to the fork point: the width is honest.
    assert_eq!(l.width, n + 1);
    // The head's lineage runs down lane 0; every sibling bends into it at the fork point.
    let fork = l.rows.iter().position(|r| r.id == "a05").unwrap();
    assert_eq!(l.rows[fork].lane, 0);
    let into_fork = l.rows.iter().filter(|r| r.parent_row == Some(fork)).count();
    assert_eq!(into_fork, n + 1, "every sibling and a06");
    assert!(l
        .rows
        .iter()
        .filter(|r| r.parent_row == Some(fork))
        .all(|r| r.parent_lane == Some(0)));
    // O(rows), not O(rows · width): a row of this thread is about 330 bytes of JSON; listing
    // the lines passing each row made it 98 KB.
    let bytes = json_len(&l.rows);
    assert!(
        bytes < 450 * l.rows.len(),
        "{bytes} bytes of JSON for {} rows",
        l.rows.len()
    );
}

#[test]
fn a_long_thread_with_many_open_forks_stays_linear() {
    // 20,000 checkpoints with a fork every 50 written after the whole line: 401 lanes open at
    // once near the top, each passing hundreds of rows.
    let n = 20_000;
    let mut v = Vec::new();
    let mut parent: Option<String> = None;
    let mut forks = Vec::new();
    for i in 0..n {
        let id = format!("m{i:06}");
        v.push(h(&id, parent.as_deref()));
        if i % 50 == 25 {
            forks.push(h(&format!("z{i:06}a"), Some(&id)));
            forks.push(h(&format!("z{i:06}b"), Some(&format!("z{i:06}a"))));
        }
        parent = Some(id);
    }
    v.extend(forks);
    let dag = ThreadDag::build(&v).unwrap();
    let l = layout(&dag, &LayoutOptions::nested()).unwrap();
    assert_eq!(l.width, n / 50 + 1);
    // About 330 bytes a row; listing the passing lines made it 7.9 KB.
    let bytes = json_len(&l.rows);
    assert!(
        bytes < 450 * l.rows.len(),
        "{bytes} bytes of JSON for {} rows",
        l.rows.len()
    );
}

#[test]
fn text_rebuilds_the_lines_that_pass_each_row() {
    // Rows carry no passing lines; the text still draws them on every row they pass.
    let text = draw(&siblings(3), &LayoutOptions::default());
    // The run as it first went (a01…a10) keeps lane 0; the forks take the lanes beside it in
    // the order they were made, so a new fork never moves an older one.
    let expected = &r"
      * f00002 (head)
    * | f00001
  * | | f00000
* | | | a10
* | | | a09
* | | | a08
* | | | a07
* | | | a06
|/ / /
|/ /
|/
* a05 [fork]
* a04
* a03
* a02
* a01
"[1..];
    assert_eq!(text, expected);
}

/// A small pseudo-random generator (no dependency, reproducible).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// A thread with forks, ids out of order (several processes), orphans and subgraph
/// namespaces spawned by random root checkpoints.
fn random_thread(seed: u64, n: usize) -> Vec<CheckpointHeader> {
    let mut r = Lcg(seed);
    let mut ids: Vec<usize> = (0..n).collect();
    for i in 0..n {
        if r.below(4) == 0 {
            let j = r.below(n);
            ids.swap(i, j);
        }
    }
    let mut out = Vec::new();
    let mut root: Vec<String> = Vec::new();
    for &k in &ids {
        let id = format!("c{k:04}");
        if r.below(6) == 0 && !root.is_empty() {
            let spawn = root[r.below(root.len())].clone();
            let ns = format!("s{}:x", r.below(3));
            let child = format!("{id}b");
            let linked = r.below(3) > 0;
            for (cid, parent) in [(&id, None), (&child, linked.then_some(id.as_str()))] {
                let mut hd = sub(&ns, cid, parent, None);
                hd.metadata = json!({"parents": {"": spawn}});
                out.push(hd);
            }
            continue;
        }
        let parent = match (root.len(), r.below(10)) {
            (0, _) | (_, 0) => (r.below(3) == 0).then(|| "missing".to_owned()),
            (len, _) if r.below(2) == 0 => Some(root[len - 1].clone()),
            (len, _) => Some(root[r.below(len)].clone()),
        };
        out.push(h(&id, parent.as_deref()));
        root.push(id);
    }
    out
}

/// The lines between rows `k` and `k + 1`: (lane at row k, child row) for every row whose
/// line to its parent spans that gap.
fn segments(rows: &[GraphRow]) -> Vec<Vec<(usize, usize)>> {
    let mut gaps = vec![Vec::new(); rows.len()];
    for (c, r) in rows.iter().enumerate() {
        if let Some(p) = r.parent_row {
            for gap in &mut gaps[c..p] {
                gap.push((r.lane, c));
            }
        }
    }
    gaps
}

#[test]
fn lines_never_share_a_lane_or_pass_through_a_dot() {
    let mut checked = 0;
    for seed in 0..400u64 {
        let v = random_thread(seed, 1 + (seed as usize * 7) % 80);
        let dag = ThreadDag::build(&v).unwrap();
        let collapsed = LayoutOptions {
            collapsed: vec!["s1:x".into()],
            ..LayoutOptions::nested()
        };
        for opts in [LayoutOptions::default(), LayoutOptions::nested(), collapsed] {
            let l = layout(&dag, &opts).unwrap();
            let rows = &l.rows;
            assert_eq!(l.width, rows.iter().map(|r| r.lane + 1).max().unwrap_or(0));
            for (i, r) in rows.iter().enumerate() {
                if let Some(p) = r.parent_row {
                    assert!(p > i, "seed {seed}: a parent row is below its child");
                    assert_eq!(r.parent_lane, Some(rows[p].lane), "seed {seed}");
                    assert!(r.parent_kind.is_some(), "seed {seed}");
                }
            }
            for (k, gap) in segments(rows).iter().enumerate() {
                let mut lanes: Vec<usize> = gap.iter().map(|&(lane, _)| lane).collect();
                lanes.sort_unstable();
                let before = lanes.len();
                lanes.dedup();
                assert_eq!(
                    before,
                    lanes.len(),
                    "seed {seed}: two lines in one lane at row {k}"
                );
                // A line passing row k + 1 (not ending there) must not run through its dot.
                for &(lane, c) in gap {
                    let ends = rows[c].parent_row == Some(k + 1);
                    assert!(
                        ends || lane != rows[k + 1].lane,
                        "seed {seed}: the line from row {c} passes the dot of row {}",
                        k + 1
                    );
                }
            }
            // The text draws every row once.
            let text = render_text(rows, |r| format!("<{}>", r.id));
            assert_eq!(text.matches('<').count(), rows.len());
            checked += 1;
        }
    }
    assert_eq!(checked, 1200);
}
