//! Three-table helpers shared by the conversion and repair tests.

use super::finish;
use flashback_api::*;
use serde_json::Value as Json;

/// Convert every thread of `db` into `target` in the schema `to`, and wait for the job.
pub async fn convert(
    api: &Api,
    db: &str,
    target: &std::path::Path,
    to: ConvertTo,
    dry_run: bool,
) -> JobSnapshot {
    let job = api
        .start_convert(ConvertRequest {
            db: db.to_owned(),
            target: target.to_string_lossy().into_owned(),
            to,
            whole_blobs: false,
            threads: Vec::new(),
            dry_run,
        })
        .await
        .expect("start");
    finish(api, &job).await
}

/// Everything a checkpoint reads as, except where it is stored.
pub async fn checkpoints(api: &Api, db: &str) -> Vec<(String, String, Json)> {
    let mut out = Vec::new();
    let threads = api
        .list_threads(ThreadsRequest {
            db: db.to_owned(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    for t in threads {
        for ns in &t.namespaces {
            let history = api
                .thread_history(HistoryRequest {
                    db: db.to_owned(),
                    thread_id: t.thread_id.clone(),
                    checkpoint_ns: Some(ns.clone()),
                    limit: None,
                    before: None,
                    filter: Default::default(),
                })
                .await
                .expect("history");
            for h in history {
                let d = api
                    .checkpoint_detail(CheckpointRequest {
                        live: None,
                        page: None,
                        db: db.to_owned(),
                        thread_id: t.thread_id.clone(),
                        checkpoint_ns: ns.clone(),
                        checkpoint_id: Some(h.checkpoint_id.clone()),
                        reveal_secrets: true,
                        full: true,
                        raw: false,
                        reducers: Default::default(),
                        allow_locked: false,
                    })
                    .await
                    .expect("detail");
                let shown = serde_json::json!({
                    "parent": d.parent_checkpoint_id,
                    "ts": d.ts,
                    "metadata": d.metadata,
                    "values": d.values,
                    "channel_versions": d.channel_versions,
                    "versions_seen": d.versions_seen,
                    "updated_channels": d.updated_channels,
                    "writes": serde_json::to_value(&d.writes).expect("writes"),
                    "tasks": serde_json::to_value(&d.tasks).expect("tasks"),
                    "problem": d.problem,
                });
                out.push((t.thread_id.clone(), h.checkpoint_id.clone(), shown));
            }
        }
    }
    out
}

/// The fixture (opened in `f`) converted into the three-table store at the Postgres `url`,
/// opened there.
pub async fn converted_to_pg(f: &super::OpenedFixture, url: &str) -> DbInfo {
    let target = std::path::PathBuf::from(url);
    let done = convert(&f.api, &f.db.db, &target, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    super::open(&f.api, url).await
}
