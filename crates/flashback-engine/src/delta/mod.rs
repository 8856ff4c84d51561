//! DeltaChannel values as the graph sees them.
//!
//! LangGraph's `DeltaChannel` stores a channel's value only every `snapshot_frequency` updates
//! (`_DeltaSnapshot`, msgpack ext 7) and nothing in between; the graph rebuilds the value at a
//! checkpoint from the nearest stored value on its parent chain plus that channel's writes
//! stored on the checkpoints since, oldest first (`channels_from_checkpoint` +
//! `get_delta_channel_history`). This module does the same without the graph:
//!
//! * **Which channels**: those the checkpoints show signs of — a `_DeltaSnapshot` value, a key
//!   of `metadata.counters_since_delta_snapshot`, or a `versions_seen.__snapshot_bumps__` entry.
//! * **Which reducer**: the database does not record it, so it is inferred from the values
//!   (langchain messages → `add_messages`, other lists → append, dicts → merge, else last
//!   value) unless the caller sets it per channel ([`DeltaOptions::reducers`]).
//! * **Point reads** ([`materialize`]): one header list of the namespace, then the ancestors in
//!   batches of [`BATCH`] (one query each) until every channel has its stored value, and the
//!   descendants on the way to the namespace's head until the next snapshots; the value is the
//!   stored one plus every write since in one reducer call (as Python does), and the replay on
//!   to the next snapshot must reproduce it.
//! * **Whole threads** ([`materialize_all`]): each checkpoint from its parent's value and the
//!   parent's writes, memoised, so a history costs one reducer call per step.
//!
//! The rebuilt value replaces the stored one in the tuple (a snapshot is unwrapped), so the
//! state view, diff, export, merge and forks all see what the graph sees; each channel's
//! provenance comes back as [`Rebuilt`]. A value that cannot be rebuilt (a missing ancestor, an
//! unreadable write, a replay that contradicts the next snapshot) is shown as an error in its
//! place, and forks refuse it.

mod rebuild;
mod reduce;
pub(crate) use reduce::{empty, replay};

use crate::error::EngineError;
use crate::reducer::Reducer;
use flashback_codec::reserved::SNAPSHOT_BUMPS;
use flashback_codec::{Decoded, Value};
use flashback_storage::{CheckpointHeader, CheckpointStore, CheckpointTuple, ListQuery};
use rebuild::{Rebuilder, Rebuilds};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Checkpoints fetched per query when walking a chain.
pub const BATCH: usize = 256;

/// How far past the checkpoint a point read looks for the next snapshot to check against.
const FORWARD_MAX: usize = 4096;

/// The metadata key LangGraph keeps DeltaChannel counters under.
const COUNTERS: &str = "counters_since_delta_snapshot";

/// How DeltaChannels are rebuilt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaOptions {
    /// The reducer per channel, where the user chose one (else inferred).
    pub reducers: BTreeMap<String, Reducer>,
}

/// How one DeltaChannel's value at a checkpoint was rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Rebuilt {
    /// The checkpoint whose stored value (a snapshot) the replay started from; `None` when it
    /// started from the empty value (nothing stored on the chain).
    pub from_checkpoint: Option<String>,
    /// That checkpoint's step.
    pub from_step: Option<i64>,
    /// Writes replayed on top of it.
    pub writes: u32,
    /// The reducer used.
    pub reducer: Reducer,
    /// Whether the reducer was inferred from the values (else chosen by the user).
    pub inferred: bool,
    /// Why the value cannot be shown (it is shown as this error instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The DeltaChannels one checkpoint shows signs of.
pub fn signals(t: &CheckpointTuple) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(counters) = t.header.metadata.get(COUNTERS).and_then(|c| c.as_object()) {
        out.extend(counters.keys().cloned());
    }
    for (ch, v) in &t.checkpoint.channel_values {
        if matches!(v.as_ref(), Decoded::Msgpack(Value::DeltaSnapshot(_))) {
            out.insert(ch.clone());
        }
    }
    if let Some(bumps) = t.checkpoint.seen(SNAPSHOT_BUMPS) {
        for (key, _) in bumps {
            if let Some((_, ch)) = key.split_once(['|', ':']) {
                out.insert(ch.to_owned());
            }
        }
    }
    out
}

/// Put the rebuilt values into `t` (an error in place of a value that cannot be rebuilt).
fn apply(t: &mut CheckpointTuple, per: Rebuilds) -> BTreeMap<String, Rebuilt> {
    let mut out = BTreeMap::new();
    for (ch, (value, info)) in per {
        let decoded = match value {
            Ok(v) => Decoded::Msgpack(v),
            Err(message) => Decoded::Error {
                tag: "msgpack".into(),
                message: format!("cannot rebuild this DeltaChannel: {message}"),
                raw: Vec::new(),
            },
        };
        let values = &mut t.checkpoint.channel_values;
        match values.iter_mut().find(|(c, _)| *c == ch) {
            Some((_, v)) => *v = Arc::new(decoded),
            None => values.push((ch.clone(), Arc::new(decoded))),
        }
        out.insert(ch, info);
    }
    out
}

/// Rebuild the DeltaChannels of one checkpoint in place (see the module docs). Returns each
/// rebuilt channel's provenance; empty (and no query made) for a checkpoint with no sign of a
/// DeltaChannel.
pub async fn materialize(
    store: &dyn CheckpointStore,
    tuple: &mut CheckpointTuple,
    opts: &DeltaOptions,
) -> Result<BTreeMap<String, Rebuilt>, EngineError> {
    let mut channels = signals(tuple);
    if channels.is_empty() {
        return Ok(BTreeMap::new());
    }
    let (thread, ns) = (
        tuple.header.thread_id.clone(),
        tuple.header.checkpoint_ns.clone(),
    );
    let headers = store
        .list_headers(&ListQuery {
            checkpoint_ns: Some(ns.clone()),
            ..ListQuery::thread(&thread)
        })
        .await?;
    let chain = Chain::new(&headers);
    let fetch = |ids: Vec<String>| {
        let q = ListQuery {
            checkpoint_ns: Some(ns.clone()),
            checkpoint_ids: ids,
            ..ListQuery::thread(&thread)
        };
        async move { store.list_tuples(&q).await }
    };
    let target_id = tuple.header.checkpoint_id.clone();
    let mut up: Vec<CheckpointTuple> = Vec::new();
    let mut down: Vec<CheckpointTuple> = Vec::new();

    // Up: until every channel has a stored value (or the root).
    let mut need: BTreeSet<String> = channels
        .iter()
        .filter(|c| tuple.checkpoint.value(c).is_none())
        .cloned()
        .collect();
    let mut cur = tuple.header.parent_checkpoint_id.clone();
    let mut visited: HashSet<String> = HashSet::from([target_id.clone()]);
    while !need.is_empty() {
        let ids = chain.walk(cur.as_deref(), &mut visited, BATCH, |c| chain.parent(c));
        if ids.is_empty() {
            break;
        }
        let mut fetched = index(fetch(ids.clone()).await?);
        for id in &ids {
            let Some(t) = fetched.remove(id) else {
                continue;
            };
            for ch in signals(&t) {
                if channels.insert(ch.clone()) && tuple.checkpoint.value(&ch).is_none() {
                    need.insert(ch);
                }
            }
            need.retain(|c| t.checkpoint.value(c).is_none());
            up.push(t);
            if need.is_empty() {
                break;
            }
        }
        cur = ids.last().and_then(|l| chain.parent(l)).map(str::to_owned);
    }

    // Down: towards the head, until each replayed channel meets its next stored value.
    let mut unchecked: BTreeSet<String> = channels
        .iter()
        .filter(|c| tuple.checkpoint.value(c).is_none())
        .cloned()
        .collect();
    let mut forward = 0;
    let mut cur = chain.next_towards_head(&target_id).map(str::to_owned);
    while !unchecked.is_empty() && forward < FORWARD_MAX {
        let step = |c: &str| chain.next_towards_head(c);
        let ids = chain.walk(cur.as_deref(), &mut visited, BATCH, step);
        if ids.is_empty() {
            break;
        }
        forward += ids.len();
        let mut fetched = index(fetch(ids.clone()).await?);
        for id in &ids {
            let Some(t) = fetched.remove(id) else {
                continue;
            };
            unchecked.retain(|c| t.checkpoint.value(c).is_none());
            down.push(t);
            if unchecked.is_empty() {
                break;
            }
        }
        cur = ids.last().and_then(|l| step(l)).map(str::to_owned);
    }

    let up: Vec<&CheckpointTuple> = up.iter().collect();
    let down: Vec<&CheckpointTuple> = down.iter().collect();
    let per = rebuild::point(tuple, &up, &down, &channels, opts);
    Ok(apply(tuple, per))
}

/// Rebuild the DeltaChannels of every checkpoint in `tuples` (any namespaces; each one's
/// ancestors should be among them, as in a whole thread) in place. Returns the provenance per
/// checkpoint id (absent for checkpoints of namespaces without DeltaChannels).
pub fn materialize_all(
    tuples: &mut [CheckpointTuple],
    opts: &DeltaOptions,
) -> HashMap<String, BTreeMap<String, Rebuilt>> {
    let mut by_ns: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, t) in tuples.iter().enumerate() {
        by_ns
            .entry(t.header.checkpoint_ns.clone())
            .or_default()
            .push(i);
    }
    let mut out = HashMap::new();
    for idx in by_ns.values() {
        let channels: BTreeSet<String> = idx.iter().flat_map(|i| signals(&tuples[*i])).collect();
        if channels.is_empty() {
            continue;
        }
        let refs: Vec<&CheckpointTuple> = idx.iter().map(|i| &tuples[*i]).collect();
        let mut results = Rebuilder::new(&refs, &channels, opts).run();
        for i in idx {
            let t = &mut tuples[*i];
            if let Some(per) = results.remove(&t.header.checkpoint_id) {
                let info = apply(t, per);
                out.insert(t.header.checkpoint_id.clone(), info);
            }
        }
    }
    out
}

fn index(tuples: Vec<CheckpointTuple>) -> HashMap<String, CheckpointTuple> {
    tuples
        .into_iter()
        .map(|t| (t.header.checkpoint_id.clone(), t))
        .collect()
}

/// Parent and child links of one namespace's headers.
struct Chain<'a> {
    parent: HashMap<&'a str, &'a str>,
    children: HashMap<&'a str, Vec<&'a str>>,
    /// The head (newest checkpoint) and its ancestors.
    head_line: HashSet<&'a str>,
}

impl<'a> Chain<'a> {
    fn new(headers: &'a [CheckpointHeader]) -> Self {
        let mut parent = HashMap::new();
        let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
        for h in headers {
            if let Some(p) = h.parent_checkpoint_id.as_deref() {
                parent.insert(h.checkpoint_id.as_str(), p);
                children
                    .entry(p)
                    .or_default()
                    .push(h.checkpoint_id.as_str());
            }
        }
        let mut head_line = HashSet::new();
        let mut cur = headers.first().map(|h| h.checkpoint_id.as_str());
        while let Some(c) = cur {
            if !head_line.insert(c) {
                break;
            }
            cur = parent.get(c).copied();
        }
        Chain {
            parent,
            children,
            head_line,
        }
    }

    fn parent(&self, id: &str) -> Option<&'a str> {
        self.parent.get(id).copied()
    }

    /// The child on the way to the head, else the only child.
    fn next_towards_head(&self, id: &str) -> Option<&'a str> {
        let kids = self.children.get(id)?;
        kids.iter()
            .find(|k| self.head_line.contains(*k))
            .or(if kids.len() == 1 { kids.first() } else { None })
            .copied()
    }

    /// Up to `max` ids from `start` on, following `next`, skipping none, stopping at a cycle.
    fn walk(
        &self,
        start: Option<&str>,
        visited: &mut HashSet<String>,
        max: usize,
        next: impl Fn(&str) -> Option<&'a str>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = start.map(str::to_owned);
        while let Some(c) = cur {
            if out.len() >= max || !visited.insert(c.clone()) {
                break;
            }
            cur = next(&c).map(str::to_owned);
            out.push(c);
        }
        out
    }
}
