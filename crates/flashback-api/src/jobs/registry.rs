//! Long work (exports, re-runs) as jobs: started by one command, polled with
//! [`crate::Api::job_poll`] for progress and events, stopped with [`crate::Api::job_cancel`].
//!
//! Polling works the same over Tauri IPC and HTTP, so the UI has one code path for both.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{JobEvent, JobKind, JobProgress, JobSnapshot, JobState};
use serde_json::Value as Json;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Finished jobs kept for polling.
const KEEP_FINISHED: usize = 64;

struct JobData {
    state: JobState,
    progress: Option<JobProgress>,
    events: Vec<JobEvent>,
    result: Option<Json>,
    error: Option<ApiError>,
}

struct Job {
    kind: JobKind,
    data: Mutex<JobData>,
    cancel: watch::Sender<bool>,
}

/// What a running job uses to report and to learn it was cancelled.
#[derive(Clone)]
pub struct JobHandle {
    job: Arc<Job>,
    cancel: watch::Receiver<bool>,
}

impl JobHandle {
    fn update(&self, f: impl FnOnce(&mut JobData)) {
        if let Ok(mut d) = self.job.data.lock() {
            f(&mut d);
        }
    }

    /// Report progress.
    pub fn progress(&self, done: usize, total: usize, label: &str) {
        let p = JobProgress {
            done: crate::types::count(done),
            total: crate::types::count(total),
            label: label.to_owned(),
        };
        self.update(|d| d.progress = Some(p));
    }

    /// Report an event.
    pub fn event(&self, e: JobEvent) {
        self.update(|d| d.events.push(e));
    }

    /// Whether the user asked to stop.
    pub fn is_cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Resolves when the user asks to stop.
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.clone();
        let _ = rx.wait_for(|c| *c).await;
    }
}

/// The job registry.
#[derive(Default)]
pub struct Jobs {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    finished: Mutex<VecDeque<String>>,
}

impl Jobs {
    /// Start `work` in the background and return the job id.
    pub fn spawn<F, Fut>(self: &Arc<Self>, kind: JobKind, work: F) -> String
    where
        F: FnOnce(JobHandle) -> Fut,
        Fut: Future<Output = ApiResult<Json>> + Send + 'static,
    {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let (tx, rx) = watch::channel(false);
        let job = Arc::new(Job {
            kind,
            data: Mutex::new(JobData {
                state: JobState::Running,
                progress: None,
                events: Vec::new(),
                result: None,
                error: None,
            }),
            cancel: tx,
        });
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.insert(id.clone(), Arc::clone(&job));
        }
        let handle = JobHandle {
            job: Arc::clone(&job),
            cancel: rx,
        };
        let fut = work(handle.clone());
        let registry = Arc::clone(self);
        let job_id = id.clone();
        tokio::spawn(async move {
            let outcome = fut.await;
            let cancelled = handle.is_cancelled();
            handle.update(|d| match outcome {
                Ok(result) => {
                    d.state = JobState::Succeeded;
                    d.result = Some(result);
                }
                Err(e) if e.code == ErrorCode::Cancelled || cancelled => {
                    d.state = JobState::Cancelled;
                    d.error = Some(e);
                }
                Err(e) => {
                    d.state = JobState::Failed;
                    d.error = Some(e);
                }
            });
            registry.retire(job_id);
        });
        id
    }

    fn retire(&self, id: String) {
        let Ok(mut finished) = self.finished.lock() else {
            return;
        };
        finished.push_back(id);
        while finished.len() > KEEP_FINISHED {
            if let (Some(old), Ok(mut jobs)) = (finished.pop_front(), self.jobs.lock()) {
                jobs.remove(&old);
            }
        }
    }

    fn get(&self, id: &str) -> ApiResult<Arc<Job>> {
        self.jobs
            .lock()
            .ok()
            .and_then(|j| j.get(id).cloned())
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))
    }

    /// The job's state and the events after `cursor`.
    pub fn poll(&self, id: &str, cursor: u32) -> ApiResult<JobSnapshot> {
        let job = self.get(id)?;
        let d = job
            .data
            .lock()
            .map_err(|_| ApiError::new(ErrorCode::Internal, "job state lock poisoned"))?;
        let from = (cursor as usize).min(d.events.len());
        Ok(JobSnapshot {
            id: id.to_owned(),
            kind: job.kind,
            state: d.state,
            progress: d.progress.clone(),
            events: d.events[from..].to_vec(),
            cursor: crate::types::count(d.events.len()),
            result: d.result.clone(),
            error: d.error.clone(),
        })
    }

    /// Ask a job to stop (no effect on a finished job).
    pub fn cancel(&self, id: &str) -> ApiResult<()> {
        let job = self.get(id)?;
        job.cancel.send_replace(true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn settle(jobs: &Jobs, id: &str) -> JobSnapshot {
        for _ in 0..200 {
            let s = jobs.poll(id, 0).expect("poll");
            if s.state != JobState::Running {
                return s;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("job {id} did not finish");
    }

    #[tokio::test]
    async fn events_progress_result_and_cancel() {
        let jobs = Arc::new(Jobs::default());
        let id = jobs.spawn(JobKind::Export, |h| async move {
            h.progress(1, 2, "half");
            h.event(JobEvent::Output {
                stream: "stdout".into(),
                line: "hello".into(),
            });
            Ok(Json::from(42))
        });
        let s = settle(&jobs, &id).await;
        assert_eq!(s.state, JobState::Succeeded);
        assert_eq!(s.result, Some(Json::from(42)));
        assert_eq!(s.events.len(), 1);
        assert_eq!(jobs.poll(&id, s.cursor).expect("poll").events, vec![]);
        assert_eq!(s.progress.expect("progress").label, "half");

        let id = jobs.spawn(JobKind::Rerun, |h| async move {
            h.cancelled().await;
            Err(ApiError::new(ErrorCode::Cancelled, "stopped"))
        });
        jobs.cancel(&id).expect("cancel");
        assert_eq!(settle(&jobs, &id).await.state, JobState::Cancelled);
        assert_eq!(
            jobs.poll("nope", 0).expect_err("unknown").code,
            ErrorCode::NotFound
        );
    }
}
