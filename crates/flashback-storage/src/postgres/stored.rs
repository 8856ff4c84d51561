//! One stored value of a checkpoint read alone ([`CheckpointStore::stored_value`]): a
//! channel's blob at the version the checkpoint names, or one pending write's value — one
//! indexed row, nothing else read or decoded.
//!
//! [`CheckpointStore::stored_value`]: crate::CheckpointStore::stored_value

use super::sql::{Arg, Sql};
use super::PostgresStore;
use crate::stored::{StoredBytes, ValueAt};
use crate::StoreError;
use sqlx::Row as _;

impl PostgresStore {
    /// See [`CheckpointStore::stored_value`](crate::CheckpointStore::stored_value). A value
    /// held inline in the document (a small primitive), a shallow saver's and a missing one:
    /// `None` (the caller reads the checkpoint).
    pub(super) async fn stored(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        at: ValueAt<'_>,
    ) -> Result<Option<StoredBytes>, StoreError> {
        if !self.info().holds.checkpoints() || self.info().shallow() {
            return Ok(None);
        }
        let sql = match at {
            ValueAt::Channel(channel) => Sql::new(
                "SELECT b.type, b.blob FROM checkpoints c JOIN checkpoint_blobs b \
                 ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
                 AND b.channel = $4 AND b.version = c.checkpoint->'channel_versions'->>$4 \
                 WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3",
            )
            .with(Arg::Text(thread_id.to_owned()))
            .with(Arg::Text(checkpoint_ns.to_owned()))
            .with(Arg::Text(checkpoint_id.to_owned()))
            .with(Arg::Text(channel.to_owned())),
            ValueAt::Write { task_id, idx } => Sql::new(
                "SELECT type, blob FROM checkpoint_writes WHERE thread_id = $1 \
                 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND task_id = $4 AND idx = $5",
            )
            .with(Arg::Text(thread_id.to_owned()))
            .with(Arg::Text(checkpoint_ns.to_owned()))
            .with(Arg::Text(checkpoint_id.to_owned()))
            .with(Arg::Text(task_id.to_owned()))
            .with(Arg::Int(idx)),
        };
        let rows = self.read_rows(sql).await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let tag: Option<String> = row.try_get(0).map_err(|e| self.err(e))?;
        let bytes: Option<Vec<u8>> = row.try_get(1).map_err(|e| self.err(e))?;
        let (Some(tag), Some(bytes)) = (tag, bytes) else {
            return Ok(None);
        };
        Ok(match &self.key {
            Some(k) if flashback_codec::cipher::is_encrypted(&tag) => k
                .open(&tag, &bytes)
                .ok()
                .map(|(tag, bytes)| StoredBytes { tag, bytes }),
            _ => Some(StoredBytes { tag, bytes }),
        })
    }
}
