//! Reads: threads, history, the graph, one checkpoint, diff, replay, rebuild, the merge
//! preview and verifying an export. Nothing here writes.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::summaries::{ensure_namespace, ensure_thread, thread_checked, thread_summaries};
use crate::types::{
    CheckpointDetail, CheckpointRequest, DiffRequest, GraphRequest, HistoryEntry, HistoryRequest,
    MergePreviewRequest, RebuildRequest, ReplayRequest, ThreadActivity, ThreadActivityRequest,
    ThreadGraph, ThreadSummary, ThreadsRequest, VerifyRequest,
};
use crate::{Api, ChannelRebuild, CheckpointDiff, ReplayStep, ThreeWay, VerifyReport};
use flashback_codec::ViewOptions;
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery};
use std::io::Read;
use std::path::Path;

impl Api {
    /// Every thread with its status; with a filter, a time range, a status or a cursor, one
    /// page of the threads found ([`ThreadsRequest::finds`]).
    pub async fn list_threads(&self, req: ThreadsRequest) -> ApiResult<Vec<ThreadSummary>> {
        let s = self.session(&req.db)?;
        if req.finds() {
            return crate::find::find_summaries(s.store.as_ref(), &req).await;
        }
        thread_summaries(s.store.as_ref(), req.limit).await
    }

    /// The metadata keys of the newest checkpoints, with their common values: what a thread
    /// filter can match (sampled: the newest checkpoints of the most recently active threads).
    pub async fn metadata_keys(
        &self,
        req: crate::types::MetadataKeysRequest,
    ) -> ApiResult<Vec<crate::types::MetadataKey>> {
        let s = self.session(&req.db)?;
        crate::find::metadata_keys(s.store.as_ref()).await
    }

    /// What each thread's whole history says beyond its latest checkpoint: the tasks that
    /// raised and then recovered on a retry. One indexed read of each thread's write keys
    /// (no value decoded), for the rows of a list in view. A thread that cannot be read
    /// carries its problem; the others are answered. A thread that does not exist (deleted
    /// since the list was read, say) is marked `missing`, so a list stays answerable; the
    /// CLI's `activity`, which names threads, says not found for it.
    pub async fn thread_activity(
        &self,
        req: ThreadActivityRequest,
    ) -> ApiResult<Vec<ThreadActivity>> {
        const MAX: usize = 500;
        if req.thread_ids.len() > MAX {
            return Err(ApiError::invalid(format!(
                "ask for at most {MAX} threads at a time ({} given)",
                req.thread_ids.len()
            )));
        }
        let s = self.session(&req.db)?;
        let mut out = Vec::with_capacity(req.thread_ids.len());
        for thread_id in req.thread_ids {
            let mut missing = false;
            let (recovered, nodes, problem) = match s.store.thread_writes(&thread_id).await {
                // No writes: only then is the thread looked up (one indexed read).
                Ok(writes) if writes.is_empty() => {
                    missing = s.store.thread_namespaces(&thread_id).await?.is_empty();
                    let problem = missing.then(|| format!("thread {thread_id:?} not found"));
                    (Vec::new(), Vec::new(), problem)
                }
                Ok(mut writes) => {
                    let none = flashback_engine::activity::SendNames::new();
                    let mut recovered = flashback_engine::recovered_tasks(&writes, &none);
                    let mut nodes = flashback_engine::nodes_that_ran(&writes, &none);
                    // LangGraph.js stores no task path, and a `Send`'s path names no node:
                    // such a thread has its names found from the task ids (its headers read
                    // once).
                    let by_id = !s.store.schema().layout().stores_task_paths();
                    let unnamed = recovered.iter().any(|n| n == "Send" || n == "?")
                        || flashback_engine::activity::has_unnamed_tasks(&writes);
                    if unnamed || by_id {
                        let query = ListQuery::thread(&thread_id);
                        if let Ok(headers) = s.store.list_headers(&query).await {
                            if by_id {
                                flashback_engine::activity::name_js_tasks(&mut writes, &headers);
                            }
                            let sends = crate::graph::send_names(
                                s.store.as_ref(),
                                &thread_id,
                                &writes,
                                &headers,
                            )
                            .await;
                            recovered = flashback_engine::recovered_tasks(&writes, &sends);
                            nodes = flashback_engine::nodes_that_ran(&writes, &sends);
                        }
                    }
                    (recovered, nodes, None)
                }
                // A server that does not answer would not answer for the next thread either.
                Err(e) if e.is_timeout() => return Err(e.into()),
                Err(e) => (Vec::new(), Vec::new(), Some(e.to_string())),
            };
            let tokens = match missing {
                true => None,
                false => thread_tokens(s.store.as_ref(), &thread_id).await?,
            };
            out.push(ThreadActivity {
                thread_id,
                recovered,
                nodes,
                problem,
                missing,
                tokens,
            });
        }
        Ok(out)
    }

    /// A thread's checkpoints, newest first, with Python `list()` semantics (one namespace, or
    /// every namespace interleaved; metadata filter; `before`; `limit`).
    pub async fn thread_history(&self, req: HistoryRequest) -> ApiResult<Vec<HistoryEntry>> {
        let s = self.session(&req.db)?;
        for key in req.filter.keys() {
            flashback_storage::validate_filter_key(key)
                .map_err(|e| ApiError::invalid(e.to_string()))?;
        }
        let query = ListQuery {
            thread_id: Some(req.thread_id.clone()),
            checkpoint_ns: req.checkpoint_ns.clone(),
            before: req.before.clone(),
            limit: req.limit.map(u64::from),
            filter: req.filter.clone(),
            ..Default::default()
        };
        let headers = s.store.list_headers(&query).await?;
        if headers.is_empty() && query.before.is_none() && query.filter.is_empty() {
            ensure_thread(s.store.as_ref(), &req.thread_id).await?;
        }
        Ok(headers.iter().map(HistoryEntry::from).collect())
    }

    /// A thread's checkpoints as branch lanes.
    pub async fn thread_graph(&self, req: GraphRequest) -> ApiResult<ThreadGraph> {
        let s = self.session(&req.db)?;
        let g =
            crate::graph::thread_graph(s.store.as_ref(), &req.thread_id, &req.collapsed).await?;
        if let Ok(mut ns) = s.namespaces.lock() {
            let mut all: Vec<String> = vec![String::new()];
            all.extend(g.namespaces.iter().map(|n| n.ns.clone()));
            ns.insert(req.thread_id.clone(), all);
        }
        Ok(g)
    }

    /// One checkpoint: values, writes, tasks, metadata. Without an id, the namespace's latest.
    /// Shown as Python's `get_state` shows it: live without an id (or with `live` for the
    /// namespace's latest), else as the record of its step (see [`CheckpointRequest::live`]).
    pub async fn checkpoint_detail(&self, req: CheckpointRequest) -> ApiResult<CheckpointDetail> {
        let s = self.session(&req.db)?;
        let store = s.store.as_ref();
        let opts = ViewOptions {
            reveal_secrets: req.reveal_secrets,
        };
        let read = self.read_checkpoint(&s, &req, None).await?;
        // Paged: a list over the decode budget shows its first page, read from its stored
        // bytes; failing that, the checkpoint is read again within the request's budget (only
        // the page is viewed).
        let paged = req.page.filter(|_| !req.full);
        let max = self.page_budget()?.max_request_bytes;
        let first = match paged {
            Some(n) if crate::pagedview::has_big_lists(&read.tuple) => {
                Some(crate::rawpage::first_pages(store, &read.tuple, n, max, opts).await?)
            }
            _ => None,
        };
        let (tuple, mut detail) = match first {
            Some(Some(pages)) => {
                let (tuple, mut detail) = shown(read, opts, store, req.page);
                match pages.apply(&mut detail) {
                    true => (tuple, detail),
                    false => shown(
                        self.read_checkpoint(&s, &req, Some(self.page_budget()?))
                            .await?,
                        opts,
                        store,
                        req.page,
                    ),
                }
            }
            Some(None) => shown(
                self.read_checkpoint(&s, &req, Some(self.page_budget()?))
                    .await?,
                opts,
                store,
                req.page,
            ),
            None => shown(read, opts, store, req.page),
        };
        detail.made_by = made_by(store, &tuple, req.reveal_secrets).await;
        if detail.updated_channels.is_none() {
            detail.updated_channels = flashback_engine::diff::updated_channels(store, &tuple).await;
        }
        Ok(detail)
    }

    /// Two checkpoints side by side.
    pub async fn diff_checkpoints(&self, req: DiffRequest) -> ApiResult<CheckpointDiff> {
        let s = self.session(&req.db)?;
        s.require_key()?;
        let diff = flashback_engine::diff::diff_checkpoints(
            s.store.as_ref(),
            &req.thread_id,
            (&req.a.checkpoint_ns, &req.a.checkpoint_id),
            (&req.b.checkpoint_ns, &req.b.checkpoint_id),
            ViewOptions::default(),
            &self.delta_for(&req.db)?,
        )
        .await;
        thread_checked(s.store.as_ref(), &req.thread_id, diff).await
    }

    /// The steps of a branch, root first (for stepping and the replay animation).
    pub async fn replay_steps(&self, req: ReplayRequest) -> ApiResult<Vec<ReplayStep>> {
        let s = self.session(&req.db)?;
        s.require_key()?;
        let steps = flashback_engine::replay::replay(
            s.store.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            req.tip.as_deref(),
            &self.delta_for(&req.db)?,
        )
        .await;
        branch_checked(s.store.as_ref(), &req.thread_id, &req.checkpoint_ns, steps).await
    }

    /// Each written channel of a branch rebuilt from the pending writes with LangGraph's
    /// reducers: which reducer explains it, and where none reproduces the stored state.
    pub async fn rebuild_report(&self, req: RebuildRequest) -> ApiResult<Vec<ChannelRebuild>> {
        let s = self.session(&req.db)?;
        s.require_key()?;
        let report = flashback_engine::merge::rebuild_report(
            s.store.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            req.tip.as_deref(),
        )
        .await;
        branch_checked(s.store.as_ref(), &req.thread_id, &req.checkpoint_ns, report).await
    }

    /// Fork point / A / B for the channels.
    pub async fn merge_preview(&self, req: MergePreviewRequest) -> ApiResult<Vec<ThreeWay>> {
        let s = self.session(&req.db)?;
        s.require_key()?;
        let view = flashback_engine::merge::three_way(
            s.store.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.into,
            &req.from,
            &req.channels,
            &self.delta_for(&req.db)?,
        )
        .await;
        thread_checked(s.store.as_ref(), &req.thread_id, view).await
    }

    /// Check an exported bundle (a file, or content), of at most [`MAX_BUNDLE_BYTES`].
    pub async fn verify_export(&self, req: VerifyRequest) -> ApiResult<VerifyReport> {
        let text = match (req.content, req.path) {
            (Some(c), _) => {
                if c.len() as u64 > MAX_BUNDLE_BYTES {
                    return Err(too_big("the bundle", c.len() as u64));
                }
                c
            }
            (None, Some(p)) => read_bundle(Path::new(&p))?,
            (None, None) => return Err(ApiError::invalid("give a path or the content")),
        };
        Ok(flashback_engine::export::verify(&text))
    }
}

/// The largest bundle `verify_export` reads (its JSON is parsed whole, so memory is a few times
/// this).
pub const MAX_BUNDLE_BYTES: u64 = 256_000_000;

fn too_big(what: &str, size: u64) -> ApiError {
    ApiError::invalid(format!(
        "{what} is {}; Flashback verifies bundles of up to {}",
        crate::units::bytes(size),
        crate::units::bytes(MAX_BUNDLE_BYTES)
    ))
}

/// A bundle file: a regular file (a FIFO would block forever) of bounded size, read with the
/// bound enforced (the file may grow between the check and the read).
fn read_bundle(path: &Path) -> ApiResult<String> {
    let meta = crate::location::ensure_regular_file(path).map_err(|e| match e.code {
        ErrorCode::NotFound => {
            ApiError::not_found(format!("cannot read {}: no such file", path.display()))
        }
        _ => e,
    })?;
    if meta.len() > MAX_BUNDLE_BYTES {
        return Err(too_big(&path.display().to_string(), meta.len()));
    }
    let cannot = |e: std::io::Error| ApiError::io(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_BUNDLE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_BUNDLE_BYTES {
        return Err(too_big(&path.display().to_string(), bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| {
        ApiError::invalid(format!(
            "{} is not text: not an exported bundle",
            path.display()
        ))
    })
}

impl Api {
    /// The DeltaChannel options of an open database: the reducers remembered for it.
    pub(crate) fn delta_for(&self, db: &str) -> ApiResult<flashback_engine::delta::DeltaOptions> {
        let location = self.session(db)?.info.location.clone();
        crate::paging::delta_options(&self.reducers_for(&location, &Default::default())?)
    }
}

/// A branch's answer (replay, rebuild): empty only for a branch that exists; a missing thread
/// or namespace is not found.
async fn branch_checked<T>(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
    answer: Result<Vec<T>, flashback_engine::EngineError>,
) -> ApiResult<Vec<T>> {
    let found = thread_checked(store, thread, answer).await?;
    if found.is_empty() {
        ensure_namespace(store, thread, ns).await?;
    }
    Ok(found)
}

/// A thread's token usage (each message once, where the model produced it); `None` when no
/// message carried usage or the writes cannot be read (the list stays answerable).
pub(crate) async fn thread_tokens(
    store: &dyn CheckpointStore,
    thread_id: &str,
) -> ApiResult<Option<flashback_engine::TokenUsage>> {
    match store
        .thread_writes_mentioning(thread_id, flashback_engine::usage::NEEDLE)
        .await
    {
        Ok(writes) => {
            let usage = flashback_engine::thread_usage(&writes);
            Ok((usage.total.messages > 0).then_some(usage.total))
        }
        Err(e) if e.is_timeout() => Err(e.into()),
        Err(_) => Ok(None),
    }
}

/// The writes that made a `loop` checkpoint: its parent's pending writes (the parent read
/// without its state values, only what naming the tasks needs). Empty for another checkpoint,
/// or when the parent cannot be read (the detail stands without them).
async fn made_by(
    store: &dyn CheckpointStore,
    tuple: &CheckpointTuple,
    reveal_secrets: bool,
) -> Vec<crate::types::WriteGroup> {
    let h = &tuple.header;
    let Some(parent) = h.parent_checkpoint_id.as_deref() else {
        return Vec::new();
    };
    if h.source() != Some("loop") {
        return Vec::new();
    }
    let keep: flashback_storage::ChannelFilter =
        std::sync::Arc::new(flashback_engine::tasks::reads_value_of);
    let key = [(h.thread_id.as_str(), h.checkpoint_ns.as_str(), Some(parent))];
    match store.get_tuples_selecting(&key, keep).await {
        Ok(found) => found
            .into_iter()
            .flatten()
            .next()
            .map(|p| {
                crate::detail::step_writes(
                    &p,
                    ViewOptions { reveal_secrets },
                    store.schema().dialect,
                )
            })
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// A checkpoint read as `checkpoint_detail` shows it (`page`: long lists as their first page).
fn shown(
    read: crate::paging::Loaded,
    opts: ViewOptions,
    store: &dyn CheckpointStore,
    page: Option<u32>,
) -> (CheckpointTuple, CheckpointDetail) {
    let crate::paging::Loaded {
        mut tuple,
        view,
        namespaces,
        sealing,
        rebuilt,
    } = read;
    let mut detail = crate::detail::checkpoint_detail(
        &mut tuple,
        &view,
        namespaces,
        opts,
        rebuilt,
        store.schema().dialect,
        page,
    );
    detail.sealing = sealing;
    (tuple, detail)
}
