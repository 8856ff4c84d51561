//! Jobs: long work in the background (export, re-run, value search) with progress, events,
//! cancel and polling. [`registry`] keeps the jobs; this module holds the commands that start and
//! watch them.

mod convert;
mod export;
pub(crate) mod registry;
mod search;
mod storage;

use crate::commands::to_json;
use crate::error::{ApiError, ApiResult};
use crate::rerun;
use crate::types::{
    self, ConvertRequest, ExportRequest, JobEvent, JobKind, JobPollRequest, JobRequest,
    JobSnapshot, RerunRequest, ValueSearchRequest,
};
use crate::Api;
use registry::JobHandle;
use std::path::Path;

/// A job's progress as the storage crate's long work reports it (and asks whether to stop).
pub(crate) struct JobProgress(pub(crate) JobHandle);

impl flashback_storage::report::Progress for JobProgress {
    fn step(&self, done: u64, total: u64, label: &str) {
        let n = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        self.0.progress(n(done), n(total), label);
    }

    fn cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

impl Api {
    /// Start an audit export (a job: progress, cancel; the result is an [`ExportResult`]).
    /// A `path` is written only where the [`crate::Policy`] allows (`flashback serve`: inside
    /// `--export-dir`, or nowhere); without one the result carries the content.
    pub async fn start_export(&self, mut req: ExportRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        if let Some(p) = &req.path {
            let target = self.policy.export_path(p)?;
            req.path = Some(target.to_string_lossy().into_owned());
        }
        let delta = self.delta_for(&req.db)?;
        let within = self.policy.confined_to().map(Path::to_path_buf);
        Ok(self.jobs.spawn(JobKind::Export, move |job| async move {
            let exporting = export::export_job(&s, &req, &job, delta, within.as_deref());
            to_json(job.stoppable("the export", exporting).await?)
        }))
    }

    /// Start a re-run with a live tail (a job: each new checkpoint and output line is an event;
    /// the result is the fork).
    /// Refused unless the [`crate::Policy`] allows running commands.
    pub async fn start_rerun(&self, req: RerunRequest) -> ApiResult<String> {
        self.policy.check_run()?;
        let s = self.session(&req.db)?;
        if req.timeout_secs == 0 {
            return Err(ApiError::invalid("the timeout must be at least one second"));
        }
        if s.store.server_writes().is_some() {
            return Ok(self.start_server_run(s, req));
        }
        s.require_sealable()?;
        if req.runner.trim().is_empty() {
            return Err(ApiError::invalid(
                "enter the command that resumes your graph",
            ));
        }
        self.appdb.set_setting(
            &format!("runner:{}", s.info.location),
            Some(req.runner.as_str()),
        )?;
        let spec = rerun::RerunSpec {
            location: s.connect.clone(),
            thread_id: req.thread_id,
            checkpoint_ns: req.checkpoint_ns,
            checkpoint_id: req.checkpoint_id,
            runner: req.runner,
            timeout: std::time::Duration::from_secs(u64::from(req.timeout_secs)),
            delta: self.delta_for(&req.db)?,
            key: s.write_key(),
            resume: req.resume,
        };
        Ok(self.jobs.spawn(JobKind::Rerun, move |job| async move {
            job.progress(0, 0, "running");
            let mut sink = |e: rerun::RerunEvent<'_>| job.event(job_event(e));
            let fork = rerun::rerun(&spec, &mut sink, job.cancelled()).await?;
            to_json(fork)
        }))
    }

    /// A re-run on an Agent Server: a run from the checkpoint that the server runs itself
    /// (no runner), its events and new checkpoints streamed into the job.
    fn start_server_run(&self, s: std::sync::Arc<crate::Session>, req: RerunRequest) -> String {
        let spec = crate::serverwrites::ServerRunSpec {
            thread_id: req.thread_id,
            checkpoint_ns: req.checkpoint_ns,
            checkpoint_id: req.checkpoint_id,
            resume: req.resume,
            timeout: std::time::Duration::from_secs(u64::from(req.timeout_secs)),
        };
        self.jobs.spawn(JobKind::Rerun, move |job| async move {
            job.progress(0, 0, "running on the server");
            let writes = s.store.server_writes().ok_or_else(|| {
                ApiError::invalid("this location is not an Agent Server any more")
            })?;
            let mut sink = |e: rerun::RerunEvent<'_>| job.event(job_event(e));
            let fork = crate::serverwrites::rerun(
                s.store.as_ref(),
                writes,
                &spec,
                &mut sink,
                job.cancelled(),
            )
            .await?;
            to_json(fork)
        })
    }

    /// Start a search inside the threads' values (a job: one [`JobEvent::SearchHit`] per
    /// thread whose latest root checkpoint holds the text, newest thread first, up to `limit`;
    /// the result is a [`types::ValueSearchSummary`]). Nothing is written.
    pub async fn start_search(&self, req: ValueSearchRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        let needle = flashback_engine::search::Needle::new(&req.query)
            .map_err(|e| ApiError::invalid(e.to_string()))?;
        let limit = req.limit.unwrap_or(search::DEFAULT_LIMIT);
        if limit == 0 {
            return Err(ApiError::invalid("the limit must be at least 1"));
        }
        let spec = search::SearchSpec {
            needle,
            limit: limit as usize,
            threads: req.threads,
            delta: self.delta_for(&req.db)?,
        };
        let store = std::sync::Arc::clone(&s.store);
        Ok(self.jobs.spawn(JobKind::Search, move |job| async move {
            let searching = search::search_job(store, spec, &job);
            to_json(job.stoppable("the search", searching).await?)
        }))
    }

    /// Start a conversion into another database in the other schema (a job: progress per
    /// thread, cancel between threads; the result is a [`types::ConvertReport`]). Each thread
    /// is one transaction on the destination, which is created when missing; with `dry_run`
    /// nothing is written and the report says what the values would take. The destination is
    /// where the [`crate::Policy`] lets files be written (`flashback serve`: a SQLite file
    /// inside `--export-dir`, no Postgres).
    pub async fn start_convert(&self, req: ConvertRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        if s.write_key().is_some() {
            return Err(ApiError::invalid(
                "this database is encrypted: converting it would write its values in plaintext, \
                 which Flashback does not do",
            ));
        }
        let target = self.policy.convert_target(&req.target)?;
        if target == s.connect || target == s.info.location {
            return Err(ApiError::invalid(
                "convert into another database, not the source",
            ));
        }
        let store = std::sync::Arc::clone(&s.store);
        let spec = convert::ConvertSpec {
            req,
            target,
            within: self.policy.confined_to().map(Path::to_path_buf),
        };
        Ok(self.jobs.spawn(JobKind::Convert, move |job| async move {
            let converting = convert::convert_job(store, spec, &job);
            let stopped = "the conversion (each thread converted so far is complete)";
            to_json(job.stoppable(stopped, converting).await?)
        }))
    }

    /// A job's state and the events after `cursor`.
    pub async fn job_poll(&self, req: JobPollRequest) -> ApiResult<JobSnapshot> {
        self.jobs.poll(&req.job, req.cursor)
    }

    /// Ask a job to stop.
    pub async fn job_cancel(&self, req: JobRequest) -> ApiResult<()> {
        self.jobs.cancel(&req.job)
    }

    /// Run `work` as a job of `kind`, as `start_export` and `start_rerun` run theirs. For tests
    /// of the job machinery (a job that panics, one cancelled after it ended); no door reaches
    /// it, and it is not a command.
    #[doc(hidden)]
    pub fn run_as_job<F>(&self, kind: JobKind, work: F) -> String
    where
        F: FnOnce() -> ApiResult<serde_json::Value> + Send + 'static,
    {
        self.jobs.spawn(kind, move |_| async move { work() })
    }
}

/// A re-run's event as the job shows it.
fn job_event(e: rerun::RerunEvent<'_>) -> JobEvent {
    match e {
        rerun::RerunEvent::Checkpoint(h) => JobEvent::Checkpoint {
            checkpoint_ns: h.checkpoint_ns.clone(),
            checkpoint_id: h.checkpoint_id.clone(),
            parent_checkpoint_id: h.parent_checkpoint_id.clone(),
            step: types::step_of(&h.metadata),
            source: types::source_of(&h.metadata),
        },
        rerun::RerunEvent::Output { stream, line } => JobEvent::Output {
            stream: stream.to_owned(),
            line: line.to_owned(),
        },
    }
}
