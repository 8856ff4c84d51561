//! `thread_topology`: the thread graph's rows (what ran at each step, from the writes) counted
//! into nodes and transitions by the engine's `topology`; where a run ended is read from the
//! candidate checkpoints (their task channels only).

use crate::error::{ApiError, ApiResult};
use crate::types::{ThreadTopology, TopologyRequest};
use crate::Api;
use flashback_engine::tasks::{derive_tasks_with, reads_value_of, DeriveOptions};
use flashback_engine::topology::{end_candidates, TopologyBuilder};
use flashback_engine::GraphRow;
use flashback_storage::{ChannelFilter, CheckpointStore};
use std::collections::HashSet;

/// The most threads one topology adds up.
const MAX_THREADS: usize = 100;

impl Api {
    /// The nodes and transitions a thread shows by what ran (with `thread_ids`, other threads
    /// of the same graph added up), sub-agents nested under the node that ran them.
    pub async fn thread_topology(&self, req: TopologyRequest) -> ApiResult<ThreadTopology> {
        let s = self.session(&req.db)?;
        let store = s.store.as_ref();
        let mut ids = vec![req.thread_id];
        for t in req.thread_ids {
            if !ids.contains(&t) {
                ids.push(t);
            }
        }
        if ids.len() > MAX_THREADS {
            return Err(ApiError::invalid(format!(
                "a topology adds up at most {MAX_THREADS} threads ({} given)",
                ids.len()
            )));
        }
        let many = ids.len() > 1;
        let mut b = TopologyBuilder::default();
        let mut warnings = Vec::new();
        let mut named = false;
        for id in &ids {
            let g = crate::graph::laid_out(store, id, &[], crate::graph::Usage::Skip).await?;
            let say = |w: String| if many { format!("thread {id}: {w}") } else { w };
            warnings.extend(g.warnings.iter().cloned().map(say));
            let ended = match ended(store, id, &g.rows).await {
                Ok(e) => e,
                Err(e) => {
                    warnings.push(say(format!("where the runs ended cannot be told: {e}")));
                    HashSet::new()
                }
            };
            named |= g.rows.iter().any(|r| !r.ran.is_empty());
            b.add(id, &g.rows, &ended);
        }
        if !named {
            warnings.push(
                "the writes name no nodes (no task paths: written before LangGraph stored them, \
                 or no step ran): nothing to show"
                    .to_owned(),
            );
        }
        Ok(ThreadTopology {
            thread_ids: ids,
            graphs: b.build().graphs,
            warnings,
        })
    }
}

/// The checkpoints among [`end_candidates`] whose next step has no task: where a run finished.
async fn ended(
    store: &dyn CheckpointStore,
    thread_id: &str,
    rows: &[GraphRow],
) -> Result<HashSet<(String, String)>, String> {
    let candidates = end_candidates(rows);
    if candidates.is_empty() {
        return Ok(HashSet::new());
    }
    let keys: Vec<(&str, &str, Option<&str>)> = candidates
        .iter()
        .map(|(ns, id)| (thread_id, ns.as_str(), Some(id.as_str())))
        .collect();
    // Only what the tasks need: the task and trigger channels, not the state.
    let keep: ChannelFilter = std::sync::Arc::new(reads_value_of);
    let tuples = store
        .get_tuples_selecting(&keys, keep)
        .await
        .map_err(|e| e.to_string())?;
    let opts = DeriveOptions {
        dialect: store.schema().dialect,
        ..Default::default()
    };
    Ok(candidates
        .into_iter()
        .zip(tuples)
        .filter_map(|(key, tuple)| {
            let t = tuple?;
            // Unread or locked: no tasks could be told, which is not "none".
            let unknown = t.header.problem.is_some()
                || (t.sealing.locked && t.checkpoint.channel_versions.is_empty());
            (!unknown && derive_tasks_with(&t, &opts).tasks.is_empty()).then_some(key)
        })
        .collect())
}
