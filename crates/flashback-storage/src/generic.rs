//! The generic reads: [`CheckpointStore`] methods answered from `list_threads`,
//! `list_headers` and `list_tuples` alone — whole threads read and decoded. The trait has no
//! default bodies for them, so a source either answers a method efficiently or names the
//! function here for it, on purpose.

use crate::model::{ChannelFilter, CheckpointTuple, ListQuery, ThreadInfo, WriteInfo};
use crate::{CheckpointStore, Decoded, StoreError};

/// [`CheckpointStore::list_recent_threads`] from every thread.
pub async fn list_recent_threads<S: CheckpointStore + ?Sized>(
    store: &S,
    limit: usize,
) -> Result<Vec<ThreadInfo>, StoreError> {
    let mut threads: Vec<ThreadInfo> = store
        .list_threads()
        .await?
        .into_iter()
        .filter(|t| t.latest_checkpoint_id.is_some())
        .collect();
    crate::newest_first(&mut threads);
    threads.truncate(limit);
    Ok(threads)
}

/// [`CheckpointStore::thread_namespaces`] from the thread's headers.
pub async fn thread_namespaces<S: CheckpointStore + ?Sized>(
    store: &S,
    thread_id: &str,
) -> Result<Vec<String>, StoreError> {
    let mut n: Vec<String> = store
        .list_headers(&ListQuery::thread(thread_id))
        .await?
        .into_iter()
        .map(|h| h.checkpoint_ns)
        .collect();
    n.sort();
    n.dedup();
    Ok(n)
}

/// [`CheckpointStore::thread_writes`] from the whole thread, decoded.
pub async fn thread_writes<S: CheckpointStore + ?Sized>(
    store: &S,
    thread_id: &str,
) -> Result<Vec<WriteInfo>, StoreError> {
    let tuples = store.list_tuples(&ListQuery::thread(thread_id)).await?;
    Ok(tuples
        .iter()
        .flat_map(|t| {
            t.pending_writes.iter().map(|w| WriteInfo {
                checkpoint_ns: t.header.checkpoint_ns.clone(),
                checkpoint_id: t.header.checkpoint_id.clone(),
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
                channel: w.channel.clone(),
            })
        })
        .collect())
}

/// [`CheckpointStore::thread_writes_mentioning`] without searching the bytes: every write of
/// the thread with its value (the caller checks the values anyway).
pub async fn thread_writes_mentioning<S: CheckpointStore + ?Sized>(
    store: &S,
    thread_id: &str,
) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
    let tuples = store.list_tuples(&ListQuery::thread(thread_id)).await?;
    Ok(tuples
        .into_iter()
        .flat_map(|t| {
            let (ns, id) = (t.header.checkpoint_ns, t.header.checkpoint_id);
            t.pending_writes.into_iter().map(move |w| {
                let info = WriteInfo {
                    checkpoint_ns: ns.clone(),
                    checkpoint_id: id.clone(),
                    task_id: w.task_id,
                    task_path: w.task_path,
                    channel: w.channel,
                };
                (info, w.value)
            })
        })
        .collect())
}

/// [`CheckpointStore::get_tuples`] one [`get_tuple`](CheckpointStore::get_tuple) at a time.
pub async fn get_tuples<S: CheckpointStore + ?Sized>(
    store: &S,
    keys: &[(&str, &str, Option<&str>)],
) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
    let mut out = Vec::with_capacity(keys.len());
    for (thread_id, ns, id) in keys {
        out.push(store.get_tuple(thread_id, ns, *id).await?);
    }
    Ok(out)
}

/// [`CheckpointStore::get_tuples_selecting`] decoding every value, then dropping those `keep`
/// does not accept.
pub async fn get_tuples_selecting<S: CheckpointStore + ?Sized>(
    store: &S,
    keys: &[(&str, &str, Option<&str>)],
    keep: ChannelFilter,
) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
    let mut out = store.get_tuples(keys).await?;
    for t in out.iter_mut().flatten() {
        t.checkpoint.retain_channel_values(&keep);
    }
    Ok(out)
}

/// `impl CheckpointStore for $ty` forwarding every method to `self.$store`: a saver reads
/// through the read-only store it holds, so whatever that store answers efficiently, the
/// saver does too.
macro_rules! forward_reads {
    ($ty:ty, $store:ident) => {
        #[async_trait::async_trait]
        impl $crate::CheckpointStore for $ty {
            fn schema(&self) -> &$crate::SchemaInfo {
                self.$store.schema()
            }

            fn memory(&self) -> Option<&dyn $crate::memory::MemoryRead> {
                self.$store.memory()
            }

            async fn server(
                &self,
            ) -> Result<Option<std::sync::Arc<$crate::server::ServerState>>, $crate::StoreError>
            {
                self.$store.server().await
            }

            async fn list_threads(&self) -> Result<Vec<$crate::ThreadInfo>, $crate::StoreError> {
                self.$store.list_threads().await
            }

            async fn list_recent_threads(
                &self,
                limit: usize,
            ) -> Result<Vec<$crate::ThreadInfo>, $crate::StoreError> {
                self.$store.list_recent_threads(limit).await
            }

            async fn find_threads(
                &self,
                query: &$crate::ThreadQuery,
            ) -> Result<Vec<$crate::FoundThread>, $crate::StoreError> {
                self.$store.find_threads(query).await
            }

            async fn list_headers(
                &self,
                query: &$crate::ListQuery,
            ) -> Result<Vec<$crate::CheckpointHeader>, $crate::StoreError> {
                self.$store.list_headers(query).await
            }

            async fn list_tuples(
                &self,
                query: &$crate::ListQuery,
            ) -> Result<Vec<$crate::CheckpointTuple>, $crate::StoreError> {
                self.$store.list_tuples(query).await
            }

            async fn get_tuple(
                &self,
                thread_id: &str,
                checkpoint_ns: &str,
                checkpoint_id: Option<&str>,
            ) -> Result<Option<$crate::CheckpointTuple>, $crate::StoreError> {
                self.$store
                    .get_tuple(thread_id, checkpoint_ns, checkpoint_id)
                    .await
            }

            async fn thread_namespaces(
                &self,
                thread_id: &str,
            ) -> Result<Vec<String>, $crate::StoreError> {
                self.$store.thread_namespaces(thread_id).await
            }

            async fn thread_writes(
                &self,
                thread_id: &str,
            ) -> Result<Vec<$crate::WriteInfo>, $crate::StoreError> {
                self.$store.thread_writes(thread_id).await
            }

            async fn thread_writes_mentioning(
                &self,
                thread_id: &str,
                needle: &str,
            ) -> Result<Vec<($crate::WriteInfo, $crate::Decoded)>, $crate::StoreError> {
                self.$store
                    .thread_writes_mentioning(thread_id, needle)
                    .await
            }

            async fn encryption_probe(
                &self,
            ) -> Result<$crate::EncryptionProbe, $crate::StoreError> {
                self.$store.encryption_probe().await
            }

            async fn get_tuples(
                &self,
                keys: &[(&str, &str, Option<&str>)],
            ) -> Result<Vec<Option<$crate::CheckpointTuple>>, $crate::StoreError> {
                self.$store.get_tuples(keys).await
            }

            async fn get_tuples_selecting(
                &self,
                keys: &[(&str, &str, Option<&str>)],
                keep: $crate::ChannelFilter,
            ) -> Result<Vec<Option<$crate::CheckpointTuple>>, $crate::StoreError> {
                self.$store.get_tuples_selecting(keys, keep).await
            }

            async fn stored_value(
                &self,
                thread_id: &str,
                checkpoint_ns: &str,
                checkpoint_id: &str,
                at: $crate::ValueAt<'_>,
            ) -> Result<Option<$crate::StoredBytes>, $crate::StoreError> {
                self.$store
                    .stored_value(thread_id, checkpoint_ns, checkpoint_id, at)
                    .await
            }
        }
    };
}
pub(crate) use forward_reads;
