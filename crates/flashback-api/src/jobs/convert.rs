//! `start_convert`: copy threads into another database in the other schema — LangGraph's
//! (SQLite or Postgres saver) or the three-table store — one transaction per thread on the
//! destination, through the public read and write operations
//! (`flashback_storage::maintenance::copy_thread_between`), with progress and cancel between
//! threads. A dry run reads every thread and says how many bytes its values take as LangGraph
//! stores them and as the three-table store would (method B computed, not guessed).

use super::registry::JobHandle;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{count, ConvertReport, ConvertRequest, ConvertTo, SkippedThread};
use flashback_codec::encode_typed;
use flashback_storage::model::{CheckpointTuple, ListQuery};
use flashback_storage::three::rows::{blob_rows, Materialised};
use flashback_storage::three::{Blobs, ThreeTableOptions};
use flashback_storage::{CheckpointStore, Serde, StoreError};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// What the job needs from the request and the session.
pub(crate) struct ConvertSpec {
    pub(crate) req: ConvertRequest,
    /// The destination, as the policy allowed it.
    pub(crate) target: String,
    /// `flashback serve`'s `--export-dir`, which a SQLite destination must stay inside.
    pub(crate) within: Option<std::path::PathBuf>,
}

/// Bytes of one thread's values: as LangGraph's SQLite saver stores them (every checkpoint's
/// values whole), per channel version (Postgres, three-table method A), and as method B
/// deltas.
#[derive(Default)]
struct Sizes {
    inline: u64,
    versions: u64,
    deltas: u64,
}

fn sizes(tuples: &[CheckpointTuple]) -> Sizes {
    let mut out = Sizes::default();
    // Oldest first, so that a parent's versions are known before its children's.
    let mut seen: HashMap<(String, String, String), Materialised> = HashMap::new();
    let mut versions_of: HashMap<(String, String), Vec<(String, String)>> = HashMap::new();
    for t in tuples.iter().rev() {
        let cp = &t.checkpoint;
        let ns = t.header.checkpoint_ns.clone();
        for (_, v) in &cp.channel_values {
            out.inline += Serde::python(None).stored_len(v) as u64;
        }
        let parent = t
            .header
            .parent_checkpoint_id
            .as_ref()
            .and_then(|p| versions_of.get(&(ns.clone(), p.clone())))
            .cloned()
            .unwrap_or_default();
        let known: HashSet<(String, String)> = seen
            .keys()
            .filter(|(n, ..)| *n == ns)
            .map(|(_, c, v)| (c.clone(), v.clone()))
            .collect();
        let mut exists = |c: &str, v: &str| Ok(known.contains(&(c.to_owned(), v.to_owned())));
        let mut base = |c: &str| {
            Ok(parent.iter().find(|(pc, _)| pc == c).and_then(|(_, v)| {
                seen.get(&(ns.clone(), c.to_owned(), v.clone()))
                    .map(|m| (v.clone(), m.clone()))
            }))
        };
        let Ok(rows) = blob_rows(cp, Blobs::Incremental, None, &mut exists, &mut base) else {
            continue; // a value that cannot be stored: the real run says which
        };
        for row in rows {
            out.deltas += row.data.as_ref().map_or(0, |d| d.len() as u64);
            let full = cp
                .value(&row.channel)
                .map(|v| encode_typed(v))
                .unwrap_or_default();
            out.versions += full.1.len() as u64;
            let depth = if row.base_version.is_some() {
                row.depth
            } else {
                0
            };
            seen.insert(
                (ns.clone(), row.channel.clone(), row.version.clone()),
                Materialised {
                    type_tag: full.0,
                    bytes: Arc::new(full.1),
                    depth,
                },
            );
        }
        let versions = cp
            .channel_versions
            .iter()
            .map(|(c, v)| (c.clone(), flashback_storage::three::rows::version_text(v)))
            .collect();
        versions_of.insert((ns, cp.id.clone()), versions);
    }
    out
}

pub(crate) async fn convert_job(
    store: Arc<dyn CheckpointStore>,
    spec: ConvertSpec,
    job: &JobHandle,
) -> ApiResult<ConvertReport> {
    let req = &spec.req;
    let threads: Vec<String> = if req.threads.is_empty() {
        store
            .list_threads()
            .await?
            .into_iter()
            .map(|t| t.thread_id)
            .collect()
    } else {
        // Each one named is there before anything is created.
        for thread in &req.threads {
            crate::summaries::ensure_thread(store.as_ref(), thread).await?;
        }
        req.threads.clone()
    };
    let three = match req.to {
        ConvertTo::ThreeTable => Some(ThreeTableOptions {
            blobs: if req.whole_blobs {
                Blobs::Whole
            } else {
                Blobs::Incremental
            },
        }),
        ConvertTo::Langgraph => None,
    };
    // A SQLite file this job creates, removed again if nothing ends up in it.
    let mut created: Option<std::path::PathBuf> = None;
    let create = flashback_storage::Create {
        create: true,
        three,
    };
    let saver = if req.dry_run {
        None
    } else {
        let saver = if flashback_storage::is_postgres_url(&spec.target) {
            flashback_storage::open(&spec.target, create).await?
        } else {
            // Checked again right before SQLite opens it: a regular file, or a new one of ours.
            let (path, new) =
                crate::outfile::prepare_database(Path::new(&spec.target), spec.within.as_deref())?;
            created = new.then(|| path.clone());
            let opened = flashback_storage::open(&path.to_string_lossy(), create).await;
            if opened.is_err() {
                remove_created(created.as_deref());
            }
            opened?
        };
        let is_three = saver.schema().layout().is_three_table();
        if is_three != (req.to == ConvertTo::ThreeTable) {
            return Err(ApiError::invalid(format!(
                "{} already holds {}: convert into an empty database or one in the schema \
                 asked for",
                spec.target,
                saver.schema().description
            )));
        }
        Some(saver)
    };
    let mut report = ConvertReport {
        threads: 0,
        checkpoints: 0,
        writes: 0,
        value_bytes: 0.0,
        three_table_bytes: (req.to == ConvertTo::ThreeTable).then_some(0.0),
        dry_run: req.dry_run,
        skipped: Vec::new(),
    };
    let (mut checkpoints, mut writes, mut inline, mut deltas) = (0usize, 0usize, 0u64, 0u64);
    for (i, thread) in threads.iter().enumerate() {
        if job.is_cancelled() {
            return Err(ApiError::new(
                ErrorCode::Cancelled,
                format!(
                    "stopped after {i} of {} threads; each thread converted so far is complete",
                    threads.len()
                ),
            ));
        }
        job.progress(i, threads.len(), &format!("thread {thread}"));
        let tuples = store.list_tuples(&ListQuery::thread(thread)).await?;
        if tuples.is_empty() {
            return Err(ApiError::not_found(format!(
                "no thread {thread:?} in the source"
            )));
        }
        // A thread that cannot be converted as stored is left out (said why); the rest go.
        if let Err(StoreError::InvalidInput(reason) | StoreError::Sealed(reason)) =
            flashback_storage::maintenance::check_copyable(thread, &tuples)
        {
            report.skipped.push(SkippedThread {
                thread_id: thread.clone(),
                reason,
            });
            continue;
        }
        let (n, w, s) = (
            tuples.len(),
            tuples.iter().map(|t| t.pending_writes.len()).sum::<usize>(),
            sizes(&tuples),
        );
        drop(tuples);
        if let Some(saver) = &saver {
            let copied = flashback_storage::maintenance::copy_thread_between(
                store.as_ref(),
                saver.as_ref(),
                thread,
                thread,
            )
            .await;
            match copied {
                Ok(_) => {}
                Err(StoreError::InvalidInput(reason) | StoreError::Sealed(reason)) => {
                    report.skipped.push(SkippedThread {
                        thread_id: thread.clone(),
                        reason,
                    });
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        }
        checkpoints += n;
        writes += w;
        inline += s.inline;
        deltas += if req.whole_blobs {
            s.versions
        } else {
            s.deltas
        };
        report.threads += 1;
    }
    job.progress(threads.len(), threads.len(), "done");
    if report.threads == 0 && !report.skipped.is_empty() {
        drop(saver);
        remove_created(created.as_deref());
        return Err(nothing_converted(&report.skipped, req.dry_run));
    }
    report.checkpoints = count(checkpoints);
    report.writes = count(writes);
    report.value_bytes = inline as f64;
    if let Some(b) = report.three_table_bytes.as_mut() {
        *b = deltas as f64;
    }
    Ok(report)
}

/// Remove the SQLite file a conversion created (and what SQLite kept beside it).
fn remove_created(path: Option<&Path>) {
    let Some(path) = path else { return };
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// A conversion that left out every thread converted nothing: a failure, which says why.
fn nothing_converted(skipped: &[SkippedThread], dry_run: bool) -> ApiError {
    let first = &skipped[0];
    let others = match skipped.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    ApiError::new(
        ErrorCode::Corrupt,
        format!(
            "{} nothing: every thread was left out — {}{others}",
            if dry_run {
                "would convert"
            } else {
                "converted"
            },
            // The reason names its thread.
            first.reason
        ),
    )
}
