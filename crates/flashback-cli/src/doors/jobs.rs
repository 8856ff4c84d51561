//! The doors of the jobs (export, re-run, search: progress on stderr, Ctrl-C as cancel) and
//! verify.

use super::{done, open, render, Outcome};
use crate::human;
use crate::Command;
use flashback_api::*;
use serde_json::Value as Json;
use std::time::Duration;

pub(super) async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    match cmd {
        Command::Convert {
            db,
            target,
            to,
            whole_blobs,
            threads,
            dry_run,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let to = match to.as_str() {
                "three-table" => ConvertTo::ThreeTable,
                _ => ConvertTo::Langgraph,
            };
            let req = ConvertRequest {
                db,
                target: target.clone(),
                to,
                whole_blobs,
                threads,
                dry_run,
            };
            let job = api.start_convert(req).await?;
            let report: ConvertReport = follow(&api, job, |_| {}).await?;
            done(render(json, &report, |r| human::converted(r, &target)))
        }
        Command::Export {
            db,
            thread,
            checkpoint,
            format,
            redact,
            decrypt,
            output,
            json,
        } => {
            let html = match format.as_deref() {
                Some(f) => f == "html",
                None => output.extension().is_some_and(|e| {
                    e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")
                }),
            };
            let (api, db) = open(&db).await?;
            let checkpoint = match checkpoint {
                Some(id) => Some(super::ids::resolve(&api, &db, &thread, None, &id).await?),
                None => None,
            };
            let req = ExportRequest {
                db,
                thread_id: thread,
                checkpoint_id: checkpoint,
                format: if html {
                    ExportFormat::Html
                } else {
                    ExportFormat::Json
                },
                redact,
                path: Some(output.to_string_lossy().into_owned()),
                decrypt,
            };
            let job = api.start_export(req).await?;
            let result: ExportResult = follow(&api, job, |_| {}).await?;
            done(render(json, &result, human::exported))
        }
        Command::Verify { file, json } => {
            let api = Api::ephemeral()?;
            let req = VerifyRequest {
                path: Some(file.to_string_lossy().into_owned()),
                content: None,
            };
            let report = api.verify_export(req).await?;
            let text = render(json, &report, human::verify);
            Ok(if report.ok {
                Outcome::Done(text)
            } else {
                Outcome::Tampered(text)
            })
        }
        Command::Rerun {
            db,
            thread,
            checkpoint,
            ns,
            runner,
            timeout,
            resume,
            json,
        } => {
            let resume = resume
                .map(|r| {
                    serde_json::from_str::<Json>(&r).map_err(|e| {
                        ApiError::invalid(format!("--resume: the value is not valid JSON ({e})"))
                    })
                })
                .transpose()?;
            let location = db.clone();
            let (api, db) = open(&db).await?;
            let checkpoint =
                super::ids::resolve(&api, &db, &thread, Some(&ns), &checkpoint).await?;
            let req = RerunRequest {
                db,
                thread_id: thread.clone(),
                checkpoint_ns: ns,
                checkpoint_id: checkpoint.clone(),
                runner,
                timeout_secs: timeout,
                resume,
            };
            let job = api.start_rerun(req).await?;
            // An Agent Server runs its own graph: no runner, no fork of ours to remove.
            let on_server = Location::parse(&location).is_ok_and(|l| l.kind == DbKind::AgentServer);
            // Checkpoints on stdout as they land (JSON lines with --json: the app's events);
            // the runner's own output on stderr.
            let mut fork_id: Option<String> = None;
            let followed: Result<ForkResult, ApiError> = follow(&api, job, |e| match e {
                JobEvent::Checkpoint { checkpoint_id, .. } => {
                    fork_id.get_or_insert_with(|| checkpoint_id.clone());
                    let line = if json {
                        serde_json::to_string(e).unwrap_or_default() + "\n"
                    } else {
                        human::rerun_event(e)
                    };
                    crate::out::stdout(&line);
                }
                JobEvent::Output { line, .. } => crate::out::stderr_line(line),
                JobEvent::SearchHit { .. } => {}
            })
            .await;
            let fork = match (followed, fork_id) {
                (Ok(fork), _) => fork,
                (Err(e), Some(id)) if e.code != ErrorCode::Cancelled && !on_server => {
                    // What a failed run left is kept; say how to remove it.
                    let db = if location.contains('@') {
                        "DB"
                    } else {
                        &location
                    };
                    crate::out::stderr_line(&format!(
                        "flashback: to remove the fork and what the runner wrote: \
                         flashback delete-branch {db} {thread} {id} --yes"
                    ));
                    return Err(e);
                }
                (Err(e), _) => return Err(e),
            };
            done(if json {
                serde_json::json!({"type": "finished", "result": fork}).to_string() + "\n"
            } else if on_server {
                format!(
                    "the run finished on the server; its first checkpoint is {} (from {checkpoint})\n",
                    fork.checkpoint_id
                )
            } else if fork.checkpoint_id == checkpoint {
                format!("runner finished; it resumed the thread where it waited ({checkpoint})\n")
            } else {
                format!(
                    "runner finished; forked at {} from {checkpoint}\n",
                    fork.checkpoint_id
                )
            })
        }
        Command::Search {
            db,
            text,
            limit,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = ValueSearchRequest {
                db,
                query: text.clone(),
                limit: Some(limit),
                threads: None,
            };
            let job = api.start_search(req).await?;
            // Matches on stdout as they are found (JSON lines with --json: the app's events).
            let mut header = !json;
            let summary: ValueSearchSummary = follow(&api, job, |e| {
                let line = if json {
                    serde_json::to_string(e).unwrap_or_default() + "\n"
                } else {
                    let mut lines = String::new();
                    if std::mem::take(&mut header) {
                        lines.push_str(&human::search_header());
                    }
                    lines + &human::search_hit(e, text.trim())
                };
                crate::out::stdout(&line);
            })
            .await?;
            done(if json {
                serde_json::json!({"type": "finished", "result": summary}).to_string() + "\n"
            } else {
                human::searched(&summary, text.trim())
            })
        }
        other => Err(ApiError::new(
            ErrorCode::Internal,
            format!("not a job command: {other:?}"),
        )),
    }
}

/// Follow a job to its end: events to `on_event`, progress on stderr (when it is a terminal),
/// Ctrl-C cancels it.
/// Returns the job's result, or its error.
pub(crate) async fn follow<T: serde::de::DeserializeOwned>(
    api: &Api,
    job: String,
    mut on_event: impl FnMut(&JobEvent),
) -> Result<T, ApiError> {
    let mut cursor = 0;
    let mut last_label = String::new();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    let mut cancelled = false;
    // Progress is for a person watching; scripts reading stderr get only errors.
    let show_progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    loop {
        let snap = api
            .job_poll(JobPollRequest {
                job: job.clone(),
                cursor,
            })
            .await?;
        cursor = snap.cursor;
        snap.events.iter().for_each(&mut on_event);
        if let Some(p) = snap.progress.as_ref().filter(|_| show_progress) {
            if p.label != last_label && !p.label.is_empty() {
                crate::out::stderr_line(&format!("flashback: {}…", p.label));
                last_label.clone_from(&p.label);
            }
        }
        match snap.state {
            JobState::Running => {}
            JobState::Succeeded => {
                let result = snap.result.unwrap_or(Json::Null);
                return serde_json::from_value(result).map_err(|e| {
                    ApiError::new(ErrorCode::Internal, format!("unexpected job result: {e}"))
                });
            }
            JobState::Failed | JobState::Cancelled => {
                return Err(snap
                    .error
                    .unwrap_or_else(|| ApiError::new(ErrorCode::Cancelled, "cancelled")));
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            r = &mut ctrl_c, if !cancelled => {
                cancelled = true;
                if r.is_ok() {
                    api.job_cancel(JobRequest { job: job.clone() }).await?;
                }
            }
        }
    }
}
