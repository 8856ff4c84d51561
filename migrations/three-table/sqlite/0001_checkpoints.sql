CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_ns_hash TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB NOT NULL,
    metadata BLOB NOT NULL,
    gmt_create TEXT NOT NULL,
    gmt_modified TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns_hash, checkpoint_id)
);
