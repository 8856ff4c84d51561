//! `flashback threads`: the thread list, or the threads found by their checkpoints' metadata,
//! time and status (`--where`, `--since`, `--until`, `--status`), a page at a time.

use super::outcome::{done, open_info, render, Outcome};
use super::{activity, parse_filters, ACTIVITY_MAX};
use crate::human;
use flashback_api::*;
use std::collections::HashMap;

/// The arguments of `flashback threads`.
#[derive(clap::Args, Debug)]
pub struct ThreadsArgs {
    /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
    /// Server's `http://HOST:PORT` URL.
    pub db: String,
    /// Only the N most recently active threads, newest first (default: every thread, sorted
    /// by id). When finding threads: the page size (default 100, at most 1000).
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Only threads with a checkpoint whose metadata has KEY equal to VALUE (repeatable: every
    /// one in the same checkpoint, as LangGraph's `list(filter=…)`), e.g. `--where
    /// user_id=u-48213 --where assistant_id=…`. VALUE is JSON when it reads as JSON
    /// (`step=3`, `ok=true`), else text; `--where 'n="3"'` for the text "3".
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filter: Vec<String>,
    /// Only threads with a (matching) checkpoint made at or after this time: `2026-11-26`,
    /// `2026-11-26T12:00`, `2026-11-26T12:00:00+01:00` (no zone: UTC), read from the
    /// checkpoint ids.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only threads with a (matching) checkpoint made before this time (as `--since`).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only threads whose latest checkpoint is finished, interrupted, failed or pending
    /// (repeatable, or comma-separated).
    #[arg(long, value_name = "STATUS", value_delimiter = ',')]
    pub status: Vec<String>,
    /// The next page of threads found: the cursor the previous page ended with (its last
    /// thread's `cursor`).
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,
    /// Full thread and checkpoint ids and timestamps (the table is otherwise fitted to 100
    /// columns, with short ids and relative times).
    #[arg(long)]
    pub wide: bool,
    /// One row per thread, also for runs of 20 or more similar ids (`bulk-000001`,
    /// `bulk-000002`, …), which are otherwise folded into one row, as the app does.
    #[arg(long)]
    pub unfold: bool,
    /// Print JSON (every thread, with its `group`; threads found carry their
    /// `matched_checkpoint_id` and `cursor`).
    #[arg(long)]
    pub json: bool,
}

/// `--status finished,failed`, each checked.
fn parse_statuses(given: &[String]) -> Result<Vec<ThreadStatus>, ApiError> {
    given
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| {
            serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase())).map_err(
                |_| {
                    ApiError::invalid(format!(
                        "--status {s:?}: expected finished, interrupted, failed or pending"
                    ))
                },
            )
        })
        .collect()
}

/// The request the flags ask for; a bad flag is one line naming it.
fn request(db: String, a: &ThreadsArgs) -> Result<ThreadsRequest, ApiError> {
    let filter = parse_filters(&a.filter).map_err(|e| {
        ApiError::invalid(e.message.replacen("--filter", "--where", 1).replace(
            "expected KEY=JSON",
            "expected KEY=VALUE, e.g. --where user_id=u-48213",
        ))
    })?;
    for key in filter.keys() {
        if !filter_key_ok(key) {
            return Err(ApiError::invalid(format!(
                "--where {key:?}: a metadata key is letters, digits, `_`, `.` and `-` \
                 (^[a-zA-Z0-9_.-]+$)"
            )));
        }
    }
    let mut times = Vec::new();
    for (flag, time) in [("--since", &a.since), ("--until", &a.until)] {
        if let Some(t) = time {
            match parse_time(t) {
                Some(at) => times.push(at),
                None => {
                    return Err(ApiError::invalid(format!(
                        "{flag} {t:?} is not a time: write 2026-11-26, 2026-11-26T12:00 or \
                         2026-11-26T12:00:00+01:00 (no zone: UTC)"
                    )))
                }
            }
        }
    }
    if let (&[since, until], Some(s), Some(u)) = (&times[..], &a.since, &a.until) {
        if since >= until {
            return Err(ApiError::invalid(format!(
                "--since {s:?} is not before --until {u:?}"
            )));
        }
    }
    Ok(ThreadsRequest {
        db,
        limit: a.limit,
        filter,
        since: a.since.clone(),
        until: a.until.clone(),
        status: parse_statuses(&a.status)?,
        after: a.after.clone(),
    })
}

/// Run `flashback threads`.
pub async fn run(a: ThreadsArgs) -> Result<Outcome, ApiError> {
    let (api, info) = open_info(&a.db).await?;
    let req = request(info.db.clone(), &a)?;
    let finds = req.finds();
    let page = req.limit.unwrap_or(100) as usize;
    let mut threads = api.list_threads(req).await?;
    // Which threads failed on the way and recovered, and their token usage (their
    // whole history: indexed reads per thread, so only for lists of a bounded size).
    let mut recovered = HashMap::new();
    let mut activity_note = String::new();
    if info.holds != DbHolds::Store {
        if threads.len() <= ACTIVITY_MAX {
            let ids: Vec<String> = threads.iter().map(|t| t.thread_id.clone()).collect();
            let mut tokens = HashMap::new();
            for a in activity(&api, &info.db, ids).await? {
                tokens.insert(a.thread_id.clone(), a.tokens);
                recovered.insert(a.thread_id, a.recovered);
            }
            for t in &mut threads {
                t.tokens = tokens.remove(&t.thread_id).flatten();
            }
        } else {
            activity_note = format!(
                "(retried errors and token usage are looked up for lists of up to \
                 {ACTIVITY_MAX} threads: `flashback activity DB THREAD…` for others)\n"
            );
        }
    }
    done(render(a.json, &threads, |t| {
        let note = human::store_note(&a.db, info.holds, &info.store);
        if info.holds == DbHolds::Store {
            return note;
        }
        let found = match (finds, t.is_empty()) {
            (true, true) => "no threads match\n".to_owned(),
            (true, false) => human::threads(t, &recovered, human::width(a.wide), true),
            (false, _) => human::threads(t, &recovered, human::width(a.wide), a.unfold),
        };
        found
            + &more(finds, page, t)
            + &activity_note
            + &human::sealed_note(&info.encryption)
            + &note
    }))
}

/// Run `flashback metadata-keys`.
pub async fn keys(db: String, json: bool) -> Result<Outcome, ApiError> {
    let (api, info) = open_info(&db).await?;
    let keys = api
        .metadata_keys(MetadataKeysRequest { db: info.db })
        .await?;
    done(render(json, &keys, |keys| {
        if keys.is_empty() {
            return "no metadata in the newest checkpoints\n".into();
        }
        let w = keys
            .iter()
            .map(|k| k.key.chars().count())
            .max()
            .unwrap_or(3)
            .max(3);
        let mut out = format!("{:w$}  CHECKPOINTS  COMMON VALUES\n", "KEY");
        for k in keys {
            let values: Vec<String> = k.values.iter().map(|v| v.to_string()).collect();
            let line = format!("{:w$}  {:>11}  {}", k.key, k.count, values.join(", "));
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out + "(sampled: the newest checkpoints of the most recently active threads)\n"
    }))
}

/// After a full page of threads found: how to ask for the next.
fn more(finds: bool, page: usize, threads: &[ThreadSummary]) -> String {
    match threads.last().and_then(|t| t.cursor.as_deref()) {
        Some(cursor) if finds && threads.len() >= page => {
            format!("{page} threads, newest match first; the next page: --after '{cursor}'\n")
        }
        _ => String::new(),
    }
}
