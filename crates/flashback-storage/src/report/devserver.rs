//! The storage report of a `langgraph dev` state folder: its checkpoint pickles read in one
//! snapshot (`crate::devserver`), measured as the Postgres saver's tables are — the dev
//! server stores the same way:
//!
//! ```text
//! .langgraph_checkpoint.1.pckl  a checkpoint: its document (msgpack, no values since
//!                               langgraph-checkpoint 2.0.22) and its metadata → checkpoints
//! .langgraph_checkpoint.3.pckl  one value per (thread, ns, channel, version)  → blobs
//! .langgraph_checkpoint.2.pckl  the pending writes with their values          → writes
//! ```
//!
//! Every figure is the length of the stored byte strings (the `(type, bytes)` pairs' bytes),
//! summed here instead of by SQL; each thread then goes through the same pass (`pass.rs`) and
//! payload scanners (`payload.rs`) as the databases' rows. `space` lists the folder's files.

use super::pass::{node_of, Acc, BlobRow, CpRow, ThreadPass, Top};
use super::payload::{At, Payloads};
use super::sql::Layout;
use super::{doc, Gathered, Progress, Scope, CANCELLED};
use super::{ChannelUsage, FileSize, KeyedUsage, Space, StorageReport, Tally, Usage};
use super::{ValueKind, ValueSize};
use crate::devserver::files;
use crate::devserver::load::{Checkpoints, Saved, StoredWrite};
use crate::devserver::Snapshot;
use crate::model::SchemaInfo;
use crate::StoreError;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

const L: Layout = Layout::DevServer;

/// Measure the state folder at `location` (the project folder or `.langgraph_api/`).
pub(super) async fn measure(
    location: &str,
    schema: &SchemaInfo,
    scope: Scope,
    progress: Arc<dyn Progress>,
) -> Result<StorageReport, StoreError> {
    let dir = files::state_dir(Path::new(location)).ok_or_else(|| {
        StoreError::InvalidInput(format!(
            "{location} is not a langgraph dev project folder (no .langgraph_api folder)"
        ))
    })?;
    let description = schema.description.clone();
    tokio::task::spawn_blocking(move || {
        let snap = Snapshot::read(&dir)?;
        let mut report = run(snap.checkpoints(), &scope, progress.as_ref(), &description)?;
        for note in snap.notes().iter().filter(|n| n.contains("cannot be read")) {
            report.unmeasured.count += 1;
            report.unmeasured.examples.push(note.clone());
        }
        report.space = space(&dir);
        Ok(report)
    })
    .await
    .map_err(|e| StoreError::Query(format!("storage report task failed: {e}")))?
}

/// A stored pair's bytes (`0`: not a readable pair).
fn len<T>(typed: &Result<crate::devserver::load::Typed, T>) -> u64 {
    typed.as_ref().map_or(0, |t| t.bytes().len() as u64)
}

/// What one thread holds: its checkpoints by namespace, its value keys, its writes' keys.
#[derive(Default)]
struct Rows<'a> {
    blobs: Vec<&'a (String, String, String, String)>,
    writes: Vec<&'a (String, String, String)>,
}

/// The sums SQL would give: by thread, by namespace, by channel, by node, the largest writes,
/// the orphaned writes.
struct Sums {
    totals: Usage,
    by_thread: HashMap<String, Usage>,
    by_ns: HashMap<String, Usage>,
    channels: HashMap<String, ChannelUsage>,
    by_node: HashMap<String, Tally>,
    largest_writes: Top<ValueSize>,
    orphan_writes: Tally,
}

impl Sums {
    fn usage(&mut self, thread: &str, ns: &str, f: impl Fn(&mut Usage)) {
        f(&mut self.totals);
        f(self.by_thread.entry(thread.to_owned()).or_default());
        f(self.by_ns.entry(ns.to_owned()).or_default());
    }

    fn channel(&mut self, name: &str) -> &mut ChannelUsage {
        self.channels
            .entry(name.to_owned())
            .or_insert_with(|| ChannelUsage {
                channel: name.to_owned(),
                ..Default::default()
            })
    }

    fn checkpoint(&mut self, thread: &str, ns: &str, saved: &Saved) {
        let (doc, meta) = (len(&saved.checkpoint), len(&saved.metadata));
        self.usage(thread, ns, |u| {
            u.checkpoints.add(doc);
            u.metadata_bytes += meta;
        });
    }

    fn blob(&mut self, thread: &str, ns: &str, channel: &str, bytes: u64) {
        self.usage(thread, ns, |u| u.blobs.add(bytes));
        self.channel(channel).blobs.add(bytes);
    }

    fn write(&mut self, key: &(String, String, String), w: &StoredWrite, orphan: bool) {
        let (thread, ns, id) = key;
        let bytes = len(&w.value);
        self.usage(thread, ns, |u| u.writes.add(bytes));
        self.channel(&w.channel).writes.add(bytes);
        self.by_node
            .entry(node_of(&w.task_path))
            .or_default()
            .add(bytes);
        if orphan {
            self.orphan_writes.add(bytes);
        }
        self.largest_writes.push(ValueSize {
            kind: ValueKind::Write,
            thread_id: thread.clone(),
            checkpoint_ns: ns.clone(),
            checkpoint_id: Some(id.clone()),
            channel: w.channel.clone(),
            version: None,
            task_path: Some(w.task_path.clone()),
            bytes,
        });
    }
}

/// Largest first, then by key; at most `top`.
fn keyed(map: HashMap<String, Usage>, top: u32) -> Vec<KeyedUsage> {
    let mut v: Vec<KeyedUsage> = map
        .into_iter()
        .map(|(key, usage)| KeyedUsage {
            key,
            usage: usage.totalled(),
        })
        .collect();
    v.sort_by(|a, b| (b.usage.total_bytes, &a.key).cmp(&(a.usage.total_bytes, &b.key)));
    v.truncate(top as usize);
    v
}

fn run(
    data: &Checkpoints,
    scope: &Scope,
    progress: &dyn Progress,
    schema: &str,
) -> Result<StorageReport, StoreError> {
    let top = scope.top;
    let wanted = |t: &str| scope.thread_id.as_deref().is_none_or(|s| s == t);
    // Each thread's keys, in order (the files are hash maps; the report is stable).
    let mut rows: HashMap<&str, Rows<'_>> = HashMap::new();
    for key in data.blobs.keys().filter(|k| wanted(&k.0)) {
        rows.entry(&key.0).or_default().blobs.push(key);
    }
    for key in data.writes.keys().filter(|k| wanted(&k.0)) {
        rows.entry(&key.0).or_default().writes.push(key);
    }
    let threads: BTreeSet<&str> = data
        .threads
        .keys()
        .map(String::as_str)
        .filter(|t| wanted(t))
        .chain(rows.keys().copied())
        .collect();
    if let Some(t) = &scope.thread_id {
        if threads.is_empty() {
            return Err(StoreError::NotFound(format!(
                "no thread {t:?} in the database"
            )));
        }
    }

    let mut sums = Sums {
        totals: Usage::default(),
        by_thread: HashMap::new(),
        by_ns: HashMap::new(),
        channels: HashMap::new(),
        by_node: HashMap::new(),
        largest_writes: Top::new(top, |v: &ValueSize| v.bytes),
        orphan_writes: Tally::default(),
    };
    let mut acc = Acc::new(L, scope.thread_id.is_some(), top);
    let mut payloads = Payloads::new(top);
    let total = threads.len() as u64;
    for (done, t) in threads.iter().enumerate() {
        if progress.cancelled() {
            return Err(StoreError::Query(CANCELLED.into()));
        }
        progress.step(done as u64, total, &format!("thread {t}"));
        let mut mine = rows.remove(t).unwrap_or_default();
        mine.blobs.sort();
        mine.writes.sort();
        thread(data, t, &mine, &mut sums, &mut acc, &mut payloads);
    }
    progress.step(total, total, "done");

    let mut largest_writes = sums.largest_writes.into_vec();
    largest_writes.sort_by(|a, b| (b.bytes, &a.checkpoint_id).cmp(&(a.bytes, &b.checkpoint_id)));
    let gathered = Gathered {
        thread: scope.thread_id.clone(),
        totals: sums.totals.totalled(),
        thread_count: total,
        by_thread: keyed(sums.by_thread, top),
        by_namespace: keyed(sums.by_ns, top),
        channels: sums.channels,
        by_node: sums.by_node,
        largest_writes,
        orphan_writes: sums.orphan_writes,
        space: Space::default(),
    };
    Ok(gathered.assemble(acc, payloads, schema, L, top))
}

/// One thread: its sums, then the pass over its checkpoints (in `(ns, id)` order), then its
/// values through the payload scanners.
fn thread(
    data: &Checkpoints,
    t: &str,
    mine: &Rows<'_>,
    sums: &mut Sums,
    acc: &mut Acc,
    payloads: &mut Payloads,
) {
    let namespaces = data.threads.get(t);
    let mut blobs = Vec::with_capacity(mine.blobs.len());
    for key in &mine.blobs {
        let bytes = data.blobs[*key].bytes().len() as u64;
        sums.blob(t, &key.1, &key.2, bytes);
        blobs.push(BlobRow {
            ns_key: key.1.clone(),
            channel: key.2.clone(),
            version: key.3.clone(),
            bytes,
            base: None,
        });
    }
    let mut per_checkpoint = Vec::with_capacity(mine.writes.len());
    for key in &mine.writes {
        let held = namespaces
            .and_then(|n| n.get(&key.1))
            .is_some_and(|n| n.contains_key(&key.2));
        let mut tally = Tally::default();
        for w in &data.writes[*key] {
            sums.write(key, w, !held);
            tally.add(len(&w.value));
        }
        per_checkpoint.push((key.1.clone(), key.2.clone(), tally));
    }

    let mut pass = ThreadPass::new(acc, t, blobs, per_checkpoint);
    for (ns, checkpoints) in namespaces.into_iter().flatten() {
        for (id, saved) in checkpoints {
            sums.checkpoint(t, ns, saved);
            let mut row = CpRow {
                ns_key: ns.clone(),
                ns: ns.clone(),
                id: id.clone(),
                parent: saved.parent.clone(),
                doc_bytes: 0,
                meta_bytes: len(&saved.metadata),
                versions: Vec::new(),
                inline: Vec::new(),
                problem: None,
            };
            let measured = saved.checkpoint.clone().and_then(|typed| {
                doc::measure(
                    L,
                    &typed.tag,
                    typed.bytes(),
                    &mut row,
                    &mut |ns, id, c, tag, v| {
                        let at = At {
                            kind: ValueKind::Inline,
                            thread: t,
                            ns,
                            checkpoint: Some(id),
                            channel: c,
                            task_path: None,
                        };
                        payloads.value(&at, tag, v);
                    },
                )
            });
            row.problem = measured.err();
            pass.checkpoint(row);
        }
    }
    let placed = pass.finish();
    for key in &mine.blobs {
        let value = &data.blobs[*key];
        let first = (key.1.clone(), key.2.clone(), key.3.clone());
        let at = At {
            kind: ValueKind::Blob,
            thread: t,
            ns: &key.1,
            checkpoint: placed.first.get(&first).map(String::as_str),
            channel: &key.2,
            task_path: None,
        };
        payloads.value(&at, &value.tag, value.bytes());
    }
    for key in &mine.writes {
        for w in &data.writes[*key] {
            let Ok(value) = &w.value else { continue };
            let at = At {
                kind: ValueKind::Write,
                thread: t,
                ns: &key.1,
                checkpoint: Some(&key.2),
                channel: &w.channel,
                task_path: Some(&w.task_path),
            };
            payloads.value(&at, &value.tag, value.bytes());
        }
    }
}

/// The state folder's files and their sizes, by name.
fn space(dir: &Path) -> Space {
    let mut files: Vec<FileSize> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some(FileSize {
                file: e.file_name().to_string_lossy().into_owned(),
                bytes: meta.len(),
            })
        })
        .collect();
    files.sort_by(|a, b| a.file.cmp(&b.file));
    Space {
        files,
        ..Space::default()
    }
}
