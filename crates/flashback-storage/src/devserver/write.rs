//! [`DevServerSaver`]: the dev server's folder written as `InMemorySaver` writes its
//! structures (`put`, `put_writes`, `delete_thread`), through [`super::edit`] (refused while a
//! server runs on the folder; each changed file replaced as `PersistentDict.sync` does, the
//! previous one kept as `<file>.flashback-bak`). Reads go through the read-only store.

use super::edit::{self, key_is, key_part, s, set, tuple, typed, Roots};
use super::DevServerStore;
use crate::model::Version;
use crate::saver::{checkpoint_document, write_idx, CheckpointSaver, PutRequest, WriteBatch};
use crate::serializer::Serde;
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::pickle::PyValue;
use flashback_codec::{msgpack, AesKey, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The dev server's folder, writable by explicit actions while no server runs on it.
pub struct DevServerSaver {
    pub(super) store: DevServerStore,
    pub(super) dir: PathBuf,
    pub(super) key: Option<Arc<AesKey>>,
    /// One action at a time (each reads, changes and writes the files whole).
    lock: Arc<Mutex<()>>,
}

impl DevServerSaver {
    /// The saver over a store opened on the state folder.
    pub fn new(store: DevServerStore) -> DevServerSaver {
        DevServerSaver {
            dir: store.dir().to_path_buf(),
            store,
            key: None,
            lock: Arc::new(Mutex::new(())),
        }
    }

    /// Reads decrypt `+aes` values with `key`, and every value written is sealed with it.
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.store = self.store.with_key(key.clone());
        self.key = key;
        self
    }

    pub(super) fn serde(&self) -> Serde<'_> {
        Serde::python(self.key.as_deref())
    }

    /// Read the files, let `f` change them, write the changed ones: one action, off the
    /// async threads, one at a time.
    pub(super) async fn edit<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Roots) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (dir, lock) = (self.dir.clone(), Arc::clone(&self.lock));
        tokio::task::spawn_blocking(move || {
            let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
            let mut roots = Roots::read(&dir)?;
            let out = f(&mut roots)?;
            roots.save()?;
            Ok(out)
        })
        .await
        .map_err(|e| StoreError::Query(format!("write task failed: {e}")))?
    }
}

crate::generic::forward_reads!(DevServerSaver, store);

/// A channel version as Python keeps it in a blob key.
pub(super) fn version_value(v: &Version) -> Arc<PyValue> {
    Arc::new(match v {
        Version::Int(i) => PyValue::Int(*i),
        Version::Float(f) => PyValue::Float(*f),
        Version::Str(t) => PyValue::Str(t.clone()),
    })
}

/// A `put`, encoded: the storage entry and the blobs of its new versions.
struct EncodedPut {
    thread: String,
    ns: String,
    id: String,
    entry: Arc<PyValue>,
    blobs: Vec<(Arc<PyValue>, Arc<PyValue>)>,
}

/// `InMemorySaver.put`: the document without `channel_values` and the metadata through the
/// serde (`dumps_typed`, sealed), one blob per channel of `new_versions` (`("empty", b"")`
/// when the checkpoint has no value for it).
fn encode_put(req: &PutRequest<'_>, serde: Serde<'_>) -> Result<EncodedPut, StoreError> {
    let doc = match checkpoint_document(req.checkpoint)? {
        Value::Map(entries) => Value::Map(
            entries
                .into_iter()
                .filter(|(k, _)| !matches!(k, Value::Str(s) if s == "channel_values"))
                .collect(),
        ),
        other => other,
    };
    let (doc_tag, doc) = serde.seal("msgpack".into(), msgpack::encode(&doc));
    let metadata = serde_json::Value::Object(req.metadata.clone());
    let metadata = flashback_codec::unview::from_view(&metadata, None)
        .map_err(|e| StoreError::InvalidInput(format!("the checkpoint's metadata: {e}")))?;
    let (meta_tag, meta) = serde.seal("msgpack".into(), msgpack::encode(&metadata));
    let parent = match req.parent_checkpoint_id {
        Some(p) => s(p),
        None => Arc::new(PyValue::None),
    };
    let cp = req.checkpoint;
    let mut blobs = Vec::new();
    for (channel, version) in req.new_versions {
        let value = match cp.channel_values.iter().find(|(c, _)| c == channel) {
            Some((_, v)) => {
                let (tag, bytes) = serde.dumps_typed(channel, v)?;
                typed(&tag, bytes)
            }
            None => typed("empty", Vec::new()),
        };
        let key = tuple(vec![
            s(req.thread_id),
            s(req.checkpoint_ns),
            s(channel),
            version_value(version),
        ]);
        blobs.push((key, value));
    }
    Ok(EncodedPut {
        thread: req.thread_id.to_owned(),
        ns: req.checkpoint_ns.to_owned(),
        id: cp.id.clone(),
        entry: tuple(vec![typed(&doc_tag, doc), typed(&meta_tag, meta), parent]),
        blobs,
    })
}

fn apply_put(roots: &mut Roots, put: EncodedPut) -> Result<(), StoreError> {
    for (key, value) in put.blobs {
        let want: Vec<String> = key
            .as_seq()
            .unwrap_or_default()
            .iter()
            .map(|p| super::load::version_text(p).unwrap_or_default())
            .collect();
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        set(&mut roots.blobs.items, key, value, &want);
    }
    roots.blobs.changed = true;

    let storage = &mut roots.storage.items;
    // A new thread gets the container the file's other threads have (`defaultdict(dict)`).
    let like = storage.iter().find_map(|(_, v)| match &**v {
        PyValue::DefaultDict { factory, .. } => Some(Arc::clone(factory)),
        _ => None,
    });
    let thread = edit::entry_or_insert(
        storage,
        |k| key_is(k, &[&put.thread]),
        || {
            let container = match like {
                Some(factory) => PyValue::DefaultDict {
                    factory,
                    items: Vec::new(),
                },
                None => edit::defaultdict_of_dict(),
            };
            (s(&put.thread), Arc::new(container))
        },
    );
    let namespaces = edit::items_mut(thread).ok_or_else(|| not_a_dict(&put.thread))?;
    let ns = edit::entry_or_insert(
        namespaces,
        |k| key_is(k, &[&put.ns]),
        || (s(&put.ns), Arc::new(PyValue::Dict(Vec::new()))),
    );
    let checkpoints = edit::items_mut(ns).ok_or_else(|| not_a_dict(&put.thread))?;
    set(checkpoints, s(&put.id), put.entry, &[&put.id]);
    roots.storage.changed = true;
    Ok(())
}

fn not_a_dict(thread: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "thread {thread:?} of the checkpoint file is not the dict InMemorySaver keeps; \
         nothing was written"
    ))
}

/// A `put_writes` call, encoded: the writes key and `(idx, entry)` per write.
struct EncodedWrites {
    key: [String; 3],
    task_id: String,
    rows: Vec<(i64, Arc<PyValue>)>,
}

fn encode_writes(w: &WriteBatch<'_>, serde: Serde<'_>) -> Result<EncodedWrites, StoreError> {
    let rows = w
        .writes
        .iter()
        .enumerate()
        .map(|(i, (channel, value))| {
            let (tag, bytes) = serde.dumps_typed(channel, value)?;
            let entry = tuple(vec![
                s(w.task_id),
                s(channel),
                typed(&tag, bytes),
                s(w.task_path),
            ]);
            Ok((write_idx(channel, i), entry))
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(EncodedWrites {
        key: [w.thread_id, w.checkpoint_ns, w.checkpoint_id].map(str::to_owned),
        task_id: w.task_id.to_owned(),
        rows,
    })
}

/// `InMemorySaver.put_writes`: `writes[(thread, ns, id)][(task_id, idx)]`, the first writer
/// kept for regular channels (idx ≥ 0), special channels (`WRITES_IDX_MAP`) replaced.
fn apply_writes(roots: &mut Roots, w: EncodedWrites) -> Result<(), StoreError> {
    let want = [w.key[0].as_str(), w.key[1].as_str(), w.key[2].as_str()];
    let per_task = edit::entry_or_insert(
        &mut roots.writes.items,
        |k| key_is(k, &want),
        || {
            let key = tuple(w.key.iter().map(|p| s(p)).collect());
            (key, Arc::new(PyValue::Dict(Vec::new())))
        },
    );
    let per_task = edit::items_mut(per_task).ok_or_else(|| not_a_dict(&w.key[0]))?;
    for (idx, entry) in w.rows {
        let pos = per_task.iter().position(|(k, _)| {
            k.as_seq().is_some_and(|p| {
                p.len() == 2
                    && super::load::text(&p[0]).as_deref() == Some(w.task_id.as_str())
                    && p[1].as_int() == Some(idx)
            })
        });
        match pos {
            Some(_) if idx >= 0 => {}
            Some(i) => per_task[i].1 = entry,
            None => per_task.push((
                tuple(vec![s(&w.task_id), Arc::new(PyValue::Int(idx))]),
                entry,
            )),
        }
    }
    roots.writes.changed = true;
    Ok(())
}

/// Remove a thread's every entry (`InMemorySaver.delete_thread`); whether it had any.
pub(super) fn remove_thread(roots: &mut Roots, thread: &str) -> bool {
    let before = (
        roots.storage.items.len(),
        roots.writes.items.len(),
        roots.blobs.items.len(),
    );
    roots.storage.items.retain(|(k, _)| !key_is(k, &[thread]));
    let other = |k: &PyValue| key_part(k, 0).as_deref() != Some(thread);
    roots.writes.items.retain(|(k, _)| other(k));
    roots.blobs.items.retain(|(k, _)| other(k));
    if let Some(ops) = &mut roots.ops {
        super::edit::remove_from_ops(ops, thread);
    }
    roots.storage.changed |= roots.storage.items.len() != before.0;
    roots.writes.changed |= roots.writes.items.len() != before.1;
    roots.blobs.changed |= roots.blobs.items.len() != before.2;
    roots.storage.changed || roots.writes.changed || roots.blobs.changed
}

#[async_trait]
impl CheckpointSaver for DevServerSaver {
    async fn setup(&self) -> Result<(), StoreError> {
        // The folder and its files exist (the server made them): nothing to set up.
        Ok(())
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        let serde = self.serde();
        let puts: Vec<EncodedPut> = puts
            .iter()
            .map(|p| encode_put(p, serde))
            .collect::<Result<_, _>>()?;
        let writes: Vec<EncodedWrites> = writes
            .iter()
            .map(|w| encode_writes(w, serde))
            .collect::<Result<_, _>>()?;
        self.edit(move |roots| {
            for put in puts {
                apply_put(roots, put)?;
            }
            for w in writes {
                apply_writes(roots, w)?;
            }
            Ok(())
        })
        .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        let thread = thread_id.to_owned();
        self.edit(move |roots| {
            remove_thread(roots, &thread);
            Ok(())
        })
        .await
    }
}
