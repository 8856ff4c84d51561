//! The read side of [`PostgresStore`]: Python's `list` queries and the loading of full
//! tuples (see the diagram in the module documentation).

use super::assemble::assemble;
use super::blobs::decode_blobs;
use super::rows::{decode_writes, joined, parse_metadata, parse_rows, Doc, RowIndex, RowKey};
use super::sql::{Arg, Sql};
use super::{PostgresStore, BLOB_QUERIES, MIN_BLOB_SLICE, TASKS};
use crate::decode::unreadable_document;
use crate::model::*;
use crate::{CheckpointStore, StoreError, StoredBytes, ValueAt};
use async_trait::async_trait;
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};

impl PostgresStore {
    /// The rows of one query, in a read-only transaction of its own.
    pub(super) async fn read_rows(&self, sql: Sql) -> Result<Vec<PgRow>, StoreError> {
        let mut tx = self.begin().await?;
        let rows = self.target.wait(sql.query().fetch_all(&mut *tx)).await?;
        self.target.end_read(tx).await;
        Ok(rows)
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
        if !q.checkpoint_ids.is_empty() {
            let ids = sql.arg(Arg::TextArray(q.checkpoint_ids.clone()));
            wheres.push(format!("{id} = ANY({ids}::text[])"));
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
        let (id, parent) = if self.info().shallow() {
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
        let shallow = self.info().shallow();
        let mut tx = self.begin().await?;
        let rows = self.target.wait(sql.query().fetch_all(&mut *tx)).await?;
        if rows.is_empty() {
            self.target.end_read(tx).await;
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
        let keep = self.only.clone();
        let parsing = tokio::task::spawn_blocking(move || {
            parse_rows(&rows, &parse_keys, shallow, keep.as_ref())
        });
        let write_rows = self.fetch_writes(&mut tx, &keys).await?;
        let send_rows = self.fetch_sends(&mut tx, &keys).await?;
        let row_index = RowIndex::new(&keys);
        let key = self.key.clone();
        let decoding_writes = tokio::task::spawn_blocking(move || {
            decode_writes(&write_rows, &send_rows, &row_index, key)
        });
        let mut docs = joined(parsing).await?;
        if !shallow {
            self.fetch_exact_versions(&mut tx, &keys, &mut docs).await?;
        }
        // Blobs streamed as they arrive, in batches, to one decoding thread with one decode
        // cache for the whole read: an object stored again in many blobs (every message of a
        // chat, in every later state) is decoded once and shared, and raw rows are dropped
        // once decoded, so neither all raw blobs nor duplicate decoded copies are ever held.
        let refs = self.blob_refs(&keys, &mut docs);
        let count = refs.len();
        // A selecting read fetches only the blobs that exist (see `existing_blobs`).
        let (refs, fetched) = if self.only.is_some() && !shallow && count >= MIN_BLOB_SLICE {
            let present = self.existing_blobs(&mut tx, &refs).await?;
            let fetch = present.iter().map(|&i| refs[i].clone()).collect();
            (fetch, Some(present))
        } else {
            (refs, None)
        };
        let (batches, decoding) = decode_blobs(count, self.key.clone(), fetched);
        let slice = refs.len().div_ceil(BLOB_QUERIES).max(MIN_BLOB_SLICE);
        let mut fetched = Ok(());
        for (n, part) in refs.chunks(slice).enumerate() {
            fetched = self.stream_blobs(&mut tx, part, n * slice, &batches).await;
            if fetched.is_err() {
                break;
            }
        }
        drop(batches);
        if fetched.is_ok() {
            self.target.end_read(tx).await;
        }
        // A decoding error ends the stream early: it is the one to report.
        let blobs = joined(decoding).await??;
        fetched?;
        let (writes, sends) = joined(decoding_writes).await??;
        joined(tokio::task::spawn_blocking(move || {
            assemble(keys, docs, &blobs, writes, &sends, shallow)
        }))
        .await
    }

    /// The checkpoints of `keys[i]` for each `i` of `chunk` (all with a checkpoint id), one
    /// join against `unnest(…)` loaded with a fixed number of queries.
    async fn get_batch(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        chunk: &[usize],
    ) -> Result<Vec<(usize, Option<CheckpointTuple>)>, StoreError> {
        let column = |part: usize| {
            Arg::TextArray(
                chunk
                    .iter()
                    .map(|&i| {
                        let (t, n, c) = keys[i];
                        [t, n, c.unwrap_or_default()][part].to_owned()
                    })
                    .collect(),
            )
        };
        let mut sql = Sql::new(&self.tuple_select());
        let t = sql.arg(column(0));
        let n = sql.arg(column(1));
        let c = sql.arg(column(2));
        sql.text.push_str(&format!(
            " JOIN unnest({t}::text[], {n}::text[], {c}::text[]) AS u(t, n, c) \
             ON thread_id = u.t AND checkpoint_ns = u.n AND checkpoint_id = u.c"
        ));
        let mut found: HashMap<(String, String, String), CheckpointTuple> = HashMap::new();
        for tuple in self.load_tuples(sql).await? {
            let h = &tuple.header;
            let key = (
                h.thread_id.clone(),
                h.checkpoint_ns.clone(),
                h.checkpoint_id.clone(),
            );
            found.insert(key, tuple);
        }
        // Each tuple moved out once; a key asked twice gets a copy.
        let mut out: Vec<(usize, Option<CheckpointTuple>)> = Vec::with_capacity(chunk.len());
        let mut given: HashMap<(String, String, String), usize> = HashMap::new();
        for &i in chunk {
            let (t, n, c) = keys[i];
            let key = (t.to_owned(), n.to_owned(), c.unwrap_or_default().to_owned());
            let tuple = match found.remove(&key) {
                Some(tuple) => {
                    given.insert(key, out.len());
                    Some(tuple)
                }
                None => given.get(&key).and_then(|&j| out[j].1.clone()),
            };
            out.push((i, tuple));
        }
        Ok(out)
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
        .with(Arg::TextArray(cs));
        let rows = self.target.wait(rows.query().fetch_all(tx)).await?;
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
             w.idx::bigint AS idx, w.channel, w.type, {} FROM checkpoint_writes w",
            self.budgeted("w.blob")
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
        self.target.wait(sql.query().fetch_all(tx)).await
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
            let key = if self.info().shallow() {
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
        let join = if self.info().shallow() {
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
        self.target.wait(sql.query().fetch_all(tx)).await
    }
}

#[async_trait]
impl CheckpointStore for PostgresStore {
    fn schema(&self) -> &SchemaInfo {
        self.info()
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        self.writes_of_thread(thread_id)
            .await
            .map_err(|e| e.during(|| reading_writes(thread_id)))
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        self.writes_mentioning(thread_id, needle)
            .await
            .map_err(|e| e.during(|| reading_writes(thread_id)))
    }

    async fn stored_value(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        at: ValueAt<'_>,
    ) -> Result<Option<StoredBytes>, StoreError> {
        self.stored(thread_id, checkpoint_ns, checkpoint_id, at)
            .await
            .map_err(|e| e.during(|| format!("reading a value of checkpoint {checkpoint_id}")))
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let mut sql = Sql::new("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ");
        let t = sql.arg(Arg::Text(thread_id.to_owned()));
        sql.text.push_str(&t);
        let rows = self.read_rows(sql).await.map_err(|e| {
            e.during(|| {
                format!(
                    "reading the namespaces of thread {}",
                    thread_id.escape_debug()
                )
            })
        })?;
        let mut out = rows
            .iter()
            .map(|r| r.try_get::<String, _>("checkpoint_ns"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        out.sort();
        Ok(out)
    }

    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        let mut probe = crate::EncryptionProbe::default();
        for (table, column) in [("checkpoint_writes", "blob"), ("checkpoint_blobs", "blob")] {
            // Any rows will do (a scan that stops early): the program that writes a database
            // encrypts all of it or, after a change, its newest rows.
            let sql = format!(
                "SELECT type, CASE WHEN type LIKE '%+%' AND length({column}) <= 65536 \
                 THEN {column} END AS sample FROM {table} LIMIT {}",
                crate::sealed::PROBE_ROWS
            );
            let rows = self
                .read_rows(Sql::new(&sql))
                .await
                .map_err(|e| e.during(|| "checking whether the database is encrypted".into()))?;
            for r in &rows {
                let tag: Option<String> = r.try_get("type").map_err(|e| self.err(e))?;
                let sample: Option<Vec<u8>> = r.try_get("sample").map_err(|e| self.err(e))?;
                probe.add(tag.as_deref().unwrap_or("msgpack"), sample);
            }
        }
        Ok(probe.done())
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        self.memory_reader()
            .map(|m| m as &dyn crate::memory::MemoryRead)
    }

    async fn server(
        &self,
    ) -> Result<Option<std::sync::Arc<crate::server::ServerState>>, StoreError> {
        Ok(None)
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        self.threads_where(None)
            .await
            .map_err(|e| e.during(|| READING_THREADS.into()))
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        self.threads_where(Some(limit))
            .await
            .map_err(|e| e.during(|| READING_THREADS.into()))
    }

    async fn find_threads(
        &self,
        query: &crate::ThreadQuery,
    ) -> Result<Vec<crate::FoundThread>, StoreError> {
        self.find(query)
            .await
            .map_err(|e| e.during(|| READING_THREADS.into()))
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let (id, parent) = if self.info().shallow() {
            ("checkpoint->>'id'", "NULL::text")
        } else {
            ("checkpoint_id", "parent_checkpoint_id")
        };
        let select = format!(
            "SELECT thread_id, checkpoint_ns, {id} AS checkpoint_id, {parent} AS parent_checkpoint_id, \
             checkpoint->>'ts' AS ts, metadata::text AS metadata, \
             jsonb_typeof(checkpoint) = 'object' AS is_object FROM checkpoints"
        );
        let sql = self.list_sql(&select, query);
        let rows = self
            .read_rows(sql)
            .await
            .map_err(|e| e.during(|| query.reading()))?;
        rows.iter()
            .map(|r| {
                let metadata: Option<String> = r.try_get("metadata")?;
                // The same words as the full read (`parse_rows`) for a document that is not
                // an object.
                let is_object = r.try_get::<Option<bool>, _>("is_object")? == Some(true);
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
                    problem: (!is_object)
                        .then(|| unreadable_document("checkpoint JSON is not an object".into())),
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let sql = self.list_sql(&self.tuple_select(), query);
        self.load_tuples(sql)
            .await
            .map_err(|e| e.during(|| query.reading()))
    }

    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.tuples_of(keys)
            .await
            .map_err(|e| e.during(|| format!("reading {} checkpoints", keys.len())))
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let mut out = self.selecting(keep.clone()).get_tuples(keys).await?;
        // Inline primitives come with the document: keep the selection's values only.
        for t in out.iter_mut().flatten() {
            t.checkpoint.retain_channel_values(&keep);
        }
        Ok(out)
    }
}

impl PostgresStore {
    /// [`CheckpointStore::get_tuples`]: the keys with a checkpoint id in batches, each one
    /// join against `unnest(…)` loaded with a fixed number of queries (a list of 20,000
    /// threads was 20,000 round trips); the others (the namespace's latest) one by one.
    async fn tuples_of(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let mut out: Vec<Option<CheckpointTuple>> = (0..keys.len()).map(|_| None).collect();
        let batched = !self.info().shallow() && self.info().holds.checkpoints();
        let exact: Vec<usize> = (0..keys.len())
            .filter(|&i| batched && keys[i].2.is_some())
            .collect();
        // Two batches at a time, on two pooled connections: one is decoded here while the
        // server answers the other.
        let batches: Vec<&[usize]> = exact.chunks(GET_TUPLES_BATCH).collect();
        for pair in batches.chunks(2) {
            let second = async {
                match pair.get(1) {
                    Some(chunk) => self.get_batch(keys, chunk).await,
                    None => Ok(Vec::new()),
                }
            };
            let (first, second) = tokio::join!(self.get_batch(keys, pair[0]), second);
            for (i, tuple) in first?.into_iter().chain(second?) {
                out[i] = tuple;
            }
        }
        for (i, (thread_id, ns, id)) in keys.iter().enumerate() {
            if !(batched && id.is_some()) {
                out[i] = self.get_tuple(thread_id, ns, *id).await?;
            }
        }
        Ok(out)
    }
}

/// Keys per query of [`PostgresStore::get_tuples`].
const GET_TUPLES_BATCH: usize = 500;
