//! Writes the server's way, each one request the server decides: a fork or an edited fork is
//! `POST /threads/{id}/state` from a checkpoint (the update goes through the graph's reducers,
//! made as `as_node`; `as_node: "__copy__"` copies the checkpoint as it is), a re-run or a
//! resume is `POST /threads/{id}/runs/stream` from a checkpoint (with `command.resume` for an
//! interrupt), read as server-sent events; a run is cancelled with
//! `POST /threads/{id}/runs/{run_id}/cancel`; a thread copied with `POST /threads/{id}/copy`
//! and deleted with `DELETE /threads/{id}`.
//! A refused write comes back as the server's own words, one line.

use super::client::READ_TIMEOUT;
use super::fetch::seg;
use super::AgentServerStore;
use crate::StoreError;
use reqwest::Method;
use serde_json::{json, Map, Value as Json};

/// LangGraph's node name for "copy the checkpoint as it is" (`update_state(…, as_node=…)`).
pub const COPY_AS_NODE: &str = "__copy__";

/// One update of a thread's state at a checkpoint.
#[derive(Debug, Clone)]
pub struct StateUpdate<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The namespace of the checkpoint (`""`: the root graph).
    pub checkpoint_ns: &'a str,
    /// The checkpoint the update starts from.
    pub checkpoint_id: &'a str,
    /// The channels and their new values (empty: a copy of the checkpoint).
    pub values: Map<String, Json>,
    /// The node the update is made as (`None`: the server's choice).
    pub as_node: Option<&'a str>,
}

/// A run to start on a thread from a checkpoint.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The thread.
    pub thread_id: String,
    /// The checkpoint to run from (`None`: the latest).
    pub checkpoint_id: Option<String>,
    /// The namespace of that checkpoint.
    pub checkpoint_ns: String,
    /// The assistant or graph id (`None`: the one that last ran the thread).
    pub assistant_id: Option<String>,
    /// The value an interrupt is resumed with (`Command(resume=…)`).
    pub resume: Option<Json>,
    /// The input (`None`: continue from the checkpoint).
    pub input: Option<Json>,
}

/// One server-sent event of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEvent {
    /// `metadata`, `updates`, `values`, `error`, `end`, …
    pub event: String,
    /// Its data (JSON; a text that is not JSON is kept as a string).
    pub data: Json,
}

/// A run's event stream.
pub struct RunStream {
    resp: reqwest::Response,
    buf: Vec<u8>,
    base: String,
    /// The run id, once the `metadata` event named it.
    pub run_id: Option<String>,
}

impl RunStream {
    /// The next event (`None`: the stream ended). A pause longer than the read limit ends it
    /// with an error.
    pub async fn next(&mut self) -> Result<Option<RunEvent>, StoreError> {
        loop {
            if let Some(ev) = self.take_event() {
                if ev.event == "metadata" {
                    if let Some(id) = ev.data.get("run_id").and_then(Json::as_str) {
                        self.run_id = Some(id.to_owned());
                    }
                }
                return Ok(Some(ev));
            }
            let chunk = tokio::time::timeout(READ_TIMEOUT, self.resp.chunk()).await;
            match chunk {
                Err(_) => {
                    return Err(StoreError::ServerTimeout(format!(
                        "{} sent nothing about the run for {}",
                        self.base,
                        crate::error::duration_text(READ_TIMEOUT)
                    )))
                }
                Ok(Err(e)) => {
                    return Err(StoreError::Query(format!(
                        "{} broke off the run's event stream: {e}",
                        self.base
                    )))
                }
                Ok(Ok(None)) => {
                    self.buf.extend_from_slice(b"\n\n");
                    return Ok(self.take_event());
                }
                Ok(Ok(Some(bytes))) => self.buf.extend_from_slice(&bytes),
            }
        }
    }

    fn take_event(&mut self) -> Option<RunEvent> {
        loop {
            // Blocks end with a blank line (`\n\n` or `\r\n\r\n`); found in the bytes, so a
            // character split between two chunks is decoded whole.
            let (end, sep) = block_end(&self.buf)?;
            let block = String::from_utf8_lossy(&self.buf[..end]).replace("\r\n", "\n");
            self.buf.drain(..end + sep);
            if let Some(ev) = parse_event(&block) {
                return Some(ev);
            }
        }
    }
}

/// Where the first block of `buf` ends, and the length of the blank line ending it.
fn block_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// One SSE block (`event:` and `data:` lines); `None` for a block with no data (a comment,
/// a heartbeat).
fn parse_event(block: &str) -> Option<RunEvent> {
    let mut event = String::from("message");
    let mut data: Vec<&str> = Vec::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    if data.is_empty() {
        return None;
    }
    let text = data.join("\n");
    let data = serde_json::from_str(&text).unwrap_or(Json::String(text));
    Some(RunEvent { event, data })
}

fn checkpoint(ns: &str, id: &str) -> Json {
    json!({"checkpoint_ns": ns, "checkpoint_id": id})
}

/// The writes a server's API takes ([`crate::CheckpointStore::server_writes`]).
#[async_trait::async_trait]
pub trait ServerWrites: Send + Sync {
    /// Update a thread's state at a checkpoint (a fork the server writes); returns the new
    /// checkpoint's id.
    async fn update_state(&self, u: StateUpdate<'_>) -> Result<String, StoreError>;
    /// Copy a thread; returns the new thread id.
    async fn copy_thread(&self, thread_id: &str) -> Result<String, StoreError>;
    /// Start a run and read its events as they come.
    async fn start_run(&self, r: &RunRequest) -> Result<RunStream, StoreError>;
    /// Cancel a run.
    async fn cancel_run(&self, thread_id: &str, run_id: &str) -> Result<(), StoreError>;
    /// Delete a thread (the server's `DELETE /threads/{id}`: its checkpoints and runs).
    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError>;
    /// Forget what was read of a thread, so the next read asks the server.
    fn forget(&self, thread_id: &str);
}

#[async_trait::async_trait]
impl ServerWrites for AgentServerStore {
    async fn update_state(&self, u: StateUpdate<'_>) -> Result<String, StoreError> {
        let values = if u.values.is_empty() {
            Json::Null
        } else {
            Json::Object(u.values.clone())
        };
        let mut body = json!({
            "values": values,
            "checkpoint": checkpoint(u.checkpoint_ns, u.checkpoint_id),
        });
        match (u.as_node, u.values.is_empty()) {
            (Some(node), _) => body["as_node"] = json!(node),
            (None, true) => body["as_node"] = json!(COPY_AS_NODE),
            (None, false) => {}
        }
        let path = format!("/threads/{}/state", seg(u.thread_id));
        let answer: Result<Json, StoreError> = self.client().post(&path, &body).await;
        self.forget(u.thread_id);
        let answer = answer?;
        answer
            .pointer("/checkpoint/checkpoint_id")
            .or_else(|| answer.get("checkpoint_id"))
            .and_then(Json::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                StoreError::Query(format!(
                    "{} updated the state but named no checkpoint ({answer})",
                    self.base()
                ))
            })
    }

    /// Copy a thread (the server's `POST /threads/{id}/copy`); returns the new thread id.
    async fn copy_thread(&self, thread_id: &str) -> Result<String, StoreError> {
        let path = format!("/threads/{}/copy", seg(thread_id));
        let answer: Json = self.client().post(&path, &json!({})).await?;
        self.forget_listing();
        answer
            .get("thread_id")
            .and_then(Json::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                StoreError::Query(format!(
                    "{} copied the thread but named no new thread",
                    self.base()
                ))
            })
    }

    /// Start a run and read its events as they come.
    async fn start_run(&self, r: &RunRequest) -> Result<RunStream, StoreError> {
        let assistant = match &r.assistant_id {
            Some(a) => a.clone(),
            None => self.assistant_of(&r.thread_id).await?,
        };
        let mut body = json!({
            "assistant_id": assistant,
            "stream_mode": ["updates"],
            "stream_subgraphs": true,
            "on_disconnect": "continue",
        });
        if let Some(id) = &r.checkpoint_id {
            body["checkpoint"] = checkpoint(&r.checkpoint_ns, id);
        }
        if let Some(v) = &r.resume {
            body["command"] = json!({"resume": v});
        }
        if let Some(v) = &r.input {
            body["input"] = v.clone();
        }
        let path = format!("/threads/{}/runs/stream", seg(&r.thread_id));
        let resp = self.client().send(Method::POST, &path, Some(&body)).await;
        self.forget(&r.thread_id);
        Ok(RunStream {
            resp: resp?,
            buf: Vec::new(),
            base: self.base().to_owned(),
            run_id: None,
        })
    }

    /// Cancel a run (the server stops it; `wait=false`).
    async fn cancel_run(&self, thread_id: &str, run_id: &str) -> Result<(), StoreError> {
        let path = format!(
            "/threads/{}/runs/{}/cancel?wait=false",
            seg(thread_id),
            seg(run_id)
        );
        self.client()
            .send(Method::POST, &path, Some(&json!({})))
            .await?;
        self.forget(thread_id);
        Ok(())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        let path = format!("/threads/{}", seg(thread_id));
        let done = self.client().send(Method::DELETE, &path, None).await;
        self.forget(thread_id);
        done.map(|_| ())
    }

    fn forget(&self, thread_id: &str) {
        AgentServerStore::forget(self, thread_id)
    }
}

impl AgentServerStore {
    /// The assistant that last ran a thread (its metadata's `assistant_id`, else `graph_id`).
    async fn assistant_of(&self, thread_id: &str) -> Result<String, StoreError> {
        let t: Json = self
            .client()
            .get(&format!("/threads/{}", seg(thread_id)))
            .await?;
        let m = t.get("metadata").unwrap_or(&Json::Null);
        m.get("assistant_id")
            .or_else(|| m.get("graph_id"))
            .and_then(Json::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                StoreError::InvalidInput(format!(
                    "thread {thread_id} names no assistant or graph in its metadata: choose the \
                     assistant to run"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_blocks_are_events() {
        let ev = parse_event("event: metadata\ndata: {\"run_id\": \"r1\"}").unwrap();
        assert_eq!(ev.event, "metadata");
        assert_eq!(ev.data["run_id"], "r1");
        assert!(parse_event(": heartbeat").is_none());
        assert_eq!(block_end(b"event: a\r\ndata: 1\r\n\r\nrest"), Some((17, 4)));
        assert_eq!(block_end(b"data: 1\n\n"), Some((7, 2)));
        assert_eq!(block_end(b"data: 1\n"), None);
        let ev = parse_event("data: not json").unwrap();
        assert_eq!(ev.event, "message");
        assert_eq!(ev.data, Json::String("not json".into()));
    }
}
