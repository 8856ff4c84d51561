//! The value search job: the threads' latest root checkpoints, newest thread first, searched
//! for a text by the engine (`flashback_engine::search`), one event per matching thread.
//!
//! Memory stays bounded: the threads' keys are listed once, then their latest checkpoints are
//! read [`BATCH`] at a time with `get_tuples` (through the session's decode budget: a value
//! over it is not searched) and searched on a blocking thread. DeltaChannels are rebuilt as
//! the state view shows them (`delta::materialize`: no query for a checkpoint without one; a
//! few for one with one; should the rebuild fail, the stored values are searched). Values
//! locked for want of the key are not searched (`threads_locked` counts the threads); a thread
//! whose latest checkpoint cannot be read is skipped (`threads_unreadable`). A cancel is
//! honoured between batches.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::jobs::registry::JobHandle;
use crate::types::{count, JobEvent, ValueSearchSummary};
use flashback_engine::delta::{self, DeltaOptions};
use flashback_engine::search::{search_checkpoint, Found, Needle, MAX_MATCHES};
use flashback_storage::{CheckpointStore, CheckpointTuple, StoreError, ThreadInfo};
use std::collections::HashSet;
use std::sync::Arc;

/// Matching threads reported by default.
pub(crate) const DEFAULT_LIMIT: u32 = 200;

/// Latest checkpoints read and searched per batch.
const BATCH: usize = 200;

/// What to search.
pub(super) struct SearchSpec {
    pub needle: Needle,
    pub limit: usize,
    pub threads: Option<Vec<String>>,
    pub delta: DeltaOptions,
}

/// One thread's outcome.
enum Outcome {
    Unreadable,
    Searched {
        checkpoint_id: String,
        locked: bool,
        found: Found,
    },
}

/// The threads to search, newest first (by their latest root checkpoint id, then id).
async fn threads_to_search(
    store: &dyn CheckpointStore,
    only: Option<&[String]>,
) -> ApiResult<Vec<ThreadInfo>> {
    let only: Option<HashSet<&str>> = only.map(|t| t.iter().map(String::as_str).collect());
    let mut threads: Vec<ThreadInfo> = store
        .list_threads()
        .await?
        .into_iter()
        .filter(|t| t.latest_checkpoint_id.is_some())
        .filter(|t| {
            only.as_ref()
                .is_none_or(|o| o.contains(t.thread_id.as_str()))
        })
        .collect();
    threads.sort_by(|a, b| {
        (&b.latest_checkpoint_id, &a.thread_id).cmp(&(&a.latest_checkpoint_id, &b.thread_id))
    });
    Ok(threads)
}

/// The latest checkpoints of a batch in one go; should that fail on the data, one by one, so
/// that a failure stays with its thread. Failures of the database itself end the search.
async fn read_batch(
    store: &dyn CheckpointStore,
    batch: &[ThreadInfo],
) -> ApiResult<Vec<Result<Option<CheckpointTuple>, StoreError>>> {
    let keys: Vec<(&str, &str, Option<&str>)> = batch
        .iter()
        .map(|t| (t.thread_id.as_str(), "", t.latest_checkpoint_id.as_deref()))
        .collect();
    let local = |e: &StoreError| matches!(e, StoreError::Query(_) | StoreError::Corrupt { .. });
    match store.get_tuples(&keys).await {
        Ok(all) => Ok(all.into_iter().map(Ok).collect()),
        Err(e) if local(&e) => {
            let mut out = Vec::with_capacity(keys.len());
            for (thread_id, ns, id) in keys {
                match store.get_tuple(thread_id, ns, id).await {
                    Err(e) if !local(&e) => return Err(e.into()),
                    other => out.push(other),
                }
            }
            Ok(out)
        }
        Err(e) => Err(e.into()),
    }
}

/// Search a batch: DeltaChannels rebuilt first (queries), then the values searched on a
/// blocking thread.
async fn search_batch(
    store: &dyn CheckpointStore,
    read: Vec<Result<Option<CheckpointTuple>, StoreError>>,
    spec: &SearchSpec,
) -> ApiResult<Vec<Outcome>> {
    let mut tuples = Vec::with_capacity(read.len());
    for r in read {
        let mut tuple = match r {
            Ok(Some(t))
                if t.header.problem.is_none() || !t.checkpoint.channel_values.is_empty() =>
            {
                t
            }
            _ => {
                tuples.push(None);
                continue;
            }
        };
        if !tuple.sealing.locked && !delta::signals(&tuple).is_empty() {
            // A rebuild that fails leaves the stored values in place.
            let _ = delta::materialize(store, &mut tuple, &spec.delta).await;
        }
        tuples.push(Some(tuple));
    }
    let needle = spec.needle.clone();
    tokio::task::spawn_blocking(move || {
        tuples
            .into_iter()
            .map(|t| match t {
                None => Outcome::Unreadable,
                Some(t) => Outcome::Searched {
                    found: search_checkpoint(&t, &needle, MAX_MATCHES),
                    locked: t.sealing.locked,
                    checkpoint_id: t.header.checkpoint_id,
                },
            })
            .collect()
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the search failed: {e}")))
}

pub(super) async fn search_job(
    store: Arc<dyn CheckpointStore>,
    spec: SearchSpec,
    job: &JobHandle,
) -> ApiResult<ValueSearchSummary> {
    job.progress(0, 0, "listing threads");
    let threads = threads_to_search(store.as_ref(), spec.threads.as_deref()).await?;
    let total = threads.len();
    let mut summary = ValueSearchSummary {
        threads_total: count(total),
        threads_searched: 0,
        threads_matched: 0,
        truncated: false,
        threads_locked: 0,
        threads_unreadable: 0,
    };
    let (mut searched, mut matched) = (0usize, 0usize);
    job.progress(0, total, "searching values");
    'batches: for batch in threads.chunks(BATCH) {
        if job.is_cancelled() {
            return Err(ApiError::new(
                ErrorCode::Cancelled,
                format!("the search was stopped after {searched} of {total} threads"),
            ));
        }
        let read = read_batch(store.as_ref(), batch).await?;
        let outcomes = search_batch(store.as_ref(), read, &spec).await?;
        for (t, outcome) in batch.iter().zip(outcomes) {
            searched += 1;
            match outcome {
                Outcome::Unreadable => summary.threads_unreadable += 1,
                Outcome::Searched {
                    checkpoint_id,
                    locked,
                    found,
                } => {
                    summary.threads_locked += u32::from(locked);
                    if !found.hits.is_empty() {
                        matched += 1;
                        job.event(JobEvent::SearchHit {
                            thread_id: t.thread_id.clone(),
                            checkpoint_id,
                            matches: found.hits,
                            more: found.more,
                        });
                    }
                }
            }
            if matched >= spec.limit {
                summary.truncated = searched < total;
                job.progress(searched, total, "searching values");
                break 'batches;
            }
        }
        job.progress(searched, total, "searching values");
    }
    summary.threads_searched = count(searched);
    summary.threads_matched = count(matched);
    Ok(summary)
}
