//! Thread summaries (the threads list) and the "not found" answers naming what exists.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{count, step_of, ThreadSummary};
use flashback_engine::tasks::{derive_tasks_with, reads_value_of, DeriveOptions, TaskStatus};
use flashback_engine::EngineError;
use flashback_storage::{
    ChannelFilter, CheckpointStore, CheckpointTuple, Dialect, StoreError, ThreadInfo,
    READING_THREADS,
};

/// Every thread with its status (or the `limit` most recently active ones, newest first). A
/// thread whose keys or latest checkpoint cannot be read is listed with its `problem` (and no
/// status); it never takes the list down.
pub async fn thread_summaries(
    store: &dyn CheckpointStore,
    limit: Option<u32>,
) -> ApiResult<Vec<ThreadSummary>> {
    let threads = match limit {
        Some(n) => store.list_recent_threads(n as usize).await?,
        None => store.list_threads().await?,
    };
    let mut out = summaries_of(store, threads).await?;
    crate::groups::mark_groups(&mut out);
    Ok(out)
}

/// The summaries of `threads`, in their order, with what the server says of each.
pub(crate) async fn summaries_of(
    store: &dyn CheckpointStore,
    threads: Vec<ThreadInfo>,
) -> ApiResult<Vec<ThreadSummary>> {
    let mut out = Vec::with_capacity(threads.len());
    // A chunk of threads at a time, so memory stays bounded however many threads: the latest
    // checkpoints of one chunk are read while the previous chunk is summarised.
    let mut rest = threads.into_iter();
    let mut next_chunk = move || -> Vec<ThreadInfo> { rest.by_ref().take(SUMMARY_CHUNK).collect() };
    let dialect = store.schema().dialect;
    let mut read = read_chunk(store, next_chunk()).await?;
    loop {
        let chunk = next_chunk();
        if chunk.is_empty() {
            break;
        }
        let (next, done) = tokio::join!(read_chunk(store, chunk), summarize_chunk(read, dialect));
        out.extend(done?);
        read = next?;
    }
    out.extend(summarize_chunk(read, dialect).await?);
    if let Some(server) = store.server().await? {
        for s in &mut out {
            s.server = server.thread(&s.thread_id).cloned();
        }
    }
    Ok(out)
}

/// A chunk of threads with the latest root checkpoint of each (or why it could not be read).
pub(crate) type ReadChunk = Vec<(ThreadInfo, Result<Option<CheckpointTuple>, StoreError>)>;

pub(crate) async fn read_chunk(
    store: &dyn CheckpointStore,
    chunk: Vec<ThreadInfo>,
) -> ApiResult<ReadChunk> {
    if chunk.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<(&str, &str, Option<&str>)> = chunk
        .iter()
        .filter_map(|t| {
            t.latest_checkpoint_id
                .as_deref()
                .map(|id| (t.thread_id.as_str(), "", Some(id)))
        })
        .collect();
    let mut tuples = latest_tuples(store, &keys).await?.into_iter();
    Ok(chunk
        .into_iter()
        .map(|t| {
            let latest = match &t.latest_checkpoint_id {
                Some(_) => tuples.next().unwrap_or(Ok(None)),
                None => Ok(None),
            };
            (t, latest)
        })
        .collect())
}

/// The summaries of a chunk, derived on a blocking thread (beside the next chunk's read).
pub(crate) async fn summarize_chunk(
    read: ReadChunk,
    dialect: Dialect,
) -> ApiResult<Vec<ThreadSummary>> {
    tokio::task::spawn_blocking(move || {
        read.into_iter()
            .map(|(t, latest)| summarize(t, latest, dialect))
            .collect()
    })
    .await
    .map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            format!("summarising threads failed: {e}"),
        )
    })
}

/// Threads summarised per batch read by [`thread_summaries`].
const SUMMARY_CHUNK: usize = 2_000;

/// One thread's summary from its keys and its latest root checkpoint (or why it could not be
/// read).
fn summarize(
    t: ThreadInfo,
    latest: Result<Option<CheckpointTuple>, StoreError>,
    dialect: Dialect,
) -> ThreadSummary {
    let mut problems: Vec<String> = t.problem.into_iter().collect();
    let mut s = ThreadSummary {
        thread_id: t.thread_id,
        namespaces: t.namespaces,
        checkpoint_count: count(t.checkpoint_count),
        latest_checkpoint_id: t.latest_checkpoint_id,
        latest_ts: None,
        latest_step: None,
        status: None,
        interrupts: Vec::new(),
        error: None,
        next: Vec::new(),
        problem: None,
        locked: false,
        server: None,
        tokens: None,
        group: None,
        matched_checkpoint_id: None,
        cursor: None,
    };
    match latest {
        Ok(Some(tuple)) => {
            s.latest_ts = Some(tuple.checkpoint.ts.clone()).filter(|ts| !ts.is_empty());
            s.latest_step = step_of(&tuple.header.metadata);
            // SQLite's encrypted document without a key: nothing to derive a status from.
            s.locked = tuple.sealing.locked && tuple.checkpoint.channel_versions.is_empty();
            match &tuple.header.problem {
                _ if s.locked => {}
                // A status derived from what could not be read would be a guess.
                Some(problem) => {
                    problems.push(format!("its latest checkpoint cannot be read: {problem}"))
                }
                None => {
                    let opts = DeriveOptions {
                        dialect,
                        ..Default::default()
                    };
                    let tasks = derive_tasks_with(&tuple, &opts);
                    s.status = Some(tasks.status());
                    s.interrupts = tasks
                        .tasks
                        .iter()
                        .filter(|t| !t.finished)
                        .flat_map(|t| t.interrupts.iter().cloned())
                        .collect();
                    // A task that raised and then finished on a retry is not the thread's error.
                    s.error = tasks
                        .tasks
                        .iter()
                        .filter(|t| t.status == TaskStatus::Failed)
                        .find_map(|t| t.error.clone());
                    s.next = tasks.next;
                }
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(format!("its latest checkpoint cannot be read: {e}")),
    }
    if !problems.is_empty() {
        s.problem = Some(problems.join("; "));
    }
    // A document that does not read (locked, damaged) still has an id that says when it was
    // made.
    if s.latest_ts.is_none() {
        s.latest_ts = s
            .latest_checkpoint_id
            .as_deref()
            .and_then(flashback_storage::pyfmt::uuid6_time);
    }
    s
}

/// The latest checkpoints of `keys` (their task and trigger channels' values only), in one go;
/// should that fail on the data (a query or a row that fails), one by one, so that the failure
/// stays with its thread. Failures of the database itself (connection, lock…) are the list's
/// error.
async fn latest_tuples(
    store: &dyn CheckpointStore,
    keys: &[(&str, &str, Option<&str>)],
) -> ApiResult<Vec<Result<Option<CheckpointTuple>, StoreError>>> {
    let local = |e: &StoreError| matches!(e, StoreError::Query(_) | StoreError::Corrupt { .. });
    // Only what the status needs: the task and trigger channels, not the state.
    let keep: ChannelFilter = std::sync::Arc::new(reads_value_of);
    match store.get_tuples_selecting(keys, keep).await {
        Ok(all) => Ok(all.into_iter().map(Ok).collect()),
        Err(e) if local(&e) => {
            let mut out = Vec::with_capacity(keys.len());
            for (thread_id, ns, id) in keys {
                match store.get_tuple(thread_id, ns, *id).await {
                    Err(e) if !local(&e) => return Err(e.during(|| READING_THREADS.into()).into()),
                    other => out.push(other),
                }
            }
            Ok(out)
        }
        Err(e) => Err(e.during(|| READING_THREADS.into()).into()),
    }
}

/// The one wording for a checkpoint that is not there.
pub fn checkpoint_not_found(thread_id: &str, checkpoint_ns: &str, checkpoint_id: &str) -> ApiError {
    ApiError::not_found(format!(
        "checkpoint {checkpoint_id} not found in thread {thread_id:?} (namespace {checkpoint_ns:?})"
    ))
}

/// Fail with "thread not found" (naming a few threads) unless the thread exists.
pub async fn ensure_thread(store: &dyn CheckpointStore, thread: &str) -> ApiResult<()> {
    // One indexed query when it exists; the list only to name others when it does not.
    if !store.thread_namespaces(thread).await?.is_empty() {
        return Ok(());
    }
    let threads = store.list_threads().await?;
    if threads.iter().any(|t| t.thread_id == thread) {
        return Ok(());
    }
    let mut known: Vec<&str> = threads
        .iter()
        .map(|t| t.thread_id.as_str())
        .take(10)
        .collect();
    if threads.len() > 10 {
        known.push("…");
    }
    Err(ApiError::not_found(format!(
        "thread {thread:?} not found (threads: {})",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    )))
}

/// Fail with "thread not found", or "no checkpoints in namespace", unless the thread has
/// checkpoints in `ns`.
pub async fn ensure_namespace(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
) -> ApiResult<()> {
    if store
        .thread_namespaces(thread)
        .await?
        .iter()
        .any(|n| n == ns)
    {
        return Ok(());
    }
    ensure_thread(store, thread).await?;
    Err(ApiError::not_found(format!(
        "thread {thread:?} has no checkpoints in namespace {ns:?}"
    )))
}

/// An engine answer about checkpoints of `thread`: when it names a checkpoint that is not
/// there, a missing thread is said first (naming the threads that exist).
pub async fn thread_checked<T>(
    store: &dyn CheckpointStore,
    thread: &str,
    answer: Result<T, EngineError>,
) -> ApiResult<T> {
    match answer {
        Err(e @ EngineError::UnknownCheckpoint { .. }) => {
            ensure_thread(store, thread).await?;
            Err(e.into())
        }
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use flashback_storage::{
        generic, CheckpointHeader, Decoded, EncryptionProbe, ListQuery, SchemaInfo, WriteInfo,
    };

    /// Three threads; reading `bad`'s latest checkpoint fails (and with it the batch read).
    struct OneBadThread(SchemaInfo);

    #[async_trait]
    impl CheckpointStore for OneBadThread {
        fn schema(&self) -> &SchemaInfo {
            &self.0
        }
        async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
            Ok(["a", "bad", "c"]
                .map(|t| ThreadInfo {
                    thread_id: t.into(),
                    namespaces: vec![String::new()],
                    checkpoint_count: 1,
                    latest_checkpoint_id: Some(format!("{t}-1")),
                    problem: None,
                })
                .to_vec())
        }
        async fn list_headers(&self, _: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
            Ok(Vec::new())
        }
        async fn list_tuples(&self, q: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
            if q.thread_id.as_deref() == Some("bad") {
                return Err(StoreError::Query(
                    "query task failed: a row panicked".into(),
                ));
            }
            Ok(Vec::new())
        }
        async fn get_tuples(
            &self,
            _: &[(&str, &str, Option<&str>)],
        ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
            Err(StoreError::Query(
                "query task failed: a row panicked".into(),
            ))
        }
        fn memory(&self) -> Option<&dyn flashback_storage::memory::MemoryRead> {
            None
        }
        async fn server(
            &self,
        ) -> Result<Option<std::sync::Arc<flashback_storage::server::ServerState>>, StoreError>
        {
            Ok(None)
        }
        async fn list_recent_threads(&self, n: usize) -> Result<Vec<ThreadInfo>, StoreError> {
            generic::list_recent_threads(self, n).await
        }
        async fn find_threads(
            &self,
            q: &flashback_storage::ThreadQuery,
        ) -> Result<Vec<flashback_storage::FoundThread>, StoreError> {
            flashback_storage::find::find_threads(self, q).await
        }
        async fn thread_namespaces(&self, t: &str) -> Result<Vec<String>, StoreError> {
            generic::thread_namespaces(self, t).await
        }
        async fn thread_writes(&self, t: &str) -> Result<Vec<WriteInfo>, StoreError> {
            generic::thread_writes(self, t).await
        }
        async fn thread_writes_mentioning(
            &self,
            t: &str,
            _: &str,
        ) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
            generic::thread_writes_mentioning(self, t).await
        }
        async fn encryption_probe(&self) -> Result<EncryptionProbe, StoreError> {
            Ok(EncryptionProbe::default())
        }
        async fn get_tuples_selecting(
            &self,
            keys: &[(&str, &str, Option<&str>)],
            keep: ChannelFilter,
        ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
            generic::get_tuples_selecting(self, keys, keep).await
        }
    }

    #[tokio::test]
    async fn a_thread_whose_latest_checkpoint_fails_is_listed_with_its_problem() {
        let store = OneBadThread(SchemaInfo {
            backend: flashback_storage::Backend::Sqlite,
            has_task_path: true,
            migration_version: None,
            kind: flashback_storage::SchemaKind::LangGraph,
            description: "test".into(),
            holds: flashback_storage::Holds::Checkpoints,
            dialect: flashback_storage::Dialect::Python,
        });
        let list = thread_summaries(&store, None).await.expect("the list");
        let ids: Vec<&str> = list.iter().map(|s| s.thread_id.as_str()).collect();
        assert_eq!(ids, ["a", "bad", "c"]);
        assert!(list[0].problem.is_none() && list[2].problem.is_none());
        let problem = list[1].problem.as_deref().unwrap_or_default();
        assert!(problem.contains("a row panicked"), "{problem}");
        assert!(list[1].status.is_none());
    }
}
