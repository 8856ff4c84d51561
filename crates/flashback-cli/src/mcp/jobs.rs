//! The tools whose command starts a job (search, storage, rerun): the job is started through
//! the table, followed with `job_poll` to its end (its events gathered, at most
//! [`MAX_EVENTS`]), and answered with its result — the JSON `flashback … --json` prints.

use super::table::{self, Answer};
use super::tools::ToolSpec;
use super::Door;
use crate::human;
use flashback_api::*;
use serde_json::{json, Value as Json};
use std::time::Duration;

/// The most events of one job kept for the answer (a search's hits are bounded by its limit).
const MAX_EVENTS: usize = 10_000;

/// Follow `job` to its end: its events and its result.
async fn follow(api: &Api, job: String) -> Result<(Vec<JobEvent>, Json), ApiError> {
    let mut cursor = 0;
    let mut events = Vec::new();
    loop {
        let snap = api
            .job_poll(JobPollRequest {
                job: job.clone(),
                cursor,
            })
            .await?;
        cursor = snap.cursor;
        let room = MAX_EVENTS.saturating_sub(events.len());
        events.extend(snap.events.into_iter().take(room));
        match snap.state {
            JobState::Running => {}
            JobState::Succeeded => return Ok((events, snap.result.unwrap_or(Json::Null))),
            JobState::Failed | JobState::Cancelled => {
                return Err(snap
                    .error
                    .unwrap_or_else(|| ApiError::new(ErrorCode::Cancelled, "cancelled")))
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn typed<T: serde::de::DeserializeOwned>(v: &Json) -> Result<T, ApiError> {
    serde_json::from_value(v.clone())
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("unexpected job result: {e}")))
}

/// Run the job of `spec` with `req` to its end.
pub async fn run(door: &Door, spec: &ToolSpec, req: Json) -> Result<Answer, ApiError> {
    let query = req
        .get("query")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    let started = table::call(&door.api, spec.command, req).await?;
    let job = started.json.as_str().unwrap_or_default().to_owned();
    let (events, result) = follow(&door.api, job).await?;
    match spec.command {
        "start_search" => {
            let summary: ValueSearchSummary = typed(&result)?;
            let mut text = String::new();
            if !events.is_empty() {
                text.push_str(&human::search_header());
            }
            for e in &events {
                text.push_str(&human::search_hit(e, &query));
            }
            text.push_str(&human::searched(&summary, &query));
            Ok(Answer {
                json: json!({"hits": events, "summary": summary}),
                typed: Box::new(()),
                text: Some(text),
            })
        }
        "start_storage_report" => {
            let report: StorageReport = typed(&result)?;
            Ok(Answer {
                json: result,
                typed: Box::new(report),
                text: None,
            })
        }
        _ => {
            let text = events.iter().map(human::rerun_event).collect::<String>();
            Ok(Answer {
                json: json!({"events": events, "result": result}),
                typed: Box::new(()),
                text: Some(text),
            })
        }
    }
}
