//! The dev server's ops file (`.langgraph_ops.pckl`, `langgraph_runtime_inmem.database`'s
//! `GlobalStore`): `{"threads": [...], "runs": [...], "assistants": [...], ...}`, lists of
//! dicts whose ids are `uuid.UUID`s and whose times are aware `datetime`s — read into the
//! [`ServerState`] Studio's thread list shows.

use super::load::{shape, text};
use crate::server::{ServerAssistant, ServerRun, ServerState, ServerThread};
use flashback_codec::pickle::{self, PyValue};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A dict's entries by their `str` key.
fn fields(v: &PyValue) -> Option<BTreeMap<&str, &Arc<PyValue>>> {
    Some(
        v.as_items()?
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?, v)))
            .collect(),
    )
}

/// An id, time or name as text.
fn field_text(f: &BTreeMap<&str, &Arc<PyValue>>, name: &str) -> Option<String> {
    let v = f.get(name)?;
    pickle::iso_datetime(v).or_else(|| text(v))
}

/// A value as the JSON the server's API shows.
fn json(v: &PyValue) -> serde_json::Value {
    let value = pickle::to_value(v, 100_000);
    flashback_codec::view::view(&value, Default::default())
}

/// The server's threads, runs and assistants; problems met are pushed to `notes`.
pub(crate) fn read(root: &PyValue, notes: &mut Vec<String>) -> ServerState {
    let mut state = ServerState::default();
    let Some(top) = fields(root) else {
        notes.push(format!(
            "the server's threads file holds {}, not a dict: its thread list is not shown",
            shape(root)
        ));
        return state;
    };
    let list = |name: &str| -> Vec<&Arc<PyValue>> {
        top.get(name)
            .and_then(|v| v.as_seq())
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    };

    let mut runs: BTreeMap<String, Vec<ServerRun>> = BTreeMap::new();
    for run in list("runs") {
        let Some(f) = fields(run) else { continue };
        let Some(thread_id) = field_text(&f, "thread_id") else {
            continue;
        };
        runs.entry(thread_id).or_default().push(ServerRun {
            run_id: field_text(&f, "run_id").unwrap_or_default(),
            status: field_text(&f, "status"),
            assistant_id: field_text(&f, "assistant_id"),
            created_at: field_text(&f, "created_at"),
            updated_at: field_text(&f, "updated_at"),
        });
    }
    for r in runs.values_mut() {
        r.sort_by(|a, b| (&a.created_at, &a.run_id).cmp(&(&b.created_at, &b.run_id)));
    }

    for thread in list("threads") {
        let Some(f) = fields(thread) else {
            notes.push(format!(
                "a thread in the server's threads file is {}, not a dict",
                shape(thread)
            ));
            continue;
        };
        let Some(thread_id) = field_text(&f, "thread_id") else {
            continue;
        };
        let metadata = f.get("metadata").map_or(serde_json::json!({}), |m| json(m));
        let meta_text = |k: &str| metadata.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        state.threads.push(ServerThread {
            status: field_text(&f, "status"),
            created_at: field_text(&f, "created_at"),
            updated_at: field_text(&f, "updated_at"),
            assistant_id: meta_text("assistant_id"),
            graph_id: meta_text("graph_id"),
            has_checkpoints: false,
            runs: runs.remove(&thread_id).unwrap_or_default(),
            metadata,
            thread_id,
        });
    }
    state.threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
    state.threads.dedup_by(|a, b| a.thread_id == b.thread_id);

    for assistant in list("assistants") {
        let Some(f) = fields(assistant) else { continue };
        state.assistants.push(ServerAssistant {
            assistant_id: field_text(&f, "assistant_id").unwrap_or_default(),
            graph_id: field_text(&f, "graph_id").unwrap_or_default(),
            name: field_text(&f, "name"),
        });
    }
    state
}
