//! The `langgraph dev` server's state folder (`.langgraph_api/`) as a source: the checkpoint,
//! pending-write and value pickles `InMemorySaver` keeps there, the server's threads and runs
//! (`.langgraph_ops.pckl`) and its memory Store (`store.pckl`), read with Flashback's own
//! pickle reader ([`flashback_codec::pickle`]: nothing a pickle names is imported or run).
//!
//! The files are a snapshot the server rewrites (temp file + rename) at a clean shutdown and
//! on some flushes: [`DevServerStore`] reads them all at one moment, reads again when one
//! changes, and says in [`ServerState::notes`] what a reader should know (a server running on
//! the folder, threads it lists that its checkpoint file lacks). Opening never writes and
//! takes no lock. [`DevServerSaver`] writes the checkpoint files for explicit actions (forks,
//! merges, deletes, copies) while no server runs on the folder (`edit.rs`).

mod edit;
pub mod files;
mod js;
pub(crate) mod load;
mod maint;
mod memory;
mod ops;
mod read;
mod superjson;
mod write;

pub use edit::BACKUP_SUFFIX;
pub use write::DevServerSaver;

use crate::decode::Decoding;
use crate::layout::{Backend, Dialect, SchemaKind};
use crate::model::*;
use crate::server::ServerState;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use files::{Files, Stamp};
use flashback_codec::pickle::{self, Limits, PyValue};
use flashback_codec::{AesKey, DecodeBudget, Decoded};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The folder's files as read at one moment.
pub(crate) struct Snapshot {
    data: load::Checkpoints,
    server: Arc<ServerState>,
    memory: Arc<Vec<crate::memory::MemoryItem>>,
    /// Why the channel values cannot be read (the values file is unreadable), for every
    /// checkpoint's problem.
    values_problem: Option<String>,
    stamps: Vec<Option<Stamp>>,
}

/// Parse one file's pickle, bounded by its size; `Err((path, why))`.
fn parse(files: &Files, name: &str) -> Option<Result<PyValue, (String, String)>> {
    let bytes = files.bytes(name)?;
    if bytes.is_empty() {
        // `PersistentDict.load` reads an empty file as nothing (EOFError).
        return None;
    }
    let limits = Limits {
        max_objects: bytes.len().clamp(1 << 10, 1 << 26),
        ..Limits::default()
    };
    Some(
        pickle::loads(bytes, &limits)
            .map_err(|e| (files.dir.join(name).display().to_string(), e.to_string())),
    )
}

/// `HH:MM:SS` UTC of a file's modification time, for notes.
fn clock(stamp: Option<Stamp>) -> Option<String> {
    let t = stamp?.modified()?;
    let micros = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_micros() as i64;
    Some(crate::memory::time::iso(micros))
}

impl Snapshot {
    fn load(dir: &Path) -> Result<Snapshot, StoreError> {
        let files = files::read_all(dir)?;
        if js::is_js(dir) {
            return js::load(dir, files);
        }
        let mut notes = Vec::new();
        let storage = match parse(&files, files::CHECKPOINTS) {
            Some(Err((path, detail))) => return Err(StoreError::UnreadableFile { path, detail }),
            Some(Ok(v)) => Some(v),
            None => None,
        };
        let mut optional = |name: &str, what: &str| match parse(&files, name) {
            Some(Err((path, detail))) => {
                let e = format!("{path} cannot be read ({detail})");
                notes.push(format!("{e}: {what} are not shown"));
                (None, Some(e))
            }
            Some(Ok(v)) => (Some(v), None),
            None => (None, None),
        };
        let (writes, _) = optional(files::WRITES, "pending writes");
        let (blobs, values_problem) = optional(files::BLOBS, "channel values");
        let (ops_root, _) = optional(files::OPS, "the server's threads and runs");
        let (store_root, _) = optional(files::STORE, "memory Store items");

        let mut data = load::checkpoints(storage.as_ref(), writes.as_ref(), blobs.as_ref())
            .map_err(|detail| StoreError::UnreadableFile {
                path: dir.join(files::CHECKPOINTS).display().to_string(),
                detail,
            })?;
        if !data.problems.is_empty() {
            notes.push(format!(
                "{} entries of the checkpoint files cannot be read (first: {})",
                data.problems.len(),
                data.problems[0]
            ));
            data.problems.clear();
        }
        let mut server = match &ops_root {
            Some(root) => ops::read(root, &mut notes),
            None => ServerState::default(),
        };
        server.server = "langgraph dev (Python)".into();
        server.saved_at = clock(files.stamp(files::CHECKPOINTS));
        for t in &mut server.threads {
            t.has_checkpoints = data.threads.contains_key(&t.thread_id);
        }
        let memory = store_root
            .as_ref()
            .map(|root| memory::items(root, &mut notes))
            .unwrap_or_default();
        server.notes = notes;
        say_staleness(&mut server, &files, dir, (files::CHECKPOINTS, files::OPS));
        Ok(Snapshot {
            data,
            server: Arc::new(server),
            memory: Arc::new(memory),
            values_problem,
            stamps: files.stamps(),
        })
    }
}

/// What the storage report reads (`report/devserver.rs`).
impl Snapshot {
    /// The folder's files read at one moment.
    pub(crate) fn read(dir: &Path) -> Result<Snapshot, StoreError> {
        Snapshot::load(dir)
    }

    /// The checkpoint files as read.
    pub(crate) fn checkpoints(&self) -> &load::Checkpoints {
        &self.data
    }

    /// What a reader should know (a file that cannot be read, a server running).
    pub(crate) fn notes(&self) -> &[String] {
        &self.server.notes
    }
}

/// The notes a reader needs when the files are not the whole story: a server running on the
/// folder, threads the server lists that its checkpoint file lacks, a thread list saved after
/// the checkpoints. `names`: the checkpoint file's and the ops file's names.
fn say_staleness(server: &mut ServerState, files: &Files, dir: &Path, names: (&str, &str)) {
    let (checkpoints_file, ops_file) = names;
    let saved = clock(files.stamp(checkpoints_file));
    let saved_at = saved.as_deref().map_or_else(
        || "never saved checkpoints".to_owned(),
        |s| format!("last saved checkpoints at {s}"),
    );
    if let Some(pid) = files::running_server(dir) {
        server.running = true;
        server.api_url = Some(format!("http://127.0.0.1:{}", files::server_port(pid)));
        server.notes.insert(
            0,
            format!(
                "a langgraph dev server is running on this folder (pid {pid}); it {saved_at}: \
                 open {} to see its live state, or stop it with Ctrl-C to save the rest",
                server.api_url.as_deref().unwrap_or_default()
            ),
        );
    }
    let missing = server.threads.iter().filter(|t| !t.has_checkpoints).count();
    if missing > 0 {
        let how = if server.running {
            "they will be saved when it stops (Ctrl-C)"
        } else {
            "they ran after it last saved (a server killed with kill -9 loses what it had not saved)"
        };
        server.notes.push(format!(
            "the server lists {missing} thread{} its checkpoint file does not hold: {how}",
            if missing == 1 { "" } else { "s" }
        ));
    }
    let (ops, checkpoints) = (
        files.stamp(ops_file).and_then(|s| s.modified()),
        files.stamp(checkpoints_file).and_then(|s| s.modified()),
    );
    if let (Some(ops), Some(checkpoints)) = (ops, checkpoints) {
        let newer = ops
            .duration_since(checkpoints)
            .is_ok_and(|d| d > std::time::Duration::from_secs(5));
        if newer && !server.running && missing == 0 {
            server.notes.push(format!(
                "the server's thread list (saved {}) is newer than its checkpoints (saved {})",
                clock(files.stamp(ops_file)).unwrap_or_default(),
                saved.unwrap_or_default()
            ));
        }
    }
}

/// What the store and its memory reader share: the folder and the latest snapshot.
pub(crate) struct Shared {
    dir: PathBuf,
    snap: Mutex<Arc<Snapshot>>,
}

impl Shared {
    /// The snapshot, read again first when a file changed since it was read.
    async fn current(self: &Arc<Self>) -> Result<Arc<Snapshot>, StoreError> {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let held = Arc::clone(&me.snap.lock().unwrap_or_else(|e| e.into_inner()));
            if files::stamps(&me.dir) == held.stamps {
                return Ok(held);
            }
            let fresh = Arc::new(Snapshot::load(&me.dir)?);
            *me.snap.lock().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&fresh);
            Ok(fresh)
        })
        .await
        .map_err(|e| StoreError::Query(format!("read task failed: {e}")))?
    }
}

/// The dev server's folder, read-only.
pub struct DevServerStore {
    shared: Arc<Shared>,
    schema: SchemaInfo,
    dec: Decoding,
    memory: Option<memory::DevMemory>,
}

/// The schema a dev-server folder is described with.
fn schema(has_store: bool, has_checkpoints: bool) -> SchemaInfo {
    SchemaInfo {
        backend: Backend::DevServer,
        has_task_path: true,
        migration_version: None,
        kind: SchemaKind::DevServer,
        description: "langgraph dev server state (.langgraph_api pickles)".into(),
        holds: Holds::of(has_checkpoints || !has_store, has_store),
        dialect: Dialect::Python,
    }
}

impl DevServerStore {
    /// Open the state folder `dir` ([`files::state_dir`]): every file read once.
    pub fn open(dir: &Path) -> Result<DevServerStore, StoreError> {
        let snap = Snapshot::load(dir)?;
        let has_store = dir.join(files::STORE).is_file();
        // The LangGraph.js server's folder (js.rs).
        let (has_store, schema) = match js::is_js(dir) {
            true => js::schema(dir),
            false => (has_store, schema(has_store, true)),
        };
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            snap: Mutex::new(Arc::new(snap)),
        });
        Ok(DevServerStore {
            schema,
            memory: has_store.then(|| memory::DevMemory::new(Arc::clone(&shared))),
            shared,
            dec: Decoding::default(),
        })
    }

    /// Decode within `budget`.
    pub fn with_budget(mut self, budget: DecodeBudget) -> Self {
        self.dec.budget = budget;
        self
    }

    /// Decrypt `+aes` values with `key`.
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.dec.key = key;
        self
    }

    /// The state folder.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    async fn snapshot(&self) -> Result<Arc<Snapshot>, StoreError> {
        self.shared.current().await
    }

    /// Run `f` on the snapshot off the async threads (decoding can take a while).
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Snapshot, &Decoding) -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        self.with_decoding(self.dec.clone(), f).await
    }

    async fn with_decoding<T: Send + 'static>(
        &self,
        dec: Decoding,
        f: impl FnOnce(&Snapshot, &Decoding) -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        let snap = self.snapshot().await?;
        tokio::task::spawn_blocking(move || f(&snap, &dec))
            .await
            .map_err(|e| StoreError::Query(format!("read task failed: {e}")))
    }

    /// `get_tuple` of each key, decoding as `dec` says.
    async fn tuples_of(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        dec: Decoding,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let keys: Vec<ListQuery> = keys
            .iter()
            .map(|(t, ns, id)| ListQuery::one(t, ns, *id))
            .collect();
        self.with_decoding(dec, move |s, dec| {
            keys.iter()
                .map(|q| {
                    read::matching(&s.data, q, dec)
                        .first()
                        .map(|f| read::tuple(s, f, dec))
                })
                .collect()
        })
        .await
    }
}

#[async_trait]
impl CheckpointStore for DevServerStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        self.memory
            .as_ref()
            .map(|m| m as &dyn crate::memory::MemoryRead)
    }

    async fn server(&self) -> Result<Option<Arc<ServerState>>, StoreError> {
        Ok(Some(Arc::clone(&self.snapshot().await?.server)))
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        self.with(|s, _| read::threads(&s.data)).await
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        self.with(move |s, _| {
            let mut threads = read::threads(&s.data);
            threads.retain(|t| t.latest_checkpoint_id.is_some());
            crate::newest_first(&mut threads);
            threads.truncate(limit);
            threads
        })
        .await
    }

    async fn find_threads(
        &self,
        query: &crate::ThreadQuery,
    ) -> Result<Vec<crate::FoundThread>, StoreError> {
        crate::find::find_threads(self, query).await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        let q = query.clone();
        self.with(move |s, dec| {
            read::matching(&s.data, &q, dec)
                .iter()
                .map(|f| read::header(f, dec))
                .collect()
        })
        .await
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        let q = query.clone();
        self.with(move |s, dec| {
            read::matching(&s.data, &q, dec)
                .iter()
                .map(|f| read::tuple(s, f, dec))
                .collect()
        })
        .await
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let t = thread_id.to_owned();
        self.with(move |s, _| {
            s.data
                .threads
                .get(&t)
                .map(|ns| ns.keys().cloned().collect())
                .unwrap_or_default()
        })
        .await
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        let t = thread_id.to_owned();
        self.with(move |s, _| read::thread_writes(&s.data, &t))
            .await
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
        let (t, n) = (thread_id.to_owned(), needle.to_owned());
        self.with(move |s, dec| read::thread_writes_mentioning(&s.data, &t, &n, dec))
            .await
    }

    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        self.with(|s, _| read::encryption_probe(&s.data)).await
    }

    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.tuples_of(keys, self.dec.clone()).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let dec = Decoding {
            only: Some(keep),
            ..self.dec.clone()
        };
        self.tuples_of(keys, dec).await
    }
}
