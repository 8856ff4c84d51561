//! The LangGraph.js dev server's folder (`npx @langchain/langgraph-cli dev`,
//! `@langchain/langgraph-api`'s `storage/`): three superjson documents ([`super::superjson`])
//! read into the same [`Snapshot`] the Python pickles fill.
//!
//! ```text
//! .langgraphjs_api.checkpointer.json  {storage, writes} of LangGraph.js's MemorySaver:
//!   storage {thread_id: {checkpoint_ns: {checkpoint_id: [checkpoint: Uint8Array, metadata: Uint8Array, parent_id | undefined]}}}
//!   writes  {JSON.stringify([thread_id, checkpoint_ns, checkpoint_id]): {"task_id,idx": [task_id, channel, value: Uint8Array, task_path]}}
//! .langgraphjs_ops.json               {runs: {id: run}, threads: {id: thread}, assistants: {id: assistant}, …}
//! .langgraphjs_api.store.json         {data: Map<"a:b", Map<key, {value, key, namespace, createdAt, updatedAt}>>, vectors}
//! ```
//!
//! Every `Uint8Array` is the UTF-8 JSON text of LangGraph.js's `json` serde (the checkpoint
//! document holds its channel values), kept as a `json` serde pair so the values decode as in
//! a LangGraph.js database. Each file is written whole (`fs.writeFile`, no rename) 3 s after
//! the server last touched it and at a clean exit.

use super::files::{self, Files};
use super::load::{Checkpoints, Namespace, Saved, StoredWrite, Typed};
use super::superjson::{self, kind, Doc};
use super::{clock, say_staleness, Snapshot};
use crate::memory::{MemoryItem, RawItem, Stamp};
use crate::server::{ServerAssistant, ServerRun, ServerState, ServerThread};
use crate::StoreError;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The serde tag of every value the JS server stores.
const TAG: &str = "json";

pub(crate) use files::is_js;

/// Whether the folder holds a store, and its schema (the Python server's, in the JS dialect).
pub(super) fn schema(dir: &Path) -> (bool, crate::model::SchemaInfo) {
    let has_store = dir.join(files::JS_STORE).is_file();
    let schema = crate::model::SchemaInfo {
        description: "langgraph dev server state (LangGraph.js)".into(),
        dialect: crate::layout::Dialect::Js,
        ..super::schema(has_store, true)
    };
    (has_store, schema)
}

/// Parse one file; `None`: absent or empty; `Err(line)`: unreadable.
fn parse(files: &Files, name: &str) -> Option<Result<Doc, String>> {
    let bytes = files.bytes(name)?;
    if bytes.is_empty() {
        return None;
    }
    Some(
        superjson::parse(bytes)
            .map_err(|e| format!("{} cannot be read: {e}", files.dir.join(name).display())),
    )
}

/// Read the folder's files (already read as one moment) into a snapshot.
pub(super) fn load(dir: &Path, files: Files) -> Result<Snapshot, StoreError> {
    let mut notes = Vec::new();
    let mut data = match parse(&files, files::JS_CHECKPOINTER) {
        Some(Err(detail)) => {
            return Err(StoreError::UnreadableFile {
                path: dir.join(files::JS_CHECKPOINTER).display().to_string(),
                detail,
            })
        }
        Some(Ok(doc)) => checkpoints(&doc).map_err(|detail| StoreError::UnreadableFile {
            path: dir.join(files::JS_CHECKPOINTER).display().to_string(),
            detail,
        })?,
        None => Checkpoints::default(),
    };
    if files
        .bytes(files::JS_CHECKPOINTER)
        .is_some_and(<[u8]>::is_empty)
    {
        // Measured: Ctrl-C in a terminal signals the CLI too, whose exit kills the server
        // while `fs.writeFile` has truncated the file and not yet written it.
        notes.push(format!(
            "{} is empty: the server was stopped while writing it (its checkpoints are lost)",
            dir.join(files::JS_CHECKPOINTER).display()
        ));
    }
    if !data.problems.is_empty() {
        notes.push(format!(
            "{} entries of the checkpoint file cannot be read (first: {})",
            data.problems.len(),
            data.problems[0]
        ));
        data.problems.clear();
    }
    let mut server = match parse(&files, files::JS_OPS) {
        Some(Ok(doc)) => ops(&doc.json, &mut notes),
        Some(Err(e)) => {
            notes.push(format!("{e}: the server's threads and runs are not shown"));
            ServerState::default()
        }
        None => ServerState::default(),
    };
    server.server = "langgraph dev (LangGraph.js)".into();
    server.saved_at = clock(files.stamp(files::JS_CHECKPOINTER));
    for t in &mut server.threads {
        t.has_checkpoints = data.threads.contains_key(&t.thread_id);
    }
    let memory = match parse(&files, files::JS_STORE) {
        Some(Ok(doc)) => store(&doc, &mut notes),
        Some(Err(e)) => {
            notes.push(format!("{e}: memory Store items are not shown"));
            Vec::new()
        }
        None => Vec::new(),
    };
    server.notes = notes;
    say_staleness(
        &mut server,
        &files,
        dir,
        (files::JS_CHECKPOINTER, files::JS_OPS),
    );
    Ok(Snapshot {
        data,
        server: Arc::new(server),
        memory: Arc::new(memory),
        values_problem: None,
        stamps: files.stamps(),
    })
}

fn object<'a>(v: &'a Json, what: &str) -> Result<&'a serde_json::Map<String, Json>, String> {
    v.as_object()
        .ok_or_else(|| format!("{what} is {}, not an object", kind(v)))
}

/// A `json` serde pair from the `Uint8Array` at `path`.
fn typed(doc: &Doc, path: &[&str], v: &Json) -> Result<Typed, String> {
    doc.bytes(path, v).map(|b| Typed::from_bytes(TAG, b))
}

/// The checkpointer document's `storage` and `writes`.
pub(crate) fn checkpoints(doc: &Doc) -> Result<Checkpoints, String> {
    let top = object(&doc.json, "the document").map_err(|e| {
        format!("{e}: not the {{storage, writes}} LangGraph.js's dev server writes")
    })?;
    let mut out = Checkpoints::default();
    let empty = Json::Object(Default::default());
    let storage = object(top.get("storage").unwrap_or(&empty), "its storage")?;
    for (thread_id, per_thread) in storage {
        let Ok(namespaces) = object(per_thread, "a thread") else {
            out.problems.push(format!(
                "thread {thread_id}: its checkpoints are {}, not an object",
                kind(per_thread)
            ));
            continue;
        };
        let mut per_ns = BTreeMap::new();
        for (ns, checkpoints) in namespaces {
            let Ok(checkpoints) = object(checkpoints, "a namespace") else {
                out.problems.push(format!(
                    "thread {thread_id} namespace {ns:?}: its checkpoints are {}, not an object",
                    kind(checkpoints)
                ));
                continue;
            };
            let mut saved: Namespace = BTreeMap::new();
            for (id, entry) in checkpoints {
                let at = |i: &'static str| ["storage", thread_id.as_str(), ns.as_str(), id, i];
                let saved_one = match entry.as_array().map(Vec::as_slice) {
                    Some([checkpoint, metadata, rest @ ..]) if rest.len() <= 1 => Saved {
                        checkpoint: typed(doc, &at("0"), checkpoint)
                            .map_err(|e| format!("the checkpoint is {e}")),
                        metadata: typed(doc, &at("1"), metadata)
                            .map_err(|e| format!("the metadata is {e}")),
                        parent: rest
                            .first()
                            .and_then(Json::as_str)
                            .filter(|p| !p.is_empty())
                            .map(str::to_owned),
                    },
                    _ => {
                        let problem = format!(
                            "the stored checkpoint is {}, not [checkpoint, metadata, parent]",
                            kind(entry)
                        );
                        Saved {
                            checkpoint: Err(problem.clone()),
                            metadata: Err(problem),
                            parent: None,
                        }
                    }
                };
                saved.insert(id.clone(), saved_one);
            }
            if !saved.is_empty() {
                per_ns.insert(ns.clone(), saved);
            }
        }
        if !per_ns.is_empty() {
            out.threads.insert(thread_id.clone(), per_ns);
        }
    }
    let writes = object(top.get("writes").unwrap_or(&empty), "its writes")?;
    for (key, per_task) in writes {
        let parsed: Option<(String, String, String)> = serde_json::from_str(key).ok();
        let Some(checkpoint) = parsed else {
            out.problems.push(format!(
                "a pending-writes key that is not [thread, ns, checkpoint]: {key:?}"
            ));
            continue;
        };
        let Ok(per_task) = object(per_task, "writes") else {
            out.problems.push(format!(
                "the writes of checkpoint {} are {}, not an object",
                checkpoint.2,
                kind(per_task)
            ));
            continue;
        };
        let list = out.writes.entry(checkpoint).or_default();
        for (inner, write) in per_task {
            // "task_id,idx": the index after the last comma (`_orderedWrites`).
            let idx = inner
                .rsplit_once(',')
                .and_then(|(_, i)| i.parse::<i64>().ok())
                .unwrap_or(0);
            match write.as_array().map(Vec::as_slice) {
                Some([task_id, channel, value, rest @ ..]) if rest.len() <= 1 => {
                    list.push(StoredWrite {
                        task_id: task_id.as_str().unwrap_or_default().to_owned(),
                        idx,
                        channel: channel.as_str().unwrap_or_default().to_owned(),
                        task_path: rest
                            .first()
                            .and_then(Json::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        value: typed(doc, &["writes", key, inner, "2"], value)
                            .map_err(|e| format!("the value is {e}")),
                    })
                }
                _ => out.problems.push(format!(
                    "a pending write that is {}, not [task, channel, value, path]",
                    kind(write)
                )),
            }
        }
    }
    Ok(out)
}

/// A field as text (ids, statuses, ISO times: superjson keeps a `Date` as its ISO text).
fn text(v: &Json, name: &str) -> Option<String> {
    match v.get(name)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The values of one of the ops document's tables (`{id: record}`).
fn table<'a>(top: &'a Json, name: &str) -> impl Iterator<Item = &'a Json> {
    top.get(name)
        .and_then(Json::as_object)
        .into_iter()
        .flat_map(|m| m.values())
}

/// The ops document (`FileSystemOps`): the server's threads, runs and assistants.
pub(crate) fn ops(top: &Json, notes: &mut Vec<String>) -> ServerState {
    let mut state = ServerState::default();
    if !top.is_object() {
        notes.push(format!(
            "the server's threads file holds {}, not an object: its thread list is not shown",
            kind(top)
        ));
        return state;
    }
    let mut runs: BTreeMap<String, Vec<ServerRun>> = BTreeMap::new();
    for run in table(top, "runs") {
        let Some(thread_id) = text(run, "thread_id") else {
            continue;
        };
        runs.entry(thread_id).or_default().push(ServerRun {
            run_id: text(run, "run_id").unwrap_or_default(),
            status: text(run, "status"),
            assistant_id: text(run, "assistant_id"),
            created_at: text(run, "created_at"),
            updated_at: text(run, "updated_at"),
        });
    }
    for r in runs.values_mut() {
        r.sort_by(|a, b| (&a.created_at, &a.run_id).cmp(&(&b.created_at, &b.run_id)));
    }
    for thread in table(top, "threads") {
        if !thread.is_object() {
            notes.push(format!(
                "a thread in the server's threads file is {}, not an object",
                kind(thread)
            ));
            continue;
        }
        let Some(thread_id) = text(thread, "thread_id") else {
            continue;
        };
        let metadata = thread
            .get("metadata")
            .filter(|m| m.is_object())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}));
        state.threads.push(ServerThread {
            status: text(thread, "status"),
            created_at: text(thread, "created_at"),
            updated_at: text(thread, "updated_at"),
            assistant_id: text(&metadata, "assistant_id"),
            graph_id: text(&metadata, "graph_id"),
            has_checkpoints: false,
            runs: runs.remove(&thread_id).unwrap_or_default(),
            metadata,
            thread_id,
        });
    }
    state.threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
    state.threads.dedup_by(|a, b| a.thread_id == b.thread_id);
    for a in table(top, "assistants") {
        state.assistants.push(ServerAssistant {
            assistant_id: text(a, "assistant_id").unwrap_or_default(),
            graph_id: text(a, "graph_id").unwrap_or_default(),
            name: text(a, "name"),
        });
    }
    state
}

/// The store document's items (`InMemoryStore.data`: a `Map` of namespaces, joined with `:`,
/// to a `Map` of keys to items), most recently updated first, then by namespace and key.
pub(crate) fn store(doc: &Doc, notes: &mut Vec<String>) -> Vec<MemoryItem> {
    let Some(data) = doc.json.get("data").and_then(Json::as_array) else {
        notes.push(format!(
            "the memory Store file holds {}, not its Map of namespaces: its items are not shown",
            kind(doc.json.get("data").unwrap_or(&doc.json))
        ));
        return Vec::new();
    };
    let now = crate::memory::time::now_micros();
    let mut out = Vec::new();
    for entry in data {
        let Some([_, per_key]) = entry.as_array().map(Vec::as_slice) else {
            continue;
        };
        for item in per_key.as_array().into_iter().flatten() {
            let Some([key, item]) = item.as_array().map(Vec::as_slice) else {
                continue;
            };
            // The item's own namespace (the Map's key joins the labels with ':').
            let labels: Vec<String> = item
                .get("namespace")
                .and_then(Json::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let mut raw = RawItem {
                prefix: labels.join("."),
                key: key.as_str().unwrap_or_default().to_owned(),
                ..RawItem::default()
            };
            if item.is_object() {
                raw.value = item
                    .get("value")
                    .map(|v| serde_json::to_vec(v).unwrap_or_default());
                raw.created_at = text(item, "createdAt").map(|t| Stamp::parse(&t));
                raw.updated_at = text(item, "updatedAt").map(|t| Stamp::parse(&t));
            } else {
                raw.problems
                    .push(format!("the stored item is {}, not an object", kind(item)));
            }
            out.push(raw.into_item(now));
        }
    }
    out.sort_by(|a, b| {
        (&b.updated_at, &a.namespace, &a.key).cmp(&(&a.updated_at, &b.namespace, &b.key))
    });
    out
}
