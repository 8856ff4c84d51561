//! Rows annotated from the thread's writes: what ran and how the step went
//! ([`crate::activity`]), the tokens it used ([`crate::usage`]).

use super::GraphRow;
use crate::activity::step_activity;
use crate::usage::TokenUsage;
use flashback_storage::WriteInfo;
use std::collections::HashMap;

/// Fill in each row's [`GraphRow::ran`] (the tasks at its parent, for a checkpoint the loop
/// made) and [`GraphRow::marks`] (its own pending writes).
pub fn annotate(rows: &mut [GraphRow], writes: &[WriteInfo]) {
    let activity = step_activity(writes);
    let at = |ns: &str, id: &str| activity.get(&(ns.to_owned(), id.to_owned()));
    for row in rows.iter_mut() {
        if let Some(a) = at(&row.ns, &row.id) {
            row.marks = a.marks.clone();
        }
        if row.source.as_deref() != Some("loop") {
            continue;
        }
        if let Some(a) = row.parent_id.as_deref().and_then(|p| at(&row.ns, p)) {
            row.ran = a.tasks.clone();
        }
    }
}

/// Fill in [`GraphRow::tokens`] of each `loop` row from the usage written at its parent.
pub fn annotate_usage(rows: &mut [GraphRow], usage: &HashMap<(String, String), TokenUsage>) {
    for row in rows.iter_mut() {
        if row.source.as_deref() != Some("loop") {
            continue;
        }
        let Some(parent) = row.parent_id.as_deref() else {
            continue;
        };
        row.tokens = usage.get(&(row.ns.clone(), parent.to_owned())).copied();
    }
}
