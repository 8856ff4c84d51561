//! `start_storage_report`: where the bytes of a database (or one thread) are, as a job —
//! progress per thread, cancel between threads; the result is a
//! [`flashback_storage::report::StorageReport`]. The storage crate reads it in one snapshot
//! on a read-only connection of its own; nothing is written.

use super::JobProgress;
use crate::commands::to_json;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{JobKind, StorageRequest};
use crate::Api;
use flashback_storage::report::{self, Scope};
use std::sync::Arc;

/// Rows per list when the request does not say.
const DEFAULT_TOP: u32 = 20;
/// At most this many rows per list.
const MAX_TOP: u32 = 10_000;

impl Api {
    /// Start a storage report (a job: progress per thread, cancel between threads; the result
    /// is a [`crate::StorageReport`]). Nothing is written.
    pub async fn start_storage_report(&self, req: StorageRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        let top = req.top.unwrap_or(DEFAULT_TOP);
        if top == 0 || top > MAX_TOP {
            return Err(ApiError::invalid(format!(
                "the number of rows per list must be between 1 and {MAX_TOP}"
            )));
        }
        let scope = Scope {
            thread_id: req.thread_id,
            top,
        };
        let connect = s.connect.clone();
        let schema = s.store.schema().clone();
        Ok(self.jobs.spawn(JobKind::Storage, move |job| async move {
            let progress = Arc::new(JobProgress(job.clone()));
            let measuring = async {
                report::measure(&connect, &schema, scope, progress)
                    .await
                    .map_err(ApiError::from)
            };
            match job.stoppable("the storage report", measuring).await {
                Ok(report) => to_json(report),
                Err(e) if e.code == ErrorCode::Cancelled => Err(e),
                Err(_) if job.is_cancelled() => Err(ApiError::new(
                    ErrorCode::Cancelled,
                    "the storage report was cancelled",
                )),
                Err(e) => Err(e),
            }
        }))
    }
}
