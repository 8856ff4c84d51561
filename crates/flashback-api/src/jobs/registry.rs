//! Long work (exports, re-runs, value searches) as jobs: started by one command, polled with
//! [`crate::Api::job_poll`] for progress and events, stopped with [`crate::Api::job_cancel`].
//!
//! Polling works the same over Tauri IPC and HTTP, so the UI has one code path for both.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{JobEvent, JobKind, JobProgress, JobSnapshot, JobState};
use serde_json::Value as Json;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::watch;

/// Finished jobs kept for polling.
const KEEP_FINISHED: usize = 64;

/// A lock that a panic elsewhere cannot make unusable: the data behind it is plain state that
/// stays consistent (each update is one assignment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn kind_name(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Export => "export",
        JobKind::Rerun => "re-run",
        JobKind::Search => "value search",
        JobKind::Convert => "conversion",
        JobKind::Storage => "storage report",
        JobKind::Index => "index build",
    }
}

/// The text a panic was raised with (`panic!("…")`), if it is text.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .map_or_else(|| "a panic".to_owned(), |m| format!("panic: {m}"))
}

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
        f(&mut lock(&self.job.data));
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

    /// `work`, which stops by itself between its steps once cancelled; a step that waits on a
    /// server (up to the location's time limit) is not waited for: [`CANCEL_GRACE`] after the
    /// cancel, `work` is dropped — a read stops, an open transaction is rolled back — and the
    /// job ends cancelled, `stopped` saying what was stopped.
    pub async fn stoppable<T>(
        &self,
        stopped: &str,
        work: impl Future<Output = ApiResult<T>>,
    ) -> ApiResult<T> {
        let give_up = async {
            self.cancelled().await;
            tokio::time::sleep(CANCEL_GRACE).await;
        };
        tokio::select! {
            biased;
            done = work => done,
            () = give_up => Err(ApiError::new(
                ErrorCode::Cancelled,
                format!("{stopped} was cancelled while waiting for the database"),
            )),
        }
    }
}

/// How long a cancelled job may take to stop by itself before it is dropped.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The job registry.
#[derive(Default)]
pub struct Jobs {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    finished: Mutex<VecDeque<String>>,
}

impl Jobs {
    /// Start `work` in the background and return the job id.
    ///
    /// The work runs as a task of its own: if it panics, the job ends as
    /// [`JobState::Failed`] with an `internal` error saying so (never "running" forever), and
    /// the rest of the backend carries on.
    pub fn spawn<F, Fut>(self: &Arc<Self>, kind: JobKind, work: F) -> String
    where
        F: FnOnce(JobHandle) -> Fut + Send + 'static,
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
        lock(&self.jobs).insert(id.clone(), Arc::clone(&job));
        let handle = JobHandle {
            job: Arc::clone(&job),
            cancel: rx,
        };
        let work_handle = handle.clone();
        let task = tokio::spawn(async move { work(work_handle).await });
        let registry = Arc::clone(self);
        let job_id = id.clone();
        tokio::spawn(async move {
            let outcome = match task.await {
                Ok(outcome) => outcome,
                Err(e) => Err(ApiError::new(
                    ErrorCode::Internal,
                    match e.try_into_panic() {
                        Ok(payload) => format!(
                            "the {} job failed unexpectedly ({}); nothing else was affected",
                            kind_name(kind),
                            panic_message(payload.as_ref())
                        ),
                        Err(_) => format!("the {} job was stopped", kind_name(kind)),
                    },
                )),
            };
            let cancelled = handle.is_cancelled();
            handle.update(|d| match outcome {
                Ok(result) => {
                    d.state = JobState::Succeeded;
                    d.result = Some(result);
                }
                Err(e)
                    if e.code == ErrorCode::Cancelled
                        || (cancelled && e.code != ErrorCode::Internal) =>
                {
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
        let mut finished = lock(&self.finished);
        finished.push_back(id);
        while finished.len() > KEEP_FINISHED {
            if let Some(old) = finished.pop_front() {
                lock(&self.jobs).remove(&old);
            }
        }
    }

    fn get(&self, id: &str) -> ApiResult<Arc<Job>> {
        lock(&self.jobs)
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))
    }

    /// The job's state and the events after `cursor`.
    pub fn poll(&self, id: &str, cursor: u32) -> ApiResult<JobSnapshot> {
        let job = self.get(id)?;
        let d = lock(&job.data);
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

    /// Ask a job to stop (no effect on a finished job: it keeps its state and result).
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
