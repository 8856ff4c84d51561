//! The order the watch list reads in: along lineage, not time. The changes on one line (the
//! checkpoints from the root to a tip: the head's, or the one a front end is on) come first,
//! root first; then each other branch's changes, grouped by branch (`branch_key`), the
//! branches in the order they fork off. Time order across branches (steps 0, 2, 4⑂, 6⑂, 7⑂, 5,
//! 7) interleaves lines that never followed one another.

use super::WatchChange;
use std::collections::{HashMap, HashSet};

/// `changes` (in DAG order: parents before children) put in lineage order: those whose
/// checkpoint is on `line` first, then the others grouped by branch, each group in DAG order,
/// the groups in the order of their first change.
pub(crate) fn along_line(changes: Vec<WatchChange>, line: &HashSet<&str>) -> Vec<WatchChange> {
    let (mut out, others): (Vec<_>, Vec<_>) = changes
        .into_iter()
        .partition(|c| line.contains(c.checkpoint_id.as_str()));
    let mut groups: Vec<Vec<WatchChange>> = Vec::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    for c in others {
        let i = *slot.entry(c.branch_key.clone()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push(c);
    }
    out.extend(groups.into_iter().flatten());
    out
}
