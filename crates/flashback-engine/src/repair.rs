//! Repairing a three-table store's damaged blob rows from the writes (the design note's fault
//! recovery; `docs/three-table.md`, "Repair").
//!
//! A blob row holds one version of one channel. The step that produced the version is the
//! checkpoint that first names it (its parent names another version, or none): LangGraph
//! made it by applying the parent's pending writes to the channel, with the channel's reducer,
//! on top of the parent's value. So a row that is missing, whose delta chain is broken or
//! whose bytes do not decode is rebuilt by doing that again:
//!
//! * the reducer is the one [`crate::merge::rebuild_report`] finds explaining the channel's
//!   other steps; a channel no other step shows is rebuilt only when every reducer LangGraph
//!   ships gives the same value;
//! * the value it builds on is the parent's, or the one rebuilt just before (damaged rows are
//!   rebuilt oldest first, so a chain of them is rebuilt in order);
//! * a delta whose own row is intact but whose base is damaged reads again once the base is
//!   rebuilt: it is rebuilt too when its step's writes allow (its value may be what a later
//!   damaged version builds on), else left to read through the rebuilt base;
//! * a thread holding values left sealed (a cipher Flashback cannot open, or no key) is refused
//!   whole: what a repair writes is sealed with the store's `aes` key;
//! * what cannot be rebuilt says why, and stays as it is: a version written by
//!   `update_state`, a fork or the input (no writes produced it), a DeltaChannel (its value is
//!   rebuilt on read, not stored whole), writes that cannot be read, a reducer that does not
//!   fit.
//!
//! Every rebuilt value is written whole, replacing its row, in one transaction
//! ([`SaverMaintenance::replace_blobs`]); a dry run says what would be written.

use crate::merge::rebuild_report;
use crate::reducer::{apply, Reducer, REDUCERS};
use crate::EngineError;
use flashback_codec::{view_decoded, Decoded, Value, ViewOptions};
use flashback_storage::maintenance::{BlobFix, DamagedBlob, SaverMaintenance};
use flashback_storage::sealed::sealed_source;
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One damaged blob row, and how it is (or why it cannot be) rebuilt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BlobRepair {
    /// The namespace.
    pub checkpoint_ns: String,
    /// The channel.
    pub channel: String,
    /// The channel version (the row's key).
    pub version: String,
    /// What is wrong with the row.
    pub problem: String,
    /// The checkpoints that name this version (all get the value back), oldest first.
    pub checkpoints: Vec<String>,
    /// The checkpoint whose step produced the version (its parent's writes are replayed).
    pub produced_at: Option<String>,
    /// The reducer applied; `None` when the value cannot be rebuilt.
    pub reducer: Option<Reducer>,
    /// The writes applied.
    pub writes: u32,
    /// The rebuilt value as compact JSON, clipped to 200 characters.
    pub preview: Option<String>,
    /// The damaged version this row is built on when its own row is intact. With neither a
    /// `reducer` nor a `cannot`, the row is not written: it reads again once `cause` is.
    pub cause: Option<String>,
    /// Why it cannot be rebuilt (then nothing is written for it).
    pub cannot: Option<String>,
    /// What the rebuilt value could not get back, e.g. message ids LangGraph assigned on write
    /// that no readable version of the channel keeps.
    pub note: Option<String>,
}

/// What a repair found and did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepairReport {
    /// The thread.
    pub thread_id: String,
    /// Whether nothing was written (the report says what a repair would write).
    pub dry_run: bool,
    /// Every damaged row, oldest first per namespace.
    pub damaged: Vec<BlobRepair>,
    /// Rows rewritten (0 in a dry run).
    pub repaired: u32,
    /// Rows still damaged afterwards (a dry run: those that cannot be rebuilt).
    pub left: u32,
}

/// Find the thread's damaged blob rows and rebuild each from the writes; write them (one
/// transaction) unless `dry_run`.
pub async fn repair_blobs(
    saver: &dyn SaverMaintenance,
    thread_id: &str,
    dry_run: bool,
) -> Result<RepairReport, EngineError> {
    let damaged = saver.damaged_blobs(thread_id).await?;
    let mut by_ns: BTreeMap<&str, Vec<&DamagedBlob>> = BTreeMap::new();
    for d in &damaged {
        by_ns.entry(d.checkpoint_ns.as_str()).or_default().push(d);
    }
    let mut out = Vec::with_capacity(damaged.len());
    let mut fixes = Vec::new();
    for (ns, list) in by_ns {
        let (items, mut f) = plan_namespace(saver, thread_id, ns, &list).await?;
        out.extend(items);
        fixes.append(&mut f);
    }
    let resolved = out.iter().filter(|r| r.cannot.is_none()).count() as u32;
    let (repaired, left) = if dry_run || fixes.is_empty() {
        (0, damaged.len() as u32 - resolved)
    } else {
        let n = saver.replace_blobs(thread_id, &fixes).await?;
        (n as u32, saver.damaged_blobs(thread_id).await?.len() as u32)
    };
    Ok(RepairReport {
        thread_id: thread_id.to_owned(),
        dry_run,
        damaged: out,
        repaired,
        left,
    })
}

/// The repairs of one namespace, oldest version first.
async fn plan_namespace(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    list: &[&DamagedBlob],
) -> Result<(Vec<BlobRepair>, Vec<BlobFix>), EngineError> {
    let tuples = store
        .list_tuples(&ListQuery {
            thread_id: Some(thread_id.to_owned()),
            checkpoint_ns: Some(ns.to_owned()),
            ..Default::default()
        })
        .await?;
    // A repair writes rebuilt values sealed with the store's key (`aes`): a thread whose
    // values stayed sealed (a cipher Flashback cannot open, or no key) is not repaired.
    if let Some(t) = tuples.iter().find(|t| !t.locked_ciphers().is_empty()) {
        let what = format!(
            "thread {thread_id:?}, checkpoint {}",
            t.header.checkpoint_id
        );
        return Err(sealed_source(&what, &t.locked_ciphers()).into());
    }
    let by_id: HashMap<&str, &CheckpointTuple> = tuples
        .iter()
        .map(|t| (t.header.checkpoint_id.as_str(), t))
        .collect();
    // The reducers the thread's other steps show: `None` for a channel whose every step was
    // unreadable (a head that cannot be read shows none).
    let known: HashMap<String, Option<Reducer>> =
        match rebuild_report(store, thread_id, ns, None).await {
            Ok(r) => r
                .into_iter()
                .filter(|c| c.consistent_steps > 0 || !c.disagreements.is_empty())
                .map(|c| (c.channel, c.reducer.filter(|_| c.consistent_steps > 0)))
                .collect(),
            Err(_) => HashMap::new(),
        };
    let damaged: HashSet<(&str, &str)> = list
        .iter()
        .map(|d| (d.channel.as_str(), d.version.as_str()))
        .collect();
    let mut ordered: Vec<(Option<&CheckpointTuple>, &DamagedBlob)> =
        list.iter().map(|d| (producer(d, &by_id), *d)).collect();
    ordered.sort_by(|a, b| {
        let id = |t: &Option<&CheckpointTuple>| t.map(|t| t.header.checkpoint_id.clone());
        id(&a.0).cmp(&id(&b.0)).then(a.1.channel.cmp(&b.1.channel))
    });
    let mut rebuilt: HashMap<(String, String), Value> = HashMap::new();
    let (mut items, mut fixes) = (Vec::new(), Vec::new());
    for (at, d) in ordered {
        let mut item = BlobRepair {
            checkpoint_ns: d.checkpoint_ns.clone(),
            channel: d.channel.clone(),
            version: d.version.clone(),
            problem: d.problem.clone(),
            checkpoints: d.checkpoints.clone(),
            produced_at: at.map(|t| t.header.checkpoint_id.clone()),
            reducer: None,
            writes: 0,
            preview: None,
            cause: d.cause.clone(),
            cannot: None,
            note: None,
        };
        let ctx = Ctx {
            by_id: &by_id,
            known: &known,
            damaged: &damaged,
            rebuilt: &rebuilt,
            tuples: &tuples,
        };
        match ctx.rebuild(d, at) {
            Ok((reducer, writes, mut value)) => {
                if let (Reducer::AddMessages, Some(at)) = (reducer, at) {
                    let lost = ctx.restore_ids(&d.channel, at, &mut value);
                    if lost > 0 {
                        item.note = Some(format!(
                            "{lost} message{} had an id LangGraph gave on write that no readable \
                             version keeps; stored without one (LangGraph gives a new one on the \
                             next step)",
                            if lost == 1 { "" } else { "s" }
                        ));
                    }
                }
                item.reducer = Some(reducer);
                item.writes = writes;
                let decoded = match &value {
                    Value::Nil => Decoded::Null,
                    v => Decoded::Msgpack(v.clone()),
                };
                item.preview = Some(preview(&decoded));
                rebuilt.insert((d.channel.clone(), d.version.clone()), value);
                fixes.push(BlobFix {
                    checkpoint_ns: d.checkpoint_ns.clone(),
                    channel: d.channel.clone(),
                    version: d.version.clone(),
                    value: decoded,
                });
            }
            // A row that is intact itself reads again once the row it is built on is
            // rebuilt (when that one can be).
            Err(why) => match &d.cause {
                Some(root) if rebuilt.contains_key(&(d.channel.clone(), root.clone())) => {}
                Some(root) => {
                    item.cannot = Some(format!(
                        "it is built on version {root}, which cannot be rebuilt ({why})"
                    ))
                }
                None => item.cannot = Some(why),
            },
        }
        items.push(item);
    }
    Ok((items, fixes))
}

/// The checkpoint whose step produced `d`'s version: the oldest naming it whose parent does
/// not (or that has none).
fn producer<'a>(
    d: &DamagedBlob,
    by_id: &HashMap<&str, &'a CheckpointTuple>,
) -> Option<&'a CheckpointTuple> {
    d.checkpoints.iter().find_map(|id| {
        let t = by_id.get(id.as_str())?;
        let parent_names_it = t
            .header
            .parent_checkpoint_id
            .as_deref()
            .and_then(|p| by_id.get(p))
            .and_then(|p| p.checkpoint.version(&d.channel))
            .is_some_and(|v| v.as_text() == d.version);
        (!parent_names_it).then_some(*t)
    })
}

struct Ctx<'a> {
    by_id: &'a HashMap<&'a str, &'a CheckpointTuple>,
    known: &'a HashMap<String, Option<Reducer>>,
    damaged: &'a HashSet<(&'a str, &'a str)>,
    rebuilt: &'a HashMap<(String, String), Value>,
    tuples: &'a [CheckpointTuple],
}

impl Ctx<'_> {
    /// The value of `d`'s version, replayed: `(reducer, writes applied, value)`, or why not.
    fn rebuild(
        &self,
        d: &DamagedBlob,
        at: Option<&CheckpointTuple>,
    ) -> Result<(Reducer, u32, Value), String> {
        let channel = d.channel.as_str();
        if self.is_delta_channel(channel) {
            return Err(
                "a DeltaChannel: its value is rebuilt from the writes on every read, \
                        and its stored snapshots cannot be made again"
                    .into(),
            );
        }
        let at = at.ok_or("no checkpoint of the thread can be read that names this version")?;
        let source = at.header.source().unwrap_or("");
        if source != "loop" {
            return Err(format!(
                "written by {} (metadata source {source:?}), not by a step's writes",
                match source {
                    "input" => "the run's input",
                    "update" => "update_state or an edit fork",
                    "fork" => "a fork",
                    _ => "something other than a step",
                }
            ));
        }
        let parent = at
            .header
            .parent_checkpoint_id
            .as_deref()
            .and_then(|p| self.by_id.get(p))
            .ok_or("the checkpoint before the step that produced it cannot be read")?;
        let current = self.value_before(parent, channel)?;
        let mut writes = Vec::new();
        for w in parent
            .pending_writes
            .iter()
            .filter(|w| w.channel == channel)
        {
            writes.push(match &w.value {
                Decoded::Msgpack(v) => v,
                Decoded::Null => &Value::Nil,
                _ => {
                    return Err(format!(
                        "a write to it by task {} cannot be read",
                        w.task_path
                    ))
                }
            });
        }
        if writes.is_empty() {
            return Err(format!(
                "no write to it is stored at {}, the step before",
                parent.header.checkpoint_id
            ));
        }
        let n = writes.len() as u32;
        let out = |r: Reducer| apply(r, current.as_ref(), &writes);
        match self.known.get(channel) {
            Some(Some(r)) => out(*r)
                .map(|v| (*r, n, v))
                .ok_or_else(|| format!("its writes do not fit its reducer ({r:?})")),
            Some(None) => {
                Err("no reducer LangGraph ships explains this channel's other steps".into())
            }
            None => {
                let mut results = REDUCERS.iter().filter_map(|r| out(*r).map(|v| (*r, v)));
                let first = results
                    .next()
                    .ok_or("no reducer LangGraph ships fits its writes")?;
                if results.all(|(_, v)| v == first.1) {
                    Ok((first.0, n, first.1))
                } else {
                    Err(
                        "no other step of this thread shows how the channel combines its \
                         writes, and the reducers LangGraph ships disagree"
                            .into(),
                    )
                }
            }
        }
    }

    /// The parent's value of `channel` (rebuilt already, or as read); `None`: it had none.
    fn value_before(
        &self,
        parent: &CheckpointTuple,
        channel: &str,
    ) -> Result<Option<Value>, String> {
        let Some(version) = parent.checkpoint.version(channel).map(|v| v.as_text()) else {
            return Ok(None);
        };
        if let Some(v) = self.rebuilt.get(&(channel.to_owned(), version.clone())) {
            return Ok(Some(v.clone()));
        }
        match parent.checkpoint.value(channel).map(|v| v.as_ref()) {
            Some(Decoded::Msgpack(v)) => Ok(Some(v.clone())),
            // As the rebuild check reads it: a None value is no value to build on.
            Some(Decoded::Null) => Ok(None),
            Some(_) => Err(format!(
                "the value it builds on (version {version}) cannot be read"
            )),
            None if self.damaged.contains(&(channel, version.as_str())) => Err(format!(
                "the value it builds on (version {version}) is damaged too and cannot be rebuilt"
            )),
            None => Ok(None),
        }
    }

    /// `add_messages` gives a message written without an id a new random one, which the
    /// writes do not hold: take it from a readable version of the channel, at `at` or after it
    /// on its branches (they hold the message this step wrote; another branch that ran the
    /// same step got another id), holding the same message at the same place (messages are
    /// appended, so they keep their place). Returns the messages left without one.
    fn restore_ids(&self, channel: &str, at: &CheckpointTuple, value: &mut Value) -> usize {
        let Value::Array(items) = value else { return 0 };
        let mut children: HashMap<&str, Vec<&CheckpointTuple>> = HashMap::new();
        for t in self.tuples {
            if let Some(p) = t.header.parent_checkpoint_id.as_deref() {
                children.entry(p).or_default().push(t);
            }
        }
        let mut after = vec![at];
        let mut i = 0;
        while let Some(t) = after.get(i) {
            if let Some(cs) = children.get(t.header.checkpoint_id.as_str()) {
                after.extend(cs.iter().copied());
            }
            i += 1;
        }
        let mut lost = 0;
        for (i, m) in items.iter_mut().enumerate() {
            let Value::Object(o) = m else { continue };
            if !matches!(o.payload.get("id"), None | Some(Value::Nil)) {
                continue;
            }
            let found = after.iter().find_map(|t| {
                let Some(Decoded::Msgpack(Value::Array(xs))) =
                    t.checkpoint.value(channel).map(|v| v.as_ref())
                else {
                    return None;
                };
                let Some(Value::Object(k)) = xs.get(i) else {
                    return None;
                };
                let id = match k.payload.get("id") {
                    Some(Value::Str(id)) => id.clone(),
                    _ => return None,
                };
                (k.name == o.name && same_but_id(&k.payload, &o.payload)).then_some(id)
            });
            match (found, &mut std::sync::Arc::make_mut(o).payload) {
                (Some(id), Value::Map(entries)) => {
                    match entries.iter_mut().find(|(k, _)| k.as_str() == Some("id")) {
                        Some((_, v)) => *v = Value::Str(id),
                        None => entries.push((Value::Str("id".into()), Value::Str(id))),
                    }
                }
                _ => lost += 1,
            }
        }
        lost
    }

    /// Whether the channel is a DeltaChannel (a stored value is a delta snapshot).
    fn is_delta_channel(&self, channel: &str) -> bool {
        self.tuples.iter().any(|t| {
            matches!(
                t.checkpoint.value(channel).map(|v| v.as_ref()),
                Some(Decoded::Msgpack(Value::DeltaSnapshot(_)))
            )
        })
    }
}

/// Two message payloads equal but for their `id`.
fn same_but_id(a: &Value, b: &Value) -> bool {
    let (Value::Map(a), Value::Map(b)) = (a, b) else {
        return false;
    };
    let rest = |m: &[(Value, Value)]| -> Vec<(Value, Value)> {
        m.iter()
            .filter(|(k, _)| k.as_str() != Some("id"))
            .cloned()
            .collect()
    };
    rest(a) == rest(b)
}

/// The value as compact JSON, clipped.
fn preview(d: &Decoded) -> String {
    let text = view_decoded(d, ViewOptions::default())
        .map(|j| j.to_string())
        .unwrap_or_default();
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}
