//! The compact text of an answer: the CLI's own human output for the typed response (the
//! tables and text `flashback …` prints without `--json`), for the page asked for.

use crate::human;
use crate::store;
use flashback_api::*;
use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;

/// The items of `v` in `range` (all of them when the range is past the end).
fn slice<'a, T>(v: &'a [T], range: &Option<Range<usize>>) -> &'a [T] {
    match range {
        Some(r) => {
            let end = r.end.min(v.len());
            &v[r.start.min(end)..end]
        }
        None => v,
    }
}

/// The CLI's text for `tool`'s typed answer, the main list cut to `range`; `None` when the
/// CLI has no human form for it (the JSON is shown instead).
pub fn human_text(tool: &str, typed: &dyn Any, range: Option<Range<usize>>) -> Option<String> {
    let narrow = human::width(false);
    let text = match tool {
        "threads" => {
            let v = typed.downcast_ref::<Vec<ThreadSummary>>()?;
            human::threads(slice(v, &range), &HashMap::new(), narrow, true)
        }
        "activity" => human::activity(slice(typed.downcast_ref::<Vec<ThreadActivity>>()?, &range)),
        "history" => {
            let v = typed.downcast_ref::<Vec<HistoryEntry>>()?;
            human::history(slice(v, &range), &HashMap::new(), narrow)
        }
        "graph" => {
            let g = typed.downcast_ref::<ThreadGraph>()?;
            match range {
                Some(r) => {
                    let mut g = g.clone();
                    g.rows = slice(&g.rows, &Some(r)).to_vec();
                    human::graph(&g)
                }
                None => human::graph(g),
            }
        }
        "topology" => human::topology(typed.downcast_ref::<ThreadTopology>()?),
        "state" => human::state(typed.downcast_ref::<CheckpointDetail>()?, false),
        "diff" => human::diff(typed.downcast_ref::<CheckpointDiff>()?),
        "replay" => human::replay(slice(typed.downcast_ref::<Vec<ReplayStep>>()?, &range)),
        "rebuild" => human::rebuild(slice(typed.downcast_ref::<Vec<ChannelRebuild>>()?, &range)),
        "watch" => {
            let w = typed.downcast_ref::<WatchReport>()?;
            match range {
                Some(r) => {
                    let mut w = w.clone();
                    w.changes = slice(&w.changes, &Some(r)).to_vec();
                    human::watch(&w, narrow)
                }
                None => human::watch(w, narrow),
            }
        }
        "storage" => human::storage(typed.downcast_ref::<StorageReport>()?),
        "index" => human::index_advice(typed.downcast_ref::<IndexReport>()?),
        "index_apply" => human::index_applied(typed.downcast_ref::<IndexApplyReport>()?),
        "store_ls" | "store_search" => {
            store::items(slice(typed.downcast_ref::<Vec<StoreItem>>()?, &range))
        }
        "store_get" => store::item(typed.downcast_ref::<StoreItem>()?),
        "store_ns" => {
            store::namespaces(slice(typed.downcast_ref::<Vec<StoreNamespace>>()?, &range))
        }
        "store_put" => store::put(typed.downcast_ref::<StorePutResult>()?),
        "store_delete" => store::deleted(typed.downcast_ref::<StoreDeleteResult>()?),
        "delete" => human::deleted(typed.downcast_ref::<DeleteReport>()?),
        "delete_branch" => human::pruned(typed.downcast_ref::<PruneSummary>()?),
        "prune" => human::retention(typed.downcast_ref::<RetentionReport>()?),
        "repair" => human::repaired(typed.downcast_ref::<RepairReport>()?),
        "fork" | "merge" => {
            let f = typed.downcast_ref::<ForkResult>()?;
            format!(
                "wrote checkpoint {} (step {}) on thread {:?}, child of {}\n",
                f.checkpoint_id, f.step, f.thread_id, f.parent_checkpoint_id
            )
        }
        _ => return None,
    };
    // The CLI's words for a dry run name its flag; here it is an argument.
    Some(
        text.replace(
            "(dry run; add --yes)",
            "(dry run: call again with dry_run=false)",
        )
        .replace(
            "(short ids and relative times: --wide for full ones)",
            "(short ids and relative times: the structured content has full ones)",
        ),
    )
}
