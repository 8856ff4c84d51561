//! Changing the dev server's checkpoint files the way the server does: each explicit action
//! reads the three pickles again, refuses while a server runs on the folder (it would write
//! its own copy over the change when it stops), changes the parsed trees in place — what it
//! does not change stays the tree as read, so it is written back byte for byte — and writes
//! each changed file as `PersistentDict.sync` does: `pickle.dumps(dict(self), 2)`
//! ([`pickle::dumps2`]) to `<file>.tmp`, synced, then renamed over the file, after the previous
//! file was kept as `<file>.flashback-bak`.
//!
//! The trees are the ones `InMemorySaver` keeps (see [`super::load`]): a top-level `dict`, per
//! thread a `defaultdict(dict)` of namespaces in the checkpoints file, a `dict` per checkpoint
//! key in the writes file, tuples and bytes inside.

use super::files;
use super::load::{text, version_text};
use crate::StoreError;
use flashback_codec::pickle::{self, Limits, PyValue};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A dict's entries.
pub(crate) type Items = Vec<(Arc<PyValue>, Arc<PyValue>)>;

/// Take a deleted thread out of the server's thread list and its runs (`{"threads": [...],
/// "runs": [...]}`, each a dict whose `thread_id` is a UUID), as the server's own thread
/// delete does; the rest of the file is kept as read.
pub(crate) fn remove_from_ops(ops: &mut Root, thread: &str) {
    for (key, list) in ops.items.iter_mut() {
        if !matches!(key.as_str(), Some("threads" | "runs")) {
            continue;
        }
        let PyValue::List(entries) = Arc::make_mut(list) else {
            continue;
        };
        let before = entries.len();
        entries.retain(|entry| {
            let id = entry.as_items().and_then(|fields| {
                fields
                    .iter()
                    .find(|(k, _)| k.as_str() == Some("thread_id"))
                    .and_then(|(_, v)| pickle::uuid_string(v).or_else(|| text(v)))
            });
            id.as_deref() != Some(thread)
        });
        ops.changed |= entries.len() != before;
    }
}

/// The value whose key `matches` accepts, the entry `insert` makes pushed first when there
/// is none (a Python `d.setdefault(key, value)`).
pub(crate) fn entry_or_insert(
    items: &mut Items,
    matches: impl Fn(&PyValue) -> bool,
    insert: impl FnOnce() -> (Arc<PyValue>, Arc<PyValue>),
) -> &mut Arc<PyValue> {
    let i = match items.iter().position(|(k, _)| matches(k)) {
        Some(i) => i,
        None => {
            items.push(insert());
            items.len() - 1
        }
    };
    &mut items[i].1
}

/// What a backup of a file is called.
pub const BACKUP_SUFFIX: &str = ".flashback-bak";

/// One of the checkpoint files, parsed: its top-level dict's entries and whether it changed.
pub(crate) struct Root {
    name: &'static str,
    pub(crate) items: Items,
    pub(crate) changed: bool,
}

/// The three checkpoint files as read for one action.
pub(crate) struct Roots {
    dir: PathBuf,
    /// `storage`: thread → defaultdict(ns → {id: (checkpoint, metadata, parent)}).
    pub(crate) storage: Root,
    /// `writes`: (thread, ns, id) → {(task_id, idx): (task_id, channel, (type, bytes), path)}.
    pub(crate) writes: Root,
    /// `blobs`: (thread, ns, channel, version) → (type, bytes).
    pub(crate) blobs: Root,
    /// The server's threads and runs (`.langgraph_ops.pckl`), when it reads: only a deleted
    /// thread is taken out of it (its dicts hold UUIDs and datetimes Flashback does not make).
    pub(crate) ops: Option<Root>,
}

/// Refuse when a server runs on the folder: one line naming it.
pub(crate) fn refuse_if_running(dir: &Path) -> Result<(), StoreError> {
    match files::running_server(dir) {
        Some(pid) => Err(StoreError::InUse(format!(
            "a langgraph dev server is running on {} (pid {pid}): it would write its own \
             state over this change when it stops; stop it (Ctrl-C), then try again — nothing \
             was written",
            dir.display()
        ))),
        None => Ok(()),
    }
}

fn read_root(dir: &Path, name: &'static str) -> Result<Root, StoreError> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(StoreError::Query(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    let items = if bytes.is_empty() {
        Vec::new()
    } else {
        let limits = Limits {
            max_objects: bytes.len().clamp(1 << 10, 1 << 26),
            ..Limits::default()
        };
        let root = pickle::loads(&bytes, &limits).map_err(|e| StoreError::UnreadableFile {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        match root {
            PyValue::Dict(items) | PyValue::DefaultDict { items, .. } => items,
            other => {
                return Err(StoreError::UnreadableFile {
                    path: path.display().to_string(),
                    detail: format!(
                        "it holds {}, not the dict InMemorySaver writes; nothing was written",
                        super::load::shape(&other)
                    ),
                })
            }
        }
    };
    Ok(Root {
        name,
        items,
        changed: false,
    })
}

impl Roots {
    /// Read the three files now (after checking no server runs on the folder).
    pub(crate) fn read(dir: &Path) -> Result<Roots, StoreError> {
        refuse_if_running(dir)?;
        Ok(Roots {
            dir: dir.to_path_buf(),
            storage: read_root(dir, files::CHECKPOINTS)?,
            writes: read_root(dir, files::WRITES)?,
            blobs: read_root(dir, files::BLOBS)?,
            // An unreadable thread list is left as it is (reads say why).
            ops: read_root(dir, files::OPS)
                .ok()
                .filter(|r| !r.items.is_empty()),
        })
    }

    /// Write every changed file (checked again that no server started meanwhile).
    pub(crate) fn save(self) -> Result<(), StoreError> {
        let changed: Vec<&Root> = [&self.storage, &self.writes, &self.blobs]
            .into_iter()
            .chain(self.ops.as_ref())
            .filter(|r| r.changed)
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        // Everything is encoded before any file is replaced.
        let encoded = changed
            .iter()
            .map(|r| {
                let bytes = pickle::dumps2(&PyValue::Dict(r.items.clone())).map_err(|e| {
                    StoreError::InvalidInput(format!("cannot write {}: {e}", r.name))
                })?;
                Ok((r.name, bytes))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        refuse_if_running(&self.dir)?;
        for (name, bytes) in encoded {
            replace_file(&self.dir.join(name), &bytes)?;
        }
        sync_dir(&self.dir);
        Ok(())
    }
}

fn io_err(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    StoreError::Query(format!("cannot {what} {}: {e}", path.display()))
}

/// `PersistentDict.sync`: `<file>.tmp` written and synced, the file kept as
/// `<file>.flashback-bak`, then the temp file renamed over it.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!("{name}.tmp"));
    let backup = path.with_file_name(format!("{name}{BACKUP_SUFFIX}"));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp, "write", e));
    }
    if path.exists() {
        std::fs::copy(path, &backup).map_err(|e| io_err(&backup, "keep a backup as", e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, "replace", e))
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Whether a key (a text, or a tuple of texts) is `want`.
pub(crate) fn key_is(k: &PyValue, want: &[&str]) -> bool {
    match (k.as_seq(), want) {
        (None, [one]) => version_text(k).as_deref() == Some(*one),
        (Some(parts), _) => {
            parts.len() == want.len()
                && parts
                    .iter()
                    .zip(want)
                    .all(|(p, w)| version_text(p).as_deref() == Some(*w))
        }
        _ => false,
    }
}

/// The first text of a tuple key (its thread), and the second (its namespace).
pub(crate) fn key_part(k: &PyValue, i: usize) -> Option<String> {
    k.as_seq().and_then(|s| s.get(i)).and_then(|p| text(p))
}

/// A `str`.
pub(crate) fn s(v: &str) -> Arc<PyValue> {
    Arc::new(PyValue::Str(v.to_owned()))
}

/// A tuple.
pub(crate) fn tuple(items: Vec<Arc<PyValue>>) -> Arc<PyValue> {
    Arc::new(PyValue::Tuple(items))
}

/// A `(type, bytes)` serde pair.
pub(crate) fn typed(tag: &str, bytes: Vec<u8>) -> Arc<PyValue> {
    tuple(vec![s(tag), Arc::new(PyValue::Bytes(bytes))])
}

/// Set `items[key] = value` (replacing in place, or appended: a dict keeps insertion order).
pub(crate) fn set(items: &mut Items, key: Arc<PyValue>, value: Arc<PyValue>, want: &[&str]) {
    match items.iter_mut().find(|(k, _)| key_is(k, want)) {
        Some(entry) => entry.1 = value,
        None => items.push((key, value)),
    }
}

/// A container's entries, mutable (the container copied when it is shared).
pub(crate) fn items_mut(v: &mut Arc<PyValue>) -> Option<&mut Items> {
    match Arc::make_mut(v) {
        PyValue::Dict(items) | PyValue::DefaultDict { items, .. } => Some(items),
        _ => None,
    }
}

/// A new `defaultdict(dict)`, as `InMemorySaver.storage` makes per thread.
pub(crate) fn defaultdict_of_dict() -> PyValue {
    PyValue::DefaultDict {
        factory: Arc::new(PyValue::Global {
            module: "builtins".into(),
            name: "dict".into(),
        }),
        items: Vec::new(),
    }
}

/// A copy of a dict (or defaultdict) tree down to `depth` levels of containers, each a new
/// object, so no container is shared between two threads once Python reads the file (the
/// tuples and bytes inside stay shared: they are immutable).
pub(crate) fn fresh_containers(v: &Arc<PyValue>, depth: usize) -> Arc<PyValue> {
    let copy = |items: &Items| -> Items {
        items
            .iter()
            .map(|(k, v)| {
                let v = if depth > 1 {
                    fresh_containers(v, depth - 1)
                } else {
                    Arc::clone(v)
                };
                (Arc::clone(k), v)
            })
            .collect()
    };
    match &**v {
        PyValue::Dict(items) => Arc::new(PyValue::Dict(copy(items))),
        PyValue::DefaultDict { factory, items } => Arc::new(PyValue::DefaultDict {
            factory: Arc::clone(factory),
            items: copy(items),
        }),
        _ => Arc::clone(v),
    }
}
