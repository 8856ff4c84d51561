//! Re-run from a checkpoint: copy-fork it, run the user's program on the fork, and report every
//! checkpoint it writes as it lands (the GUI's live tail and `flashback rerun`).
//!
//! Resuming the thread's waiting head (*Resume with…* on the latest root checkpoint) does not
//! fork: the program resumes the thread where it waits, as `graph.invoke(Command(resume=…))`
//! does in Python — so the writes of the tasks that already finished in that step (an approval
//! already answered) are kept, and a resume value keyed by interrupt id finds its interrupts
//! (a copy fork has a new id, so its tasks, and their interrupts, get new ids).
//!
//! The runner is a shell command run with `sh -c` in its own process group (so stopping it
//! stops everything it started). It gets in its environment:
//! * `FLASHBACK_DB` — the database (path or URL),
//! * `FLASHBACK_THREAD_ID` — the thread,
//! * `FLASHBACK_CHECKPOINT_ID` — the fork it should resume from (the thread's head; the head
//!   itself when it resumes in place),
//! * `FLASHBACK_CONFIG` — the LangGraph config JSON to resume with:
//!   `{"configurable": {"thread_id": …}}` (the fork is the head, so
//!   `graph.invoke(None, config)` continues from it),
//! * `FLASHBACK_RESUME` — only when a resume value was given (*Resume with…*): that value as
//!   JSON, for the runner to resume the waiting interrupt with
//!   `graph.invoke(Command(resume=json.loads(os.environ["FLASHBACK_RESUME"])), config)`.

use crate::error::{ApiError, ApiResult, ErrorCode};
use flashback_engine::fork::ForkResult;
use flashback_storage::{CheckpointHeader, CheckpointStore, ListQuery};
use serde_json::json;
use std::collections::HashSet;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

/// How often the database is polled for new checkpoints.
const POLL: Duration = Duration::from_millis(200);

/// What to re-run.
#[derive(Debug, Clone)]
pub struct RerunSpec {
    /// The database to connect to (with any password).
    pub location: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace of the checkpoint.
    pub checkpoint_ns: String,
    /// The checkpoint to fork and resume from.
    pub checkpoint_id: String,
    /// The shell command.
    pub runner: String,
    /// Stop the runner after this long.
    pub timeout: Duration,
    /// How the fork rebuilds DeltaChannels (the reducers remembered for the database).
    pub delta: flashback_engine::delta::DeltaOptions,
    /// The AES key of an encrypted database (the fork is written encrypted).
    pub key: Option<std::sync::Arc<flashback_codec::AesKey>>,
    /// The value to resume an interrupt with (`FLASHBACK_RESUME`).
    pub resume: Option<serde_json::Value>,
}

/// What happens during a re-run.
#[derive(Debug)]
pub enum RerunEvent<'a> {
    /// A new checkpoint (the fork itself first).
    Checkpoint(&'a CheckpointHeader),
    /// A line the runner printed (`stream` is `stdout` or `stderr`).
    Output {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The line, without its newline.
        line: &'a str,
    },
}

/// Report checkpoints not seen yet, oldest first.
async fn poll_new(
    store: &dyn CheckpointStore,
    thread_id: &str,
    seen: &mut HashSet<(String, String)>,
    sink: &mut (dyn FnMut(RerunEvent<'_>) + Send),
) -> ApiResult<()> {
    let mut headers = store.list_headers(&ListQuery::thread(thread_id)).await?;
    headers.reverse();
    for h in headers {
        if seen.insert((h.checkpoint_ns.clone(), h.checkpoint_id.clone())) {
            sink(RerunEvent::Checkpoint(&h));
        }
    }
    Ok(())
}

fn pipe_lines<R>(
    reader: Option<R>,
    stream: &'static str,
    tx: mpsc::UnboundedSender<(&'static str, String)>,
) where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let Some(reader) = reader else { return };
    tokio::spawn(async move {
        let mut lines = BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send((stream, line)).is_err() {
                break;
            }
        }
    });
}

/// Stop the runner and everything it started.
async fn stop(child: &mut tokio::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // The runner leads its own process group (see `process_group(0)` below).
        let group = format!("-{pid}");
        let _ = tokio::process::Command::new("kill")
            .args(["-TERM", "--", &group])
            .status()
            .await;
        let _ = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
        // Whatever ignored SIGTERM (or outlived the shell) goes now.
        let _ = tokio::process::Command::new("kill")
            .args(["-KILL", "--", &group])
            .status()
            .await;
    }
    let _ = child.kill().await;
}

/// Fork, run, tail. `cancel` resolving stops the runner (an error with
/// [`ErrorCode::Cancelled`]). The fork and whatever the runner wrote are kept in every case.
pub async fn rerun(
    spec: &RerunSpec,
    sink: &mut (dyn FnMut(RerunEvent<'_>) + Send),
    cancel: impl std::future::Future<Output = ()>,
) -> ApiResult<ForkResult> {
    if spec.runner.trim().is_empty() {
        return Err(ApiError::invalid("the runner command is empty"));
    }
    let saver = flashback_storage::open(
        &spec.location,
        flashback_storage::Write {
            key: spec.key.clone(),
        },
    )
    .await?;
    // Everything already there is not news.
    let mut seen: HashSet<(String, String)> = saver
        .list_headers(&ListQuery::thread(&spec.thread_id))
        .await?
        .into_iter()
        .map(|h| (h.checkpoint_ns, h.checkpoint_id))
        .collect();
    let head = match (&spec.resume, spec.checkpoint_ns.as_str()) {
        (Some(_), "") => saver
            .list_headers(&ListQuery {
                checkpoint_ns: Some(String::new()),
                limit: Some(1),
                ..ListQuery::thread(&spec.thread_id)
            })
            .await?
            .into_iter()
            .next()
            .filter(|h| h.checkpoint_id == spec.checkpoint_id),
        _ => None,
    };
    let fork = match head {
        // Resuming the waiting head: in place.
        Some(h) => ForkResult {
            step: h.step().unwrap_or(-1),
            thread_id: h.thread_id,
            checkpoint_ns: h.checkpoint_ns,
            parent_checkpoint_id: h.parent_checkpoint_id.unwrap_or_default(),
            checkpoint_id: h.checkpoint_id,
        },
        None => {
            crate::forks::fork_as(
                saver.as_ref(),
                &spec.thread_id,
                &spec.checkpoint_ns,
                &spec.checkpoint_id,
                &[],
                flashback_engine::Action::Rerun,
                &spec.delta,
            )
            .await?
        }
    };
    let forked = fork.checkpoint_id != spec.checkpoint_id;
    drop(saver);
    let store = flashback_storage::open(&spec.location, flashback_storage::Read::default()).await?;
    poll_new(store.as_ref(), &spec.thread_id, &mut seen, sink).await?;

    let config = json!({"configurable": {"thread_id": spec.thread_id}});
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&spec.runner)
        .env("FLASHBACK_DB", &spec.location)
        .env("FLASHBACK_THREAD_ID", &spec.thread_id)
        .env("FLASHBACK_CHECKPOINT_ID", &fork.checkpoint_id)
        .env("FLASHBACK_CONFIG", config.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(value) = &spec.resume {
        command.env("FLASHBACK_RESUME", value.to_string());
    }
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| ApiError::io(format!("cannot start the runner {:?}: {e}", spec.runner)))?;
    let (tx, mut lines) = mpsc::unbounded_channel();
    pipe_lines(child.stdout.take(), "stdout", tx.clone());
    pipe_lines(child.stderr.take(), "stderr", tx);

    let kept = |what: &str| match forked {
        true => format!(
            "{what}; the fork {} and any checkpoints it wrote are kept",
            fork.checkpoint_id
        ),
        false => format!("{what}; any checkpoints it wrote are kept"),
    };
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    tokio::pin!(cancel);
    let mut tick = tokio::time::interval(POLL);
    let failure = loop {
        tokio::select! {
            status = child.wait() => {
                let status = status.map_err(|e| ApiError::io(format!("waiting for the runner: {e}")))?;
                break (!status.success()).then(|| ApiError::io(kept(&format!("the runner failed ({status})"))));
            }
            Some((stream, line)) = lines.recv() => sink(RerunEvent::Output { stream, line: &line }),
            _ = tick.tick() => poll_new(store.as_ref(), &spec.thread_id, &mut seen, sink).await?,
            () = &mut deadline => {
                stop(&mut child).await;
                break Some(ApiError::io(kept(&format!(
                    "the runner did not finish within {} s and was stopped",
                    spec.timeout.as_secs()
                ))));
            }
            () = &mut cancel => {
                stop(&mut child).await;
                break Some(ApiError::new(ErrorCode::Cancelled, kept("the runner was stopped")));
            }
        }
    };
    // The last lines and checkpoints.
    while let Ok(Some((stream, line))) =
        tokio::time::timeout(Duration::from_millis(200), lines.recv()).await
    {
        sink(RerunEvent::Output {
            stream,
            line: &line,
        });
    }
    poll_new(store.as_ref(), &spec.thread_id, &mut seen, sink).await?;
    match failure {
        Some(e) => Err(e),
        None => Ok(fork),
    }
}
