//! Which nodes a checkpoint triggers, from channel names alone (the `StateGraph` conventions).
//!
//! * `__start__` triggers the `__start__` node.
//! * `branch:to:X` triggers X (an `EphemeralValue`, or `LastValueAfterFinish` storing
//!   `[value, finished]` for `defer=True` nodes).
//! * `join:A+B:X` triggers X (a `NamedBarrierValue` storing the set of sources that arrived, or
//!   `[set, finished]` for the deferred variant).
//! * Every node other than `__start__` also has `branch:to:X` among its triggers, even when that
//!   channel never appears in the data: `StateGraph` always subscribes it.
//!
//! Checkpoints before v3 used `start:X` and `branch:<src>:<cond>:X`; they are renamed to
//! `branch:to:X` as `StateGraph._migrate_checkpoint` does (bare node-name channels need the
//! graph's edges and are not migrated).

use flashback_codec::reserved::{BRANCH_PREFIX, BRANCH_TO, JOIN_PREFIX, SNAPSHOT_BUMPS, START};
use flashback_codec::{Decoded, Value};
use flashback_storage::{Checkpoint, Version};
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

/// A node that may run, and all its trigger channels (sorted, as in the task id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub name: String,
    pub triggers: Vec<String>,
}

/// The node a trigger channel belongs to.
fn trigger_node(channel: &str) -> Option<&str> {
    if channel == START {
        return Some(START);
    }
    if let Some(node) = channel.strip_prefix(BRANCH_TO) {
        return (!node.is_empty()).then_some(node);
    }
    if let Some(rest) = channel.strip_prefix(JOIN_PREFIX) {
        let (_, node) = rest.rsplit_once(':')?;
        return (!node.is_empty()).then_some(node);
    }
    None
}

/// Whether a channel triggers a node (its value tells whether it is available), counting
/// the pre-v3 names that migrate to `branch:to:X`.
pub(crate) fn is_trigger_channel(channel: &str) -> bool {
    trigger_node(channel).is_some() || legacy_rename(channel).is_some()
}

/// The sources a `join:A+B:X` channel waits for.
fn join_names(channel: &str) -> Option<BTreeSet<String>> {
    let rest = channel.strip_prefix(JOIN_PREFIX)?;
    let (sources, _) = rest.rsplit_once(':')?;
    Some(sources.split('+').map(str::to_owned).collect())
}

/// A pre-v3 trigger channel name and the `branch:to:X` it migrates to.
fn legacy_rename(channel: &str) -> Option<String> {
    if let Some(node) = channel.strip_prefix("start:") {
        return Some(format!(
            "{BRANCH_TO}{}",
            node.split(':').next().unwrap_or(node)
        ));
    }
    if channel.starts_with(BRANCH_PREFIX) && channel.matches(':').count() == 3 {
        return channel
            .rsplit(':')
            .next()
            .map(|node| format!("{BRANCH_TO}{node}"));
    }
    None
}

fn max_version(a: Version, b: Version) -> Version {
    if b.py_cmp(&a) == Ordering::Greater {
        b
    } else {
        a
    }
}

/// The checkpoint's channels after the v<3 renames.
pub(crate) struct Channels<'a> {
    versions: Vec<(String, Version)>,
    values: HashMap<String, &'a Decoded>,
    seen: HashMap<String, HashMap<String, Version>>,
    seen_order: Vec<String>,
}

impl<'a> Channels<'a> {
    pub(crate) fn new(cp: &'a Checkpoint) -> Channels<'a> {
        let migrate = cp.v < 3 && !cp.channel_versions.is_empty();
        let rename = |c: &str| if migrate { legacy_rename(c) } else { None };
        let mut versions: Vec<(String, Version)> = Vec::with_capacity(cp.channel_versions.len());
        for (c, v) in &cp.channel_versions {
            let c = rename(c).unwrap_or_else(|| c.clone());
            match versions.iter_mut().find(|(k, _)| *k == c) {
                Some(slot) => slot.1 = max_version(slot.1.clone(), v.clone()),
                None => versions.push((c, v.clone())),
            }
        }
        let mut values = HashMap::with_capacity(cp.channel_values.len());
        for (c, v) in &cp.channel_values {
            if let Some(new) = rename(c) {
                values.entry(new).or_insert(&**v);
            } else {
                values.insert(c.clone(), &**v);
            }
        }
        let mut seen: HashMap<String, HashMap<String, Version>> = HashMap::new();
        let mut seen_order = Vec::new();
        for (node, chans) in &cp.versions_seen {
            seen_order.push(node.clone());
            let entry = seen.entry(node.clone()).or_default();
            for (c, v) in chans {
                let c = rename(c).unwrap_or_else(|| c.clone());
                let merged = match entry.remove(&c) {
                    Some(old) => max_version(old, v.clone()),
                    None => v.clone(),
                };
                entry.insert(c, merged);
            }
        }
        Channels {
            versions,
            values,
            seen,
            seen_order,
        }
    }

    /// `type(v)()` of the first channel version; `None` when there are no versions.
    pub(crate) fn null_version(&self) -> Option<Version> {
        self.versions.first().map(|(_, v)| v.null_like())
    }

    /// The stored value of a channel (`None` when absent or the Postgres `empty` sentinel).
    pub(crate) fn value(&self, channel: &str) -> Option<&'a Decoded> {
        self.values
            .get(channel)
            .copied()
            .filter(|d| !matches!(d, Decoded::Empty))
    }

    /// Candidate nodes in the order their trigger channels first appear: channel versions,
    /// then values, then versions seen, then `extra` channel names.
    pub(crate) fn candidates(&self, extra: &[String]) -> Vec<Candidate> {
        let mut order: Vec<String> = Vec::new();
        let mut triggers: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut values: Vec<&String> = self.values.keys().collect();
        values.sort();
        let seen = self
            .seen_order
            .iter()
            .filter(|n| n.as_str() != SNAPSHOT_BUMPS)
            .flat_map(|n| {
                let mut keys: Vec<&String> = self.seen[n].keys().collect();
                keys.sort();
                keys
            });
        let names = self
            .versions
            .iter()
            .map(|(c, _)| c)
            .chain(values)
            .chain(seen)
            .chain(extra);
        for channel in names {
            let Some(node) = trigger_node(channel) else {
                continue;
            };
            let set = triggers.entry(node.to_owned()).or_insert_with(|| {
                order.push(node.to_owned());
                let mut s = BTreeSet::new();
                if node != START {
                    s.insert(format!("{BRANCH_TO}{node}"));
                }
                s
            });
            set.insert(channel.clone());
        }
        order
            .into_iter()
            .map(|name| {
                let triggers = triggers
                    .remove(&name)
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                Candidate { name, triggers }
            })
            .collect()
    }

    /// `channels[c].is_available()`.
    pub(crate) fn is_available(&self, channel: &str) -> bool {
        let Some(value) = self.value(channel) else {
            return false;
        };
        if let Some(names) = join_names(channel) {
            let (set, finished) = match barrier(value) {
                Some(b) => b,
                None => return false,
            };
            return finished && set == names;
        }
        if channel.starts_with(BRANCH_TO) {
            if let Some(Value::Array(items)) = value.as_value() {
                if let [_, Value::Bool(finished)] = items.as_slice() {
                    return *finished;
                }
            }
        }
        true
    }

    /// Python's `_triggers`: some trigger is available and (the node has no versions-seen
    /// entry, or the channel's version is newer than the one the node saw).
    pub(crate) fn triggered(&self, c: &Candidate, null: &Version) -> bool {
        self.fired(c, null).is_some()
    }

    /// The first of [`Candidate::triggers`] that fires ([`Channels::triggered`]): LangGraph.js
    /// hashes it into a PULL task's id.
    pub(crate) fn fired<'c>(&self, c: &'c Candidate, null: &Version) -> Option<&'c String> {
        let seen = self.seen.get(&c.name);
        c.triggers.iter().find(|&chan| {
            if !self.is_available(chan) {
                return false;
            }
            let Some(seen) = seen else { return true };
            let current = self
                .versions
                .iter()
                .find(|(k, _)| k == chan)
                .map_or(null, |(_, v)| v);
            let saw = seen.get(chan).unwrap_or(null);
            current.py_cmp(saw) == Ordering::Greater
        })
    }
}

/// A barrier value: `set` (finished = true) or `[set, finished]` for the deferred variant.
fn barrier(d: &Decoded) -> Option<(BTreeSet<String>, bool)> {
    match d {
        Decoded::Msgpack(v) => match v {
            Value::Array(items) if items.len() == 2 && matches!(items[1], Value::Bool(_)) => {
                let finished = matches!(items[1], Value::Bool(true));
                str_set(&items[0]).map(|s| (s, finished))
            }
            other => str_set(other).map(|s| (s, true)),
        },
        Decoded::Null => Some((BTreeSet::new(), true)),
        _ => None,
    }
}

fn str_set(v: &Value) -> Option<BTreeSet<String>> {
    let items = match v {
        Value::Object(o) if matches!(o.name.as_str(), "set" | "frozenset") => match &o.payload {
            Value::Array(items) => items,
            _ => return None,
        },
        Value::Array(items) => items,
        Value::Nil => return Some(BTreeSet::new()),
        _ => return None,
    };
    items
        .iter()
        .map(|i| i.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_names() {
        assert_eq!(trigger_node("__start__"), Some("__start__"));
        assert_eq!(trigger_node("branch:to:agent"), Some("agent"));
        assert_eq!(trigger_node("join:a+b:c"), Some("c"));
        assert_eq!(trigger_node("messages"), None);
        assert_eq!(trigger_node("branch:to:"), None);
        assert_eq!(
            join_names("join:a+b:c")
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(
            legacy_rename("start:agent").as_deref(),
            Some("branch:to:agent")
        );
        assert_eq!(
            legacy_rename("branch:agent:route:tools").as_deref(),
            Some("branch:to:tools")
        );
        assert_eq!(legacy_rename("branch:to:tools"), None);
    }
}
