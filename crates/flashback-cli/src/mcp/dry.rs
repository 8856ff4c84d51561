//! `dry_run` for the writes whose command has no dry run of its own (fork, merge, copy,
//! store_put, rerun): the reads that say what the write would do, through the same table —
//! the checkpoint read and each edit checked (`validate_edit`), the merge's three-way view,
//! the thread and the target looked up, the item it would replace. Nothing is written.

use super::table::{self, Answer};
use super::tools::ToolSpec;
use super::Door;
use flashback_api::ApiError;
use serde_json::{json, Value as Json};

fn s<'a>(req: &'a Json, name: &str) -> &'a str {
    req.get(name).and_then(Json::as_str).unwrap_or_default()
}

async fn read(door: &Door, command: &str, req: Json) -> Result<Json, ApiError> {
    Ok(table::call(&door.api, command, req).await?.json)
}

fn answer(json: Json, text: String) -> Answer {
    Answer {
        json,
        typed: Box::new(()),
        text: Some(text + "(dry run: nothing written; call again with dry_run=false to do it)\n"),
    }
}

/// The checkpoint a fork or re-run starts from (it must exist).
async fn checkpoint(door: &Door, req: &Json) -> Result<Json, ApiError> {
    let detail = read(
        door,
        "checkpoint_detail",
        json!({"db": door.db, "thread_id": s(req, "thread_id"),
               "checkpoint_ns": s(req, "checkpoint_ns"), "checkpoint_id": s(req, "checkpoint_id")}),
    )
    .await?;
    Ok(json!({
        "checkpoint_id": detail["checkpoint_id"],
        "checkpoint_ns": detail["checkpoint_ns"],
        "step": detail["step"],
        "source": detail["source"],
        "status": detail["status"],
        "next": detail["tasks"]["next"],
    }))
}

/// What `spec` would do with `req`.
pub async fn preview(door: &Door, spec: &ToolSpec, req: Json) -> Result<Answer, ApiError> {
    table::check(spec.command, &req)?;
    let thread = s(&req, "thread_id");
    match spec.name {
        "fork" => {
            let from = checkpoint(door, &req).await?;
            let mut checks = Vec::new();
            for edit in req["edits"].as_array().cloned().unwrap_or_default() {
                let check = read(
                    door,
                    "validate_edit",
                    json!({"db": door.db, "thread_id": thread,
                           "checkpoint_ns": s(&req, "checkpoint_ns"),
                           "checkpoint_id": s(&req, "checkpoint_id"), "edit": edit}),
                )
                .await?;
                checks.push(json!({"channel": edit["channel"], "check": check}));
            }
            let bad: Vec<String> = checks
                .iter()
                .filter(|c| c["check"]["ok"] != json!(true))
                .map(|c| format!("{}: {}", c["channel"], c["check"]["message"]))
                .collect();
            let text = if bad.is_empty() {
                let edits = match checks.len() {
                    0 => "a copy".to_owned(),
                    1 => "1 channel edited".to_owned(),
                    n => format!("{n} channels edited"),
                };
                format!(
                    "would fork checkpoint {} of thread {thread:?} ({edits}) as its newest checkpoint\n",
                    s(&req, "checkpoint_id"),
                )
            } else {
                format!("the fork would be refused: {}\n", bad.join("; "))
            };
            Ok(answer(
                json!({"dry_run": true, "from": from, "edits": checks, "ok": bad.is_empty()}),
                text,
            ))
        }
        "merge" => {
            let channels: Vec<Json> = req["channels"]
                .as_array()
                .map(|c| c.iter().map(|c| c["channel"].clone()).collect())
                .unwrap_or_default();
            let view = read(
                door,
                "merge_preview",
                json!({"db": door.db, "thread_id": thread, "checkpoint_ns": s(&req, "checkpoint_ns"),
                       "into": s(&req, "into"), "from": s(&req, "from"), "channels": channels}),
            )
            .await?;
            let what = match channels.len() {
                1 => "1 channel".to_owned(),
                n => format!("{n} channels"),
            };
            let text = format!(
                "would merge {what} of {} into a new child of {} on thread {thread:?}\n",
                s(&req, "from"),
                s(&req, "into")
            );
            Ok(answer(json!({"dry_run": true, "preview": view}), text))
        }
        "copy" => {
            let target = s(&req, "target_thread_id");
            let source = read(
                door,
                "thread_history",
                json!({"db": door.db, "thread_id": thread, "checkpoint_ns": null, "limit": 1}),
            )
            .await?;
            if source.as_array().is_none_or(|a| a.is_empty()) {
                return Err(ApiError::not_found(format!("no thread {thread:?}")));
            }
            let taken = read(
                door,
                "thread_history",
                json!({"db": door.db, "thread_id": target, "checkpoint_ns": null, "limit": 1}),
            )
            .await;
            if taken.is_ok_and(|t| t.as_array().is_some_and(|a| !a.is_empty())) {
                return Err(ApiError::invalid(format!(
                    "thread {target:?} already exists: give a new thread id"
                )));
            }
            let text = format!("would copy thread {thread:?} to {target:?}\n");
            Ok(answer(
                json!({"dry_run": true, "thread_id": thread, "target_thread_id": target}),
                text,
            ))
        }
        "store_put" => {
            let current = read(
                door,
                "store_get",
                json!({"db": door.db, "namespace": req["namespace"], "key": req["key"]}),
            )
            .await;
            let (would, current) = match current {
                Ok(item) => ("replace", item),
                Err(e) if e.code == flashback_api::ErrorCode::NotFound => ("create", Json::Null),
                Err(e) => return Err(e),
            };
            let text = format!(
                "would {would} the item {} / {}\n",
                req["namespace"], req["key"]
            );
            Ok(answer(
                json!({"dry_run": true, "would": would, "current": current}),
                text,
            ))
        }
        _ => {
            let from = checkpoint(door, &req).await?;
            let text = format!(
                "would copy-fork checkpoint {} of thread {thread:?} and run {:?} (at most {} s)\n",
                s(&req, "checkpoint_id"),
                s(&req, "runner"),
                req["timeout_secs"]
            );
            Ok(answer(json!({"dry_run": true, "from": from}), text))
        }
    }
}
