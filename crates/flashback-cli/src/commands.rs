//! The subcommands: load through `flashback-storage`, derive through `flashback-engine`,
//! render JSON (the stable machine format) or human text.

use crate::human;
use crate::Command;
use flashback_api::{ensure_thread, write_atomically, ErrorCode};
use flashback_codec::{view_decoded, ViewOptions};
use flashback_engine::{layout, tasks, ThreadDag};
use flashback_storage::{CheckpointHeader, CheckpointTuple, ListQuery, StoreError};
use serde_json::{json, Map, Value as Json};
use thiserror::Error;

/// A failed command: one line for stderr plus an exit code.
#[derive(Debug, Error)]
pub enum CliError {
    /// The database could not be opened or read.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// A thread or checkpoint that does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Bad arguments.
    #[error("{0}")]
    Usage(String),
    /// `verify` found problems (the report is printed on stdout).
    #[error("the bundle failed verification")]
    Tampered(String),
    /// Writing the output failed.
    #[error("{0}")]
    Io(String),
    /// The engine rejected the data.
    #[error("{0}")]
    Engine(#[from] flashback_engine::EngineError),
    /// A shared command (`flashback-api`) failed.
    #[error("{0}")]
    Api(#[from] flashback_api::ApiError),
}

impl CliError {
    /// 2 bad usage, 3 not found, 4 not a LangGraph database, 5 a bundle failed verification,
    /// 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        use flashback_engine::EngineError as E;
        match self {
            CliError::Usage(_) | CliError::Engine(E::InvalidEdit { .. }) => 2,
            CliError::NotFound(_)
            | CliError::Store(StoreError::NotFound(_))
            | CliError::Engine(E::UnknownCheckpoint { .. } | E::Store(StoreError::NotFound(_))) => {
                3
            }
            CliError::Store(
                StoreError::UnsupportedSchema { .. } | StoreError::NotADatabase { .. },
            )
            | CliError::Engine(E::Store(
                StoreError::UnsupportedSchema { .. } | StoreError::NotADatabase { .. },
            )) => 4,
            CliError::Tampered(_) => 5,
            CliError::Api(e) => match e.code {
                ErrorCode::InvalidInput | ErrorCode::InvalidEdit => 2,
                ErrorCode::NotFound => 3,
                ErrorCode::NotADatabase | ErrorCode::UnsupportedSchema => 4,
                _ => 1,
            },
            _ => 1,
        }
    }
}

/// Run one command and return what to print on stdout.
pub async fn run(cmd: Command) -> Result<String, CliError> {
    match cmd {
        Command::Bridge { db, create } => {
            crate::bridge::serve(&db, create)
                .await
                .map_err(CliError::Io)?;
            Ok(String::new())
        }
        Command::Serve { db, demo, port } => {
            crate::serve::serve(crate::serve::ServeOptions { db, demo, port }).await
        }
        Command::Threads { db, json } => {
            let store = flashback_storage::open(&db).await?;
            let rows = flashback_api::thread_summaries(store.as_ref())
                .await?
                .iter()
                .map(|t| serde_json::to_value(t).unwrap_or(Json::Null))
                .collect();
            Ok(if json {
                to_json(&Json::Array(rows))
            } else {
                human::threads(&rows)
            })
        }
        Command::History {
            db,
            thread,
            ns,
            all_ns,
            limit,
            before,
            filter,
            json,
        } => {
            let query = ListQuery {
                thread_id: Some(thread.clone()),
                checkpoint_ns: if all_ns {
                    None
                } else {
                    Some(ns.unwrap_or_default())
                },
                before,
                limit,
                filter: parse_filters(&filter)?,
                ..Default::default()
            };
            let store = flashback_storage::open(&db).await?;
            let headers = store.list_headers(&query).await?;
            if headers.is_empty() && query.before.is_none() && query.filter.is_empty() {
                ensure_thread(store.as_ref(), &thread).await?;
            }
            let items: Vec<Json> = headers.iter().map(header_json).collect();
            Ok(if json {
                to_json(&Json::Array(items))
            } else {
                human::history(&items)
            })
        }
        Command::State {
            db,
            thread,
            checkpoint,
            ns,
            reveal_secrets,
            json,
        } => {
            let store = flashback_storage::open(&db).await?;
            let tuple = store.get_tuple(&thread, &ns, checkpoint.as_deref()).await?;
            let Some(tuple) = tuple else {
                return Err(match checkpoint {
                    Some(id) => flashback_api::checkpoint_not_found(&thread, &ns, &id).into(),
                    None => {
                        ensure_thread(store.as_ref(), &thread).await?;
                        CliError::NotFound(format!(
                            "thread {thread:?} has no checkpoints in namespace {ns:?}"
                        ))
                    }
                });
            };
            // Python's get_state: with an explicit checkpoint id it shows the step as history
            // (every task in `next`); without one, the live view (finished tasks drop out).
            let namespaces = store
                .list_threads()
                .await?
                .into_iter()
                .find(|t| t.thread_id == thread)
                .map(|t| t.namespaces)
                .unwrap_or_default();
            let derive = tasks::DeriveOptions {
                mode: if checkpoint.is_some() {
                    tasks::SnapshotMode::History
                } else {
                    tasks::SnapshotMode::Live
                },
                namespaces,
                ..Default::default()
            };
            let state = state_json(&tuple, ViewOptions { reveal_secrets }, &derive);
            Ok(if json {
                to_json(&state)
            } else {
                human::state(&state)
            })
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
            let saver = flashback_storage::open_writable(&db).await?;
            let forked =
                flashback_api::fork(saver.as_ref(), &thread, &ns, &checkpoint, &edits).await?;

            Ok(if json {
                to_json(&serde_json::to_value(&forked).unwrap_or(Json::Null))
            } else {
                format!("{}\n", forked.checkpoint_id)
            })
        }
        Command::Export {
            db,
            thread,
            checkpoint,
            format,
            redact,
            output,
        } => {
            use flashback_engine::export;
            let store = flashback_storage::open(&db).await?;
            let opts = export::ExportOptions {
                checkpoint_id: checkpoint,
                redact,
                tool_version: env!("CARGO_PKG_VERSION").to_owned(),
                ..Default::default()
            };
            let bundle = export::build_bundle(store.as_ref(), &thread, &opts).await?;
            let html = match format.as_deref() {
                Some(f) => f == "html",
                None => output.extension().is_some_and(|e| {
                    e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")
                }),
            };
            let text = if html {
                export::render_html(&bundle)
            } else {
                let mut s = serde_json::to_string_pretty(&bundle)
                    .map_err(|e| CliError::Usage(format!("cannot serialise the bundle: {e}")))?;
                s.push('\n');
                s
            };
            write_atomically(&output, text.as_bytes())?;
            Ok(format!(
                "wrote {} checkpoints ({}) to {}; bundle hash {}\n",
                bundle.checkpoints.len(),
                bundle.scope.as_str(),
                output.display(),
                bundle.bundle_hash
            ))
        }
        Command::Verify { file, json } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| CliError::NotFound(format!("cannot read {}: {e}", file.display())))?;
            let report = flashback_engine::export::verify(&text);
            let out = if json {
                to_json(&serde_json::to_value(&report).unwrap_or(Json::Null))
            } else if report.ok {
                format!(
                    "OK: {} checkpoints, every hash and chain link verified\n",
                    report.checkpoints
                )
            } else {
                format!(
                    "TAMPERED:\n{}\n",
                    report
                        .problems
                        .iter()
                        .map(|p| format!("  - {p}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            };
            if report.ok {
                Ok(out)
            } else {
                Err(CliError::Tampered(out))
            }
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
            use flashback_engine::merge::{merge_branches, three_way, MergeMode};
            let take = channels
                .iter()
                .map(|c| match c.split_once('=') {
                    None | Some((_, "take")) => Ok((
                        c.split('=').next().unwrap_or(c).to_owned(),
                        MergeMode::TakeB,
                    )),
                    Some((ch, "append")) => Ok((ch.to_owned(), MergeMode::AppendB)),
                    Some((_, other)) => Err(CliError::Usage(format!(
                        "--channel {c:?}: mode must be take or append, not {other:?}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if dry_run {
                let store = flashback_storage::open(&db).await?;
                let names: Vec<String> = take.iter().map(|(c, _)| c.clone()).collect();
                let view = three_way(store.as_ref(), &thread, &ns, &into, &from, &names).await?;
                return Ok(to_json(&serde_json::to_value(&view).unwrap_or(Json::Null)));
            }
            let saver = flashback_storage::open_writable(&db).await?;
            let merged = merge_branches(saver.as_ref(), &thread, &ns, &into, &from, &take).await?;
            Ok(if json {
                to_json(&serde_json::to_value(&merged).unwrap_or(Json::Null))
            } else {
                format!("{}\n", merged.checkpoint_id)
            })
        }
        Command::Rebuild {
            db,
            thread,
            checkpoint,
            ns,
            json,
        } => {
            let store = flashback_storage::open(&db).await?;
            let report = flashback_engine::merge::rebuild_report(
                store.as_ref(),
                &thread,
                &ns,
                checkpoint.as_deref(),
            )
            .await?;
            if json {
                return Ok(to_json(
                    &serde_json::to_value(&report).unwrap_or(Json::Null),
                ));
            }
            let mut out = String::new();
            for r in &report {
                let reducer = r.reducer.map_or("none".to_string(), |r| {
                    serde_json::to_value(r)
                        .map(|v| v.as_str().unwrap_or("").to_owned())
                        .unwrap_or_default()
                });
                out.push_str(&format!(
                    "{:<24} {:<14} {} consistent steps{}\n",
                    r.channel,
                    reducer,
                    r.consistent_steps,
                    if r.disagreements.is_empty() {
                        String::new()
                    } else {
                        format!(", disagrees at {}", r.disagreements.join(", "))
                    }
                ));
            }
            if out.is_empty() {
                out.push_str("no written channels to check\n");
            }
            Ok(out)
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
            crate::rerun::run(
                flashback_api::rerun::RerunSpec {
                    location: db,
                    thread_id: thread,
                    checkpoint_ns: ns,
                    checkpoint_id: checkpoint,
                    runner,
                    timeout: std::time::Duration::from_secs(timeout),
                },
                json,
            )
            .await
        }
        Command::Delete { db, thread, yes } => {
            let saver = flashback_storage::open_writable(&db).await?;
            ensure_thread(saver.as_ref(), &thread).await?;
            let count = saver.list_headers(&ListQuery::thread(&thread)).await?.len();
            if !yes {
                return Ok(format!(
                    "would delete thread {thread:?}: {count} checkpoints with their writes (dry run; add --yes)\n"
                ));
            }
            saver.delete_thread(&thread).await?;
            Ok(format!("deleted thread {thread:?}: {count} checkpoints\n"))
        }
        Command::Prune {
            db,
            threads,
            strategy,
            yes,
            json,
        } => {
            use flashback_storage::maintenance::PruneStrategy;
            let strategy = if strategy == "delete" {
                PruneStrategy::Delete
            } else {
                PruneStrategy::KeepLatest
            };
            let saver = flashback_storage::open_writable(&db).await?;
            let report = saver.prune(&threads, strategy, !yes).await?;
            if json {
                return Ok(to_json(
                    &serde_json::to_value(&report).unwrap_or(Json::Null),
                ));
            }
            let verb = if report.dry_run {
                "would delete"
            } else {
                "deleted"
            };
            let mut out = format!(
                "{verb} {} checkpoints, {} writes, {} blobs",
                report.checkpoints.len(),
                report.writes,
                report.blobs
            );
            if report.dry_run {
                out.push_str(" (dry run; add --yes)");
            }
            out.push('\n');
            for (t, ns, id) in &report.checkpoints {
                out.push_str(&format!(
                    "  {t} {} {id}\n",
                    if ns.is_empty() { "-" } else { ns }
                ));
            }
            Ok(out)
        }
        Command::Copy {
            db,
            source,
            target,
            to,
        } => {
            let report = match to {
                None => {
                    flashback_storage::open_writable(&db)
                        .await?
                        .copy_thread(&source, &target)
                        .await?
                }
                Some(dest) => {
                    let from = flashback_storage::open(&db).await?;
                    let to = flashback_storage::open_writable(&dest).await?;
                    flashback_storage::maintenance::copy_thread_between(
                        from.as_ref(),
                        to.as_ref(),
                        &source,
                        &target,
                    )
                    .await?
                }
            };
            Ok(format!(
                "copied {source:?} to {target:?}: {} checkpoints, {} writes, {} blobs\n",
                report.checkpoints, report.writes, report.blobs
            ))
        }
        Command::Graph { db, thread, json } => {
            let store = flashback_storage::open(&db).await?;
            let headers = store.list_headers(&ListQuery::thread(&thread)).await?;
            if headers.is_empty() {
                ensure_thread(store.as_ref(), &thread).await?;
            }
            let dag = ThreadDag::build(&headers)?;
            let lay = layout::layout(&dag, &layout::LayoutOptions::nested())?;
            if json {
                return Ok(to_json(&serde_json::to_value(&lay).unwrap_or(Json::Null)));
            }
            let by_id: std::collections::HashMap<(&str, &str), &CheckpointHeader> = headers
                .iter()
                .map(|h| ((h.checkpoint_ns.as_str(), h.checkpoint_id.as_str()), h))
                .collect();
            let mut out = layout::render_text(&lay, |row| {
                by_id
                    .get(&(row.ns.as_str(), row.checkpoint_id.as_str()))
                    .map(|h| human::graph_label(h, row))
                    .unwrap_or_else(|| row.checkpoint_id.clone())
            });
            for w in dag.warnings() {
                out.push_str(&format!("warning: {w}\n"));
            }
            Ok(out)
        }
    }
}

fn to_json(v: &Json) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

fn parse_filters(filters: &[String]) -> Result<Map<String, Json>, CliError> {
    let mut out = Map::new();
    for f in filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--filter {f:?}: expected KEY=JSON")))?;
        flashback_storage::validate_filter_key(k).map_err(|e| CliError::Usage(e.to_string()))?;
        // Accept bare words as strings for convenience: --filter source=loop.
        let value = serde_json::from_str(v).unwrap_or_else(|_| Json::String(v.to_owned()));
        out.insert(k.to_owned(), value);
    }
    Ok(out)
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, Json)>, CliError> {
    sets.iter()
        .map(|s| {
            let (channel, value) = s
                .split_once('=')
                .ok_or_else(|| CliError::Usage(format!("--set {s:?}: expected CHANNEL=JSON")))?;
            let value = serde_json::from_str(value).map_err(|e| {
                CliError::Usage(format!(
                    "--set {channel}: the value is not valid JSON ({e})"
                ))
            })?;
            Ok((channel.to_owned(), value))
        })
        .collect()
}

fn header_json(h: &CheckpointHeader) -> Json {
    json!({
        "checkpoint_id": h.checkpoint_id,
        "parent_checkpoint_id": h.parent_checkpoint_id,
        "checkpoint_ns": h.checkpoint_ns,
        "ts": h.ts,
        "metadata": h.metadata,
    })
}

/// The `state` JSON: values, versions, pending writes, next tasks.
pub fn state_json(t: &CheckpointTuple, opts: ViewOptions, derive: &tasks::DeriveOptions) -> Json {
    let cp = &t.checkpoint;
    let mut values = Map::new();
    for (channel, v) in &cp.channel_values {
        if let Some(j) = view_decoded(v, opts) {
            values.insert(channel.clone(), j);
        }
    }
    let versions: Map<String, Json> = cp
        .channel_versions
        .iter()
        .map(|(c, v)| (c.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
        .collect();
    let seen: Map<String, Json> = cp
        .versions_seen
        .iter()
        .map(|(n, vs)| {
            let inner: Map<String, Json> = vs
                .iter()
                .map(|(c, v)| (c.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
                .collect();
            (n.clone(), Json::Object(inner))
        })
        .collect();
    let writes: Vec<Json> = t
        .pending_writes
        .iter()
        .map(|w| {
            json!({
                "task_id": w.task_id,
                "task_path": w.task_path,
                "idx": w.idx,
                "channel": w.channel,
                "type": w.type_tag,
                "value": view_decoded(&w.value, opts).unwrap_or(Json::Null),
            })
        })
        .collect();
    let derived = tasks::derive_tasks_with(t, derive);
    json!({
        "thread_id": t.header.thread_id,
        "checkpoint_ns": t.header.checkpoint_ns,
        "checkpoint_id": t.header.checkpoint_id,
        "parent_checkpoint_id": t.header.parent_checkpoint_id,
        "ts": cp.ts,
        "v": cp.v,
        "metadata": t.header.metadata,
        "values": values,
        "channel_versions": versions,
        "versions_seen": seen,
        "updated_channels": cp.updated_channels,
        "pending_writes": writes,
        "next": derived.next,
        "tasks": serde_json::to_value(&derived.tasks).unwrap_or(Json::Null),
    })
}
