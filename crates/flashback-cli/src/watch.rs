//! `flashback watch`: the checkpoints of a thread where the value at a path changed (the
//! `watch_key` command), along lineage — the head's line from the root, then each other
//! branch — with the node whose write produced each value.

use crate::doors::outcome::{open, render, Outcome};
use flashback_api::{ApiError, WatchRequest};

/// `flashback watch DB THREAD PATH`.
#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    /// A `.sqlite` file, a `postgres://` URL or a `langgraph dev` project folder.
    db: String,
    /// The thread id.
    thread: String,
    /// What to watch: a channel, then keys and list indexes, e.g. `messages`,
    /// `messages[2].content`, `messages[-1]` (the last item), `plan.steps`, `plan["a.b"]`.
    path: String,
    /// Namespace (default: the root graph, "").
    #[arg(long, default_value = "")]
    ns: String,
    /// Full checkpoint ids and timestamps (the table is otherwise fitted to 100 columns).
    #[arg(long)]
    wide: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Run `flashback watch`.
pub async fn run(a: WatchArgs) -> Result<Outcome, ApiError> {
    let (api, db) = open(&a.db).await?;
    let req = WatchRequest {
        db,
        thread_id: a.thread,
        checkpoint_ns: a.ns,
        path: a.path,
        max_value_bytes: None,
        along: None,
    };
    let report = api.watch_key(req).await?;
    let width = crate::human::width(a.wide);
    Ok(Outcome::Done(render(a.json, &report, |r| {
        crate::human::watch(r, width)
    })))
}
