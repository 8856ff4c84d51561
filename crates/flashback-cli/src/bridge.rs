//! `flashback bridge DB [--create] [--schema three-table]`: the Rust saver behind a JSON-lines protocol on
//! stdin/stdout, so that a program in another language (the Python adapter
//! `tests/interop/saver_adapter.py`) can use it as a LangGraph checkpointer.
//!
//! One request per line, one response line per request, in order:
//!
//! ```text
//!  → {"op": "put", "config": {...}, "checkpoint": {...}, "metadata": {...}, "new_versions": {...}}
//!  ← {"ok": true, "result": {"configurable": {"thread_id": …, "checkpoint_ns": …, "checkpoint_id": …}}}
//!  ← {"ok": false, "error": {"code": "invalid_input", "message": "…"}}
//! ```
//!
//! | op | request fields | result |
//! |---|---|---|
//! | `setup` | – | `null` |
//! | `put` | `config`, `checkpoint`, `metadata`, `new_versions` | the stored config |
//! | `put_writes` | `config`, `writes` `[[channel, value], …]`, `task_id`, `task_path` (default `""`) | `null` |
//! | `get_tuple` | `config` | a tuple or `null` |
//! | `list` | `config` (or `null`), `filter`, `before` (a config), `limit` | `[tuple, …]` newest first |
//! | `delete_thread` | `thread_id` | `null` |
//! | `copy_thread` | `source_thread_id`, `target_thread_id` | `{checkpoints, writes, blobs}` |
//! | `delete_for_runs` | `run_ids` | `{checkpoints, writes, blobs, parents_cleared}` |
//! | `prune` | `thread_ids`, `strategy` (`keep_latest` / `delete`), `dry_run` (default false) | same |
//!
//! A tuple is `{"config", "checkpoint", "metadata", "parent_config", "pending_writes"}` with
//! `pending_writes` = `[[task_id, channel, value], …]`, as Python's `CheckpointTuple`.
//!
//! **Values** (channel values, pending sends, write values) cross as the JSON view
//! (`docs/json-view.md`); this side turns them back into typed values with
//! `flashback_codec::unview::decoded_from_view` and does all encoding and storage itself.
//! Channel versions are JSON numbers or strings, exactly as Python holds them.
//!
//! **Metadata**: `put` applies Python's `get_checkpoint_metadata(config, metadata)` here, on
//! the Rust side: NULs are stripped from top-level string values of `metadata`, then every key
//! of `config["metadata"]` and then `config["configurable"]` that is not already in the
//! metadata, does not start with `__` and is not in `EXCLUDED_METADATA_KEYS` is copied when
//! its value is a string (NULs stripped), an integer, a bool or a float; other values are
//! skipped. (Postgres additionally drops a `writes` key, in the storage layer, as
//! `get_serializable_checkpoint_metadata` does.) Clients send the config as it is; values
//! that are not JSON may be sent in any form, since only strings, numbers and bools are used.
//!
//! **Configs**: as in Python's savers, `put` and `put_writes` require
//! `configurable.checkpoint_ns`; `get_tuple` defaults it to `""`; `list` restricts to a
//! namespace only when the config has the key.
//!
//! Error codes: the storage error codes (`not_found`, `invalid_input`, `query`, …),
//! `invalid_value` (a value that is not a valid JSON view), `bad_request` (malformed request
//! or unknown op).

use flashback_codec::unview::decoded_from_view;
use flashback_codec::{view_decoded, Decoded, ViewOptions};
use flashback_storage::maintenance::{PruneReport, PruneStrategy, SaverMaintenance};
use flashback_storage::{
    Checkpoint, CheckpointTuple, ListQuery, PutRequest, StoreError, Version, Versions,
};
use serde_json::{json, Map, Value as Json};
use std::io::{BufRead, Write};
use std::sync::Arc;

/// `EXCLUDED_METADATA_KEYS` of langgraph-checkpoint 4.3.2.
const EXCLUDED_METADATA_KEYS: [&str; 9] = [
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
];

/// A failed request.
#[derive(Debug)]
pub struct BridgeError {
    code: &'static str,
    message: String,
}

impl BridgeError {
    fn bad(message: impl Into<String>) -> Self {
        BridgeError {
            code: "bad_request",
            message: message.into(),
        }
    }
}

impl From<StoreError> for BridgeError {
    fn from(e: StoreError) -> Self {
        BridgeError {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl From<flashback_codec::unview::UnviewError> for BridgeError {
    fn from(e: flashback_codec::unview::UnviewError) -> Self {
        BridgeError {
            code: "invalid_value",
            message: e.to_string(),
        }
    }
}

type Res<T> = Result<T, BridgeError>;

/// Open the saver: a SQLite file or a Postgres URL, with `create` made (or brought up to
/// date) as `--schema` and `--blobs` say (`flashback_storage::Create`).
pub async fn open(
    db: &str,
    create: bool,
    schema: &str,
    blobs: &str,
) -> Result<Box<dyn SaverMaintenance>, StoreError> {
    let three = flashback_storage::three::ThreeTableOptions::parse(schema, blobs)?;
    flashback_storage::open(db, flashback_storage::Create { create, three }).await
}

/// Serve requests from stdin until it closes. Returns an error only for I/O failures.
pub async fn serve(db: &str, create: bool, schema: &str, blobs: &str) -> Result<(), String> {
    let saver = open(db, create, schema, blobs)
        .await
        .map_err(|e| e.to_string())?;
    // Plain blocking std I/O: requests are handled one at a time, and this future runs on the
    // thread that blocks on the runtime, so the workers stay free for the database drivers.
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut line = String::new();
    loop {
        line.clear();
        if stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?
            == 0
        {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Json>(&line) {
            Ok(req) => handle(saver.as_ref(), &req).await,
            Err(e) => Err(BridgeError::bad(format!("request is not JSON: {e}"))),
        };
        let out = match response {
            Ok(result) => json!({"ok": true, "result": result}),
            Err(e) => json!({"ok": false, "error": {"code": e.code, "message": e.message}}),
        };
        let mut text = serde_json::to_string(&out).map_err(|e| e.to_string())?;
        text.push('\n');
        let mut lock = stdout.lock();
        lock.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
        lock.flush().map_err(|e| e.to_string())?;
    }
}

/// Handle one request.
pub async fn handle(saver: &dyn SaverMaintenance, req: &Json) -> Res<Json> {
    let op = req
        .get("op")
        .and_then(Json::as_str)
        .ok_or_else(|| BridgeError::bad("missing \"op\""))?;
    match op {
        "setup" => {
            saver.setup().await?;
            Ok(Json::Null)
        }
        "put" => put(saver, req).await,
        "put_writes" => put_writes(saver, req).await,
        "get_tuple" => {
            let conf = configurable(req.get("config"))?;
            let thread_id = req_str(conf, "thread_id", "config.configurable")?;
            let ns = opt_str(conf, "checkpoint_ns")?.unwrap_or("");
            let cid = opt_str(conf, "checkpoint_id")?;
            Ok(match saver.get_tuple(thread_id, ns, cid).await? {
                Some(t) => tuple_json(&t),
                None => Json::Null,
            })
        }
        "list" => list(saver, req).await,
        "delete_thread" => {
            let thread_id = req_str(obj(req)?, "thread_id", "request")?;
            saver.delete_thread(thread_id).await?;
            Ok(Json::Null)
        }
        "copy_thread" => {
            let r = obj(req)?;
            let src = req_str(r, "source_thread_id", "request")?;
            let dst = req_str(r, "target_thread_id", "request")?;
            let rep = saver.copy_thread(src, dst).await?;
            Ok(json!({"checkpoints": rep.checkpoints, "writes": rep.writes, "blobs": rep.blobs}))
        }
        "delete_for_runs" => {
            let ids = str_list(req.get("run_ids"), "run_ids")?;
            Ok(report_json(&saver.delete_for_runs(&ids).await?))
        }
        "prune" => {
            let ids = str_list(req.get("thread_ids"), "thread_ids")?;
            let strategy: PruneStrategy = req
                .get("strategy")
                .and_then(Json::as_str)
                .unwrap_or("keep_latest")
                .parse()?;
            let dry_run = req.get("dry_run").and_then(Json::as_bool).unwrap_or(false);
            Ok(report_json(&saver.prune(&ids, strategy, dry_run).await?))
        }
        other => Err(BridgeError::bad(format!("unknown op {other:?}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// put / put_writes / list

async fn put(saver: &dyn SaverMaintenance, req: &Json) -> Res<Json> {
    let config = req.get("config");
    let conf = configurable(config)?;
    let thread_id = req_str(conf, "thread_id", "config.configurable")?;
    let ns = req_str(conf, "checkpoint_ns", "config.configurable")?;
    let parent = opt_str(conf, "checkpoint_id")?;
    let checkpoint = checkpoint_from_json(
        req.get("checkpoint")
            .ok_or_else(|| BridgeError::bad("missing \"checkpoint\""))?,
    )?;
    let metadata = match req.get("metadata") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(m)) => m.clone(),
        Some(_) => return Err(BridgeError::bad("\"metadata\" must be an object")),
    };
    let metadata = checkpoint_metadata(config, metadata);
    let new_versions = versions(req.get("new_versions"), "new_versions")?;
    saver
        .put(PutRequest {
            thread_id,
            checkpoint_ns: ns,
            parent_checkpoint_id: parent,
            checkpoint: &checkpoint,
            metadata: &metadata,
            new_versions: &new_versions,
        })
        .await?;
    Ok(json!({"configurable": {
        "thread_id": thread_id,
        "checkpoint_ns": ns,
        "checkpoint_id": checkpoint.id,
    }}))
}

async fn put_writes(saver: &dyn SaverMaintenance, req: &Json) -> Res<Json> {
    let conf = configurable(req.get("config"))?;
    let thread_id = req_str(conf, "thread_id", "config.configurable")?;
    let ns = req_str(conf, "checkpoint_ns", "config.configurable")?;
    let cid = req_str(conf, "checkpoint_id", "config.configurable")?;
    let r = obj(req)?;
    let task_id = req_str(r, "task_id", "request")?;
    let task_path = opt_str(r, "task_path")?.unwrap_or("");
    let Some(Json::Array(items)) = req.get("writes") else {
        return Err(BridgeError::bad("\"writes\" must be [[channel, value], …]"));
    };
    let mut writes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let pair = item.as_array().filter(|a| a.len() == 2);
        let (Some(channel), Some(value)) = (pair.and_then(|p| p[0].as_str()), pair.map(|p| &p[1]))
        else {
            return Err(BridgeError::bad(format!(
                "writes[{i}] must be [channel, value]"
            )));
        };
        let value = decoded_from_view(value, None, &format!("writes[{i}]"))?;
        writes.push((channel.to_owned(), value));
    }
    saver
        .put_writes(thread_id, ns, cid, task_id, task_path, &writes)
        .await?;
    Ok(Json::Null)
}

async fn list(saver: &dyn SaverMaintenance, req: &Json) -> Res<Json> {
    let mut query = ListQuery::default();
    match req.get("config") {
        None | Some(Json::Null) => {}
        config => {
            let conf = configurable(config)?;
            query.thread_id = opt_str(conf, "thread_id")?.map(str::to_owned);
            // Python: restrict to a namespace only when the config has the key.
            if conf.contains_key("checkpoint_ns") {
                query.checkpoint_ns = Some(opt_str(conf, "checkpoint_ns")?.unwrap_or("").into());
            }
            query.checkpoint_id = opt_str(conf, "checkpoint_id")?.map(str::to_owned);
        }
    }
    match req.get("before") {
        None | Some(Json::Null) => {}
        before => {
            query.before = opt_str(configurable(before)?, "checkpoint_id")?.map(str::to_owned);
        }
    }
    match req.get("limit") {
        None | Some(Json::Null) => {}
        Some(l) => {
            query.limit = Some(
                l.as_u64()
                    .ok_or_else(|| BridgeError::bad("\"limit\" must be a non-negative integer"))?,
            );
        }
    }
    match req.get("filter") {
        None | Some(Json::Null) => {}
        Some(Json::Object(f)) => query.filter = f.clone(),
        Some(_) => return Err(BridgeError::bad("\"filter\" must be an object")),
    }
    let tuples = saver.list_tuples(&query).await?;
    Ok(Json::Array(tuples.iter().map(tuple_json).collect()))
}

/// Python's `get_checkpoint_metadata(config, metadata)`.
pub fn checkpoint_metadata(
    config: Option<&Json>,
    metadata: Map<String, Json>,
) -> Map<String, Json> {
    let strip = |s: &str| s.replace('\0', "");
    let mut out: Map<String, Json> = metadata
        .into_iter()
        .map(|(k, v)| match v {
            Json::String(s) => (k, Json::String(strip(&s))),
            v => (k, v),
        })
        .collect();
    for part in ["metadata", "configurable"] {
        let Some(Json::Object(obj)) = config.and_then(|c| c.get(part)) else {
            continue;
        };
        for (key, v) in obj {
            if out.contains_key(key)
                || EXCLUDED_METADATA_KEYS.contains(&key.as_str())
                || key.starts_with("__")
            {
                continue;
            }
            match v {
                Json::String(s) => {
                    out.insert(key.clone(), Json::String(strip(s)));
                }
                Json::Number(_) | Json::Bool(_) => {
                    out.insert(key.clone(), v.clone());
                }
                _ => {}
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// JSON ⇄ model

fn obj(v: &Json) -> Res<&Map<String, Json>> {
    v.as_object()
        .ok_or_else(|| BridgeError::bad("the request must be a JSON object"))
}

fn configurable(config: Option<&Json>) -> Res<&Map<String, Json>> {
    config
        .and_then(|c| c.get("configurable"))
        .and_then(Json::as_object)
        .ok_or_else(|| BridgeError::bad("a config {\"configurable\": {...}} is required"))
}

fn opt_str<'a>(m: &'a Map<String, Json>, key: &str) -> Res<Option<&'a str>> {
    match m.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(BridgeError::bad(format!("{key:?} must be a string"))),
    }
}

fn req_str<'a>(m: &'a Map<String, Json>, key: &str, what: &str) -> Res<&'a str> {
    opt_str(m, key)?.ok_or_else(|| BridgeError::bad(format!("{what}.{key} is required")))
}

fn str_list(v: Option<&Json>, what: &str) -> Res<Vec<String>> {
    match v {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| BridgeError::bad(format!("{what} must be strings")))
            })
            .collect(),
        Some(_) => Err(BridgeError::bad(format!(
            "{what} must be a list of strings"
        ))),
    }
}

fn versions(v: Option<&Json>, what: &str) -> Res<Versions> {
    match v {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                Version::from_json(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| {
                        BridgeError::bad(format!("{what}.{k}: a version is a number or a string"))
                    })
            })
            .collect(),
        Some(_) => Err(BridgeError::bad(format!("{what} must be an object"))),
    }
}

fn checkpoint_from_json(cp: &Json) -> Res<Checkpoint> {
    let m = cp
        .as_object()
        .ok_or_else(|| BridgeError::bad("\"checkpoint\" must be an object"))?;
    let v = match m.get("v") {
        None | Some(Json::Null) => 1,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| BridgeError::bad("checkpoint.v must be an integer"))?,
    };
    let mut channel_values = Vec::new();
    match m.get("channel_values") {
        None | Some(Json::Null) => {}
        Some(Json::Object(values)) => {
            for (k, view) in values {
                let d = decoded_from_view(view, None, &format!("channel_values.{k}"))?;
                channel_values.push((k.clone(), Arc::new(d)));
            }
        }
        Some(_) => {
            return Err(BridgeError::bad(
                "checkpoint.channel_values must be an object",
            ))
        }
    }
    let mut versions_seen = Vec::new();
    match m.get("versions_seen") {
        None | Some(Json::Null) => {}
        Some(Json::Object(seen)) => {
            for (node, vs) in seen {
                versions_seen.push((node.clone(), versions(Some(vs), "versions_seen")?));
            }
        }
        Some(_) => {
            return Err(BridgeError::bad(
                "checkpoint.versions_seen must be an object",
            ))
        }
    }
    let updated_channels = match m.get("updated_channels") {
        None | Some(Json::Null) => None,
        Some(u) => Some(str_list(Some(u), "checkpoint.updated_channels")?),
    };
    let pending_sends = match m.get("pending_sends") {
        None | Some(Json::Null) => None,
        Some(Json::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    decoded_from_view(s, None, &format!("pending_sends[{i}]")).map(Arc::new)
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(BridgeError::bad("checkpoint.pending_sends must be a list")),
    };
    Ok(Checkpoint {
        v,
        id: req_str(m, "id", "checkpoint")?.to_owned(),
        ts: opt_str(m, "ts")?.unwrap_or_default().to_owned(),
        channel_values,
        channel_versions: versions(m.get("channel_versions"), "channel_versions")?,
        versions_seen,
        updated_channels,
        pending_sends,
    })
}

fn value_view(d: &Decoded) -> Option<Json> {
    view_decoded(
        d,
        ViewOptions {
            reveal_secrets: true,
        },
    )
}

fn versions_json(vs: &Versions) -> Json {
    Json::Object(
        vs.iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
            .collect(),
    )
}

fn tuple_json(t: &CheckpointTuple) -> Json {
    let h = &t.header;
    let cp = &t.checkpoint;
    let values: Map<String, Json> = cp
        .channel_values
        .iter()
        .filter_map(|(k, v)| value_view(v).map(|j| (k.clone(), j)))
        .collect();
    let mut checkpoint = json!({
        "v": cp.v,
        "id": cp.id,
        "ts": cp.ts,
        "channel_values": values,
        "channel_versions": versions_json(&cp.channel_versions),
        "versions_seen": Json::Object(
            cp.versions_seen.iter().map(|(n, vs)| (n.clone(), versions_json(vs))).collect()
        ),
        "updated_channels": cp.updated_channels,
    });
    if let Some(sends) = &cp.pending_sends {
        checkpoint["pending_sends"] = Json::Array(
            sends
                .iter()
                .map(|s| value_view(s).unwrap_or(Json::Null))
                .collect(),
        );
    }
    let config = |id: &str| {
        json!({"configurable": {
            "thread_id": h.thread_id,
            "checkpoint_ns": h.checkpoint_ns,
            "checkpoint_id": id,
        }})
    };
    let parent = match h.parent_checkpoint_id.as_deref() {
        Some(p) if !p.is_empty() => config(p),
        _ => Json::Null,
    };
    let writes: Vec<Json> = t
        .pending_writes
        .iter()
        .map(|w| {
            json!([
                w.task_id,
                w.channel,
                value_view(&w.value).unwrap_or(Json::Null)
            ])
        })
        .collect();
    json!({
        "config": config(&h.checkpoint_id),
        "checkpoint": checkpoint,
        "metadata": h.metadata,
        "parent_config": parent,
        "pending_writes": writes,
    })
}

fn report_json(r: &PruneReport) -> Json {
    json!({
        "checkpoints": r.checkpoints.iter().map(|(t, n, c)| json!([t, n, c])).collect::<Vec<_>>(),
        "writes": r.writes,
        "blobs": r.blobs,
        "parents_cleared": r.parents_cleared,
        "dry_run": r.dry_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_follows_python() {
        let config = json!({
            "metadata": {"m": "x\u{0}y", "source": "ignored"},
            "configurable": {
                "thread_id": "t", "checkpoint_ns": "", "__secret": 1, "n": 2, "f": 1.5,
                "b": true, "o": {"x": 1}, "langgraph_step": 3,
            },
        });
        let md = json!({"source": "loop", "s": "a\u{0}"});
        let out = checkpoint_metadata(Some(&config), md.as_object().cloned().unwrap_or_default());
        assert_eq!(
            Json::Object(out),
            json!({"source": "loop", "s": "a", "m": "xy", "n": 2, "f": 1.5, "b": true})
        );
    }
}
