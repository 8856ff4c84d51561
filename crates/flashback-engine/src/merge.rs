//! Merging across branches, and checking stored state against the writes that produced it.
//!
//! * **Branch merge** ([`merge_branches`]): a new checkpoint on branch A (child of A's tip)
//!   taking chosen channel values from branch B — either B's whole value, or, for list
//!   channels, A's list with the items B added since the fork point appended (messages are
//!   matched by `id`, so one A already has is not appended again; other items by value). The values keep their Python types (they are the
//!   decoded trees, not JSON), versions are bumped as an edit fork bumps them, and metadata
//!   records the merge. [`three_way`] shows the fork point, A and B side by side first.
//! * **Rebuild check** ([`rebuild_report`]): along a branch, each checkpoint's writes are
//!   applied to its values with the reducers LangGraph ships (last value, list append,
//!   `add_messages` by id including `RemoveMessage`, dict merge); for every channel the reducer
//!   that explains the next checkpoint is identified, and steps where none does are reported.

use crate::action::Action;
use crate::dag::ThreadDag;
use crate::delta::DeltaOptions;
use crate::error::EngineError;
use crate::fork::{load_rebuilt, set_channels, write_fork, ForkResult};
pub use crate::reducer::Reducer;
use crate::reducer::{apply, item_key, REDUCERS};
use flashback_codec::{view_decoded, Decoded, Value, ViewOptions};
use flashback_storage::{CheckpointSaver, CheckpointStore, CheckpointTuple, ListQuery, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::sync::Arc;

/// How a channel is taken from branch B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MergeMode {
    /// B's value replaces A's.
    TakeB,
    /// A's list plus the items B added since the fork point (list channels only).
    AppendB,
}

/// The three versions of one channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ThreeWay {
    /// The channel.
    pub channel: String,
    /// The common ancestor of A and B (`None` when the branches share no checkpoint).
    pub fork_point: Option<String>,
    /// Value at the fork point (JSON view).
    pub base: Option<Json>,
    /// Value at A.
    pub a: Option<Json>,
    /// Value at B.
    pub b: Option<Json>,
    /// For list channels: what each side added and removed since the fork point.
    pub list: Option<ListChanges>,
    /// A LangGraph control channel (see [`crate::is_control_channel`]).
    pub control: bool,
}

/// List changes since the fork point.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ListChanges {
    /// Items in A but not at the fork point.
    pub added_in_a: Vec<Json>,
    /// Items in B but not at the fork point (what [`MergeMode::AppendB`] appends).
    pub added_in_b: Vec<Json>,
    /// Items at the fork point that A no longer has.
    pub removed_in_a: Vec<Json>,
    /// Items at the fork point that B no longer has.
    pub removed_in_b: Vec<Json>,
}

async fn thread_tuples(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    opts: &DeltaOptions,
) -> Result<Vec<CheckpointTuple>, EngineError> {
    let mut tuples = store
        .list_tuples(&ListQuery {
            thread_id: Some(thread_id.to_owned()),
            checkpoint_ns: Some(ns.to_owned()),
            ..Default::default()
        })
        .await?;
    crate::delta::materialize_all(&mut tuples, opts);
    Ok(tuples)
}

/// The newest checkpoint that is an ancestor of (or equal to) both `a` and `b`.
pub fn common_ancestor(dag: &ThreadDag, ns: &str, a: &str, b: &str) -> Option<String> {
    let of_a: std::collections::HashSet<&str> = dag
        .lineage(ns, a)
        .iter()
        .map(|n| n.checkpoint_id.as_str())
        .collect();
    dag.lineage(ns, b)
        .iter()
        .find(|n| of_a.contains(n.checkpoint_id.as_str()))
        .map(|n| n.checkpoint_id.clone())
}

pub(crate) fn items(v: Option<&Arc<Decoded>>) -> Option<&[Value]> {
    match v.map(Arc::as_ref) {
        Some(Decoded::Msgpack(Value::Array(items))) => Some(items),
        _ => None,
    }
}

fn not_in<'a>(xs: &'a [Value], ys: &[Value]) -> Vec<&'a Value> {
    let keys: std::collections::HashSet<String> = ys.iter().map(item_key).collect();
    xs.iter().filter(|x| !keys.contains(&item_key(x))).collect()
}

fn view_all(vs: &[&Value]) -> Vec<Json> {
    vs.iter()
        .map(|v| flashback_codec::view(v, ViewOptions::default()))
        .collect()
}

struct Sides {
    fork_point: Option<String>,
    base: Option<CheckpointTuple>,
    a: CheckpointTuple,
    b: CheckpointTuple,
}

async fn sides(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    a: &str,
    b: &str,
    opts: &DeltaOptions,
) -> Result<Sides, EngineError> {
    let tuples = thread_tuples(store, thread_id, ns, opts).await?;
    let headers: Vec<_> = tuples.iter().map(|t| t.header.clone()).collect();
    let dag = ThreadDag::build(&headers)?;
    let find = |id: &str| {
        tuples
            .iter()
            .find(|t| t.header.checkpoint_id == id)
            .cloned()
            .ok_or_else(|| EngineError::UnknownCheckpoint {
                ns: ns.to_owned(),
                id: id.to_owned(),
            })
    };
    let fork_point = common_ancestor(&dag, ns, a, b);
    Ok(Sides {
        base: fork_point.as_deref().map(find).transpose()?,
        a: find(a)?,
        b: find(b)?,
        fork_point,
    })
}

/// Fork point vs A vs B for the given channels (all channels of A and B when empty).
pub async fn three_way(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    a: &str,
    b: &str,
    channels: &[String],
    opts: &DeltaOptions,
) -> Result<Vec<ThreeWay>, EngineError> {
    let s = sides(store, thread_id, ns, a, b, opts).await?;
    let mut names: Vec<String> = if channels.is_empty() {
        s.a.checkpoint
            .channel_values
            .iter()
            .chain(&s.b.checkpoint.channel_values)
            .map(|(c, _)| c.clone())
            .collect()
    } else {
        channels.to_vec()
    };
    names.sort();
    names.dedup();
    // An unreadable side shows its reason in place of every value (the `$error` form).
    let view = |t: Option<&CheckpointTuple>, c: &str| match t {
        Some(t) => match &t.header.problem {
            Some(problem) => Some(flashback_codec::view::error_view(
                problem,
                "checkpoint",
                &[],
            )),
            None => t
                .checkpoint
                .value(c)
                .and_then(|v| view_decoded(v, ViewOptions::default())),
        },
        None => None,
    };
    Ok(names
        .into_iter()
        .map(|c| {
            let base_v = s.base.as_ref().and_then(|t| t.checkpoint.value(&c));
            let (ia, ib) = (
                items(s.a.checkpoint.value(&c)),
                items(s.b.checkpoint.value(&c)),
            );
            let list = match (ia, ib) {
                (Some(ia), Some(ib)) => {
                    let base = items(base_v).unwrap_or(&[]);
                    Some(ListChanges {
                        added_in_a: view_all(&not_in(ia, base)),
                        added_in_b: view_all(&not_in(ib, base)),
                        removed_in_a: view_all(&not_in(base, ia)),
                        removed_in_b: view_all(&not_in(base, ib)),
                    })
                }
                _ => None,
            };
            ThreeWay {
                base: view(s.base.as_ref(), &c),
                a: view(Some(&s.a), &c),
                b: view(Some(&s.b), &c),
                fork_point: s.fork_point.clone(),
                list,
                control: crate::is_control_channel(&c),
                channel: c,
            }
        })
        .collect())
}

/// Write a merge: a child of `a` with the chosen channels taken from `b` (one transaction).
pub async fn merge_branches(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    ns: &str,
    a: &str,
    b: &str,
    take: &[(String, MergeMode)],
    opts: &DeltaOptions,
) -> Result<ForkResult, EngineError> {
    if take.is_empty() {
        return Err(StoreError::InvalidInput(
            "merge: no channel to take from the other branch".into(),
        )
        .into());
    }
    let s = sides(saver, thread_id, ns, a, b, opts).await?;
    // What cannot be read cannot be merged (the fork point only matters to append-b).
    let appends = take.iter().any(|(_, m)| *m == MergeMode::AppendB);
    let base = s.base.as_ref().filter(|_| appends);
    for side in [Some(&s.a), Some(&s.b), base].into_iter().flatten() {
        crate::fork::readable(side)?;
    }
    let mut new_values: Vec<(String, Arc<Decoded>)> = Vec::new();
    for (channel, mode) in take {
        let from_b = s.b.checkpoint.value(channel).ok_or_else(|| {
            StoreError::InvalidInput(format!("merge: branch B ({b}) has no channel {channel:?}"))
        })?;
        let value = match mode {
            MergeMode::TakeB => Arc::clone(from_b),
            MergeMode::AppendB => {
                let (Some(ia), Some(ib)) =
                    (items(s.a.checkpoint.value(channel)), items(Some(from_b)))
                else {
                    return Err(StoreError::InvalidInput(format!(
                        "merge: channel {channel:?} is not a list on both branches; use take-b"
                    ))
                    .into());
                };
                let base =
                    items(s.base.as_ref().and_then(|t| t.checkpoint.value(channel))).unwrap_or(&[]);
                let mut merged = ia.to_vec();
                let present: std::collections::HashSet<String> = ia.iter().map(item_key).collect();
                // Messages (items with an id) already on A are not appended twice; plain items
                // are B's own events and are all appended.
                merged.extend(
                    not_in(ib, base)
                        .into_iter()
                        .filter(|v| {
                            let key = item_key(v);
                            !(key.starts_with("id:") && present.contains(&key))
                        })
                        .cloned(),
                );
                Arc::new(Decoded::Msgpack(Value::Array(merged)))
            }
        };
        new_values.push((channel.clone(), value));
    }
    let (source, delta) = load_rebuilt(saver, thread_id, ns, a, opts).await?;
    let taken: Vec<Json> = take
        .iter()
        .map(|(c, m)| json!({"channel": c, "mode": m}))
        .collect();
    let note = json!({"action": Action::Merge.as_str(), "into": a, "from": b, "fork_point": s.fork_point, "channels": taken});
    write_fork(
        saver,
        &source,
        &delta,
        "update",
        note,
        |checkpoint, dialect| set_channels(checkpoint, new_values, dialect),
    )
    .await
}

/// What the rebuild check found for one channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChannelRebuild {
    /// The channel.
    pub channel: String,
    /// The reducer that explains the most steps (`None` if none explains any).
    pub reducer: Option<Reducer>,
    /// Steps whose writes it explains.
    pub consistent_steps: usize,
    /// Checkpoints (the one after the writes) where it does not reproduce the stored value.
    pub disagreements: Vec<String>,
    /// Checkpoints (the one after the writes) where the channel was written but could not be
    /// checked, because that checkpoint or the one before could not be read in full.
    pub unreadable: Vec<String>,
}

/// Rebuild every channel along the branch ending at `tip` from the writes, with the known
/// reducers, and report which reducer explains each channel and where none does.
/// Only steps where a channel was written and the next checkpoint is the step's result
/// (`source: "loop"`) are checked (steps next to a checkpoint that could not be read are listed
/// as `unreadable` instead); `add_messages` ids that LangGraph assigns on write make
/// messages without ids unverifiable, and such steps count as disagreements.
pub async fn rebuild_report(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    tip: Option<&str>,
) -> Result<Vec<ChannelRebuild>, EngineError> {
    let steps = crate::replay::replay(store, thread_id, ns, tip, &DeltaOptions::default()).await?;
    let tuples = thread_tuples(store, thread_id, ns, &DeltaOptions::default()).await?;
    let by_id: HashMap<&str, &CheckpointTuple> = tuples
        .iter()
        .map(|t| (t.header.checkpoint_id.as_str(), t))
        .collect();
    let mut tallies: HashMap<String, HashMap<Reducer, Vec<bool>>> = HashMap::new();
    let mut step_ids: HashMap<String, Vec<String>> = HashMap::new();
    let mut unreadable: HashMap<String, Vec<String>> = HashMap::new();
    for pair in steps.windows(2) {
        let (Some(cur), Some(next)) = (
            by_id.get(pair[0].checkpoint_id.as_str()),
            by_id.get(pair[1].checkpoint_id.as_str()),
        ) else {
            continue;
        };
        if pair[1].source.as_deref() != Some("loop") {
            continue;
        }
        let mut written: HashMap<&str, Vec<&Value>> = HashMap::new();
        for w in &cur.pending_writes {
            if crate::is_control_channel(&w.channel) {
                continue;
            }
            let v = match &w.value {
                Decoded::Msgpack(v) => v,
                Decoded::Null => &Value::Nil,
                _ => continue,
            };
            written.entry(w.channel.as_str()).or_default().push(v);
        }
        let blind = cur.header.problem.is_some() || next.header.problem.is_some();
        // A value that is there but cannot be read (undecodable, encrypted, over the budget)
        // checks nothing either: it is not "no value".
        let unread = |t: &CheckpointTuple, channel: &str| {
            t.checkpoint
                .value(channel)
                .is_some_and(|v| !matches!(v.as_ref(), Decoded::Msgpack(_) | Decoded::Null))
        };
        for (channel, writes) in written {
            if blind || unread(cur, channel) || unread(next, channel) {
                unreadable
                    .entry(channel.to_owned())
                    .or_default()
                    .push(pair[1].checkpoint_id.clone());
                continue;
            }
            let current = match cur.checkpoint.value(channel).map(Arc::as_ref) {
                Some(Decoded::Msgpack(v)) => Some(v),
                _ => None,
            };
            let stored = match next.checkpoint.value(channel).map(Arc::as_ref) {
                Some(Decoded::Msgpack(v)) => Some(v.clone()),
                Some(Decoded::Null) => Some(Value::Nil),
                _ => None,
            };
            for r in REDUCERS {
                let ok = apply(r, current, &writes) == stored;
                tallies
                    .entry(channel.to_owned())
                    .or_default()
                    .entry(r)
                    .or_default()
                    .push(ok);
            }
            step_ids
                .entry(channel.to_owned())
                .or_default()
                .push(pair[1].checkpoint_id.clone());
        }
    }
    for channel in unreadable.keys() {
        tallies.entry(channel.clone()).or_default();
    }
    let mut out: Vec<ChannelRebuild> = tallies
        .into_iter()
        .map(|(channel, by_reducer)| {
            let unreadable = unreadable.remove(&channel).unwrap_or_default();
            // The reducer explaining the most steps; on a tie the earlier one in REDUCERS wins.
            let mut best: Option<(Reducer, &Vec<bool>)> = None;
            for r in REDUCERS {
                if let Some(oks) = by_reducer.get(&r) {
                    let n = oks.iter().filter(|o| **o).count();
                    if best.is_none_or(|(_, b)| n > b.iter().filter(|o| **o).count()) {
                        best = Some((r, oks));
                    }
                }
            }
            let ids = step_ids.get(&channel).cloned().unwrap_or_default();
            match best {
                Some((r, oks)) if oks.iter().any(|o| *o) => ChannelRebuild {
                    reducer: Some(r),
                    consistent_steps: oks.iter().filter(|o| **o).count(),
                    disagreements: oks
                        .iter()
                        .zip(&ids)
                        .filter(|(ok, _)| !**ok)
                        .map(|(_, id)| id.clone())
                        .collect(),
                    unreadable,
                    channel,
                },
                _ => ChannelRebuild {
                    reducer: None,
                    consistent_steps: 0,
                    disagreements: ids,
                    unreadable,
                    channel,
                },
            }
        })
        .collect();
    out.sort_by(|a, b| a.channel.cmp(&b.channel));
    Ok(out)
}
