//! Writes: edit checks, forks, merges, delete, prune and copy. Each write is one transaction
//! on a connection opened for it (the session's own connection stays read-only).

use crate::error::{ApiError, ApiResult};
use crate::forks::{fork, refuse_subgraph};
use crate::summaries::{checkpoint_not_found, ensure_thread, thread_checked};
use crate::types::{
    self, CheckpointKey, CopyRequest, DeleteBranchRequest, DeleteReport, DeleteRequest, EditCheck,
    ForkRequest, MergeRequest, PruneRequest, PruneSummary, RepairRequest, ValidateEditRequest,
};
use crate::{Api, CopyReport, ForkResult, RepairReport};
use flashback_storage::maintenance::SaverMaintenance;
use flashback_storage::Write;
use serde_json::Value as Json;
use std::sync::Arc;

impl Api {
    pub(crate) async fn writable(&self, db: &str) -> ApiResult<Box<dyn SaverMaintenance>> {
        let s = self.session(db)?;
        Ok(flashback_storage::open(&s.connect, Write { key: s.write_key() }).await?)
    }

    /// Whether an edited value fits its channel (nothing is written).
    pub async fn validate_edit(&self, req: ValidateEditRequest) -> ApiResult<EditCheck> {
        let s = self.session(&req.db)?;
        let tuple = s
            .store
            .get_tuple(&req.thread_id, &req.checkpoint_ns, Some(&req.checkpoint_id))
            .await?
            .ok_or_else(|| {
                checkpoint_not_found(&req.thread_id, &req.checkpoint_ns, &req.checkpoint_id)
            })?;
        let channel = &req.edit.channel;
        if channel.is_empty() {
            return Ok(EditCheck {
                ok: false,
                message: Some("choose a channel".into()),
                path: None,
            });
        }
        let template = tuple.checkpoint.value(channel).map(Arc::as_ref);
        Ok(
            match flashback_codec::unview::decoded_from_view(
                &req.edit.value,
                template,
                &flashback_engine::edit::channel_path(channel),
            ) {
                Ok(_) => EditCheck {
                    ok: true,
                    message: None,
                    path: None,
                },
                Err(e) => EditCheck {
                    ok: false,
                    path: Some(e.path().to_owned()),
                    message: Some(e.to_string()),
                },
            },
        )
    }

    /// Fork a checkpoint: a copy, or with edited channels. One transaction.
    pub async fn fork_checkpoint(&self, req: ForkRequest) -> ApiResult<ForkResult> {
        let s = self.session(&req.db)?;
        if let Some(writes) = s.store.server_writes() {
            let edits = req
                .edits
                .into_iter()
                .map(|e| (e.channel, e.value))
                .collect();
            return crate::serverwrites::fork(
                s.store.as_ref(),
                writes,
                &req.thread_id,
                &req.checkpoint_ns,
                &req.checkpoint_id,
                edits,
                req.as_node.as_deref(),
            )
            .await;
        }
        s.require_sealable()?;
        let saver = self.writable(&req.db).await?;
        let edits: Vec<(String, Json)> = req
            .edits
            .into_iter()
            .map(|e| (e.channel, e.value))
            .collect();
        let delta = self.delta_for(&req.db)?;
        fork(
            saver.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.checkpoint_id,
            &edits,
            &delta,
        )
        .await
    }

    /// Write a merge checkpoint on branch A. One transaction.
    pub async fn merge_branches(&self, req: MergeRequest) -> ApiResult<ForkResult> {
        refuse_subgraph(&req.checkpoint_ns, "merge into")?;
        self.session(&req.db)?.require_sealable()?;
        let saver = self.writable(&req.db).await?;
        let take: Vec<_> = req
            .channels
            .into_iter()
            .map(|c| (c.channel, c.mode))
            .collect();
        let merged = flashback_engine::merge::merge_branches(
            saver.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.into,
            &req.from,
            &take,
            &self.delta_for(&req.db)?,
        )
        .await;
        thread_checked(saver.as_ref(), &req.thread_id, merged).await
    }

    /// Delete a thread (or, with `dry_run`, count what would go). One transaction, which
    /// plans from the rows it locked and reports what it deleted.
    pub async fn delete_thread(&self, req: DeleteRequest) -> ApiResult<DeleteReport> {
        let s = self.session(&req.db)?;
        if let Some(writes) = s.store.server_writes() {
            return crate::serverwrites::delete(
                s.store.as_ref(),
                writes,
                &req.thread_id,
                req.dry_run,
            )
            .await;
        }
        use flashback_storage::maintenance::PruneStrategy;
        let saver = self.writable(&req.db).await?;
        ensure_thread(saver.as_ref(), &req.thread_id).await?;
        let report = saver
            .prune(
                std::slice::from_ref(&req.thread_id),
                PruneStrategy::Delete,
                req.dry_run,
            )
            .await?;
        Ok(DeleteReport {
            thread_id: req.thread_id,
            checkpoints: types::count(report.checkpoints.len()),
            writes: types::count(report.writes),
            dry_run: req.dry_run,
        })
    }

    /// Prune threads (or preview it): groups of threads in short transactions, each planned
    /// from the rows it locked (the preview: one read-only transaction). A thread that is not
    /// there is an error (nothing is pruned).
    pub async fn prune_threads(&self, req: PruneRequest) -> ApiResult<PruneSummary> {
        if req.thread_ids.is_empty() {
            return Err(ApiError::invalid("choose at least one thread to prune"));
        }
        let saver = self.writable(&req.db).await?;
        for thread in &req.thread_ids {
            ensure_thread(saver.as_ref(), thread).await?;
        }
        let r = saver
            .prune(&req.thread_ids, req.strategy, req.dry_run)
            .await?;
        Ok(summary(r))
    }

    /// Delete a branch: a checkpoint (a fork) and every checkpoint descending from it, with
    /// their writes, the subgraph calls they started and the blobs left unreferenced; or
    /// preview it. One transaction, planned from the rows it locked; with
    /// `expect_checkpoints` (what the preview showed) a branch that changed since is left
    /// alone (`skipped`). The thread's first checkpoint is refused (that is Delete thread).
    pub async fn delete_branch(&self, req: DeleteBranchRequest) -> ApiResult<PruneSummary> {
        let saver = self.writable(&req.db).await?;
        let query = flashback_storage::ListQuery::one(
            &req.thread_id,
            &req.checkpoint_ns,
            Some(&req.checkpoint_id),
        );
        let Some(head) = saver.list_headers(&query).await?.into_iter().next() else {
            ensure_thread(saver.as_ref(), &req.thread_id).await?;
            return Err(checkpoint_not_found(
                &req.thread_id,
                &req.checkpoint_ns,
                &req.checkpoint_id,
            ));
        };
        if head.parent_checkpoint_id.is_none() && req.checkpoint_ns.is_empty() {
            return Err(ApiError::invalid(format!(
                "checkpoint {} is where thread {:?} starts: everything descends from it; \
                 delete the thread instead",
                req.checkpoint_id, req.thread_id
            )));
        }
        let r = match req.expect_checkpoints.filter(|_| !req.dry_run) {
            Some(n) => {
                saver
                    .delete_branch_as_judged(
                        &req.thread_id,
                        &req.checkpoint_ns,
                        &req.checkpoint_id,
                        n as usize,
                    )
                    .await?
            }
            None => {
                saver
                    .delete_branch(
                        &req.thread_id,
                        &req.checkpoint_ns,
                        &req.checkpoint_id,
                        req.dry_run,
                    )
                    .await?
            }
        };
        Ok(summary(r))
    }

    /// Rebuild the damaged blob rows of a three-table thread from the writes that produced
    /// them (`flashback_engine::repair`), or preview it. One transaction.
    pub async fn repair_blobs(&self, req: RepairRequest) -> ApiResult<RepairReport> {
        if !req.dry_run {
            self.session(&req.db)?.require_sealable()?;
        }
        let saver = self.writable(&req.db).await?;
        ensure_thread(saver.as_ref(), &req.thread_id).await?;
        Ok(
            flashback_engine::repair::repair_blobs(saver.as_ref(), &req.thread_id, req.dry_run)
                .await?,
        )
    }

    /// Copy a thread (every namespace, write and blob) to a new thread id, in the same
    /// database or into another open one. One transaction on the target.
    pub async fn copy_thread(&self, req: CopyRequest) -> ApiResult<CopyReport> {
        if req.target_thread_id.is_empty() {
            return Err(ApiError::invalid("give the new thread id"));
        }
        let s = self.session(&req.db)?;
        if let (Some(writes), None) = (s.store.server_writes(), &req.to_db) {
            return crate::serverwrites::copy(s.store.as_ref(), writes, &req.thread_id).await;
        }
        // Copying a thread that is not there copies nothing: not found, not "0 checkpoints".
        ensure_thread(s.store.as_ref(), &req.thread_id).await?;
        Ok(match &req.to_db {
            // Rows copied as stored (nothing decoded or sealed again).
            None => {
                self.writable(&req.db)
                    .await?
                    .copy_thread(&req.thread_id, &req.target_thread_id)
                    .await?
            }
            Some(to) => {
                let from = self.session(&req.db)?;
                self.session(to)?.require_sealable()?;
                let to = self.writable(to).await?;
                flashback_storage::maintenance::copy_thread_between(
                    from.store.as_ref(),
                    to.as_ref(),
                    &req.thread_id,
                    &req.target_thread_id,
                )
                .await?
            }
        })
    }
}

fn summary(r: flashback_storage::maintenance::PruneReport) -> PruneSummary {
    PruneSummary {
        checkpoints: r
            .checkpoints
            .into_iter()
            .map(|(thread_id, checkpoint_ns, checkpoint_id)| CheckpointKey {
                thread_id,
                checkpoint_ns,
                checkpoint_id,
            })
            .collect(),
        writes: types::count(r.writes),
        blobs: types::count(r.blobs),
        dry_run: r.dry_run,
        skipped: r.skipped,
    }
}
