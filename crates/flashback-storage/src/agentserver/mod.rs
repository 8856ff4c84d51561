//! A running Agent Server as a source — `langgraph dev` (Python or JS), a self-hosted server
//! or a LangSmith deployment — read through its HTTP API (`http://HOST:PORT`), the API
//! LangSmith Studio is built on: threads (`/threads/search`), each thread's history per
//! namespace (`/threads/{id}/history`), runs, assistants and the memory Store.
//!
//! Checkpoints are what `get_state_history` shows: values as the API serialises them, the
//! tasks of the next step as the server names them ([`crate::Served`]), and the pending
//! writes the API exposes (each task's result, error and interrupts); channel versions and
//! the writes of unfinished tasks are not exposed, and [`ServerState::notes`] says so.
//! Opening asks `GET /ok` (is it an Agent Server?) and one page of threads (does it take the
//! key?); reads are cached and read again when the server says a thread changed
//! ([`fetch`]). Writes go through the server's own endpoints ([`write`]).

pub mod client;
mod fetch;
mod memory;
mod states;
pub mod write;

pub use client::{base_url, is_server_url, set_api_key, Client};

use crate::layout::{Backend, Dialect, SchemaKind};
use crate::model::*;
use crate::server::{ServerAssistant, ServerRun, ServerState, ServerThread};
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use fetch::{Fetcher, History};
use flashback_codec::{DecodeBudget, Decoded};
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// What the API does not give, said once per location.
pub const API_LIMITS: &str = "read through the server's API: channel versions and the \
     pending writes of unfinished tasks are not exposed (each task's result, error and \
     interrupts are)";

/// An Agent Server, read-only.
pub struct AgentServerStore {
    fetch: Arc<Fetcher>,
    schema: SchemaInfo,
    server: String,
    budget: DecodeBudget,
    memory: memory::ServerMemory,
}

impl AgentServerStore {
    /// Connect: the server must answer `GET /ok` as an Agent Server and list its threads
    /// with the key it is given (else one line: unreachable, not an Agent Server, a key
    /// refused or missing).
    pub async fn open(location: &str) -> Result<AgentServerStore, StoreError> {
        let client = Client::new(location)?;
        let base = client.base().to_owned();
        let ok: Json = match client.get_within("/ok", client::CONNECT_TIMEOUT).await {
            Ok(j) => j,
            Err(StoreError::Auth(m)) => return Err(StoreError::Auth(m)),
            Err(e @ (StoreError::Connection(_) | StoreError::ServerTimeout(_))) => return Err(e),
            Err(e) => {
                return Err(StoreError::Connection(format!(
                    "{base} is not a LangGraph Agent Server (GET /ok: {})",
                    strip_base(&e.to_string(), &base)
                )))
            }
        };
        if ok.get("ok") != Some(&Json::Bool(true)) {
            return Err(StoreError::Connection(format!(
                "{base} is not a LangGraph Agent Server (GET /ok answered {})",
                short(&ok.to_string())
            )));
        }
        // The key is checked by a real read (`/ok` is open on deployments).
        let _: Vec<Json> = client
            .post(
                "/threads/search",
                &json!({"limit": 1, "select": ["thread_id"]}),
            )
            .await?;
        let info: Json = client.get("/info").await.unwrap_or(Json::Null);
        let version = info.get("version").and_then(Json::as_str).unwrap_or("");
        let server = match version {
            "" => format!("Agent Server at {base}"),
            v => format!("Agent Server {v} at {base}"),
        };
        let fetch = Arc::new(Fetcher::new(client));
        Ok(AgentServerStore {
            memory: memory::ServerMemory::new(Arc::clone(&fetch)),
            fetch,
            schema: SchemaInfo {
                backend: Backend::AgentServer,
                has_task_path: true,
                migration_version: None,
                kind: SchemaKind::AgentServer,
                description: format!("{server} (its HTTP API)"),
                holds: Holds::Mixed,
                dialect: Dialect::Python,
            },
            server,
            budget: DecodeBudget::DEFAULT,
        })
    }

    /// Decode within `budget` (a value over it is shown by its size).
    pub fn with_budget(mut self, budget: DecodeBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The server's base URL.
    pub fn base(&self) -> &str {
        self.fetch.client.base()
    }

    /// The HTTP client (for writes).
    pub fn client(&self) -> &Client {
        &self.fetch.client
    }

    /// Its memory Store, for writing (put and delete through the server).
    pub fn into_memory(self) -> Box<dyn crate::memory::MemoryWrite> {
        Box::new(self.memory)
    }

    /// Forget what was read of a thread, so the next read asks the server.
    pub fn forget(&self, thread_id: &str) {
        self.fetch.forget(thread_id);
    }

    /// Forget the thread list, so the next read asks the server.
    fn forget_listing(&self) {
        self.fetch.forget_listing();
    }

    async fn history(&self, thread_id: &str) -> Result<Option<Arc<History>>, StoreError> {
        self.fetch.history(thread_id, None).await
    }

    /// Every listed thread with its history.
    async fn all(&self, limit: Option<usize>) -> Result<Vec<(Json, Arc<History>)>, StoreError> {
        let listing = self.fetch.listing(limit).await?;
        let histories = self.fetch.histories(&listing.threads).await?;
        Ok(listing
            .threads
            .iter()
            .cloned()
            .zip(histories)
            .filter_map(|(t, h)| Some((t, h?)))
            .collect())
    }

    fn tuple_of(
        &self,
        thread_id: &str,
        state: &Json,
        only: Option<&ChannelFilter>,
    ) -> Option<CheckpointTuple> {
        states::tuple(thread_id, state, self.budget, only)
    }

    /// The states a query names, newest first, with Python's `list()` semantics.
    async fn matching(&self, q: &ListQuery) -> Result<Vec<(String, Json)>, StoreError> {
        let threads: Vec<(String, Arc<History>)> = match &q.thread_id {
            Some(t) => match self.history(t).await? {
                Some(h) => vec![(t.clone(), h)],
                None => Vec::new(),
            },
            None => self
                .all(None)
                .await?
                .into_iter()
                .filter_map(|(t, h)| Some((t.get("thread_id")?.as_str()?.to_owned(), h)))
                .collect(),
        };
        let mut out: Vec<(String, Json)> = Vec::new();
        for (thread_id, h) in &threads {
            for s in &h.states {
                let Some(id) = states::checkpoint_id(s) else {
                    continue;
                };
                let ns = states::checkpoint_ns(s);
                if q.checkpoint_ns.as_ref().is_some_and(|want| want != ns)
                    || q.checkpoint_id.as_ref().is_some_and(|want| want != id)
                    || (!q.checkpoint_ids.is_empty() && !q.checkpoint_ids.iter().any(|c| c == id))
                    || q.before.as_ref().is_some_and(|b| id >= b.as_str())
                {
                    continue;
                }
                if !q.filter.is_empty() {
                    let m = s.get("metadata").unwrap_or(&Json::Null);
                    if !q
                        .filter
                        .iter()
                        .all(|(k, v)| m.get(k).unwrap_or(&Json::Null) == v)
                    {
                        continue;
                    }
                }
                out.push((thread_id.clone(), s.clone()));
            }
        }
        out.sort_by(|(ta, a), (tb, b)| {
            (states::checkpoint_id(b), ta, states::checkpoint_ns(a)).cmp(&(
                states::checkpoint_id(a),
                tb,
                states::checkpoint_ns(b),
            ))
        });
        if let Some(limit) = q.limit {
            out.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(out)
    }

    async fn tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        only: Option<&ChannelFilter>,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        let mut out = Vec::with_capacity(keys.len());
        for (t, ns, id) in keys {
            let found = self.matching(&ListQuery::one(t, ns, *id)).await?;
            out.push(found.first().and_then(|(t, s)| self.tuple_of(t, s, only)));
        }
        Ok(out)
    }
}

fn short(s: &str) -> String {
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

fn strip_base(message: &str, base: &str) -> String {
    message.replace(&format!("{base} "), "").replace(base, "")
}

fn thread_info(thread_id: &str, h: &History) -> ThreadInfo {
    ThreadInfo {
        thread_id: thread_id.to_owned(),
        namespaces: h.namespaces.clone(),
        // A state the API gave without a checkpoint id is not a checkpoint (states.rs).
        checkpoint_count: h
            .states
            .iter()
            .filter(|s| states::checkpoint_id(s).is_some())
            .count() as u64,
        latest_checkpoint_id: h.latest_root().map(str::to_owned),
        problem: h.problem.clone(),
    }
}

fn opt_text(v: &Json, key: &str) -> Option<String> {
    v.get(key).and_then(Json::as_str).map(str::to_owned)
}

fn server_thread(t: &Json, h: Option<&History>) -> Option<ServerThread> {
    let metadata = t.get("metadata").cloned().unwrap_or(Json::Null);
    Some(ServerThread {
        thread_id: opt_text(t, "thread_id")?,
        status: opt_text(t, "status"),
        assistant_id: opt_text(&metadata, "assistant_id"),
        graph_id: opt_text(&metadata, "graph_id"),
        metadata,
        created_at: opt_text(t, "created_at"),
        updated_at: opt_text(t, "updated_at"),
        has_checkpoints: h.is_some_and(|h| !h.states.is_empty()),
        runs: h
            .map(|h| {
                h.runs
                    .iter()
                    .filter_map(|r| {
                        Some(ServerRun {
                            run_id: opt_text(r, "run_id")?,
                            status: opt_text(r, "status"),
                            assistant_id: opt_text(r, "assistant_id"),
                            created_at: opt_text(r, "created_at"),
                            updated_at: opt_text(r, "updated_at"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

#[async_trait]
impl CheckpointStore for AgentServerStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        Some(&self.memory)
    }

    fn server_writes(&self) -> Option<&dyn write::ServerWrites> {
        Some(self)
    }

    async fn server(&self) -> Result<Option<Arc<ServerState>>, StoreError> {
        let listing = self.fetch.listing(None).await?;
        let histories = self.fetch.histories(&listing.threads).await?;
        let mut threads: Vec<ServerThread> = listing
            .threads
            .iter()
            .zip(&histories)
            .filter_map(|(t, h)| server_thread(t, h.as_deref()))
            .collect();
        threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        let assistants = self.fetch.assistants().await;
        let mut notes = vec![API_LIMITS.to_owned()];
        let never_run = threads.iter().filter(|t| !t.has_checkpoints).count();
        if never_run > 0 {
            notes.push(format!(
                "the server lists {never_run} thread{} without checkpoints (created, never run): \
                 not in the thread list",
                if never_run == 1 { "" } else { "s" }
            ));
        }
        if listing.truncated {
            notes.push(format!(
                "only the {} most recently updated threads are listed (open another by its id: \
                 `flashback history URL THREAD`)",
                listing.threads.len()
            ));
        }
        Ok(Some(Arc::new(ServerState {
            server: self.server.clone(),
            saved_at: None,
            running: true,
            api_url: Some(self.base().to_owned()),
            notes,
            threads,
            assistants: assistants
                .iter()
                .filter_map(|a| {
                    Some(ServerAssistant {
                        assistant_id: opt_text(a, "assistant_id")?,
                        graph_id: opt_text(a, "graph_id").unwrap_or_default(),
                        name: opt_text(a, "name"),
                    })
                })
                .collect(),
        })))
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        let mut out: Vec<ThreadInfo> = self
            .all(None)
            .await?
            .iter()
            .filter(|(_, h)| !h.states.is_empty() || h.problem.is_some())
            .filter_map(|(t, h)| Some(thread_info(t.get("thread_id")?.as_str()?, h)))
            .collect();
        out.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        Ok(out)
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        // Threads never run have no checkpoints and are left out: ask for more until `limit`
        // threads with checkpoints are found or the server has no more.
        let mut ask = limit.max(1);
        let mut out: Vec<ThreadInfo> = loop {
            let listed = self.all(Some(ask)).await?;
            let found: Vec<ThreadInfo> = listed
                .iter()
                .filter_map(|(t, h)| Some(thread_info(t.get("thread_id")?.as_str()?, h)))
                .filter(|t| t.latest_checkpoint_id.is_some())
                .collect();
            if found.len() >= limit || listed.len() < ask {
                break found;
            }
            ask = ask.saturating_mul(2);
        };
        crate::newest_first(&mut out);
        out.truncate(limit);
        Ok(out)
    }

    async fn find_threads(
        &self,
        query: &crate::ThreadQuery,
    ) -> Result<Vec<crate::FoundThread>, StoreError> {
        crate::find::find_threads(self, query).await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        Ok(self
            .matching(query)
            .await?
            .iter()
            .filter_map(|(t, s)| states::header(t, s))
            .collect())
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        Ok(self
            .matching(query)
            .await?
            .iter()
            .filter_map(|(t, s)| self.tuple_of(t, s, None))
            .collect())
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .history(thread_id)
            .await?
            .map(|h| h.namespaces.clone())
            .unwrap_or_default())
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        Ok(self
            .history(thread_id)
            .await?
            .map(|h| h.states.iter().flat_map(states::write_infos).collect())
            .unwrap_or_default())
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
        let Some(h) = self.history(thread_id).await? else {
            return Ok(Vec::new());
        };
        Ok(h.states
            .iter()
            .flat_map(|s| states::writes_mentioning(s, needle, self.budget))
            .collect())
    }

    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        // The server decrypts before it answers: nothing it shows is sealed.
        Ok(crate::EncryptionProbe::default())
    }

    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.tuples(keys, None).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        self.tuples(keys, Some(&keep)).await
    }
}
