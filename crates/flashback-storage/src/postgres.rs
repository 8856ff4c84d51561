//! PostgreSQL databases written by `langgraph-checkpoint-postgres`, read with sqlx.
//!
//! Every read runs in a `READ ONLY` (and `REPEATABLE READ`, so the few queries of one call see
//! one snapshot) transaction that is rolled back at the end: browsing never writes. Writing
//! is only the explicit [`crate::CheckpointSaver`] operations (`postgres_write.rs`), each in
//! its own read-write transaction.
//!
//! ```text
//!  list_tuples(query) / get_tuple(…)            (a fixed number of queries, whatever the rows)
//!   ├─ checkpoint rows: Python's WHERE / ORDER BY checkpoint_id DESC / LIMIT
//!   │     └──▶ blocking thread: parse the JSONB documents (inline values, versions)
//!   ├─ pending writes of all listed checkpoints (one query)
//!   ├─ pre-v4 rows only: the parents' `__pregel_tasks` writes (pending sends)
//!   │     └──▶ blocking thread: decode and group the writes and sends
//!   ├─ rare: exact `jsonb_each_text` texts of non-string, non-integer versions
//!   └─ the distinct (thread, ns, channel, version) blobs the rows reference, in ≤ 4 slices
//!         └──▶ blocking threads: decode each blob ONCE, shared as `Arc<Decoded>`
//!  then assemble the tuples (blocking thread).
//! ```
//!
//! Channel values follow Python's `_load_checkpoint_tuple`: the inline JSONB
//! `channel_values` (primitives; absent on pre-July-2025 rows) overlaid by the blobs reached
//! through the checkpoint's own `channel_versions`, skipping `empty` blob rows.
//!
//! The deprecated shallow saver's layout (no `checkpoints.checkpoint_id`, blobs keyed without
//! version) is read too: one checkpoint per thread and namespace, id from `checkpoint->>'id'`,
//! no parent, values from the blobs only (as `ShallowPostgresSaver` does).

use crate::decode::{checkpoint_from_json, json_primitive};
use crate::model::*;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{decode_typed, Decoded, Value};
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{AssertSqlSafe, Connection as _, Postgres, Row as _};
use std::collections::{HashMap, HashSet};
use std::str::FromStr as _;
use std::sync::Arc;
use std::time::Duration;

#[path = "postgres_write.rs"]
mod write;

/// Connections in the pool.
const MAX_CONNECTIONS: u32 = 4;
/// How long connecting (or waiting for a pooled connection) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How every read starts.
const BEGIN_READ_ONLY: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
/// The blobs of one `list_tuples` call are fetched in up to this many queries, so that
/// decoding the first slices overlaps with fetching the next.
const BLOB_QUERIES: usize = 4;
/// ... but never in slices smaller than this.
const MIN_BLOB_SLICE: usize = 256;
/// The channel holding Sends (`langgraph.checkpoint.serde.types.TASKS`).
const TASKS: &str = "__pregel_tasks";

/// A LangGraph Postgres checkpoint database, read through a small connection pool.
pub struct PostgresStore {
    pool: PgPool,
    /// The schema detected on connect (a placeholder when [`PostgresStore::connect_for_setup`]
    /// found no checkpoint tables).
    schema: SchemaInfo,
    /// The schema detected after [`CheckpointSaver::setup`](crate::CheckpointSaver::setup)
    /// changed it; it takes precedence over `schema`.
    after_setup: std::sync::OnceLock<SchemaInfo>,
    target: Target,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target.describe())
            .field("schema", self.info())
            .finish()
    }
}

impl PostgresStore {
    /// The connection pool (maintenance operations run their own statements on it).
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Connect to `url` (`postgres://` or `postgresql://`), check that it holds LangGraph
    /// checkpoint tables in the connection's `search_path`, and detect their generation.
    ///
    /// Errors: unreachable server → [`StoreError::Connection`]; bad password or unknown role →
    /// [`StoreError::Auth`]; no such database → [`StoreError::NotFound`]; no (or unknown)
    /// checkpoint tables → [`StoreError::UnsupportedSchema`]. Messages never contain the
    /// password.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        Self::open(url, false).await
    }

    /// Connect for writing to a database that may still be empty: like [`Self::connect`],
    /// except that missing checkpoint tables are not an error (tables of an unknown layout
    /// still are: [`StoreError::UnsupportedSchema`]). Call
    /// [`CheckpointSaver::setup`](crate::CheckpointSaver::setup) next to create (or upgrade)
    /// the schema as Python's `PostgresSaver.setup()` does; the store's [`SchemaInfo`] is
    /// detected again after it.
    pub async fn connect_for_setup(url: &str) -> Result<PostgresStore, StoreError> {
        Self::open(url, true).await
    }

    async fn open(url: &str, for_setup: bool) -> Result<PostgresStore, StoreError> {
        let target = Target::from_url(url);
        let mut options = PgConnectOptions::from_str(url).map_err(|e| {
            StoreError::InvalidInput(target.redact(format!("invalid Postgres URL: {e}")))
        })?;
        if options.get_application_name().is_none() {
            options = options.application_name("flashback");
        }
        let target = target.with_options(&options);

        // A direct first connection, so that a refused port or a bad password is reported at
        // once and precisely (the pool would retry refused connections until its timeout).
        let mut conn =
            match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options)).await
            {
                Ok(Ok(conn)) => conn,
                Ok(Err(e)) => return Err(target.error(e, true)),
                Err(_) => {
                    return Err(StoreError::Connection(format!(
                        "timed out after {}s connecting to {}",
                        CONNECT_TIMEOUT.as_secs(),
                        target.server
                    )))
                }
            };
        let schema = detect_schema(&mut conn, &target).await;
        let _ = conn.close().await;
        let schema = match schema {
            // Missing tables are what setup() creates; tables of an unknown layout stay an error.
            Err(StoreError::UnsupportedSchema { found })
                if for_setup && !found.starts_with(UNKNOWN_LAYOUT) =>
            {
                SchemaInfo {
                    backend: Backend::Postgres,
                    has_task_path: true,
                    migration_version: None,
                    shallow: false,
                    description: format!("postgres, not set up yet ({found})"),
                }
            }
            other => other?,
        };

        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .min_connections(0)
            .acquire_timeout(CONNECT_TIMEOUT)
            .idle_timeout(Some(Duration::from_secs(120)))
            .connect_lazy_with(options);
        Ok(PostgresStore {
            pool,
            schema,
            after_setup: std::sync::OnceLock::new(),
            target,
        })
    }

    /// The current schema (see [`CheckpointStore::schema`]).
    fn info(&self) -> &SchemaInfo {
        self.after_setup.get().unwrap_or(&self.schema)
    }

    /// Where the store is connected, without the password: `user@host:port/database`.
    pub fn target(&self) -> String {
        self.target.describe()
    }

    /// Close the pool's connections (they also close when the store is dropped).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn begin(&self) -> Result<sqlx::Transaction<'static, Postgres>, StoreError> {
        self.pool
            .begin_with(BEGIN_READ_ONLY)
            .await
            .map_err(|e| self.target.error(e, false))
    }

    fn err(&self, e: sqlx::Error) -> StoreError {
        self.target.error(e, false)
    }

    /// The id expression of a checkpoint row (a column, or the JSON id for the shallow saver).
    fn id_expr(&self) -> &'static str {
        if self.info().shallow {
            "(checkpoint->>'id')"
        } else {
            "checkpoint_id"
        }
    }

    /// Python's `_search_where` + `ORDER BY checkpoint_id DESC` + `LIMIT`.
    fn list_sql(&self, select: &str, q: &ListQuery) -> Sql {
        let id = self.id_expr();
        let mut sql = Sql::new(select);
        let mut wheres = Vec::new();
        if let Some(t) = &q.thread_id {
            wheres.push(format!("thread_id = {}", sql.arg(Arg::Text(t.clone()))));
        }
        if let Some(ns) = &q.checkpoint_ns {
            wheres.push(format!(
                "checkpoint_ns = {}",
                sql.arg(Arg::Text(ns.clone()))
            ));
        }
        if let Some(cid) = &q.checkpoint_id {
            wheres.push(format!("{id} = {}", sql.arg(Arg::Text(cid.clone()))));
        }
        if !q.filter.is_empty() {
            let filter = serde_json::Value::Object(q.filter.clone());
            wheres.push(format!("metadata @> {}::jsonb", sql.arg(Arg::Json(filter))));
        }
        if let Some(before) = &q.before {
            wheres.push(format!("{id} < {}", sql.arg(Arg::Text(before.clone()))));
        }
        if !wheres.is_empty() {
            sql.text.push_str(" WHERE ");
            sql.text.push_str(&wheres.join(" AND "));
        }
        sql.text.push_str(&format!(" ORDER BY {id} DESC"));
        if let Some(limit) = q.limit {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let p = sql.arg(Arg::Int(limit));
            sql.text.push_str(&format!(" LIMIT {p}"));
        }
        sql
    }

    /// `SELECT …` of full checkpoint rows (see [`RowKey`] and [`parse_rows`]).
    fn tuple_select(&self) -> String {
        let (id, parent) = if self.info().shallow {
            ("checkpoint->>'id'", "NULL::text")
        } else {
            ("checkpoint_id", "parent_checkpoint_id")
        };
        format!(
            "SELECT thread_id, checkpoint_ns, {id} AS checkpoint_id, {parent} AS parent_checkpoint_id, \
             checkpoint::text AS checkpoint, metadata::text AS metadata, \
             CASE jsonb_typeof(checkpoint->'v') WHEN 'number' THEN (checkpoint->>'v')::numeric < 4 \
               ELSE true END AS pre_v4 \
             FROM checkpoints"
        )
    }

    /// Run a checkpoint-row query and load everything the rows need, in one read-only
    /// transaction, with a fixed number of queries whatever the number of rows. CPU work
    /// (parsing, decoding) runs on blocking threads, overlapped with the next query.
    async fn load_tuples(&self, sql: Sql) -> Result<Vec<CheckpointTuple>, StoreError> {
        let shallow = self.info().shallow;
        let mut tx = self.begin().await?;
        let rows = sql
            .query()
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        if rows.is_empty() {
            let _ = tx.rollback().await;
            return Ok(Vec::new());
        }
        let keys = rows
            .iter()
            .map(RowKey::from_row)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;

        // Parse the documents while the writes are fetched; decode the writes while the
        // blobs are fetched.
        let parse_keys: Vec<String> = keys.iter().map(|k| k.checkpoint_id.clone()).collect();
        let parsing = tokio::task::spawn_blocking(move || parse_rows(&rows, &parse_keys, shallow));
        let write_rows = self.fetch_writes(&mut tx, &keys).await?;
        let send_rows = self.fetch_sends(&mut tx, &keys).await?;
        let row_index = RowIndex::new(&keys);
        let decoding_writes =
            tokio::task::spawn_blocking(move || decode_writes(&write_rows, &send_rows, &row_index));
        let mut docs = joined(parsing).await??;
        if !shallow {
            self.fetch_exact_versions(&mut tx, &keys, &mut docs).await?;
        }
        // Blobs in a few slices, each decoded on a blocking thread while the next arrives.
        let refs = self.blob_refs(&keys, &mut docs);
        let slice = refs.len().div_ceil(BLOB_QUERIES).max(MIN_BLOB_SLICE);
        let mut decoding = Vec::new();
        for (n, part) in refs.chunks(slice).enumerate() {
            let rows = self.fetch_blobs(&mut tx, part).await?;
            let offset = n * slice;
            decoding.push(tokio::task::spawn_blocking(move || {
                decode_blob_rows(&rows, offset)
            }));
        }
        let _ = tx.rollback().await;
        let mut blobs: Blobs = vec![None; refs.len()];
        for handle in decoding {
            for (i, value) in joined(handle).await?? {
                if let Some(slot) = blobs.get_mut(i) {
                    *slot = value;
                }
            }
        }
        let (writes, sends) = joined(decoding_writes).await??;
        joined(tokio::task::spawn_blocking(move || {
            assemble(keys, docs, &blobs, writes, &sends, shallow)
        }))
        .await
    }

    /// Version texts the client cannot render exactly as Postgres' `jsonb_each_text` does
    /// (non-integer numbers, non-scalars) are asked from the server. Rare: the savers write
    /// string versions, the conformance suite integers.
    async fn fetch_exact_versions(
        &self,
        tx: &mut PgConnection,
        keys: &[RowKey],
        docs: &mut [Doc],
    ) -> Result<(), StoreError> {
        let inexact: Vec<usize> = (0..docs.len()).filter(|&i| docs[i].inexact).collect();
        if inexact.is_empty() {
            return Ok(());
        }
        let ts = inexact.iter().map(|&i| keys[i].thread_id.clone()).collect();
        let ns = inexact.iter().map(|&i| keys[i].ns.clone()).collect();
        let cs = inexact
            .iter()
            .map(|&i| keys[i].checkpoint_id.clone())
            .collect();
        let rows = Sql::new(
            "SELECT r.i, e.key, e.value \
             FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(t, n, c, i) \
             JOIN checkpoints k ON k.thread_id = r.t AND k.checkpoint_ns = r.n AND k.checkpoint_id = r.c \
             CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(k.checkpoint->'channel_versions') = 'object' \
               THEN k.checkpoint->'channel_versions' ELSE '{}'::jsonb END) AS e",
        )
        .with(Arg::TextArray(ts))
        .with(Arg::TextArray(ns))
        .with(Arg::TextArray(cs))
        .query()
        .fetch_all(tx)
        .await
        .map_err(|e| self.err(e))?;
        let mut texts: HashMap<(usize, String), Option<String>> = HashMap::new();
        for r in &rows {
            let i: i64 = r.try_get("i").map_err(|e| self.err(e))?;
            let key: String = r.try_get("key").map_err(|e| self.err(e))?;
            let value: Option<String> = r.try_get("value").map_err(|e| self.err(e))?;
            if let Some(&doc) = usize::try_from(i - 1).ok().and_then(|i| inexact.get(i)) {
                texts.insert((doc, key), value);
            }
        }
        for &i in &inexact {
            for (channel, text) in &mut docs[i].versions {
                *text = texts.remove(&(i, channel.clone())).flatten();
            }
        }
        Ok(())
    }

    /// The blobs the documents reference through their `channel_versions`: each distinct
    /// `(thread, ns, channel, version)` once (shallow saver: `(thread, ns, channel)`). Each
    /// document records the index of the blob behind each of its versions.
    fn blob_refs(&self, keys: &[RowKey], docs: &mut [Doc]) -> Vec<BlobKey> {
        let mut index: HashMap<(&str, &str, &str, &str), usize> = HashMap::new();
        let mut refs = Vec::new();
        let mut per_doc = Vec::with_capacity(docs.len());
        for (key, doc) in keys.iter().zip(docs.iter()) {
            let mut ids = Vec::with_capacity(doc.versions.len());
            for (channel, version) in &doc.versions {
                let version = match (self.info().shallow, version) {
                    (true, _) => "",
                    (false, Some(v)) => v.as_str(),
                    // A JSON null version joins nothing in Python's SQL either.
                    (false, None) => {
                        ids.push(None);
                        continue;
                    }
                };
                let next = refs.len();
                let id = *index
                    .entry((&key.thread_id, &key.ns, channel, version))
                    .or_insert(next);
                if id == next {
                    refs.push((
                        key.thread_id.clone(),
                        key.ns.clone(),
                        channel.clone(),
                        version.to_owned(),
                    ));
                }
                ids.push(Some(id));
            }
            per_doc.push(ids);
        }
        drop(index);
        for (doc, ids) in docs.iter_mut().zip(per_doc) {
            doc.blob_ids = ids;
        }
        refs
    }

    /// The blob rows of `refs` (missing ones are simply absent).
    async fn fetch_blobs(
        &self,
        tx: &mut PgConnection,
        refs: &[BlobKey],
    ) -> Result<Vec<PgRow>, StoreError> {
        if refs.is_empty() {
            return Ok(Vec::new());
        }
        let column = |f: fn(&BlobKey) -> &String| {
            Arg::TextArray(refs.iter().map(|r| f(r).clone()).collect())
        };
        let sql = if self.info().shallow {
            Sql::new(
                "SELECT r.i - 1 AS i, b.type, b.blob \
                 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(t, n, c, i) \
                 JOIN checkpoint_blobs b ON b.thread_id = r.t AND b.checkpoint_ns = r.n AND b.channel = r.c",
            )
            .with(column(|r| &r.0))
            .with(column(|r| &r.1))
            .with(column(|r| &r.2))
        } else {
            Sql::new(
                "SELECT r.i - 1 AS i, b.type, b.blob \
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(t, n, c, v, i) \
                 JOIN checkpoint_blobs b ON b.thread_id = r.t AND b.checkpoint_ns = r.n \
                 AND b.channel = r.c AND b.version = r.v",
            )
            .with(column(|r| &r.0))
            .with(column(|r| &r.1))
            .with(column(|r| &r.2))
            .with(column(|r| &r.3))
        };
        sql.query().fetch_all(tx).await.map_err(|e| self.err(e))
    }

    /// The pending writes of every row, in one query.
    async fn fetch_writes(
        &self,
        tx: &mut PgConnection,
        keys: &[RowKey],
    ) -> Result<Vec<PgRow>, StoreError> {
        let task_path = if self.info().has_task_path {
            "w.task_path"
        } else {
            "''::text"
        };
        let select = format!(
            "SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, {task_path} AS task_path, \
             w.idx::bigint AS idx, w.channel, w.type, w.blob FROM checkpoint_writes w"
        );
        let first = &keys[0];
        let sql = if keys.iter().all(|k| k.thread_id == first.thread_id) {
            // One thread (the usual case): an index range plus `= ANY`, much cheaper than
            // probing the primary key once per checkpoint. Extra rows (same id in another
            // namespace) are dropped when the writes are matched to their checkpoints.
            let mut sql = Sql::new(&select);
            let t = sql.arg(Arg::Text(first.thread_id.clone()));
            sql.text.push_str(&format!(" WHERE w.thread_id = {t}"));
            if keys.iter().all(|k| k.ns == first.ns) {
                let n = sql.arg(Arg::Text(first.ns.clone()));
                sql.text.push_str(&format!(" AND w.checkpoint_ns = {n}"));
            }
            let mut seen = HashSet::new();
            let ids: Vec<String> = keys
                .iter()
                .filter(|k| seen.insert(k.checkpoint_id.as_str()))
                .map(|k| k.checkpoint_id.clone())
                .collect();
            let c = sql.arg(Arg::TextArray(ids));
            sql.text
                .push_str(&format!(" AND w.checkpoint_id = ANY({c}::text[])"));
            sql
        } else {
            let mut seen: HashSet<(&str, &str, &str)> = HashSet::new();
            let (mut ts, mut ns, mut cs) = (Vec::new(), Vec::new(), Vec::new());
            for key in keys {
                if seen.insert((&key.thread_id, &key.ns, &key.checkpoint_id)) {
                    ts.push(key.thread_id.clone());
                    ns.push(key.ns.clone());
                    cs.push(key.checkpoint_id.clone());
                }
            }
            Sql::new(&format!(
                "{select} JOIN unnest($1::text[], $2::text[], $3::text[]) AS r(t, n, c) \
                 ON w.thread_id = r.t AND w.checkpoint_ns = r.n AND w.checkpoint_id = r.c"
            ))
            .with(Arg::TextArray(ts))
            .with(Arg::TextArray(ns))
            .with(Arg::TextArray(cs))
        };
        sql.query().fetch_all(tx).await.map_err(|e| self.err(e))
    }

    /// Pending sends of pre-v4 rows.
    ///
    /// Full saver (`SELECT_PENDING_SENDS_SQL`): the PARENT's `__pregel_tasks` writes, matched
    /// by thread and checkpoint id only (no namespace filter, as in Python). Shallow saver:
    /// every `__pregel_tasks` write of the thread and namespace. Ordered by
    /// `task_path, task_id, idx`.
    async fn fetch_sends(
        &self,
        tx: &mut PgConnection,
        keys: &[RowKey],
    ) -> Result<Vec<PgRow>, StoreError> {
        let order = if self.info().has_task_path {
            "w.task_path, w.task_id, w.idx"
        } else {
            "w.task_id, w.idx"
        };
        let mut seen: HashSet<(&str, &str)> = HashSet::new();
        let (mut ts, mut ks) = (Vec::new(), Vec::new());
        for row in keys.iter().filter(|r| r.pre_v4) {
            let key = if self.info().shallow {
                row.ns.as_str()
            } else {
                match row.parent.as_deref() {
                    Some(p) if !p.is_empty() => p,
                    _ => continue,
                }
            };
            if seen.insert((&row.thread_id, key)) {
                ts.push(row.thread_id.clone());
                ks.push(key.to_owned());
            }
        }
        if ts.is_empty() {
            return Ok(Vec::new());
        }
        let join = if self.info().shallow {
            "w.checkpoint_ns"
        } else {
            "w.checkpoint_id"
        };
        let sql = Sql::new(&format!(
            "SELECT w.thread_id, {join} AS key, w.type, w.blob \
             FROM unnest($1::text[], $2::text[]) AS r(t, k) \
             JOIN checkpoint_writes w ON w.thread_id = r.t AND {join} = r.k \
             WHERE w.channel = '{TASKS}' \
             ORDER BY w.thread_id, {join}, {order}"
        ))
        .with(Arg::TextArray(ts))
        .with(Arg::TextArray(ks));
        sql.query().fetch_all(tx).await.map_err(|e| self.err(e))
    }
}

#[async_trait]
impl CheckpointStore for PostgresStore {
    fn schema(&self) -> &SchemaInfo {
        self.info()
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        let id = self.id_expr();
        let sql = Sql::new(&format!(
            "SELECT thread_id, array_agg(DISTINCT checkpoint_ns) AS namespaces, count(*) AS n, \
             max({id}) FILTER (WHERE checkpoint_ns = '') AS latest \
             FROM checkpoints GROUP BY thread_id"
        ));
        let mut tx = self.begin().await?;
        let rows = sql
            .query()
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let _ = tx.rollback().await;
        let mut threads = rows
            .iter()
            .map(|r| {
                let mut namespaces: Vec<String> = r.try_get("namespaces")?;
                namespaces.sort_by(|a, b| (!a.is_empty(), a).cmp(&(!b.is_empty(), b)));
                let n: i64 = r.try_get("n")?;
                Ok(ThreadInfo {
                    thread_id: r.try_get("thread_id")?,
                    namespaces,
                    checkpoint_count: u64::try_from(n).unwrap_or(0),
                    latest_checkpoint_id: r.try_get("latest")?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))?;
        threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        Ok(threads)
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        let (id, parent) = if self.info().shallow {
            ("checkpoint->>'id'", "NULL::text")
        } else {
            ("checkpoint_id", "parent_checkpoint_id")
        };
        let select = format!(
            "SELECT thread_id, checkpoint_ns, {id} AS checkpoint_id, {parent} AS parent_checkpoint_id, \
             checkpoint->>'ts' AS ts, metadata::text AS metadata FROM checkpoints"
        );
        let sql = self.list_sql(&select, query);
        let mut tx = self.begin().await?;
        let rows = sql
            .query()
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let _ = tx.rollback().await;
        rows.iter()
            .map(|r| {
                let metadata: Option<String> = r.try_get("metadata")?;
                Ok(CheckpointHeader {
                    thread_id: r.try_get("thread_id")?,
                    checkpoint_ns: r.try_get("checkpoint_ns")?,
                    checkpoint_id: r
                        .try_get::<Option<String>, _>("checkpoint_id")?
                        .unwrap_or_default(),
                    parent_checkpoint_id: r
                        .try_get::<Option<String>, _>("parent_checkpoint_id")?
                        .filter(|p| !p.is_empty()),
                    ts: r.try_get::<Option<String>, _>("ts")?.unwrap_or_default(),
                    metadata: parse_metadata(metadata.as_deref()),
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        let sql = self.list_sql(&self.tuple_select(), query);
        self.load_tuples(sql).await
    }
}

// ---------------------------------------------------------------------------------------------
// Rows and assembly

/// The identity of one fetched checkpoint row.
struct RowKey {
    thread_id: String,
    ns: String,
    checkpoint_id: String,
    parent: Option<String>,
    /// `checkpoint.v < 4` (or no numeric `v`).
    pre_v4: bool,
}

impl RowKey {
    fn from_row(r: &PgRow) -> Result<RowKey, sqlx::Error> {
        Ok(RowKey {
            thread_id: r.try_get("thread_id")?,
            ns: r.try_get("checkpoint_ns")?,
            checkpoint_id: r
                .try_get::<Option<String>, _>("checkpoint_id")?
                .unwrap_or_default(),
            parent: r.try_get("parent_checkpoint_id")?,
            pre_v4: r.try_get::<Option<bool>, _>("pre_v4")?.unwrap_or(true),
        })
    }
}

/// A parsed checkpoint row.
struct Doc {
    /// The document with its inline values (none for the shallow saver).
    checkpoint: Checkpoint,
    metadata: serde_json::Value,
    /// `channel_versions` in stored order, each as Postgres' `jsonb_each_text` renders it
    /// (`None` for JSON `null`, which joins no blob).
    versions: Vec<(String, Option<String>)>,
    /// Some version text could not be rendered client-side (see `fetch_exact_versions`).
    inexact: bool,
    /// For each entry of `versions`, the index of its blob reference (see `blob_refs`).
    blob_ids: Vec<Option<usize>>,
}

/// `(thread, ns, channel, version)`; the version is `""` for the shallow saver.
type BlobKey = (String, String, String, String);
/// Decoded blobs by reference index; `None` for missing and `empty` rows (which Python
/// skips).
type Blobs = Vec<Option<Arc<Decoded>>>;
/// Pending writes per fetched row, in row order.
type Writes = Vec<Vec<PendingWrite>>;
/// Decoded blobs of one query, by reference index.
type BlobSlice = Vec<(usize, Option<Arc<Decoded>>)>;
/// `(thread, parent checkpoint id)` (full saver) or `(thread, ns)` (shallow saver).
type SendsKey = (String, String);

/// Decoded pending sends of one key.
struct Sends {
    /// Each Send (shallow saver: `checkpoint.pending_sends`).
    items: Vec<Arc<Decoded>>,
    /// All of them as one list value (full saver: the `__pregel_tasks` channel value).
    as_list: Arc<Decoded>,
}

async fn joined<T>(handle: tokio::task::JoinHandle<T>) -> Result<T, StoreError> {
    handle
        .await
        .map_err(|e| StoreError::Query(format!("decoding task failed: {e}")))
}

fn row_err(e: sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

/// Parse the checkpoint and metadata documents of the rows.
fn parse_rows(rows: &[PgRow], ids: &[String], shallow: bool) -> Result<Vec<Doc>, StoreError> {
    rows.iter()
        .zip(ids)
        .map(|(r, id)| {
            let corrupt = |detail: String| StoreError::Corrupt {
                checkpoint_id: id.clone(),
                detail,
            };
            let text: Option<&str> = r.try_get("checkpoint").map_err(row_err)?;
            let doc: serde_json::Value = serde_json::from_str(text.unwrap_or("null"))
                .map_err(|e| corrupt(format!("checkpoint JSON: {e}")))?;
            let mut checkpoint = checkpoint_from_json(&doc).map_err(corrupt)?;
            if checkpoint.id.is_empty() {
                checkpoint.id = id.clone();
            }
            if shallow {
                // ShallowPostgresSaver: channel values come from the blobs only.
                checkpoint.channel_values.clear();
            }
            let mut inexact = false;
            let versions = match doc.get("channel_versions") {
                Some(serde_json::Value::Object(map)) => map
                    .iter()
                    .map(|(channel, v)| {
                        let text = match v {
                            serde_json::Value::String(s) => Some(s.clone()),
                            serde_json::Value::Null => None,
                            serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => {
                                Some(n.to_string())
                            }
                            _ => {
                                inexact = true;
                                None
                            }
                        };
                        (channel.clone(), text)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let metadata: Option<&str> = r.try_get("metadata").map_err(row_err)?;
            Ok(Doc {
                checkpoint,
                metadata: parse_metadata(metadata),
                versions,
                inexact,
                blob_ids: Vec::new(),
            })
        })
        .collect()
}

/// Decode blob rows (each distinct blob once); `offset` is the slice's first reference index.
fn decode_blob_rows(rows: &[PgRow], offset: usize) -> Result<BlobSlice, StoreError> {
    rows.iter()
        .map(|r| {
            let i: i64 = r.try_get("i").map_err(row_err)?;
            let tag: &str = r
                .try_get::<Option<&str>, _>("type")
                .map_err(row_err)?
                .unwrap_or("msgpack");
            let value = if tag == "empty" {
                None
            } else {
                let data: Option<&[u8]> = r.try_get("blob").map_err(row_err)?;
                Some(Arc::new(decode_typed(tag, data)))
            };
            Ok((
                offset + usize::try_from(i).unwrap_or(usize::MAX - offset),
                value,
            ))
        })
        .collect()
}

/// Finds a fetched row's position from its `(thread, ns, checkpoint id)` without allocating.
struct RowIndex {
    map: HashMap<String, usize>,
    len: usize,
}

impl RowIndex {
    fn new(keys: &[RowKey]) -> RowIndex {
        let mut map = HashMap::with_capacity(keys.len());
        let mut buf = String::new();
        for (i, k) in keys.iter().enumerate() {
            Self::compose(&mut buf, &k.thread_id, &k.ns, &k.checkpoint_id);
            map.entry(buf.clone()).or_insert(i);
        }
        RowIndex {
            map,
            len: keys.len(),
        }
    }

    fn compose(buf: &mut String, thread: &str, ns: &str, id: &str) {
        buf.clear();
        for part in [thread, "\0", ns, "\0", id] {
            buf.push_str(part);
        }
    }

    fn get(&self, buf: &mut String, thread: &str, ns: &str, id: &str) -> Option<usize> {
        Self::compose(buf, thread, ns, id);
        self.map.get(buf.as_str()).copied()
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// A write's type tag (a NULL type is read as msgpack, like the SQLite store does).
fn type_tag(r: &PgRow) -> Result<String, StoreError> {
    Ok(r.try_get::<Option<String>, _>("type")
        .map_err(row_err)?
        .unwrap_or_else(|| "msgpack".into()))
}

/// Decode the pending writes (grouped per fetched row, sorted like Python) and the sends.
fn decode_writes(
    write_rows: &[PgRow],
    send_rows: &[PgRow],
    index: &RowIndex,
) -> Result<(Writes, HashMap<SendsKey, Sends>), StoreError> {
    let mut writes: Writes = (0..index.len()).map(|_| Vec::new()).collect();
    let mut buf = String::new();
    for r in write_rows {
        let thread: &str = r.try_get("thread_id").map_err(row_err)?;
        let ns: &str = r.try_get("checkpoint_ns").map_err(row_err)?;
        let id: &str = r.try_get("checkpoint_id").map_err(row_err)?;
        // Rows of unlisted checkpoints (same id in another namespace) are not ours.
        let Some(slot) = index.get(&mut buf, thread, ns, id) else {
            continue;
        };
        let type_tag = type_tag(r)?;
        let data: Option<&[u8]> = r.try_get("blob").map_err(row_err)?;
        writes[slot].push(PendingWrite {
            task_id: r.try_get("task_id").map_err(row_err)?,
            task_path: r
                .try_get::<Option<String>, _>("task_path")
                .map_err(row_err)?
                .unwrap_or_default(),
            idx: r.try_get("idx").map_err(row_err)?,
            channel: r.try_get("channel").map_err(row_err)?,
            value: decode_typed(&type_tag, data),
            type_tag,
        });
    }
    for list in &mut writes {
        sort_writes(list);
    }

    // In query order: already sorted by task_path, task_id, idx.
    let mut grouped: HashMap<SendsKey, Vec<Decoded>> = HashMap::new();
    for r in send_rows {
        let tag = type_tag(r)?;
        let data: Option<&[u8]> = r.try_get("blob").map_err(row_err)?;
        let key = (
            r.try_get("thread_id").map_err(row_err)?,
            r.try_get("key").map_err(row_err)?,
        );
        grouped
            .entry(key)
            .or_default()
            .push(decode_typed(&tag, data));
    }
    let sends = grouped
        .into_iter()
        .map(|(key, list)| {
            let as_list = Arc::new(sends_value(&list));
            let items = list.into_iter().map(Arc::new).collect();
            (key, Sends { items, as_list })
        })
        .collect();
    Ok((writes, sends))
}

/// Build the tuples from the parsed rows, the decoded blobs, writes and sends.
fn assemble(
    keys: Vec<RowKey>,
    docs: Vec<Doc>,
    blobs: &Blobs,
    writes: Writes,
    sends: &HashMap<SendsKey, Sends>,
    shallow: bool,
) -> Vec<CheckpointTuple> {
    let mut out = Vec::with_capacity(keys.len());
    let mut writes = writes.into_iter();
    for (key, doc) in keys.into_iter().zip(docs) {
        let Doc {
            checkpoint: mut cp,
            metadata,
            versions,
            blob_ids,
            ..
        } = doc;

        // Overlay the blobs reached through this checkpoint's own channel_versions.
        for ((channel, _), id) in versions.iter().zip(blob_ids) {
            if let Some(Some(value)) = id.and_then(|i| blobs.get(i)) {
                set_value(&mut cp.channel_values, channel, Arc::clone(value));
            }
        }

        // Pre-v4 checkpoints: Sends were not stored in the checkpoint.
        if key.pre_v4 {
            if shallow {
                let found = sends.get(&(key.thread_id.clone(), key.ns.clone()));
                cp.pending_sends = Some(found.map(|s| s.items.clone()).unwrap_or_default());
            } else if let Some(parent) = key.parent.as_deref().filter(|p| !p.is_empty()) {
                if let Some(found) = sends.get(&(key.thread_id.clone(), parent.to_owned())) {
                    // channel_versions["__pregel_tasks"] = max(channel_versions.values())
                    let version = cp
                        .channel_versions
                        .iter()
                        .map(|(_, v)| v)
                        .max_by(|a, b| a.py_cmp(b))
                        .cloned()
                        .unwrap_or_else(|| Version::Str(first_version()));
                    set_value(&mut cp.channel_values, TASKS, Arc::clone(&found.as_list));
                    match cp.channel_versions.iter_mut().find(|(c, _)| c == TASKS) {
                        Some((_, v)) => *v = version,
                        None => cp.channel_versions.push((TASKS.to_owned(), version)),
                    }
                }
            }
        }

        // One entry per fetched row, in order (listed rows never share a key: it is the
        // primary key).
        let pending_writes = writes.next().unwrap_or_default();
        out.push(CheckpointTuple {
            header: CheckpointHeader {
                thread_id: key.thread_id,
                checkpoint_ns: key.ns,
                checkpoint_id: key.checkpoint_id,
                parent_checkpoint_id: key.parent.filter(|p| !p.is_empty()),
                ts: cp.ts.clone(),
                metadata,
            },
            checkpoint: cp,
            pending_writes,
        });
    }
    out
}

/// Set a channel value in place (keeping its position, as a Python dict update does) or
/// append it.
fn set_value(values: &mut Vec<(String, Arc<Decoded>)>, channel: &str, value: Arc<Decoded>) {
    match values.iter_mut().find(|(c, _)| c == channel) {
        Some((_, v)) => *v = value,
        None => values.push((channel.to_owned(), value)),
    }
}

/// Python's `get_next_version(None, None)` with the random part fixed at 0.0:
/// `f"{1:032}.{0.0:016}"`.
fn first_version() -> String {
    format!("{:032}.{:0>16}", 1, "0.0")
}

/// The decoded Sends as one list value, as `_migrate_pending_sends` re-encodes them.
fn sends_value(list: &[Decoded]) -> Decoded {
    let mut items = Vec::with_capacity(list.len());
    for (i, d) in list.iter().enumerate() {
        let item = match d {
            Decoded::Msgpack(v) => v.clone(),
            Decoded::Null => Value::Nil,
            Decoded::Bytes(b) | Decoded::ByteArray(b) => Value::Bin(b.clone()),
            Decoded::Json { value, .. } => json_primitive(value),
            other => {
                let (tag, raw) = flashback_codec::encode_typed(other);
                let detail = match other {
                    Decoded::Error { message, .. } => message.clone(),
                    _ => format!("a {tag} value cannot be part of a msgpack list"),
                };
                return Decoded::Error {
                    tag,
                    message: format!("pending send #{i}: {detail}"),
                    raw,
                };
            }
        };
        items.push(item);
    }
    Decoded::Msgpack(Value::Array(items))
}

/// Metadata JSON text (JSONB output); unreadable metadata becomes an `$error` object.
fn parse_metadata(raw: Option<&str>) -> serde_json::Value {
    match raw {
        None => serde_json::Value::Null,
        Some(text) => serde_json::from_str(text).unwrap_or_else(|e| {
            flashback_codec::view::error_view(
                &format!("metadata is not valid JSON: {e}"),
                "json",
                text.as_bytes(),
            )
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Schema detection

/// How a schema error about existing tables of an unknown layout starts (as opposed to
/// missing tables, which `setup()` creates).
const UNKNOWN_LAYOUT: &str = "unknown checkpoint table layout";

const TABLES: [&str; 4] = [
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "checkpoint_migrations",
];

async fn detect_schema(conn: &mut PgConnection, target: &Target) -> Result<SchemaInfo, StoreError> {
    let err = |e: sqlx::Error| target.error(e, false);
    let mut tx = conn.begin_with(BEGIN_READ_ONLY).await.map_err(err)?;

    // Columns of the tables the search_path resolves the four names to (as Python's
    // unqualified SQL would).
    let rows = Sql::new(
        "SELECT t.name, a.attname::text AS column_name, format_type(a.atttypid, a.atttypmod) AS data_type \
         FROM unnest($1::text[]) AS t(name) \
         JOIN pg_catalog.pg_attribute a ON a.attrelid = to_regclass(quote_ident(t.name)) \
         WHERE a.attnum > 0 AND NOT a.attisdropped \
         ORDER BY t.name, a.attnum",
    )
    .with(Arg::TextArray(TABLES.iter().map(|t| (*t).to_owned()).collect()))
    .query()
    .fetch_all(&mut *tx)
    .await
    .map_err(err)?;
    let mut tables: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for r in &rows {
        let table: String = r.try_get("name").map_err(err)?;
        let column: String = r.try_get("column_name").map_err(err)?;
        let data_type: String = r.try_get("data_type").map_err(err)?;
        tables.entry(table).or_default().push((column, data_type));
    }

    let missing: Vec<&str> = TABLES[..3]
        .iter()
        .copied()
        .filter(|t| !tables.contains_key(*t))
        .collect();
    if !missing.is_empty() {
        let present = Sql::new(
            "SELECT n.nspname::text AS schema_name, c.relname::text AS table_name \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY(current_schemas(false)) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') \
             ORDER BY 1, 2",
        )
        .query()
        .fetch_all(&mut *tx)
        .await
        .map_err(err)?;
        let schemas: Vec<String> = Sql::new("SELECT unnest(current_schemas(false))::text AS s")
            .query()
            .fetch_all(&mut *tx)
            .await
            .map_err(err)?
            .iter()
            .filter_map(|r| r.try_get::<String, _>("s").ok())
            .collect();
        let _ = tx.rollback().await;
        let names: Vec<String> = present
            .iter()
            .filter_map(|r| {
                let s: String = r.try_get("schema_name").ok()?;
                let t: String = r.try_get("table_name").ok()?;
                Some(if schemas.len() > 1 {
                    format!("{s}.{t}")
                } else {
                    t
                })
            })
            .collect();
        let present = if names.is_empty() {
            "no tables".to_owned()
        } else if names.len() > 30 {
            format!(
                "tables present: {}, … ({} more)",
                names[..30].join(", "),
                names.len() - 30
            )
        } else {
            format!("tables present: {}", names.join(", "))
        };
        return Err(StoreError::UnsupportedSchema {
            found: format!(
                "{present} (search_path schemas: {}); missing {} — not a LangGraph Postgres \
                 checkpoint database (langgraph-checkpoint-postgres creates checkpoints, \
                 checkpoint_blobs, checkpoint_writes and checkpoint_migrations)",
                if schemas.is_empty() {
                    "none".to_owned()
                } else {
                    schemas.join(", ")
                },
                missing.join(", ")
            ),
        });
    }

    let has = |table: &str, column: &str| {
        tables
            .get(table)
            .is_some_and(|cols| cols.iter().any(|(c, _)| c == column))
    };
    let type_of = |table: &str, column: &str| {
        tables
            .get(table)
            .and_then(|cols| cols.iter().find(|(c, _)| c == column))
            .map(|(_, t)| t.clone())
    };
    let columns_of = |table: &str| {
        tables
            .get(table)
            .map(|cols| {
                cols.iter()
                    .map(|(c, _)| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };

    let shallow = !has("checkpoints", "checkpoint_id");
    let mut problems = Vec::new();
    let need_cp: &[&str] = if shallow {
        &["thread_id", "checkpoint_ns", "checkpoint", "metadata"]
    } else {
        &[
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "parent_checkpoint_id",
            "checkpoint",
            "metadata",
        ]
    };
    let need_blobs: &[&str] = if shallow {
        &["thread_id", "checkpoint_ns", "channel", "type", "blob"]
    } else {
        &[
            "thread_id",
            "checkpoint_ns",
            "channel",
            "version",
            "type",
            "blob",
        ]
    };
    let need_writes: &[&str] = &[
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "blob",
    ];
    for (table, need) in [
        ("checkpoints", need_cp),
        ("checkpoint_blobs", need_blobs),
        ("checkpoint_writes", need_writes),
    ] {
        let missing: Vec<&str> = need.iter().copied().filter(|c| !has(table, c)).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{table} has columns ({}) but lacks {}",
                columns_of(table),
                missing.join(", ")
            ));
        }
    }
    if shallow && has("checkpoint_blobs", "version") {
        problems.push(
            "checkpoints has no checkpoint_id column (the shallow saver's layout) but \
             checkpoint_blobs has a version column (the full saver's layout)"
                .to_owned(),
        );
    }
    for (table, column, expected) in [
        ("checkpoints", "checkpoint", "jsonb"),
        ("checkpoints", "metadata", "jsonb"),
        ("checkpoint_blobs", "blob", "bytea"),
        ("checkpoint_writes", "blob", "bytea"),
    ] {
        if let Some(t) = type_of(table, column) {
            if t != expected {
                problems.push(format!("{table}.{column} is {t}, expected {expected}"));
            }
        }
    }
    if !problems.is_empty() {
        let _ = tx.rollback().await;
        return Err(StoreError::UnsupportedSchema {
            found: format!("{UNKNOWN_LAYOUT}: {}", problems.join("; ")),
        });
    }

    let has_task_path = has("checkpoint_writes", "task_path");
    let migrations = if has("checkpoint_migrations", "v") {
        let r = Sql::new("SELECT min(v)::bigint AS lo, max(v)::bigint AS hi, count(*) AS n FROM checkpoint_migrations")
            .query()
            .fetch_one(&mut *tx)
            .await
            .map_err(err)?;
        let lo: Option<i64> = r.try_get("lo").map_err(err)?;
        let hi: Option<i64> = r.try_get("hi").map_err(err)?;
        let n: i64 = r.try_get("n").map_err(err)?;
        Some((lo, hi, n))
    } else {
        None
    };
    let _ = tx.rollback().await;

    let migration_version = migrations.and_then(|(_, hi, _)| hi);
    let migrations_text = match migrations {
        None => "no checkpoint_migrations table".to_owned(),
        Some((Some(lo), Some(hi), n)) if n == hi - lo + 1 => format!("migrations {lo}-{hi}"),
        Some((Some(lo), Some(hi), n)) => format!("migrations {lo}-{hi} ({n} recorded)"),
        Some(_) => "checkpoint_migrations is empty".to_owned(),
    };
    let mut description = if shallow {
        format!(
            "postgres shallow saver (one checkpoint per thread and namespace), {migrations_text}"
        )
    } else {
        format!("postgres, {migrations_text}")
    };
    if !has_task_path {
        description.push_str(", no checkpoint_writes.task_path");
    }
    Ok(SchemaInfo {
        backend: Backend::Postgres,
        has_task_path,
        migration_version,
        shallow,
        description,
    })
}

// ---------------------------------------------------------------------------------------------
// SQL building

/// A bind parameter.
enum Arg {
    Text(String),
    Json(serde_json::Value),
    Int(i64),
    TextArray(Vec<String>),
}

/// SQL text with its numbered parameters.
struct Sql {
    text: String,
    args: Vec<Arg>,
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            args: Vec::new(),
        }
    }

    /// Add a parameter; returns its placeholder (`$n`).
    fn arg(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        format!("${}", self.args.len())
    }

    fn with(mut self, arg: Arg) -> Sql {
        self.args.push(arg);
        self
    }

    /// The query, unprepared-cached (`persistent(false)`), so that it also works through
    /// transaction-pooling proxies such as PgBouncer.
    fn query(&self) -> sqlx::query::Query<'_, Postgres, PgArguments> {
        let mut q = sqlx::query(AssertSqlSafe(self.text.clone())).persistent(false);
        for arg in &self.args {
            q = match arg {
                Arg::Text(s) => q.bind(s.as_str()),
                Arg::Json(v) => q.bind(v),
                Arg::Int(i) => q.bind(*i),
                Arg::TextArray(a) => q.bind(a.as_slice()),
            };
        }
        q
    }
}

// ---------------------------------------------------------------------------------------------
// Connection target and error mapping

/// What the user connected to, for messages (never the password).
#[derive(Clone)]
struct Target {
    /// `host:port` or `socket <path>`.
    server: String,
    database: String,
    user: String,
    /// Forms of the password to scrub from messages (raw and percent-decoded).
    secrets: Vec<String>,
}

impl Target {
    /// A best-effort parse before sqlx validates the URL (for scrubbing its error).
    fn from_url(url: &str) -> Target {
        let mut secrets = Vec::new();
        let mut add = |raw: &str| {
            if !raw.is_empty() {
                secrets.push(raw.to_owned());
                let decoded = percent_decode(raw);
                if decoded != raw {
                    secrets.push(decoded);
                }
            }
        };
        // `?password=…` is accepted too.
        if let Some((_, query)) = url.split_once('?') {
            for pair in query.split('&') {
                if let Some(("password", value)) = pair.split_once('=') {
                    add(value);
                }
            }
        }
        if let Some(rest) = url.split_once("://").map(|(_, r)| r) {
            let authority = rest.split(['/', '?']).next().unwrap_or("");
            if let Some((userinfo, _)) = authority.rsplit_once('@') {
                if let Some((_, password)) = userinfo.split_once(':') {
                    add(password);
                }
            }
        }
        Target {
            server: String::new(),
            database: String::new(),
            user: String::new(),
            secrets,
        }
    }

    fn with_options(mut self, options: &PgConnectOptions) -> Target {
        self.server = match options.get_socket() {
            Some(path) => format!("socket {}", path.display()),
            None => format!("{}:{}", options.get_host(), options.get_port()),
        };
        self.database = options
            .get_database()
            .unwrap_or(options.get_username())
            .to_owned();
        self.user = options.get_username().to_owned();
        self
    }

    fn describe(&self) -> String {
        format!("{}@{}/{}", self.user, self.server, self.database)
    }

    fn redact(&self, mut message: String) -> String {
        for secret in &self.secrets {
            // Very short passwords are only scrubbed where they sit in a URL, so that messages
            // stay readable; longer ones everywhere.
            if secret.chars().count() >= 4 {
                message = message.replace(secret.as_str(), "***");
            } else {
                message = message.replace(&format!(":{secret}@"), ":***@");
            }
        }
        message
    }

    /// Map a driver error; `connecting` marks errors of the first connection.
    fn error(&self, e: sqlx::Error, connecting: bool) -> StoreError {
        let server = &self.server;
        let mapped = match e {
            sqlx::Error::Database(db) => {
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                let message = db.message().to_owned();
                match code.as_str() {
                    "28P01" | "28000" => StoreError::Auth(format!(
                        "{server} rejected user {:?} for database {:?}: {message}",
                        self.user, self.database
                    )),
                    "42501" if connecting => StoreError::Auth(format!("{server}: {message}")),
                    "3D000" => StoreError::NotFound(format!(
                        "database {:?} does not exist on {server}",
                        self.database
                    )),
                    c if c.starts_with("08") || c == "57P03" || c == "53300" => {
                        StoreError::Connection(format!("{server}: {message} (SQLSTATE {c})"))
                    }
                    c => StoreError::Query(format!("{message} (SQLSTATE {c})")),
                }
            }
            sqlx::Error::Io(io) => StoreError::Connection(format!("{server}: {io}")),
            sqlx::Error::Tls(tls) => StoreError::Connection(format!("{server}: TLS: {tls}")),
            sqlx::Error::PoolTimedOut => StoreError::Connection(format!(
                "timed out after {}s waiting for a connection to {server}",
                CONNECT_TIMEOUT.as_secs()
            )),
            sqlx::Error::PoolClosed => {
                StoreError::Connection(format!("the connection pool to {server} is closed"))
            }
            sqlx::Error::Configuration(c) => {
                StoreError::InvalidInput(format!("invalid Postgres connection settings: {c}"))
            }
            other if connecting => StoreError::Connection(format!("{server}: {other}")),
            other => StoreError::Query(other.to_string()),
        };
        match mapped {
            StoreError::Auth(m) => StoreError::Auth(self.redact(m)),
            StoreError::NotFound(m) => StoreError::NotFound(self.redact(m)),
            StoreError::Connection(m) => StoreError::Connection(self.redact(m)),
            StoreError::Query(m) => StoreError::Query(self.redact(m)),
            StoreError::InvalidInput(m) => StoreError::InvalidInput(self.redact(m)),
            other => other,
        }
    }
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_version_matches_python_format() {
        // f"{1:032}.{0.0:016}"
        assert_eq!(
            first_version(),
            "00000000000000000000000000000001.00000000000000.0"
        );
    }

    #[test]
    fn passwords_are_scrubbed() {
        let t = Target::from_url("postgresql://bob:s3cr%40t@db.example:5433/app");
        assert_eq!(t.secrets, vec!["s3cr%40t".to_owned(), "s3cr@t".to_owned()]);
        assert_eq!(t.redact("x s3cr@t y s3cr%40t".into()), "x *** y ***");
        let opts =
            PgConnectOptions::from_str("postgresql://bob:s3cr%40t@db.example:5433/app").unwrap();
        let t = t.with_options(&opts);
        assert_eq!(t.describe(), "bob@db.example:5433/app");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b%"), "a b%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%41%42"), "AB");
    }
}
