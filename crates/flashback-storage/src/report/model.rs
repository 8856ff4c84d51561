//! The storage report's shape (`docs/storage.md`): every figure a count and the bytes of
//! stored columns as stored (`length(col)` on SQLite, `octet_length(col)` on Postgres).

use serde::{Deserialize, Serialize};

/// Rows and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Tally {
    /// Rows (or values).
    pub count: u64,
    /// Their bytes as stored.
    pub bytes: u64,
}

impl Tally {
    pub(crate) fn add(&mut self, bytes: u64) {
        self.count += 1;
        self.bytes += bytes;
    }
}

/// What a set of rows takes, by kind of row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Usage {
    /// Checkpoint rows and the bytes of their documents (`checkpoints.checkpoint`; on
    /// LangGraph's SQLite schema the channel values are inside them).
    pub checkpoints: Tally,
    /// The bytes of the checkpoints' metadata (`checkpoints.metadata`).
    pub metadata_bytes: u64,
    /// Blob rows (`checkpoint_blobs`; none on LangGraph's SQLite schema) and their values.
    pub blobs: Tally,
    /// Pending writes and their values.
    pub writes: Tally,
    /// Documents + metadata + blobs + writes.
    pub total_bytes: u64,
}

impl Usage {
    /// Fill in [`Usage::total_bytes`].
    pub(crate) fn totalled(mut self) -> Usage {
        self.total_bytes =
            self.checkpoints.bytes + self.metadata_bytes + self.blobs.bytes + self.writes.bytes;
        self
    }
}

/// A thread's (or a namespace's) usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct KeyedUsage {
    /// The thread id (in `by_thread`) or the namespace (in `by_namespace`).
    pub key: String,
    /// What its rows take.
    pub usage: Usage,
}

/// The values of one channel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChannelUsage {
    /// The channel.
    pub channel: String,
    /// Values inside the checkpoint documents (LangGraph SQLite: msgpack values in
    /// `channel_values`; LangGraph Postgres: the JSONB primitives in `channel_values`).
    pub inline: Tally,
    /// Blob rows (`checkpoint_blobs`).
    pub blobs: Tally,
    /// Pending writes to the channel.
    pub writes: Tally,
}

/// The writes of one node (the name in the write's `task_path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NodeUsage {
    /// `~__pregel_pull, NAME` → `NAME`; a Send task (`~__pregel_push, …`) → `Send`; an empty
    /// path (a database from before `task_path`) → `""`; else the path's first part.
    pub node: String,
    /// Its writes and their values.
    pub writes: Tally,
}

/// What one checkpoint added to the database.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckpointSize {
    /// Thread.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent id.
    pub parent_checkpoint_id: Option<String>,
    /// The document's bytes (with its inline values).
    pub document_bytes: u64,
    /// The metadata's bytes.
    pub metadata_bytes: u64,
    /// The blob rows it introduced: the versions no older checkpoint of its namespace names.
    pub blobs: Tally,
    /// Its pending writes.
    pub writes: Tally,
    /// Document + metadata + blobs + writes.
    pub total_bytes: u64,
}

/// A channel stored whole again at (nearly) every step while growing: O(n²) bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QuadraticChannel {
    /// Thread.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// The channel.
    pub channel: String,
    /// How many times its value was stored (inline copies or blob versions).
    pub stores: u64,
    /// Their bytes.
    pub stored_bytes: u64,
    /// The last stored value's bytes (what storing it once would take).
    pub last_bytes: u64,
}

/// Where a stored value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ValueKind {
    /// Inside a checkpoint document.
    Inline,
    /// A blob row.
    Blob,
    /// A pending write.
    Write,
}

/// One stored value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ValueSize {
    /// Inline, blob or write.
    pub kind: ValueKind,
    /// Thread.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// The checkpoint holding it (a blob: the oldest checkpoint naming its version; `None`
    /// when none does).
    pub checkpoint_id: Option<String>,
    /// The channel.
    pub channel: String,
    /// A blob's version.
    pub version: Option<String>,
    /// A write's task path.
    pub task_path: Option<String>,
    /// Its bytes as stored.
    pub bytes: u64,
}

/// Rows nothing reaches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Orphans {
    /// Writes whose checkpoint row is missing.
    pub writes: Tally,
    /// Blob rows no checkpoint names (three-table: nor is the base of a delta one names).
    pub blobs: Tally,
}

/// A SQLite file's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SqliteFile {
    /// `PRAGMA page_size`.
    pub page_size: u64,
    /// `PRAGMA page_count`.
    pub page_count: u64,
    /// `PRAGMA freelist_count`: pages a VACUUM would return.
    pub free_pages: u64,
    /// `free_pages × page_size`.
    pub free_bytes: u64,
}

/// A Postgres table's size on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Relation {
    /// The table.
    pub table: String,
    /// `pg_total_relation_size`: table, TOAST and indexes.
    pub total_bytes: u64,
    /// `pg_relation_size`: the table's main fork.
    pub table_bytes: u64,
    /// `pg_total_relation_size` of its TOAST table (with the TOAST index).
    pub toast_bytes: u64,
    /// `pg_indexes_size`.
    pub index_bytes: u64,
}

/// A file of a `langgraph dev` state folder (`.langgraph_api/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FileSize {
    /// The file's name (`.langgraph_checkpoint.1.pckl`, …).
    pub file: String,
    /// Its size on disk.
    pub bytes: u64,
}

/// The database's files or relations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Space {
    /// SQLite: the file's pages.
    pub sqlite: Option<SqliteFile>,
    /// Postgres: the checkpoint tables.
    pub relations: Vec<Relation>,
    /// A `langgraph dev` folder: the state folder's files (the pickles hold more than the
    /// byte strings the report counts: keys, ids, pickle framing).
    #[serde(default)]
    pub files: Vec<FileSize>,
}

/// Rows that could not be measured (counted, the rest reported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Unmeasured {
    /// How many.
    pub count: u64,
    /// The first few, each `thread/ns/checkpoint: why` (a dev folder: also each file that
    /// cannot be read, `path cannot be read (why): …`).
    pub examples: Vec<String>,
}

/// What a repeated payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum PayloadKind {
    /// A whole stored value (an inline value, a blob row or a write's value).
    Value,
    /// A string inside a value.
    String,
    /// A byte string (`bytes`) inside a value.
    Bytes,
}

/// Where a payload is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PayloadPlace {
    /// In a document, a blob row or a write.
    pub kind: ValueKind,
    /// Thread.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// The checkpoint holding it (a blob: the oldest checkpoint naming its version; `None`
    /// when none does).
    pub checkpoint_id: Option<String>,
    /// The channel.
    pub channel: String,
    /// The path inside the value (`messages[3].content[1].image_url.url`; empty: the value).
    pub path: String,
}

/// Repeated payloads of one kind, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepeatTotals {
    /// Distinct payloads stored more than once.
    pub payloads: u64,
    /// Their copies, all of them.
    pub copies: u64,
    /// The copies' bytes.
    pub stored_bytes: u64,
    /// What storing each payload once would save: `(copies − 1) × size`, summed.
    pub saved_bytes: u64,
}

/// One payload stored more than once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepeatedPayload {
    /// A whole value, a string or bytes.
    pub payload: PayloadKind,
    /// One copy's bytes.
    pub bytes: u64,
    /// How many times it is stored.
    pub copies: u64,
    /// `(copies − 1) × bytes`.
    pub saved_bytes: u64,
    /// The start of a string (80 characters at most); the first bytes of `bytes` in hex;
    /// empty for a whole value.
    pub preview: String,
    /// Where one of its copies is (the first met).
    pub place: PayloadPlace,
}

/// Identical payloads stored again and again (docs/storage.md "Duplicated payloads").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Duplicates {
    /// Payloads smaller than this are not compared.
    pub min_bytes: u64,
    /// Whole values stored byte for byte more than once.
    pub values: RepeatTotals,
    /// Strings and byte strings inside values stored more than once (a message's text in every
    /// checkpoint's copy of the list; a system prompt in every thread). Overlaps `values`.
    pub strings: RepeatTotals,
    /// The repeated payloads that cost the most (by `saved_bytes`).
    pub largest: Vec<RepeatedPayload>,
    /// The comparison had to forget payloads met only once to stay within its memory bound:
    /// the figures are a lower bound.
    pub approximate: bool,
}

/// Files of one media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EmbeddedType {
    /// `image/png`, `application/pdf`, …; `application/octet-stream`: base64 of binary of no
    /// known format.
    pub media_type: String,
    /// Strings (every stored copy counts).
    pub count: u64,
    /// Their bytes as text.
    pub bytes: u64,
}

/// One file stored as base64 text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EmbeddedFile {
    /// Its media type.
    pub media_type: String,
    /// The string's bytes.
    pub bytes: u64,
    /// The file's size.
    pub decoded_bytes: u64,
    /// A `data:` URL (else bare base64).
    pub data_url: bool,
    /// How many times this file is stored (identical text).
    pub copies: u64,
    /// Where one copy is (the first met).
    pub place: PayloadPlace,
}

/// Files (images, PDFs, audio…) stored as base64 strings inside values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EmbeddedFiles {
    /// Strings at least this long are looked at.
    pub min_bytes: u64,
    /// Every stored copy, and the bytes of their text.
    pub total: Tally,
    /// By media type, largest first.
    pub by_type: Vec<EmbeddedType>,
    /// The files that take the most (`bytes × copies`), each once.
    pub largest: Vec<EmbeddedFile>,
}

/// The Sends to one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SendTarget {
    /// The node a `Send` goes to (`?`: a packet that is not a readable `Send`).
    pub node: String,
    /// Pending writes to `__pregel_tasks` carrying a Send to it.
    pub writes: Tally,
    /// Sends to it inside stored `__pregel_tasks` values (each item's encoded bytes).
    pub stored: Tally,
}

/// `__pregel_tasks`: the Send packets of map-reduce fan-outs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Sends {
    /// Pending writes to `__pregel_tasks`.
    pub writes: Tally,
    /// Stored `__pregel_tasks` values (inline or blob rows).
    pub stored: Tally,
    /// By target node, largest first.
    pub by_node: Vec<SendTarget>,
    /// The largest Send writes.
    pub largest: Vec<ValueSize>,
}

/// Where the bytes of a checkpoint database (or one thread) are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StorageReport {
    /// The thread reported on; `None`: the whole database.
    pub thread_id: Option<String>,
    /// The schema, as detected.
    pub schema: String,
    /// `langgraph-sqlite`, `langgraph-postgres`, `three-table-sqlite`,
    /// `three-table-postgres` or `devserver` (a `langgraph dev` state folder's pickles).
    pub layout: String,
    /// Lists are cut to this many rows (largest first).
    pub top: u32,
    /// Everything in scope.
    pub totals: Usage,
    /// Threads with rows in scope.
    pub thread_count: u64,
    /// The largest threads (all their namespaces).
    pub by_thread: Vec<KeyedUsage>,
    /// The largest namespaces (across threads).
    pub by_namespace: Vec<KeyedUsage>,
    /// The largest channels (inline + blobs + writes).
    pub by_channel: Vec<ChannelUsage>,
    /// The nodes whose writes take the most.
    pub by_node: Vec<NodeUsage>,
    /// One thread: each checkpoint's size, oldest first per namespace (empty for the whole
    /// database).
    pub growth: Vec<CheckpointSize>,
    /// Channels stored whole again at every step, growing.
    pub quadratic: Vec<QuadraticChannel>,
    /// The largest checkpoints (by [`CheckpointSize::total_bytes`]).
    pub largest_checkpoints: Vec<CheckpointSize>,
    /// The largest stored values.
    pub largest_values: Vec<ValueSize>,
    /// Identical payloads stored more than once.
    pub duplicates: Duplicates,
    /// Files stored as base64 text.
    pub embedded_files: EmbeddedFiles,
    /// Send packets (`__pregel_tasks`).
    pub sends: Sends,
    /// Orphaned rows.
    pub orphans: Orphans,
    /// Free pages (SQLite), relation sizes (Postgres) or file sizes (a dev folder).
    pub space: Space,
    /// Rows that could not be measured.
    pub unmeasured: Unmeasured,
}
