//! Watch a key: every checkpoint of a thread's namespace where the value at a path changed,
//! across branches, with the writes that produced it (`flashback_engine::watch`).

use crate::error::{ApiError, ApiResult};
use crate::summaries::ensure_thread;
use crate::types::WatchRequest;
use crate::Api;
use flashback_engine::watch::{KeyPath, WatchLimits, WatchReport};

impl Api {
    /// The checkpoints where the value at `path` changed, along lineage: the line from the
    /// root to `along` (default: the head) first, then each other branch's. A path that does
    /// not parse is a usage error ([`ErrorCode::InvalidInput`](crate::ErrorCode)).
    pub async fn watch_key(&self, req: WatchRequest) -> ApiResult<WatchReport> {
        let path = KeyPath::parse(&req.path).map_err(|e| ApiError::invalid(e.to_string()))?;
        let s = self.session(&req.db)?;
        s.require_key()?;
        let store = s.store.as_ref();
        ensure_thread(store, &req.thread_id).await?;
        let limits = match req.max_value_bytes {
            Some(n) => WatchLimits {
                max_value_bytes: usize::try_from(n).unwrap_or(usize::MAX),
            },
            None => WatchLimits::default(),
        };
        Ok(flashback_engine::watch::watch(
            store,
            &req.thread_id,
            &req.checkpoint_ns,
            &path,
            &self.delta_for(&req.db)?,
            limits,
            req.along.as_deref(),
        )
        .await?)
    }
}
