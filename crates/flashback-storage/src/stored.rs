//! One value of a checkpoint as stored, read alone ([`CheckpointStore::stored_value`]): where
//! it is and its undecoded bytes. Each backend reads it in its own folder (`sqlite/stored.rs`,
//! `postgres/stored.rs`); other sources answer `None`.
//!
//! [`CheckpointStore::stored_value`]: crate::CheckpointStore::stored_value

/// One stored value of a checkpoint: a channel's value, or one of its pending writes
/// ([`CheckpointStore::stored_value`](crate::CheckpointStore::stored_value)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueAt<'a> {
    /// The value of a channel in the checkpoint.
    Channel(&'a str),
    /// The pending write of a task at an index.
    Write {
        /// The task that wrote it.
        task_id: &'a str,
        /// Its index among the task's writes.
        idx: i64,
    },
}

/// A stored value's bytes, undecoded: its serde tag (`msgpack`…) and payload, decrypted when
/// the store holds the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBytes {
    /// The serde type tag.
    pub tag: String,
    /// The payload.
    pub bytes: Vec<u8>,
}
