//! `index_advice`, `index_apply` and `start_index_apply` (the same as a job): the index advisor (storage's `indexes`), with the reads
//! it speeds timed on the open database before and after an action.

use crate::commands::to_json;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::jobs::JobProgress;
use crate::types::{IndexAdviceRequest, IndexApplyReport, IndexApplyRequest, JobKind, ReadTiming};
use crate::{Api, Session};
use flashback_storage::indexes::{self, IndexPlan, IndexReport, METADATA_KEYS, PAGE};
use flashback_storage::{CheckpointStore, ListQuery, ThreadQuery};
use serde_json::{Map, Value as Json};
use std::sync::Arc;
use std::time::Instant;

impl Api {
    /// Which indexes would make the thread list's first page, a time range and the metadata
    /// filter fast, whether they are there, and the planner's estimate of the gain. Reads the
    /// catalog only; sources without SQL answer "not applicable".
    pub async fn index_advice(&self, req: IndexAdviceRequest) -> ApiResult<IndexReport> {
        let s = self.session(&req.db)?;
        Ok(indexes::advise(&s.connect, s.store.schema()).await?)
    }

    /// Create or drop Flashback's indexes (or preview it: the statements, estimated size and
    /// time). Postgres builds `CONCURRENTLY` (the savers keep writing); SQLite in one
    /// transaction. The thread list's first page and a metadata filter are timed before and
    /// after.
    pub async fn index_apply(&self, req: IndexApplyRequest) -> ApiResult<IndexApplyReport> {
        let s = self.session(&req.db)?;
        let schema = s.store.schema().clone();
        let plan = indexes::plan(&s.connect, &schema, req.action, &req.names).await?;
        build(&s, plan, req.dry_run, Arc::new(indexes::Quiet)).await
    }

    /// [`index_apply`](Self::index_apply) as a job: progress per statement (`creating
    /// flashback_…`), and a cancel that stops the statement running — SQLite's transaction
    /// rolls back, Postgres cancels the build and drops its unfinished index. The result is
    /// the [`IndexApplyReport`]. A bad name is refused before the job starts.
    pub async fn start_index_apply(&self, req: IndexApplyRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        let schema = s.store.schema().clone();
        let plan = indexes::plan(&s.connect, &schema, req.action, &req.names).await?;
        Ok(self.jobs.spawn(JobKind::Index, move |job| async move {
            let progress = Arc::new(JobProgress(job.clone()));
            // Not `stoppable`: the build stops itself, and must finish undoing what it began.
            match build(&s, plan, req.dry_run, progress).await {
                Err(_) if job.is_cancelled() => Err(ApiError::new(
                    ErrorCode::Cancelled,
                    "the index build was cancelled; nothing was left half-built",
                )),
                other => to_json(other?),
            }
        }))
    }
}

/// Run `plan` (or, `dry_run` or nothing to do, say it), the reads it speeds timed before and
/// after.
async fn build(
    s: &Session,
    plan: IndexPlan,
    dry_run: bool,
    progress: Arc<dyn indexes::Progress>,
) -> ApiResult<IndexApplyReport> {
    if dry_run || plan.statements.is_empty() {
        return Ok(IndexApplyReport {
            dry_run,
            plan,
            seconds: None,
            before: Vec::new(),
            after: Vec::new(),
            advice: None,
        });
    }
    let schema = s.store.schema().clone();
    let store = s.store.as_ref();
    let filter = sample_filter(store).await?;
    let before = time_reads(store, &filter).await?;
    let started = Instant::now();
    indexes::apply(&s.connect, &schema, &plan, progress).await?;
    let seconds = started.elapsed().as_secs_f64();
    let after = time_reads(store, &filter).await?;
    let advice = indexes::advise(&s.connect, &schema).await?;
    Ok(IndexApplyReport {
        dry_run: false,
        plan,
        seconds: Some(seconds),
        before,
        after,
        advice: Some(advice),
    })
}

/// A one-key metadata filter the newest thread's latest checkpoint holds (one of the keys the
/// indexes are for, else `source`), for timing the metadata filter.
async fn sample_filter(store: &dyn CheckpointStore) -> ApiResult<Map<String, Json>> {
    let mut filter = Map::new();
    let Some(t) = store.list_recent_threads(1).await?.into_iter().next() else {
        return Ok(filter);
    };
    let query = ListQuery {
        thread_id: Some(t.thread_id),
        limit: Some(1),
        ..Default::default()
    };
    let Some(h) = store.list_headers(&query).await?.into_iter().next() else {
        return Ok(filter);
    };
    let Json::Object(m) = h.metadata else {
        return Ok(filter);
    };
    let key = METADATA_KEYS
        .iter()
        .copied()
        .chain(["source"])
        .find(|k| m.get(*k).is_some_and(|v| !v.is_null() && !v.is_object()));
    if let Some(k) = key {
        filter.insert(k.to_owned(), m[k].clone());
    }
    Ok(filter)
}

/// The thread list's first page and the metadata filter's first page, timed.
async fn time_reads(
    store: &dyn CheckpointStore,
    filter: &Map<String, Json>,
) -> ApiResult<Vec<ReadTiming>> {
    let started = Instant::now();
    let page = store.list_recent_threads(PAGE).await?;
    let mut out = vec![ReadTiming {
        read: format!("the {PAGE} most recently active threads"),
        millis: started.elapsed().as_secs_f64() * 1000.0,
        threads: crate::types::count(page.len()),
    }];
    if let Some((k, v)) = filter.iter().next() {
        let query = ThreadQuery {
            filter: filter.clone(),
            since: None,
            until: None,
            after: None,
            limit: 50,
        };
        let started = Instant::now();
        let found = store.find_threads(&query).await?;
        out.push(ReadTiming {
            read: format!("threads whose metadata has {k} = {v}"),
            millis: started.elapsed().as_secs_f64() * 1000.0,
            threads: crate::types::count(found.len()),
        });
    }
    Ok(out)
}
