//! `flashback rerun`: copy-fork a checkpoint, run the user's program on it, and print every
//! checkpoint it writes as it lands. The work is `flashback_api::rerun` (shared with the GUI's
//! live tail); this module prints its events. Ctrl-C stops the runner (and everything it
//! started); the fork and what the runner wrote are kept.

use crate::commands::CliError;
use flashback_api::rerun::{RerunEvent, RerunSpec};
use flashback_storage::CheckpointHeader;
use serde_json::{json, Value as Json};
use std::io::Write;

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

/// Fork, run, tail. Streams events to stdout (the runner's own output to stderr) as they
/// happen; returns the final summary line.
pub async fn run(spec: RerunSpec, json_out: bool) -> Result<String, CliError> {
    let mut sink = |e: RerunEvent<'_>| match e {
        RerunEvent::Checkpoint(h) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(event_line(h, json_out).as_bytes());
            let _ = out.flush();
        }
        RerunEvent::Output { line, .. } => eprintln!("{line}"),
    };
    let cancel = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let fork = flashback_api::rerun::rerun(&spec, &mut sink, cancel).await?;
    Ok(if json_out {
        format!("{}\n", json!({"event": "exit", "code": 0, "fork": fork}))
    } else {
        format!(
            "runner finished; forked at {} from {}\n",
            fork.checkpoint_id, spec.checkpoint_id
        )
    })
}
