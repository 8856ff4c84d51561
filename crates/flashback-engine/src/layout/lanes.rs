//! Lanes that stay put. A *branch* is a chain of checkpoints where each one continues into its
//! oldest child (same namespace, parent link); every other child starts a branch of its own.
//! Branches get lanes in the order they were created — the trunk (the chain from the oldest
//! root, whose column no fork takes) first, then by the id of their first checkpoint, which orders creation time — each
//! taking the lowest lane free over its rows: from its tip down to the row above its fork
//! point, where its line bends into the parent's lane. A branch added later is placed after
//! every existing one, so existing branches keep their lanes and colours; only a branch that
//! grows can push a younger one aside.
//!
//! Rows must be in layout order (newest first, every parent below its children) with
//! `parent_row` and `parent_kind` set. Cost: O(n log n) plus, per branch, one O(1) test per
//! lane whose rows it spans (the lanes' extents are kept), so 5,000 siblings of one checkpoint
//! take 12.5M such tests.

use super::GraphRow;
use crate::action::Action;
use crate::dag::EdgeKind;

const NONE: usize = usize::MAX;

/// The rows one lane is busy over: disjoint `(top, bottom)` row spans sorted by `top`, and
/// their overall extent for a quick "nothing here" answer.
#[derive(Default)]
struct Lane {
    spans: Vec<(usize, usize)>,
    top: usize,
    bottom: usize,
}

impl Lane {
    fn free(&self, top: usize, bottom: usize) -> bool {
        if self.spans.is_empty() || bottom < self.top || top > self.bottom {
            return true;
        }
        // The span starting last at or above `bottom` ends lowest of those: it decides.
        let i = self.spans.partition_point(|&(t, _)| t <= bottom);
        i == 0 || self.spans[i - 1].1 < top
    }

    fn take(&mut self, top: usize, bottom: usize) {
        if self.spans.is_empty() {
            self.top = top;
            self.bottom = bottom;
        } else {
            self.top = self.top.min(top);
            self.bottom = self.bottom.max(bottom);
        }
        let i = self.spans.partition_point(|&(t, _)| t < top);
        self.spans.insert(i, (top, bottom));
    }
}

/// Set `lane`, `parent_lane`, `branch_key` and `branch_label` of every row. `trunk` is the row
/// of the namespace's oldest root, whose branch gets lane 0.
pub(super) fn assign(rows: &mut [GraphRow], trunk: Option<usize>) {
    let n = rows.len();
    let below = |r: usize, rows: &[GraphRow]| rows[r].parent_row.filter(|&p| p > r);
    // The child that continues each row's branch: its oldest child on a parent link.
    let mut cont = vec![NONE; n];
    for r in 0..n {
        if let Some(p) = below(r, rows) {
            if rows[r].parent_kind == Some(EdgeKind::Parent)
                && rows[p].ns == rows[r].ns
                && (cont[p] == NONE || rows[r].id < rows[cont[p]].id)
            {
                cont[p] = r;
            }
        }
    }
    // The first row of each row's branch (parents are below, so bottom-up sees them first),
    // and each branch's tip.
    let mut first = vec![0usize; n];
    for r in (0..n).rev() {
        first[r] = match below(r, rows) {
            Some(p) if cont[p] == r => first[p],
            _ => r,
        };
    }
    let mut tip = vec![NONE; n];
    for r in 0..n {
        if cont[r] == NONE {
            tip[first[r]] = r;
        }
    }
    let mut starts: Vec<usize> = (0..n).filter(|&r| first[r] == r).collect();
    starts.sort_unstable_by(|&a, &b| {
        let key = |r: usize| (Some(r) != trunk, rows[r].id.as_str(), rows[r].ns.as_str());
        key(a).cmp(&key(b)).then(b.cmp(&a))
    });

    let mut lanes: Vec<Lane> = Vec::new();
    let mut lane_of = vec![0usize; n];
    for &s in &starts {
        let top = tip[s].min(s);
        let bottom = below(s, rows).map_or(s, |p| p - 1);
        // Lane 0 is the trunk's column: no fork sits in it (other roots — orphans, separate
        // runs — may, where it is free).
        let from = usize::from(trunk.is_some() && below(s, rows).is_some());
        let found = lanes.iter().skip(from).position(|l| l.free(top, bottom));
        let lane = match found {
            Some(l) => l + from,
            None if lanes.len() < from => {
                lanes.resize_with(from + 1, Lane::default);
                from
            }
            None => {
                lanes.push(Lane::default());
                lanes.len() - 1
            }
        };
        lanes[lane].take(top, bottom);
        lane_of[s] = lane;
    }

    for r in 0..n {
        rows[r].lane = lane_of[first[r]];
        rows[r].branch_key = rows[first[r]].id.clone();
    }
    for r in 0..n {
        rows[r].parent_lane = rows[r].parent_row.map(|p| rows[p].lane);
        if cont[r] == NONE {
            rows[r].branch_label = branch_label(rows, r, first[r]).map(str::to_owned);
        }
    }
}

/// What the branch ending at `tip` is: the latest thing Flashback did on it (a re-run of the
/// branch's tip, a merge into it…), else how its first checkpoint was made (LangGraph's own
/// `update_state` or fork). Walks the branch once, so all tips together cost O(n).
fn branch_label(rows: &[GraphRow], tip: usize, first: usize) -> Option<&'static str> {
    let mut r = tip;
    loop {
        if let Some(action) = rows[r].flashback_action.as_deref() {
            return Some(match Action::parse(action) {
                Some(Action::EditFork) => "edit",
                Some(Action::Rerun) => "re-run",
                Some(Action::Merge) => "merge",
                Some(Action::CopyFork) | None => "fork",
            });
        }
        match rows[r].parent_row {
            Some(p) if r != first && p > r => r = p,
            _ => break,
        }
    }
    match rows[first].source.as_deref() {
        Some("fork") => Some("fork"),
        Some("update") if rows[first].parent_row.is_some() => Some("update"),
        _ => None,
    }
}
