//! [`CheckpointStore`] for [`ThreeTablePg`]: every read in one read-only transaction.

use super::{read, thread as thread_read, ThreeTablePg};
use crate::model::*;
use crate::postgres::sql::{Arg, Sql};
use crate::three::values::ReadMemo;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use sqlx::Row as _;

/// Run a read in one read-only transaction, rolled back at the end (dropped after an error:
/// rolled back before its connection is reused), saying what it reads (`$what`) when the
/// server does not answer.
macro_rules! in_read {
    ($s:expr, $what:expr, |$tx:ident| $body:expr) => {{
        let read = async {
            let mut $tx = $s.begin_read().await?;
            let out = $body;
            if out.is_ok() {
                $s.target.end_read($tx).await;
            }
            out
        };
        read.await.map_err(|e| e.during(|| $what))
    }};
}

#[async_trait]
impl CheckpointStore for ThreeTablePg {
    fn schema(&self) -> &SchemaInfo {
        self.after_setup.get().unwrap_or(&self.schema)
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        None
    }

    async fn server(
        &self,
    ) -> Result<Option<std::sync::Arc<crate::server::ServerState>>, StoreError> {
        Ok(None)
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        crate::generic::list_recent_threads(self, limit).await
    }

    /// The three-table store is not probed: nothing is found sealed.
    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        Ok(crate::EncryptionProbe::default())
    }

    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        crate::generic::get_tuples(self, keys).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        crate::generic::get_tuples_selecting(self, keys, keep).await
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        in_read!(self, READING_THREADS.into(), |tx| thread_read::threads(
            &mut tx, self
        )
        .await)
    }

    async fn find_threads(
        &self,
        query: &crate::ThreadQuery,
    ) -> Result<Vec<crate::FoundThread>, StoreError> {
        crate::find::find_threads(self, query).await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        let rows = in_read!(self, query.reading(), |tx| read::rows(&mut tx, self, query)
            .await)?;
        Ok(rows.iter().map(|r| r.header(&self.decoding)).collect())
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        in_read!(self, query.reading(), |tx| {
            match read::rows(&mut tx, self, query).await {
                Ok(rows) => {
                    let mut memo = ReadMemo::new(self.decoding.key.clone());
                    read::tuples(&mut tx, self, rows, &mut memo).await
                }
                Err(e) => Err(e),
            }
        })
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let reading = || {
            format!(
                "reading the namespaces of thread {}",
                thread_id.escape_debug()
            )
        };
        let sql = Sql::new("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = $1")
            .with(Arg::Text(thread_id.to_owned()));
        let rows = in_read!(self, reading(), |tx| self
            .target
            .wait(sql.query().fetch_all(&mut *tx))
            .await)?;
        let mut out: Vec<String> = rows
            .iter()
            .filter_map(|r| r.try_get::<String, _>(0).ok())
            .collect();
        out.sort();
        Ok(out)
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        in_read!(self, reading_writes(thread_id), |tx| {
            thread_read::thread_writes(&mut tx, self, thread_id).await
        })
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        in_read!(self, reading_writes(thread_id), |tx| {
            thread_read::thread_writes_mentioning(&mut tx, self, thread_id, needle).await
        })
    }
}
