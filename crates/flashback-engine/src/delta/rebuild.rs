//! Rebuilding DeltaChannel values over a set of checkpoints of one namespace, each from its
//! parent's value and the writes stored on the parent (memoised, so stepping along a branch
//! costs one reducer call per step), then checked against the snapshots stored further down.

use super::reduce::{empty, infer, replay};
use super::{DeltaOptions, Rebuilt};
use crate::reducer::Reducer;
use flashback_codec::{Decoded, Value};
use flashback_storage::CheckpointTuple;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// One channel's rebuilt value at one checkpoint.
#[derive(Debug, Clone)]
pub(crate) struct ChannelState {
    /// The value, or why it cannot be shown.
    pub value: Result<Value, String>,
    /// The checkpoint whose stored value the replay started from, and its step.
    pub from: Option<(String, Option<i64>)>,
    /// Writes replayed since.
    pub writes: u32,
}

type States = BTreeMap<String, Arc<ChannelState>>;

/// Per channel: the value to show (or why not) and how it was rebuilt.
pub(crate) type Rebuilds = BTreeMap<String, (Result<Value, String>, Rebuilt)>;

/// The stored value of `channel` at `t`: `Some(Ok)` for a value (a snapshot unwrapped),
/// `Some(Err)` for one that cannot be read, `None` when nothing is stored.
fn stored(t: &CheckpointTuple, channel: &str) -> Option<Result<Value, String>> {
    let d = t.checkpoint.value(channel)?;
    Some(match d.as_ref() {
        Decoded::Msgpack(Value::DeltaSnapshot(v)) => Ok((**v).clone()),
        Decoded::Msgpack(v) => Ok(v.clone()),
        Decoded::Null => Ok(Value::Nil),
        other => Err(format!(
            "the value stored at checkpoint {} cannot be read ({})",
            t.header.checkpoint_id,
            describe(other)
        )),
    })
}

fn describe(d: &Decoded) -> String {
    match d {
        Decoded::TooLarge { bytes, .. } => format!(
            "{} over the decode budget",
            flashback_codec::units::bytes(*bytes)
        ),
        Decoded::Encrypted { tag, .. } => format!("encrypted, {tag}"),
        Decoded::Error { message, .. } => message.clone(),
        Decoded::Pickle(_) => "pickle".into(),
        _ => "not msgpack".into(),
    }
}

/// The writes of `channel` stored on `t`, in stored order (`task_path, task_id, idx`).
fn writes_of<'a>(t: &'a CheckpointTuple, channel: &str) -> Result<Vec<&'a Value>, String> {
    const NIL: &Value = &Value::Nil;
    t.pending_writes
        .iter()
        .filter(|w| w.channel == channel)
        .map(|w| match &w.value {
            Decoded::Msgpack(v) => Ok(v),
            Decoded::Null => Ok(NIL),
            other => Err(format!(
                "a write of task {} on checkpoint {} cannot be read ({})",
                w.task_id,
                t.header.checkpoint_id,
                describe(other)
            )),
        })
        .collect()
}

/// The reducer of each channel: the user's choice, else inferred from every value and write of
/// it among `tuples` (`(reducer, inferred)`).
fn choose_reducers(
    tuples: &[&CheckpointTuple],
    channels: &BTreeSet<String>,
    opts: &DeltaOptions,
) -> BTreeMap<String, (Reducer, bool)> {
    channels
        .iter()
        .map(|ch| {
            let chosen = match opts.reducers.get(ch) {
                Some(r) => (*r, false),
                None => {
                    let mut seen: Vec<&Value> = Vec::new();
                    for t in tuples {
                        if let Some(Decoded::Msgpack(v)) = t.checkpoint.value(ch).map(Arc::as_ref) {
                            seen.push(match v {
                                Value::DeltaSnapshot(inner) => inner,
                                v => v,
                            });
                        }
                        for w in t.pending_writes.iter().filter(|w| &w.channel == ch) {
                            if let Decoded::Msgpack(v) = &w.value {
                                seen.push(v);
                            }
                        }
                    }
                    // Nothing seen: a state key LangChain's agents declare is known by name (a
                    // deep agent's `files` is a dict even before its first write).
                    match crate::reducer::known_reducer(ch).filter(|_| seen.is_empty()) {
                        Some(r) => (r, true),
                        None => (infer(seen), true),
                    }
                }
            };
            (ch.clone(), chosen)
        })
        .collect()
}

fn contradiction(reducer: Reducer, at: &CheckpointTuple) -> String {
    format!(
        "replaying the writes with {} does not give the snapshot stored at step {} \
         (checkpoint {}), so the values rebuilt before it are not shown; set the channel's \
         reducer (append, add_messages, merge or last)",
        reducer.short_name(),
        at.header.step().map_or("?".into(), |s| s.to_string()),
        at.header.checkpoint_id,
    )
}

/// One checkpoint's DeltaChannels, as Python rebuilds them: the nearest stored value on the
/// way up (`up`: the parent first, each the parent of the one before) plus every write since
/// in one reducer call; then the same forward along `down` (the target's descendants, in
/// order) to the next stored snapshot, which the replay must reproduce.
pub(crate) fn point(
    target: &CheckpointTuple,
    up: &[&CheckpointTuple],
    down: &[&CheckpointTuple],
    channels: &BTreeSet<String>,
    opts: &DeltaOptions,
) -> Rebuilds {
    let mut all: Vec<&CheckpointTuple> = vec![target];
    all.extend(up);
    all.extend(down);
    let reducers = choose_reducers(&all, channels, opts);
    let mut out = Rebuilds::new();
    for ch in channels {
        let (reducer, inferred) = reducers
            .get(ch)
            .copied()
            .unwrap_or((Reducer::ListAppend, true));
        let mut from = None;
        let mut count = 0u32;
        let value = (|| -> Result<Value, String> {
            if let Some(v) = stored(target, ch) {
                from = Some((target.header.checkpoint_id.clone(), target.header.step()));
                return v;
            }
            // Up to the seed, collecting each ancestor's writes (newest ancestor first).
            let mut batches: Vec<Vec<&Value>> = Vec::new();
            let mut child = target;
            let mut seed = None;
            for a in up {
                if child.header.parent_checkpoint_id.as_deref() != Some(&a.header.checkpoint_id) {
                    break;
                }
                if a.header.problem.is_some() {
                    return Err(format!(
                        "ancestor checkpoint {} could not be read in full, so its writes are \
                         not all there",
                        a.header.checkpoint_id
                    ));
                }
                batches.push(writes_of(a, ch)?);
                if let Some(v) = stored(a, ch) {
                    from = Some((a.header.checkpoint_id.clone(), a.header.step()));
                    seed = Some(v?);
                    break;
                }
                child = a;
            }
            let seed = match seed {
                Some(v) => v,
                None => match &child.header.parent_checkpoint_id {
                    Some(p) if !up.iter().any(|a| &a.header.checkpoint_id == p) => {
                        return Err(format!(
                            "its history is incomplete: ancestor checkpoint {p} is missing or \
                             unreadable, so the writes since the last snapshot are not all there"
                        ))
                    }
                    _ => empty(reducer),
                },
            };
            let writes: Vec<&Value> = batches.into_iter().rev().flatten().collect();
            count = u32::try_from(writes.len()).unwrap_or(u32::MAX);
            let value = replay(reducer, seed, &writes)?;
            // Forward to the next snapshot, which the replay must reproduce.
            let mut ahead = writes_of(target, ch)?;
            let mut parent = target;
            for d in down {
                if d.header.parent_checkpoint_id.as_deref() != Some(&parent.header.checkpoint_id)
                    || d.header.problem.is_some()
                {
                    break;
                }
                if let Some(Ok(snapshot)) = stored(d, ch) {
                    if d.header.source() == Some("loop")
                        && replay(reducer, value.clone(), &ahead).as_ref() != Ok(&snapshot)
                    {
                        return Err(contradiction(reducer, d));
                    }
                    break;
                }
                let Ok(more) = writes_of(d, ch) else { break };
                ahead.extend(more);
                parent = d;
            }
            Ok(value)
        })();
        let info = Rebuilt {
            from_checkpoint: from.as_ref().map(|(c, _)| c.clone()),
            from_step: from.as_ref().and_then(|(_, s)| *s),
            writes: count,
            reducer,
            inferred,
            error: value.as_ref().err().cloned(),
        };
        out.insert(ch.clone(), (value, info));
    }
    out
}

/// Rebuilds over one namespace's checkpoints.
pub(crate) struct Rebuilder<'a> {
    by_id: HashMap<&'a str, &'a CheckpointTuple>,
    channels: BTreeSet<String>,
    reducers: BTreeMap<String, (Reducer, bool)>,
    memo: HashMap<&'a str, States>,
}

impl<'a> Rebuilder<'a> {
    /// `tuples` are of one namespace; `channels` the DeltaChannels to rebuild.
    pub(crate) fn new(
        tuples: &[&'a CheckpointTuple],
        channels: &BTreeSet<String>,
        opts: &DeltaOptions,
    ) -> Self {
        let by_id: HashMap<&str, &CheckpointTuple> = tuples
            .iter()
            .map(|t| (t.header.checkpoint_id.as_str(), *t))
            .collect();
        let reducers = choose_reducers(tuples, channels, opts);
        Rebuilder {
            by_id,
            channels: channels.clone(),
            reducers,
            memo: HashMap::new(),
        }
    }

    fn reducer(&self, channel: &str) -> (Reducer, bool) {
        self.reducers
            .get(channel)
            .copied()
            .unwrap_or((Reducer::ListAppend, true))
    }

    /// The states at checkpoint `id` (which must be in the set).
    fn states(&mut self, id: &'a str) -> States {
        // Walk up to the first checkpoint already known (or the top of the set), then come back
        // down, so a long chain costs no recursion.
        let mut chain: Vec<&'a str> = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur {
            if self.memo.contains_key(c) || chain.contains(&c) {
                break;
            }
            chain.push(c);
            cur = self
                .by_id
                .get(c)
                .and_then(|t| t.header.parent_checkpoint_id.as_deref());
            if let Some(p) = cur {
                if !self.by_id.contains_key(p) {
                    break;
                }
            }
        }
        for c in chain.into_iter().rev() {
            let s = self.step(c);
            self.memo.insert(c, s);
        }
        self.memo.get(id).cloned().unwrap_or_default()
    }

    /// The states at `id` from its parent's (already memoised when the parent is in the set).
    fn step(&self, id: &'a str) -> States {
        let t = self.by_id[id];
        let parent_id = t.header.parent_checkpoint_id.as_deref();
        let parent = parent_id.and_then(|p| self.by_id.get(p).copied());
        let parent_states = parent.and_then(|p| self.memo.get(p.header.checkpoint_id.as_str()));
        let mut out = States::new();
        for ch in &self.channels {
            let state = if let Some(value) = stored(t, ch) {
                ChannelState {
                    value,
                    from: Some((id.to_owned(), t.header.step())),
                    writes: 0,
                }
            } else {
                match (parent_id, parent, parent_states.and_then(|s| s.get(ch))) {
                    (None, _, _) => ChannelState {
                        value: Ok(empty(self.reducer(ch).0)),
                        from: None,
                        writes: 0,
                    },
                    (Some(p), None, _) | (Some(p), Some(_), None) => ChannelState {
                        value: Err(format!(
                            "its history is incomplete: ancestor checkpoint {p} is missing or \
                             unreadable, so the writes since the last snapshot are not all there"
                        )),
                        from: None,
                        writes: 0,
                    },
                    (Some(p), Some(pt), Some(_)) if pt.header.problem.is_some() => ChannelState {
                        value: Err(format!(
                            "ancestor checkpoint {p} could not be read in full, so its writes \
                             are not all there"
                        )),
                        from: None,
                        writes: 0,
                    },
                    (Some(_), Some(pt), Some(prev)) => {
                        let writes = writes_of(pt, ch);
                        let n =
                            u32::try_from(writes.as_ref().map_or(0, Vec::len)).unwrap_or(u32::MAX);
                        let value = match (&prev.value, writes) {
                            (Err(e), _) => Err(e.clone()),
                            (_, Err(e)) => Err(e),
                            (Ok(v), Ok(ws)) if ws.is_empty() => Ok(v.clone()),
                            (Ok(v), Ok(ws)) => replay(self.reducer(ch).0, v.clone(), &ws),
                        };
                        ChannelState {
                            value,
                            from: prev.from.clone(),
                            writes: prev.writes.saturating_add(n),
                        }
                    }
                }
            };
            out.insert(ch.clone(), Arc::new(state));
        }
        out
    }

    /// Rebuild every checkpoint of the set, then check each snapshot a loop step stored
    /// against the replay that leads to it: where they differ, the values replayed since the
    /// previous stored value are marked instead of shown.
    pub(crate) fn run(mut self) -> HashMap<String, Rebuilds> {
        let ids: Vec<&'a str> = self.by_id.keys().copied().collect();
        for id in &ids {
            self.states(id);
        }
        let mut bad: HashMap<(&'a str, String), String> = HashMap::new();
        for id in &ids {
            let t = self.by_id[id];
            if t.header.source() != Some("loop") {
                continue;
            }
            let Some(p) = t.header.parent_checkpoint_id.as_deref() else {
                continue;
            };
            let (Some(pt), Some(prev)) = (self.by_id.get(p).copied(), self.memo.get(p)) else {
                continue;
            };
            for ch in &self.channels {
                let Some(Ok(snapshot)) = stored(t, ch) else {
                    continue;
                };
                let Some(Ok(before)) = prev.get(ch).map(|s| s.value.clone()) else {
                    continue;
                };
                let Ok(ws) = writes_of(pt, ch) else { continue };
                let (reducer, _) = self.reducer(ch);
                let expected = replay(reducer, before, &ws);
                if expected.as_ref() == Ok(&snapshot) {
                    continue;
                }
                let why = contradiction(reducer, t);
                // Mark p and its ancestors back to the stored value the replay started from.
                let mut cur = Some(p);
                while let Some(c) = cur {
                    let Some(s) = self.memo.get(c).and_then(|s| s.get(ch)) else {
                        break;
                    };
                    if s.writes == 0 || bad.contains_key(&(c, ch.clone())) {
                        break;
                    }
                    bad.insert((c, ch.clone()), why.clone());
                    cur = self
                        .by_id
                        .get(c)
                        .and_then(|t| t.header.parent_checkpoint_id.as_deref());
                }
            }
        }
        let mut out = HashMap::new();
        for id in ids {
            let states = self.memo.remove(id).unwrap_or_default();
            let mut per = BTreeMap::new();
            for (ch, s) in states {
                let (reducer, inferred) = self.reducer(&ch);
                let value = match bad.get(&(id, ch.clone())) {
                    Some(why) => Err(why.clone()),
                    None => s.value.clone(),
                };
                let info = Rebuilt {
                    from_checkpoint: s.from.as_ref().map(|(c, _)| c.clone()),
                    from_step: s.from.as_ref().and_then(|(_, st)| *st),
                    writes: s.writes,
                    reducer,
                    inferred,
                    error: value.as_ref().err().cloned(),
                };
                per.insert(ch, (value, info));
            }
            out.insert(id.to_owned(), per);
        }
        out
    }
}
