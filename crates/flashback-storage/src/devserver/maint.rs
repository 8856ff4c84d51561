//! [`SaverMaintenance`] for [`DevServerSaver`]: `copy_thread`, `delete_branch`,
//! `delete_for_runs` and `prune` planned by the backend-neutral [`crate::maintenance::plan`]
//! from the files read for the action, then applied to the parsed trees ([`super::edit`]).
//! The server's thread list (`.langgraph_ops.pckl`) is not changed: a copied thread is in the
//! checkpoint files (Flashback and `InMemorySaver` list it), not in Studio's thread list.

use super::edit::{self, key_is, key_part, s, tuple, Roots};
use super::load::{self, Checkpoints};
use super::read::{document, metadata, Found};
use super::write::{remove_thread, DevServerSaver};
use crate::maintenance::plan::{
    check_guards, copy_args, metadata_fields, not_empty, plan, CpRow, Job, Plan, Snapshot,
};
use crate::maintenance::{
    CopyReport, Guarded, Mark, PruneReport, PruneRun, PruneStrategy, SaverMaintenance,
    VacuumPreview, VacuumReport, TASKS,
};
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::pickle::PyValue;
use flashback_codec::AesKey;
use std::collections::HashMap;
use std::sync::Arc;

/// The model of the files as read for an action.
fn model(roots: &Roots) -> Result<Checkpoints, StoreError> {
    let root = |items: &edit::Items| PyValue::Dict(items.clone());
    load::checkpoints(
        Some(&root(&roots.storage.items)),
        Some(&root(&roots.writes.items)),
        Some(&root(&roots.blobs.items)),
    )
    .map_err(StoreError::InvalidInput)
}

/// What planning needs of `threads`' checkpoints, writes and blobs.
fn plan_snapshot(data: &Checkpoints, threads: &[String], key: Option<Arc<AesKey>>) -> Snapshot {
    let dec = crate::decode::Decoding {
        key,
        ..Default::default()
    };
    let mut cache = dec.cache();
    let mut snap = Snapshot::default();
    for thread in threads {
        let Some(namespaces) = data.threads.get(thread) else {
            continue;
        };
        for (ns, checkpoints) in namespaces {
            for (id, saved) in checkpoints {
                let found = Found {
                    thread_id: thread,
                    ns,
                    id,
                    saved,
                };
                let mut row = CpRow::keys(thread, ns.clone(), id.clone(), saved.parent.clone());
                (row.root, row.run_id) = metadata_fields(&metadata(saved, &mut cache));
                if let Ok(Some(cp)) = document(&found, &mut cache) {
                    row.v = Some(cp.v);
                    row.versions = cp
                        .channel_versions
                        .iter()
                        .map(|(c, v)| (c.clone(), v.as_text()))
                        .collect();
                }
                snap.rows.push(row);
            }
        }
    }
    for ((t, ns, id), writes) in &data.writes {
        if threads.contains(t) {
            let sends = writes.iter().any(|w| w.channel == TASKS);
            let key = (t.clone(), ns.clone(), id.clone());
            snap.writes.insert(key, (writes.len() as u64, sends));
        }
    }
    for key in data.blobs.keys() {
        if threads.contains(&key.0) {
            snap.blobs.insert(key.clone());
        }
    }
    snap
}

/// Carry out `plan` on the trees.
fn apply(roots: &mut Roots, plan: &Plan) {
    for t in &plan.threads {
        remove_thread(roots, t);
    }
    let in_ns = |k: &PyValue, t: &str, ns: &str| {
        key_part(k, 0).as_deref() == Some(t) && key_part(k, 1).as_deref() == Some(ns)
    };
    for (t, ns) in &plan.namespaces {
        if let Some(namespaces) = thread_mut(roots, t) {
            namespaces.retain(|(k, _)| !key_is(k, &[ns]));
        }
        roots.writes.items.retain(|(k, _)| !in_ns(k, t, ns));
        roots.blobs.items.retain(|(k, _)| !in_ns(k, t, ns));
    }
    for (t, ns, id) in &plan.checkpoints {
        if let Some(checkpoints) = namespace_mut(roots, t, ns) {
            checkpoints.retain(|(k, _)| !key_is(k, &[id]));
        }
        roots.writes.items.retain(|(k, _)| !key_is(k, &[t, ns, id]));
    }
    for (t, ns, id) in &plan.parents {
        if let Some(checkpoints) = namespace_mut(roots, t, ns) {
            for (k, entry) in checkpoints.iter_mut() {
                if key_is(k, &[id]) {
                    if let Some(parts) = entry.as_seq() {
                        let mut parts = parts.to_vec();
                        if parts.len() >= 3 {
                            parts[2] = Arc::new(PyValue::None);
                        }
                        *entry = tuple(parts);
                    }
                }
            }
        }
    }
    for (t, ns, channel, version) in &plan.blobs {
        roots
            .blobs
            .items
            .retain(|(k, _)| !key_is(k, &[t, ns, channel, version]));
    }
    roots.storage.changed = true;
    roots.writes.changed = true;
    roots.blobs.changed = true;
}

fn thread_mut<'a>(roots: &'a mut Roots, t: &str) -> Option<&'a mut edit::Items> {
    let (_, v) = roots
        .storage
        .items
        .iter_mut()
        .find(|(k, _)| key_is(k, &[t]))?;
    edit::items_mut(v)
}

fn namespace_mut<'a>(roots: &'a mut Roots, t: &str, ns: &str) -> Option<&'a mut edit::Items> {
    let (_, v) = thread_mut(roots, t)?
        .iter_mut()
        .find(|(k, _)| key_is(k, &[ns]))?;
    edit::items_mut(v)
}

/// A key tuple with its thread replaced.
fn retarget(k: &PyValue, target: &str) -> Arc<PyValue> {
    let mut parts = k.as_seq().unwrap_or_default().to_vec();
    if let Some(first) = parts.first_mut() {
        *first = s(target);
    }
    tuple(parts)
}

fn copy(roots: &mut Roots, source: &str, target: &str) -> Result<CopyReport, StoreError> {
    let busy = roots
        .storage
        .items
        .iter()
        .any(|(k, _)| key_is(k, &[target]))
        || roots
            .writes
            .items
            .iter()
            .chain(&roots.blobs.items)
            .any(|(k, _)| key_part(k, 0).as_deref() == Some(target));
    if busy {
        return Err(not_empty(target));
    }
    let mut report = CopyReport::default();
    let thread = roots
        .storage
        .items
        .iter()
        .find(|(k, _)| key_is(k, &[source]))
        .map(|(_, v)| edit::fresh_containers(v, 2));
    if let Some(thread) = thread {
        report.checkpoints = thread
            .as_items()
            .unwrap_or_default()
            .iter()
            .map(|(_, ns)| ns.as_items().map_or(0, |c| c.len() as u64))
            .sum();
        roots.storage.items.push((s(target), thread));
        roots.storage.changed = true;
    }
    let of_source = |k: &PyValue| key_part(k, 0).as_deref() == Some(source);
    let writes: edit::Items = roots
        .writes
        .items
        .iter()
        .filter(|(k, _)| of_source(k))
        .map(|(k, v)| (retarget(k, target), edit::fresh_containers(v, 1)))
        .collect();
    report.writes = writes
        .iter()
        .map(|(_, v)| v.as_items().map_or(0, |w| w.len() as u64))
        .sum();
    roots.writes.changed |= !writes.is_empty();
    roots.writes.items.extend(writes);
    let blobs: edit::Items = roots
        .blobs
        .items
        .iter()
        .filter(|(k, _)| of_source(k))
        .map(|(k, v)| (retarget(k, target), Arc::clone(v)))
        .collect();
    report.blobs = blobs.len() as u64;
    roots.blobs.changed |= !blobs.is_empty();
    roots.blobs.items.extend(blobs);
    Ok(report)
}

/// The folder's bytes (the files a VACUUM would concern).
fn folder_bytes(saver: &DevServerSaver) -> u64 {
    std::fs::read_dir(&saver.dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[async_trait]
impl SaverMaintenance for DevServerSaver {
    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        copy_args(source, target)?;
        let (source, target) = (source.to_owned(), target.to_owned());
        self.edit(move |roots| copy(roots, &source, &target)).await
    }

    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError> {
        let key = self.key.clone();
        self.edit(move |roots| {
            let data = model(roots)?;
            let threads = job
                .threads()
                .unwrap_or_else(|| data.threads.keys().cloned().collect());
            let snap = plan_snapshot(&data, &threads, key);
            let plan = plan(&snap, &threads, &job.select());
            if let Some(report) = job.stale(&plan, dry_run) {
                return Ok(report);
            }
            if !dry_run && !plan.is_empty() {
                apply(roots, &plan);
            }
            Ok(PruneReport {
                dry_run,
                ..plan.report
            })
        })
        .await
    }

    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError> {
        let _ = (check_guards(threads), strategy, keep_last, dry_run);
        Err(StoreError::InvalidInput(
            "a measured prune (`flashback prune`) is not done on a langgraph dev folder; \
             delete threads or branches one at a time, or convert it to SQLite first"
                .into(),
        ))
    }

    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<HashMap<String, Mark>, StoreError> {
        let ids = thread_ids.to_vec();
        self.edit(move |roots| {
            let data = model(roots)?;
            Ok(ids
                .into_iter()
                .map(|t| {
                    let mark = Mark {
                        checkpoints: data
                            .threads
                            .get(&t)
                            .map_or(0, |ns| ns.values().map(|c| c.len() as i64).sum()),
                        newest: data
                            .threads
                            .get(&t)
                            .and_then(|ns| ns.values().filter_map(|c| c.keys().next_back()).max())
                            .cloned()
                            .unwrap_or_default(),
                        writes: data
                            .writes
                            .iter()
                            .filter(|(k, _)| k.0 == t)
                            .map(|(_, w)| w.len() as i64)
                            .sum(),
                        version: (0, 0),
                    };
                    (t, mark)
                })
                .collect())
        })
        .await
    }

    async fn vacuum(&self, force: bool) -> Result<VacuumReport, StoreError> {
        // The files are rewritten whole by every change: there is no free space to give back.
        let _ = force;
        let bytes = folder_bytes(self);
        Ok(VacuumReport {
            bytes_before: bytes,
            bytes_after: bytes,
        })
    }

    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError> {
        Ok(VacuumPreview {
            bytes: folder_bytes(self),
            blocks_writers: false,
            seconds: 0,
            open_elsewhere: None,
        })
    }
}
