//! The read side of [`SqliteStore`]: checkpoints (queried in `query.rs`), the thread list
//! (`threads.rs`) and many checkpoints by key (`batch.rs`).

use super::access::LookupWindow;
use super::batch::{get_many, Key};
use super::ctx::Ctx;
use super::query::{for_each_row, list_tuples_blocking};
use super::threads::{
    list_threads_blocking, thread_writes_blocking, thread_writes_mentioning_blocking,
};
use super::{query_err, SqliteStore};
use crate::decode::Decoding;
use crate::escape::key_text;
use crate::model::*;
use crate::{CheckpointStore, FoundThread, StoreError, StoredBytes, ThreadQuery, ValueAt};
use async_trait::async_trait;
use rusqlite::types::ValueRef;

/// Every thread: one row per `(thread_id, checkpoint_ns)`. Keys that are not text are shown
/// escaped, with the thread's `problem` saying so.
#[async_trait]
impl CheckpointStore for SqliteStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
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
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        self.with_cx(|cx| list_threads_blocking(cx, None)).await
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        self.with_cx(move |cx| {
            let mut threads = list_threads_blocking(cx, Some(limit))?;
            // A thread whose root checkpoints all have an unreadable id has none listed.
            threads.retain(|t| t.latest_checkpoint_id.is_some());
            Ok(threads)
        })
        .await
    }

    async fn find_threads(&self, query: &ThreadQuery) -> Result<Vec<FoundThread>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let q = query.clone();
        self.with_cx(move |cx| super::find::find_threads_blocking(cx, &q))
            .await
            .map_err(|e| e.during(|| READING_THREADS.into()))
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let q = query.clone();
        self.with_cx(move |cx| {
            let mut out = Vec::new();
            for_each_row(cx, &q, |row| {
                out.push(row.header(cx.dec.key.as_ref()));
                Ok(())
            })?;
            Ok(out)
        })
        .await
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let q = query.clone();
        self.with_cx(move |cx| list_tuples_blocking(cx, &q)).await
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let thread = thread_id.to_owned();
        self.with_cx(move |cx| thread_writes_blocking(cx, &thread))
            .await
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let (thread, needle) = (thread_id.to_owned(), needle.to_owned());
        self.with_cx(move |cx| thread_writes_mentioning_blocking(cx, &thread, &needle))
            .await
    }

    async fn stored_value(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        at: ValueAt<'_>,
    ) -> Result<Option<StoredBytes>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(None);
        }
        let key = (
            thread_id.to_owned(),
            checkpoint_ns.to_owned(),
            checkpoint_id.to_owned(),
        );
        let at = super::stored::OwnedAt::from(at);
        self.with_cx(move |cx| {
            super::stored::stored_value_blocking(cx, &key.0, &key.1, &key.2, at.as_ref())
        })
        .await
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(Vec::new());
        }
        let thread = thread_id.to_owned();
        self.with_conn(move |conn, _, _, path, _| {
            let err = query_err(path);
            let mut stmt = conn
                .prepare_cached(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? \
                     ORDER BY checkpoint_ns",
                )
                .map_err(&err)?;
            let mut rows = stmt.query([&thread]).map_err(&err)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(&err)? {
                let raw = r.get_ref(0).map_err(&err)?;
                out.push(key_text("checkpoint_ns", raw.into()).unwrap_or_else(|bad| bad.shown));
            }
            out.sort();
            out.dedup();
            Ok(out)
        })
        .await
    }

    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        self.with_conn(|conn, _, _, path, _| {
            let err = query_err(path);
            let mut probe = crate::EncryptionProbe::default();
            for (table, column) in [("writes", "value"), ("checkpoints", "checkpoint")] {
                // The newest rows by rowid (the primary key's b-tree is walked backwards).
                let sql = format!(
                    "SELECT type, CASE WHEN type LIKE '%+%' AND length({column}) <= 65536 \
                     THEN {column} END FROM {table} ORDER BY rowid DESC LIMIT {}",
                    crate::sealed::PROBE_ROWS
                );
                let Ok(mut stmt) = conn.prepare(&sql) else {
                    continue; // a WITHOUT ROWID table, which LangGraph never creates
                };
                let mut rows = stmt.query([]).map_err(&err)?;
                while let Some(r) = rows.next().map_err(&err)? {
                    let tag = match r.get_ref(0).map_err(&err)? {
                        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        _ => continue,
                    };
                    probe.add(&tag, super::rows::blob_or_text(r, 1).map_err(&err)?);
                }
            }
            Ok(probe.done())
        })
        .await
    }

    /// All in one blocking call and one read transaction: per-key calls cost a thread hand-off
    /// and a file lock each, which dominated listing tens of thousands of threads.
    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.get_tuples_decoding(keys, self.decoding.clone()).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let mut decoding = self.decoding.clone();
        decoding.only = Some(keep);
        self.get_tuples_decoding(keys, decoding).await
    }
}

impl SqliteStore {
    /// [`with_conn`](Self::with_conn) with the connection and what comes with it as one [`Ctx`].
    async fn with_cx<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Ctx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.with_conn(move |conn, source, schema, path, dec| {
            f(Ctx {
                conn,
                source,
                schema,
                path,
                dec,
            })
        })
        .await
    }

    /// [`get_tuples`](CheckpointStore::get_tuples) with `decoding`: one call to the
    /// connection, one snapshot.
    async fn get_tuples_decoding(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        decoding: Decoding,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        if !self.schema.holds.checkpoints() {
            return Ok(vec![None; keys.len()]);
        }
        let keys: Vec<Key> = keys
            .iter()
            .map(|(t, n, c)| (t.to_string(), n.to_string(), c.map(str::to_owned)))
            .collect();
        self.with_conn_decoding(decoding, move |conn, source, schema, path, dec| {
            let cx = Ctx {
                conn,
                source,
                schema,
                path,
                dec,
            };
            let _window = LookupWindow::open(conn);
            let snapshot = conn.unchecked_transaction().map_err(cx.err())?;
            let read = get_many(cx, &keys)?;
            snapshot.finish().map_err(cx.err())?;
            Ok(read)
        })
        .await
    }
}
