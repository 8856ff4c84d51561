//! Resources and the prompt. Each thread is `flashback://thread/{thread_id}` (its summary and
//! its history) and each checkpoint `flashback://thread/{thread_id}/checkpoint/{checkpoint_id}`
//! (its state, as the `state` tool gives it); the list names every thread and its latest
//! checkpoint. The prompt `why_did_it_stop` gathers what a model needs to start explaining
//! why a thread failed or stopped: its status, the failing task's error, the last writes and
//! the interrupt.

use super::bound::{self, CHARS_PER_TOKEN, DEFAULT_TOKENS};
use super::table;
use super::Door;
use flashback_api::ApiError;
use serde_json::{json, Value as Json};

/// The scheme and host of every resource.
pub const PREFIX: &str = "flashback://thread/";
/// The most threads listed as resources (the `threads` tool pages through any number).
const MAX_LISTED: usize = 500;

/// A resource: its URI, a name and a description.
pub struct Listed {
    pub uri: String,
    pub name: String,
    pub description: String,
}

/// Thread ids may hold any character: they are percent-encoded in a URI.
fn encode(id: &str) -> String {
    let mut out = String::new();
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(text: &str) -> Result<String, ApiError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| ApiError::invalid(format!("bad escape in {text:?}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ApiError::invalid(format!("{text:?} is not UTF-8")))
}

/// The URI of a thread.
pub fn thread_uri(thread_id: &str) -> String {
    format!("{PREFIX}{}", encode(thread_id))
}

/// The URI of a checkpoint.
pub fn checkpoint_uri(thread_id: &str, checkpoint_id: &str) -> String {
    format!(
        "{}/checkpoint/{}",
        thread_uri(thread_id),
        encode(checkpoint_id)
    )
}

/// Every thread (up to [`MAX_LISTED`]) and its latest checkpoint.
pub async fn list(door: &Door) -> Result<Vec<Listed>, ApiError> {
    let threads = table::call(&door.api, "list_threads", json!({"db": door.db})).await?;
    let mut out = Vec::new();
    for t in threads
        .json
        .as_array()
        .into_iter()
        .flatten()
        .take(MAX_LISTED)
    {
        let id = t["thread_id"].as_str().unwrap_or_default();
        let status = t["status"].as_str().unwrap_or("unknown");
        out.push(Listed {
            uri: thread_uri(id),
            name: format!("thread {id}"),
            description: format!(
                "{status}, {} checkpoints: its summary and history",
                t["checkpoint_count"]
            ),
        });
        if let Some(head) = t["latest_checkpoint_id"].as_str() {
            out.push(Listed {
                uri: checkpoint_uri(id, head),
                name: format!("thread {id}: latest checkpoint {head}"),
                description: format!("the state of thread {id}'s latest checkpoint ({status})"),
            });
        }
    }
    Ok(out)
}

/// Read a resource: its JSON text, bounded as a tool answer is.
pub async fn read(door: &Door, uri: &str) -> Result<String, ApiError> {
    let rest = uri
        .strip_prefix(PREFIX)
        .ok_or_else(|| ApiError::not_found(format!("no resource {uri:?}: expected {PREFIX}…")))?;
    let value = match rest.split_once("/checkpoint/") {
        Some((thread, checkpoint)) => {
            let (thread, checkpoint) = (decode(thread)?, decode(checkpoint)?);
            table::call(
                &door.api,
                "checkpoint_detail",
                json!({"db": door.db, "thread_id": thread, "checkpoint_id": checkpoint}),
            )
            .await?
            .json
        }
        None => {
            let thread = decode(rest)?;
            let threads = table::call(&door.api, "list_threads", json!({"db": door.db})).await?;
            let summary = threads
                .json
                .as_array()
                .and_then(|a| a.iter().find(|t| t["thread_id"] == json!(thread)).cloned())
                .ok_or_else(|| ApiError::not_found(format!("no thread {thread:?}")))?;
            let history = table::call(
                &door.api,
                "thread_history",
                json!({"db": door.db, "thread_id": thread, "checkpoint_ns": null}),
            )
            .await?
            .json;
            json!({"thread": summary, "history": history})
        }
    };
    let fitted = bound::fit(value, DEFAULT_TOKENS * CHARS_PER_TOKEN);
    Ok(serde_json::to_string_pretty(&fitted.value).unwrap_or_default())
}

/// The prompt's name.
pub const PROMPT: &str = "why_did_it_stop";
/// What it is for.
pub const PROMPT_ABOUT: &str = "Why did this thread fail or stop? Gathers the thread's status, \
     the failing task's error, the last writes and the interrupt it waits at, as a starting \
     point for finding the cause.";

/// A string as itself, anything else as compact JSON.
fn plain(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn compact(v: &Json, chars: usize) -> String {
    let fitted = bound::fit(v.clone(), chars);
    serde_json::to_string(&fitted.value).unwrap_or_default()
}

/// The prompt's text for `thread_id`.
pub async fn why(door: &Door, thread_id: &str) -> Result<String, ApiError> {
    let d = table::call(
        &door.api,
        "checkpoint_detail",
        json!({"db": door.db, "thread_id": thread_id}),
    )
    .await?
    .json;
    let mut out = format!(
        "Find out why the LangGraph thread {thread_id:?} failed or stopped, using the \
         flashback tools (history, graph, state with a path, diff, watch, replay).\n\n\
         Its latest checkpoint is {} (step {}, source {}); status: {}.\n",
        plain(&d["checkpoint_id"]),
        plain(&d["step"]),
        plain(&d["source"]),
        plain(&d["status"])
    );
    let tasks = d["tasks"]["tasks"].as_array().cloned().unwrap_or_default();
    let next = d["tasks"]["next"].clone();
    out.push_str(&format!("Next tasks: {next}\n"));
    for t in &tasks {
        if !t["error"].is_null() {
            out.push_str(&format!(
                "Task {} ({}) failed with: {}\n",
                plain(&t["name"]),
                plain(&t["id"]),
                compact(&t["error"], 2_000)
            ));
        }
        for i in t["interrupts"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "Task {} waits at an interrupt: {}\n",
                plain(&t["name"]),
                compact(i, 2_000)
            ));
        }
    }
    for (label, member) in [
        ("The writes that made this checkpoint", "made_by"),
        ("Pending writes on it", "writes"),
    ] {
        let groups = d[member].as_array().cloned().unwrap_or_default();
        if groups.is_empty() {
            continue;
        }
        out.push_str(&format!("{label}:\n"));
        for g in groups.iter().take(10) {
            let writes: Vec<String> = g["writes"]
                .as_array()
                .into_iter()
                .flatten()
                .take(10)
                .map(|w| format!("{} = {}", plain(&w["channel"]), compact(&w["value"], 400)))
                .collect();
            out.push_str(&format!(
                "  {} ({}): {}\n",
                g["node"].as_str().unwrap_or("?"),
                g["status"].as_str().unwrap_or("-"),
                writes.join("; ")
            ));
        }
    }
    if let Some(problem) = d["problem"].as_str() {
        out.push_str(&format!(
            "The checkpoint could not be read in full: {problem}\n"
        ));
    }
    out.push_str(
        "\nStart from the error or the interrupt; look at the state before the failing step \
         (history, then state with its checkpoint_id) and at how the inputs of that step were \
         produced (watch a channel, diff two checkpoints).\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_uris() {
        for id in ["t-1", "a b/c?d", "ünï", "%41"] {
            let uri = thread_uri(id);
            let rest = uri.strip_prefix(PREFIX).unwrap_or_default();
            assert!(!rest.contains('/'), "{uri}");
            assert_eq!(decode(rest).ok().as_deref(), Some(id));
        }
    }
}
