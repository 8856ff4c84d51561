//! The CLI door: each subcommand parses its arguments into the request the app sends, calls
//! the same `flashback_api::Api` method, and renders the response — a human table, or with
//! `--json` exactly the JSON the app receives. Long work (export, re-run, search) runs as the same
//! job the app starts, followed here with progress on stderr and Ctrl-C as cancel.

use crate::human;

pub(crate) mod ids;
pub(crate) mod index;
mod jobs;
pub(crate) mod outcome;
pub(crate) mod page;
mod storage;
pub(crate) mod threads;
mod topology;
mod writes;

pub use outcome::Outcome;
use outcome::{done, json_text, open, render};

use crate::Command;
use flashback_api::*;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// The most threads `flashback threads` looks up the history of.
pub(crate) const ACTIVITY_MAX: usize = 2000;

/// `thread_activity` for any number of threads, in the API's batches.
pub(crate) async fn activity(
    api: &Api,
    db: &str,
    ids: Vec<String>,
) -> Result<Vec<ThreadActivity>, ApiError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let req = ThreadActivityRequest {
            db: db.to_owned(),
            thread_ids: chunk.to_vec(),
        };
        out.extend(api.thread_activity(req).await?);
    }
    Ok(out)
}

/// Run one command.
pub async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    match cmd {
        Command::Bridge {
            db,
            create,
            schema,
            blobs,
        } => {
            crate::bridge::serve(&db, create, &schema, &blobs)
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
        Command::Mcp {
            db,
            http,
            allow_writes,
            allow_run,
        } => done(
            crate::mcp::run(crate::mcp::McpOptions {
                db,
                http,
                allow_writes,
                allow_run,
            })
            .await?,
        ),
        Command::Threads(args) => threads::run(args).await,
        Command::MetadataKeys { db, json } => threads::keys(db, json).await,
        Command::Activity { db, threads, json } => {
            let (api, db) = open(&db).await?;
            let ids = if threads.is_empty() {
                let all = api
                    .list_threads(ThreadsRequest {
                        db: db.clone(),
                        limit: None,
                        ..Default::default()
                    })
                    .await?;
                all.into_iter().map(|t| t.thread_id).collect()
            } else {
                threads
            };
            let found = activity(&api, &db, ids).await?;
            if let Some(gone) = found.iter().find(|a| a.missing) {
                return Err(ApiError::not_found(
                    gone.problem.clone().unwrap_or_default(),
                ));
            }
            done(render(json, &found, |a| human::activity(a)))
        }
        Command::Store(cmd) => crate::store::run(cmd).await,
        Command::Watch(args) => crate::watch::run(args).await,
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
                db: db.clone(),
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
            let thread_id = req.thread_id.clone();
            let items = api.thread_history(req).await?;
            // The node column: what ran to make each checkpoint (from the thread's writes).
            let mut nodes = HashMap::new();
            if !json && !items.is_empty() {
                let graph = api
                    .thread_graph(GraphRequest {
                        db: db.clone(),
                        thread_id,
                        collapsed: Vec::new(),
                    })
                    .await;
                if let Ok(g) = graph {
                    for r in g.rows {
                        nodes.insert((r.ns, r.id), r.ran);
                    }
                }
            }
            done(render(json, &items, |i| {
                human::history(i, &nodes, human::width(wide))
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
            internal,
            json,
            page,
        } => {
            let reducers = parse_reducers(&reducer)?;
            let (api, db) = open(&db).await?;
            let checkpoint = match checkpoint {
                Some(id) => Some(ids::resolve(&api, &db, &thread, Some(&ns), &id).await?),
                None => None,
            };
            if let Some(path) = page.path.clone() {
                let target = page::Target {
                    db,
                    thread,
                    ns,
                    checkpoint,
                    reveal_secrets,
                    raw,
                    reducers,
                };
                let answer = api.state_page(page::request(target, path, &page)).await?;
                let query = page.find.as_deref();
                return done(render(json, &answer, |p| human::page(p, query)));
            }
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
                live: None,
                page: None,
            };
            let detail = api.checkpoint_detail(req).await?;
            done(render(json, &detail, |d| human::state(d, internal)))
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
            let a = ids::resolve(&api, &db, &thread, Some(&ns), &a).await?;
            let b = ids::resolve(&api, &db, &thread, Some(&ns), &b).await?;
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
            let tip = match tip {
                Some(id) => Some(ids::resolve(&api, &db, &thread, Some(&ns), &id).await?),
                None => None,
            };
            let req = ReplayRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                tip,
            };
            let steps = api.replay_steps(req).await?;
            done(render(json, &steps, |s| human::replay(s)))
        }
        cmd @ (Command::Fork { .. }
        | Command::Merge { .. }
        | Command::Delete { .. }
        | Command::DeleteBranch { .. }
        | Command::Prune { .. }
        | Command::Copy { .. }) => writes::run(cmd).await,
        cmd @ (Command::Convert { .. }
        | Command::Export { .. }
        | Command::Verify { .. }
        | Command::Rerun { .. }
        | Command::Search { .. }) => jobs::run(cmd).await,
        cmd @ Command::Storage { .. } => storage::run(cmd).await,
        Command::Index(a) => index::run(a).await,
        cmd @ Command::Topology { .. } => topology::run(cmd).await,
        Command::Rebuild {
            db,
            thread,
            repair: true,
            yes,
            json,
            ..
        } => {
            let (api, db) = open(&db).await?;
            let req = RepairRequest {
                db,
                thread_id: thread,
                dry_run: !yes,
            };
            let report = api.repair_blobs(req).await?;
            done(render(json, &report, human::repaired))
        }
        Command::Rebuild {
            db,
            thread,
            checkpoint,
            ns,
            json,
            ..
        } => {
            let (api, db) = open(&db).await?;
            let checkpoint = match checkpoint {
                Some(id) => Some(ids::resolve(&api, &db, &thread, Some(&ns), &id).await?),
                None => None,
            };
            let req = RebuildRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                tip: checkpoint,
            };
            let report = api.rebuild_report(req).await?;
            done(render(json, &report, |r| human::rebuild(r)))
        }
    }
}

pub(crate) fn parse_filters(filters: &[String]) -> Result<Map<String, Json>, ApiError> {
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
