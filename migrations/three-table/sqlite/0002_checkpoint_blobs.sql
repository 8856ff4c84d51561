CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns_hash TEXT NOT NULL,
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'full' CHECK (kind IN ('full', 'append', 'merge')),
    base_version TEXT,
    depth INTEGER NOT NULL DEFAULT 0,
    blob_data BLOB,
    gmt_create TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns_hash, channel, version)
);
