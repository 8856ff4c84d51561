//! The CLI door: each subcommand parses its arguments into the request the app sends, calls
//! the same `flashback_api::Api` method, and renders the response — a human table, or with
//! `--json` exactly the JSON the app receives. Long work (export, re-run) runs as the same
//! job the app starts, followed here with progress on stderr and Ctrl-C as cancel.

use crate::human;
use crate::Command;
use flashback_api::*;
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::time::Duration;

/// What a command printed, and how it ends.
pub enum Outcome {
    /// Success: print this on stdout.
    Done(String),
    /// `verify` found tampering: print the report on stdout and exit 5.
    Tampered(String),
}

fn done(text: String) -> Result<Outcome, ApiError> {
    Ok(Outcome::Done(text))
}

/// Pretty JSON with a final newline: what `--json` prints.
pub fn json_text<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// Either rendering of a response.
pub(crate) fn render<T: Serialize>(json: bool, v: &T, human: impl FnOnce(&T) -> String) -> String {
    if json {
        json_text(v)
    } else {
        human(v)
    }
}

/// Open `location` read-only (nothing is remembered) and return the API and the handle.
pub(crate) async fn open(location: &str) -> Result<(Api, String), ApiError> {
    let (api, info) = open_info(location).await?;
    Ok((api, info.db))
}

/// [`open`], returning what the database holds.
async fn open_info(location: &str) -> Result<(Api, DbInfo), ApiError> {
    let api = Api::ephemeral()?;
    // The decode budget per value, in MB (0: none), as the app's `max_value_mb` setting.
    if let Ok(mb) = std::env::var("FLASHBACK_MAX_VALUE_MB") {
        api.set_setting(SetSettingRequest {
            key: "max_value_mb".into(),
            value: Some(mb.trim().to_owned()),
        })
        .await
        .map_err(|_| {
            ApiError::invalid(format!(
                "FLASHBACK_MAX_VALUE_MB={mb:?}: expected a number of megabytes (0 for no limit)"
            ))
        })?;
    }
    let info = api
        .open_database(OpenRequest {
            location: location.to_owned(),
            password: None,
            remember: false,
            save_password: false,
        })
        .await?;
    Ok((api, info))
}

/// Run one command.
pub async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    match cmd {
        Command::Bridge { db, create } => {
            crate::bridge::serve(&db, create)
                .await
                .map_err(ApiError::io)?;
            done(String::new())
        }
        Command::Serve {
            db,
            demo,
            port,
            allow_run,
            export_dir,
        } => done(
            crate::serve::serve(crate::serve::ServeOptions {
                db,
                demo,
                port,
                allow_run,
                export_dir,
            })
            .await?,
        ),
        Command::Threads {
            db: location,
            limit,
            wide,
            json,
        } => {
            let (api, info) = open_info(&location).await?;
            let req = ThreadsRequest { db: info.db, limit };
            let threads = api.list_threads(req).await?;
            done(render(json, &threads, |t| {
                let note = human::store_note(&location, info.holds, &info.store);
                if info.holds == DbHolds::Store {
                    note
                } else {
                    human::threads(t, human::width(wide))
                        + &human::sealed_note(&info.encryption)
                        + &note
                }
            }))
        }
        Command::Store(cmd) => crate::store::run(cmd).await,
        Command::History {
            db,
            thread,
            ns,
            all_ns,
            limit,
            before,
            filter,
            wide,
            json,
        } => {
            let filter = parse_filters(&filter)?;
            let (api, db) = open(&db).await?;
            let req = HistoryRequest {
                db,
                thread_id: thread,
                checkpoint_ns: if all_ns {
                    None
                } else {
                    Some(ns.unwrap_or_default())
                },
                limit,
                before,
                filter,
            };
            let items = api.thread_history(req).await?;
            done(render(json, &items, |i| {
                human::history(i, human::width(wide))
            }))
        }
        Command::State {
            db,
            thread,
            checkpoint,
            ns,
            reveal_secrets,
            full,
            raw,
            reducer,
            json,
        } => {
            let reducers = parse_reducers(&reducer)?;
            let (api, db) = open(&db).await?;
            let req = CheckpointRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: checkpoint,
                reveal_secrets,
                full,
                raw,
                reducers,
                allow_locked: false,
            };
            let detail = api.checkpoint_detail(req).await?;
            done(render(json, &detail, human::state))
        }
        Command::Graph { db, thread, json } => {
            let (api, db) = open(&db).await?;
            let req = GraphRequest {
                db,
                thread_id: thread,
                collapsed: Vec::new(),
            };
            let graph = api.thread_graph(req).await?;
            done(render(json, &graph, human::graph))
        }
        Command::Diff {
            db,
            thread,
            a,
            b,
            ns,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let side = |checkpoint_id: String| CheckpointRef {
                checkpoint_ns: ns.clone(),
                checkpoint_id,
            };
            let req = DiffRequest {
                db,
                thread_id: thread,
                a: side(a),
                b: side(b),
            };
            let diff = api.diff_checkpoints(req).await?;
            done(render(json, &diff, human::diff))
        }
        Command::Replay {
            db,
            thread,
            tip,
            ns,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = ReplayRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                tip,
            };
            let steps = api.replay_steps(req).await?;
            done(render(json, &steps, |s| human::replay(s)))
        }
        Command::Fork {
            db,
            thread,
            checkpoint,
            ns,
            set,
            json,
        } => {
            let edits = parse_sets(&set)?;
            let (api, db) = open(&db).await?;
            let req = ForkRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: checkpoint,
                edits,
            };
            let forked = api.fork_checkpoint(req).await?;
            done(render(json, &forked, |f| format!("{}\n", f.checkpoint_id)))
        }
        Command::Merge {
            db,
            thread,
            into,
            from,
            channels,
            ns,
            dry_run,
            json,
        } => {
            let channels = parse_merge_channels(&channels)?;
            let (api, db) = open(&db).await?;
            if dry_run {
                let req = MergePreviewRequest {
                    db,
                    thread_id: thread,
                    checkpoint_ns: ns,
                    into,
                    from,
                    channels: channels.into_iter().map(|c| c.channel).collect(),
                };
                // The 3-way view is data to read: JSON either way.
                return done(json_text(&api.merge_preview(req).await?));
            }
            let req = MergeRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                into,
                from,
                channels,
            };
            let merged = api.merge_branches(req).await?;
            done(render(json, &merged, |m| format!("{}\n", m.checkpoint_id)))
        }
        Command::Rebuild {
            db,
            thread,
            checkpoint,
            ns,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = RebuildRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                tip: checkpoint,
            };
            let report = api.rebuild_report(req).await?;
            done(render(json, &report, |r| human::rebuild(r)))
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
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = RerunRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: checkpoint.clone(),
                runner,
                timeout_secs: timeout,
            };
            let job = api.start_rerun(req).await?;
            // Checkpoints on stdout as they land (JSON lines with --json: the app's events);
            // the runner's own output on stderr.
            let fork: ForkResult = follow(&api, job, |e| match e {
                JobEvent::Checkpoint { .. } => {
                    let line = if json {
                        serde_json::to_string(e).unwrap_or_default() + "\n"
                    } else {
                        human::rerun_event(e)
                    };
                    crate::out::stdout(&line);
                }
                JobEvent::Output { line, .. } => crate::out::stderr_line(line),
            })
            .await?;
            done(if json {
                serde_json::json!({"type": "finished", "result": fork}).to_string() + "\n"
            } else {
                format!(
                    "runner finished; forked at {} from {checkpoint}\n",
                    fork.checkpoint_id
                )
            })
        }
        Command::Delete {
            db,
            thread,
            yes,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = DeleteRequest {
                db,
                thread_id: thread,
                dry_run: !yes,
            };
            let report = api.delete_thread(req).await?;
            done(render(json, &report, human::deleted))
        }
        Command::Prune {
            db,
            threads,
            strategy,
            yes,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = PruneRequest {
                db,
                thread_ids: threads,
                strategy: strategy.parse::<PruneStrategy>().map_err(ApiError::from)?,
                dry_run: !yes,
            };
            let summary = api.prune_threads(req).await?;
            done(render(json, &summary, human::pruned))
        }
        Command::Copy {
            db,
            source,
            target,
            to,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let to_db = match to {
                Some(location) => Some(
                    api.open_database(OpenRequest {
                        location,
                        password: None,
                        remember: false,
                        save_password: false,
                    })
                    .await?
                    .db,
                ),
                None => None,
            };
            let req = CopyRequest {
                db,
                thread_id: source.clone(),
                target_thread_id: target.clone(),
                to_db,
            };
            let report = api.copy_thread(req).await?;
            done(render(json, &report, |r| {
                human::copied(r, &source, &target)
            }))
        }
    }
}

/// Follow a job to its end: events to `on_event`, progress on stderr (when it is a terminal),
/// Ctrl-C cancels it.
/// Returns the job's result, or its error.
async fn follow<T: serde::de::DeserializeOwned>(
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

fn parse_filters(filters: &[String]) -> Result<Map<String, Json>, ApiError> {
    let mut out = Map::new();
    for f in filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| ApiError::invalid(format!("--filter {f:?}: expected KEY=JSON")))?;
        // Bare words are strings, for convenience: --filter source=loop.
        let value = serde_json::from_str(v).unwrap_or_else(|_| Json::String(v.to_owned()));
        out.insert(k.to_owned(), value);
    }
    Ok(out)
}

/// `--reducer CHANNEL=NAME`, repeatable (the names are checked by the API).
fn parse_reducers(
    given: &[String],
) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
    let mut out = std::collections::BTreeMap::new();
    for r in given {
        match r.split_once('=') {
            Some((channel, name)) if !channel.is_empty() && !name.is_empty() => {
                out.insert(channel.to_owned(), name.to_owned());
            }
            _ => {
                return Err(ApiError::invalid(format!(
                    "--reducer {r:?}: expected CHANNEL=append|add_messages|merge|last"
                )))
            }
        }
    }
    Ok(out)
}

fn parse_sets(sets: &[String]) -> Result<Vec<ChannelEdit>, ApiError> {
    sets.iter()
        .map(|s| {
            let (channel, value) = s
                .split_once('=')
                .ok_or_else(|| ApiError::invalid(format!("--set {s:?}: expected CHANNEL=JSON")))?;
            let value = serde_json::from_str(value).map_err(|e| {
                ApiError::invalid(format!(
                    "--set {channel}: the value is not valid JSON ({e})"
                ))
            })?;
            Ok(ChannelEdit {
                channel: channel.to_owned(),
                value,
            })
        })
        .collect()
}

fn parse_merge_channels(channels: &[String]) -> Result<Vec<MergeChannel>, ApiError> {
    channels
        .iter()
        .map(|c| {
            let (channel, mode) = match c.split_once('=') {
                None => (c.as_str(), MergeMode::TakeB),
                Some((ch, "take")) => (ch, MergeMode::TakeB),
                Some((ch, "append")) => (ch, MergeMode::AppendB),
                Some((_, other)) => {
                    return Err(ApiError::invalid(format!(
                        "--channel {c:?}: mode must be take or append, not {other:?}"
                    )))
                }
            };
            Ok(MergeChannel {
                channel: channel.to_owned(),
                mode,
            })
        })
        .collect()
}
