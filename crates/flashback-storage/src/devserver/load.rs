//! The dev server's checkpoint pickles read into a [`Snapshot`]: the structures
//! `langgraph.checkpoint.memory.InMemorySaver` keeps (and `PersistentDict` pickles), with
//! every stored value kept as its `(type, bytes)` serde pair, decoded only when read.
//!
//! ```text
//! .1.pckl storage {thread_id: {checkpoint_ns: {checkpoint_id: ((type, checkpoint), (type, metadata), parent_id)}}}
//! .2.pckl writes  {(thread_id, checkpoint_ns, checkpoint_id): {(task_id, idx): (task_id, channel, (type, value), task_path)}}
//! .3.pckl blobs   {(thread_id, checkpoint_ns, channel, version): (type, value)}
//! ```
//!
//! Before langgraph-checkpoint 2.0.22 there was no `.3.pckl`: the checkpoint document held its
//! channel values, and writes were 3-tuples (no task path). Both are read.

use flashback_codec::pickle::{self, PyValue};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A serde pair as stored: its type tag and the pickle object holding its bytes (shared with
/// the parsed file: nothing is copied).
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub(crate) tag: String,
    value: Arc<PyValue>,
}

impl Typed {
    /// The stored bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.value.as_bytes().unwrap_or_default()
    }

    /// A pair made from bytes read elsewhere (the LangGraph.js server's `Uint8Array`s).
    pub(crate) fn from_bytes(tag: &str, bytes: Vec<u8>) -> Typed {
        Typed {
            tag: tag.to_owned(),
            value: Arc::new(PyValue::Bytes(bytes)),
        }
    }

    /// A `(type, bytes)` tuple, or why it is not one.
    fn of(v: &Arc<PyValue>) -> Result<Typed, String> {
        match v.as_seq() {
            Some([tag, bytes]) => match (tag.as_str(), bytes.as_bytes()) {
                (Some(tag), Some(_)) => Ok(Typed {
                    tag: tag.to_owned(),
                    value: Arc::clone(bytes),
                }),
                _ => Err(format!(
                    "a serde pair that is not (str, bytes): {}",
                    shape(v)
                )),
            },
            _ => Err(format!("not a (type, bytes) pair: {}", shape(v))),
        }
    }
}

/// A checkpoint as stored.
#[derive(Debug, Clone)]
pub(crate) struct Saved {
    /// The checkpoint document (without values since 2.0.22).
    pub(crate) checkpoint: Result<Typed, String>,
    /// The metadata.
    pub(crate) metadata: Result<Typed, String>,
    /// The parent checkpoint id.
    pub(crate) parent: Option<String>,
}

/// A pending write as stored.
#[derive(Debug, Clone)]
pub(crate) struct StoredWrite {
    pub(crate) task_id: String,
    pub(crate) idx: i64,
    pub(crate) channel: String,
    pub(crate) task_path: String,
    pub(crate) value: Result<Typed, String>,
}

/// `(thread_id, checkpoint_ns, checkpoint_id)`.
pub(crate) type CheckpointKey = (String, String, String);

/// The checkpoints of one namespace, by id (sorted: ids grow with time).
pub(crate) type Namespace = BTreeMap<String, Saved>;

/// What the checkpoint files hold.
#[derive(Debug, Default)]
pub(crate) struct Checkpoints {
    /// thread → namespace → checkpoints.
    pub(crate) threads: BTreeMap<String, BTreeMap<String, Namespace>>,
    /// Pending writes by checkpoint, in stored order.
    pub(crate) writes: HashMap<CheckpointKey, Vec<StoredWrite>>,
    /// Channel values by `(thread, ns, channel, version)` (the version as text).
    pub(crate) blobs: HashMap<(String, String, String, String), Typed>,
    /// Entries that could not be read (a key that is not text, a malformed tuple), one line
    /// each; the rest is read.
    pub(crate) problems: Vec<String>,
}

/// A short description of a pickle object, for messages.
pub(crate) fn shape(v: &PyValue) -> String {
    match v {
        PyValue::None => "None".into(),
        PyValue::Bool(_) => "bool".into(),
        PyValue::Int(_) | PyValue::BigInt(_) => "int".into(),
        PyValue::Float(_) => "float".into(),
        PyValue::Str(_) => "str".into(),
        PyValue::Bytes(_) => "bytes".into(),
        PyValue::ByteArray(_) => "bytearray".into(),
        PyValue::Tuple(t) => format!("a {}-tuple", t.len()),
        PyValue::List(_) => "list".into(),
        PyValue::Dict(_) | PyValue::DefaultDict { .. } => "dict".into(),
        PyValue::Set(_) | PyValue::FrozenSet(_) => "set".into(),
        PyValue::Recursive => "a recursive reference".into(),
        other => other.class_path().unwrap_or_else(|| "an object".into()),
    }
}

/// A key as text: a `str`, an `int`, a UUID; `None` for anything else.
pub(crate) fn text(v: &PyValue) -> Option<String> {
    match v {
        PyValue::Str(s) => Some(s.clone()),
        PyValue::Int(i) => Some(i.to_string()),
        PyValue::BigInt(s) => Some(s.clone()),
        _ => pickle::uuid_string(v),
    }
}

/// A dict's entries.
type Entries = [(Arc<PyValue>, Arc<PyValue>)];

fn items<'a>(v: &'a PyValue, what: &str) -> Result<&'a Entries, String> {
    v.as_items()
        .ok_or_else(|| format!("{what} is {}, not a dict", shape(v)))
}

/// Read the three checkpoint files' parsed roots (`None`: the file is absent).
pub(crate) fn checkpoints(
    storage: Option<&PyValue>,
    writes: Option<&PyValue>,
    blobs: Option<&PyValue>,
) -> Result<Checkpoints, String> {
    let mut out = Checkpoints::default();
    if let Some(storage) = storage {
        read_storage(storage, &mut out)?;
    }
    if let Some(writes) = writes {
        read_writes(writes, &mut out)?;
    }
    if let Some(blobs) = blobs {
        read_blobs(blobs, &mut out)?;
    }
    Ok(out)
}

fn read_storage(root: &PyValue, out: &mut Checkpoints) -> Result<(), String> {
    let threads = root.as_items().ok_or_else(|| {
        format!(
            "it holds {}, not the dict of threads InMemorySaver writes",
            shape(root)
        )
    })?;
    for (thread, per_thread) in threads {
        let Some(thread_id) = text(thread) else {
            out.problems
                .push(format!("a thread key that is not text ({})", shape(thread)));
            continue;
        };
        let Ok(namespaces) = items(per_thread, "a thread") else {
            out.problems.push(format!(
                "thread {thread_id}: its checkpoints are {}, not a dict",
                shape(per_thread)
            ));
            continue;
        };
        let mut per_ns = BTreeMap::new();
        for (ns, checkpoints) in namespaces {
            let Some(ns) = text(ns) else {
                out.problems.push(format!(
                    "thread {thread_id}: a namespace key that is not text ({})",
                    shape(ns)
                ));
                continue;
            };
            let Ok(checkpoints) = items(checkpoints, "a namespace") else {
                out.problems.push(format!(
                    "thread {thread_id} namespace {ns:?}: its checkpoints are {}, not a dict",
                    shape(checkpoints)
                ));
                continue;
            };
            let mut saved: Namespace = BTreeMap::new();
            for (id, entry) in checkpoints {
                let Some(id) = text(id) else {
                    out.problems.push(format!(
                        "thread {thread_id}: a checkpoint id that is not text ({})",
                        shape(id)
                    ));
                    continue;
                };
                saved.insert(id, read_saved(entry));
            }
            if !saved.is_empty() {
                per_ns.insert(ns, saved);
            }
        }
        if !per_ns.is_empty() {
            out.threads.insert(thread_id, per_ns);
        }
    }
    Ok(())
}

fn read_saved(entry: &Arc<PyValue>) -> Saved {
    match entry.as_seq() {
        Some([checkpoint, metadata, parent, ..]) => Saved {
            checkpoint: Typed::of(checkpoint),
            metadata: Typed::of(metadata),
            parent: text(parent).filter(|p| !p.is_empty()),
        },
        _ => {
            let problem = format!(
                "the stored checkpoint is {}, not (checkpoint, metadata, parent)",
                shape(entry)
            );
            Saved {
                checkpoint: Err(problem.clone()),
                metadata: Err(problem),
                parent: None,
            }
        }
    }
}

fn read_writes(root: &PyValue, out: &mut Checkpoints) -> Result<(), String> {
    let Ok(all) = items(root, "the pending-writes file") else {
        out.problems.push(format!(
            "the pending-writes file holds {}, not a dict",
            shape(root)
        ));
        return Ok(());
    };
    for (key, per_task) in all {
        let key = match key.as_seq() {
            Some([t, ns, id]) => match (text(t), text(ns), text(id)) {
                (Some(t), Some(ns), Some(id)) => (t, ns, id),
                _ => {
                    out.problems
                        .push("a pending-writes key that is not text".to_owned());
                    continue;
                }
            },
            _ => {
                out.problems.push(format!(
                    "a pending-writes key that is {}, not (thread, ns, checkpoint)",
                    shape(key)
                ));
                continue;
            }
        };
        let Ok(per_task) = items(per_task, "writes") else {
            out.problems.push(format!(
                "the writes of checkpoint {} are {}, not a dict",
                key.2,
                shape(per_task)
            ));
            continue;
        };
        let list = out.writes.entry(key).or_default();
        for (inner, write) in per_task {
            let idx = inner
                .as_seq()
                .and_then(|s| s.get(1))
                .and_then(|i| i.as_int())
                .unwrap_or(0);
            match write.as_seq() {
                // (task_id, channel, (type, bytes), task_path); before 2.0.22 no task path.
                Some([task_id, channel, value, rest @ ..]) if rest.len() <= 1 => {
                    list.push(StoredWrite {
                        task_id: text(task_id).unwrap_or_default(),
                        idx,
                        channel: text(channel).unwrap_or_default(),
                        task_path: rest.first().and_then(|p| text(p)).unwrap_or_default(),
                        value: Typed::of(value),
                    })
                }
                _ => out.problems.push(format!(
                    "a pending write that is {}, not (task, channel, value, path)",
                    shape(write)
                )),
            }
        }
    }
    Ok(())
}

fn read_blobs(root: &PyValue, out: &mut Checkpoints) -> Result<(), String> {
    let Ok(all) = items(root, "the values file") else {
        out.problems.push(format!(
            "the channel values file holds {}, not a dict",
            shape(root)
        ));
        return Ok(());
    };
    for (key, value) in all {
        let key = match key.as_seq() {
            Some([t, ns, channel, version]) => {
                match (text(t), text(ns), text(channel), version_text(version)) {
                    (Some(t), Some(ns), Some(c), Some(v)) => (t, ns, c, v),
                    _ => {
                        out.problems
                            .push("a channel value key that is not text".to_owned());
                        continue;
                    }
                }
            }
            _ => {
                out.problems.push(format!(
                    "a channel value key that is {}, not (thread, ns, channel, version)",
                    shape(key)
                ));
                continue;
            }
        };
        match Typed::of(value) {
            Ok(t) => {
                out.blobs.insert(key, t);
            }
            Err(e) => out
                .problems
                .push(format!("the value of channel {} at {}: {e}", key.2, key.3)),
        }
    }
    Ok(())
}

/// A channel version as the text [`crate::model::Version::as_text`] gives (Python keeps the
/// version object itself: a `str`, or a number).
pub(crate) fn version_text(v: &PyValue) -> Option<String> {
    match v {
        PyValue::Float(f) => crate::model::Version::Float(*f).as_text().into(),
        v => text(v),
    }
}
