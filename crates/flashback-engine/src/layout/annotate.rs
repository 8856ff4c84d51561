//! Rows annotated from the thread's writes: what ran and how the step went
//! ([`crate::activity`]), the tokens it used ([`crate::usage`]).

use super::GraphRow;
use crate::activity::{step_activity, SendNames, StepMark};
use crate::usage::ThreadUsage;
use flashback_storage::WriteInfo;
use std::collections::HashSet;

/// Fill in each row's [`GraphRow::ran`] (the tasks at its parent, for a checkpoint the loop
/// made) and its [`GraphRow::marks`] on the row of the node they are about: a task that
/// recovered or was resumed on the row its step made, one that failed or waits on the row
/// whose next step it is (no row exists for it yet).
pub fn annotate(rows: &mut [GraphRow], writes: &[WriteInfo], sends: &SendNames) {
    let activity = step_activity(writes, sends);
    let at = |ns: &str, id: &str| activity.get(&(ns.to_owned(), id.to_owned()));
    let made: HashSet<(String, String)> = rows
        .iter()
        .filter(|r| r.source.as_deref() == Some("loop"))
        .filter_map(|r| Some((r.ns.clone(), r.parent_id.clone()?)))
        .collect();
    let done = |m: &StepMark| matches!(m, StepMark::Recovered | StepMark::Resumed);
    for row in rows.iter_mut() {
        let mut marked: Vec<(StepMark, String)> = Vec::new();
        if let Some(a) = at(&row.ns, &row.id) {
            let has_child = made.contains(&(row.ns.clone(), row.id.clone()));
            marked.extend(
                a.marked
                    .iter()
                    .filter(|(m, _)| !done(m) || !has_child)
                    .cloned(),
            );
        }
        if row.source.as_deref() == Some("loop") {
            if let Some(a) = row.parent_id.as_deref().and_then(|p| at(&row.ns, p)) {
                row.ran = a.tasks.clone();
                marked.extend(a.marked.iter().filter(|(m, _)| done(m)).cloned());
            }
        }
        marked.sort();
        marked.dedup();
        row.marks = marked.iter().map(|(m, _)| *m).collect();
        row.marks.dedup();
        row.mark_nodes = Vec::new();
        for (_, node) in marked {
            if !row.mark_nodes.contains(&node) {
                row.mark_nodes.push(node);
            }
        }
    }
}

/// Fill in [`GraphRow::tokens`] and [`GraphRow::models`] of each `loop` row from the usage
/// counted at its parent.
pub fn annotate_usage(rows: &mut [GraphRow], usage: &ThreadUsage) {
    for row in rows.iter_mut() {
        if row.source.as_deref() != Some("loop") {
            continue;
        }
        let Some(parent) = row.parent_id.as_deref() else {
            continue;
        };
        let key = (row.ns.clone(), parent.to_owned());
        row.tokens = usage.steps.get(&key).copied();
        row.models = usage.models.get(&key).cloned().unwrap_or_default();
    }
}
