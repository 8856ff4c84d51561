//! `flashback rerun`: copy-fork a checkpoint, run the user's program on it, and report every
//! checkpoint it writes as it lands (the live tail the GUI reuses).
//!
//! The runner is a shell command. It gets in its environment:
//! * `FLASHBACK_DB` — the database (path or URL),
//! * `FLASHBACK_THREAD_ID` — the thread,
//! * `FLASHBACK_CHECKPOINT_ID` — the fork it should resume from (the thread's head),
//! * `FLASHBACK_CONFIG` — the LangGraph config JSON to resume with:
//!   `{"configurable": {"thread_id": …}}` (the fork is the head, so
//!   `graph.invoke(None, config)` continues from it).

use crate::commands::CliError;
use flashback_storage::{CheckpointHeader, ListQuery};
use serde_json::{json, Value as Json};
use std::collections::HashSet;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// How often the database is polled for new checkpoints.
const POLL: Duration = Duration::from_millis(200);

/// Options of one re-run.
pub struct Rerun {
    pub db: String,
    pub thread: String,
    pub checkpoint: String,
    pub ns: String,
    pub runner: String,
    pub timeout: Duration,
    pub json: bool,
}

fn event_line(h: &CheckpointHeader, json_out: bool) -> String {
    let m = &h.metadata;
    if json_out {
        let mut s = json!({
            "event": "checkpoint",
            "checkpoint_id": h.checkpoint_id,
            "parent_checkpoint_id": h.parent_checkpoint_id,
            "checkpoint_ns": h.checkpoint_ns,
            "step": m.get("step"),
            "source": m.get("source"),
            "ts": h.ts,
        })
        .to_string();
        s.push('\n');
        s
    } else {
        let ns = if h.checkpoint_ns.is_empty() {
            String::new()
        } else {
            format!(" [{}]", h.checkpoint_ns)
        };
        format!(
            "+ {} step {} {}{}\n",
            h.checkpoint_id,
            m.get("step").map_or("-".into(), Json::to_string),
            m.get("source").and_then(Json::as_str).unwrap_or("-"),
            ns
        )
    }
}

async fn emit(text: &str) {
    let mut out = tokio::io::stdout();
    let _ = out.write_all(text.as_bytes()).await;
    let _ = out.flush().await;
}

/// Print checkpoints not seen yet, oldest first.
async fn poll_new(r: &Rerun, seen: &mut HashSet<(String, String)>) -> Result<usize, CliError> {
    let store = flashback_storage::open(&r.db).await?;
    let mut headers = store.list_headers(&ListQuery::thread(&r.thread)).await?;
    headers.reverse();
    let mut n = 0;
    for h in headers {
        if seen.insert((h.checkpoint_ns.clone(), h.checkpoint_id.clone())) {
            emit(&event_line(&h, r.json)).await;
            n += 1;
        }
    }
    Ok(n)
}

/// Fork, run, tail. Streams events to stdout as they happen; returns the final summary line.
pub async fn run(r: Rerun) -> Result<String, CliError> {
    let saver = flashback_storage::open_writable(&r.db).await?;
    if saver
        .get_tuple(&r.thread, &r.ns, Some(&r.checkpoint))
        .await?
        .is_none()
    {
        return Err(CliError::NotFound(format!(
            "checkpoint {} not found in thread {:?} (namespace {:?})",
            r.checkpoint, r.thread, r.ns
        )));
    }
    // Everything already there is not news.
    let mut seen: HashSet<(String, String)> = saver
        .list_headers(&ListQuery::thread(&r.thread))
        .await?
        .into_iter()
        .map(|h| (h.checkpoint_ns, h.checkpoint_id))
        .collect();
    let fork =
        flashback_engine::fork::copy_fork(saver.as_ref(), &r.thread, &r.ns, &r.checkpoint).await?;
    drop(saver);
    poll_new(&r, &mut seen).await?;

    let config = json!({"configurable": {"thread_id": r.thread}});
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&r.runner)
        .env("FLASHBACK_DB", &r.db)
        .env("FLASHBACK_THREAD_ID", &r.thread)
        .env("FLASHBACK_CHECKPOINT_ID", &fork.checkpoint_id)
        .env("FLASHBACK_CONFIG", config.to_string())
        .stdin(Stdio::null())
        // The runner's own output goes to our stderr: stdout stays the event stream.
        .stdout(std::io::stderr())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| CliError::Io(format!("cannot start the runner {:?}: {e}", r.runner)))?;

    let deadline = tokio::time::Instant::now() + r.timeout;
    let status = loop {
        tokio::select! {
            status = child.wait() => {
                break status.map_err(|e| CliError::Io(format!("waiting for the runner: {e}")))?;
            }
            _ = tokio::time::sleep(POLL) => {
                poll_new(&r, &mut seen).await?;
                if tokio::time::Instant::now() >= deadline {
                    let _ = child.kill().await;
                    poll_new(&r, &mut seen).await?;
                    return Err(CliError::Io(format!(
                        "the runner did not finish within {} s and was stopped; the fork {} and any checkpoints it wrote are kept",
                        r.timeout.as_secs(), fork.checkpoint_id
                    )));
                }
            }
        }
    };
    poll_new(&r, &mut seen).await?;
    if !status.success() {
        return Err(CliError::Io(format!(
            "the runner failed ({status}); the fork {} and any checkpoints it wrote are kept",
            fork.checkpoint_id
        )));
    }
    Ok(if r.json {
        format!("{}\n", json!({"event": "exit", "code": 0, "fork": fork}))
    } else {
        format!(
            "runner finished; forked at {} from {}\n",
            fork.checkpoint_id, r.checkpoint
        )
    })
}
