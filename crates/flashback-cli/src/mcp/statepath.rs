//! `state` with a `path`: the value there, read with `state_page` so that a list of any length
//! (a 10,000-message chat, a channel over the decode budget) answers a page — `cursor` its
//! first item, `limit` its length — without the whole checkpoint turned into JSON.

use super::bound::{CHARS_PER_TOKEN, MAX_TOKENS};
use super::table::Answer;
use super::Door;
use flashback_api::{ApiError, KeyPath, StatePageRequest, MAX_PAGE};
use serde_json::{json, Value as Json};

/// The answer at `path` for the `state` request `req` (its JSON arguments, ids resolved).
pub async fn state_at(
    door: &Door,
    req: &Json,
    path: &KeyPath,
    cursor: usize,
    limit: Option<usize>,
) -> Result<Answer, ApiError> {
    let text = |k: &str| req.get(k).and_then(Json::as_str).map(str::to_owned);
    let flag = |k: &str| req.get(k).and_then(Json::as_bool).unwrap_or(false);
    let reducers = match req.get("reducers") {
        None | Some(Json::Null) => Default::default(),
        Some(r) => serde_json::from_value(r.clone())
            .map_err(|e| ApiError::invalid(format!("reducers: {e}")))?,
    };
    let page = StatePageRequest {
        db: door.db.clone(),
        thread_id: text("thread_id").unwrap_or_default(),
        checkpoint_ns: text("checkpoint_ns").unwrap_or_default(),
        checkpoint_id: text("checkpoint_id"),
        path: path.to_string(),
        offset: u32::try_from(cursor).unwrap_or(u32::MAX),
        limit: Some(limit.map_or(MAX_PAGE, |l| {
            u32::try_from(l).unwrap_or(MAX_PAGE).min(MAX_PAGE)
        })),
        query: None,
        // Longer strings never fit an answer: folded on the server (their path fetches them).
        fold: Some(u32::try_from(MAX_TOKENS * CHARS_PER_TOKEN).unwrap_or(u32::MAX)),
        reveal_secrets: flag("reveal_secrets"),
        raw: flag("raw"),
        reducers,
        live: req.get("live").and_then(Json::as_bool),
    };
    let p = door.api.state_page(page).await?;
    let mut json = json!({
        "thread_id": p.thread_id,
        "checkpoint_ns": p.checkpoint_ns,
        "checkpoint_id": p.checkpoint_id,
        "path": p.path,
    });
    match p.total {
        Some(total) => {
            let whole = p.offset == 0 && p.items.len() == total as usize;
            json["value"] = Json::Array(p.items);
            if !whole {
                json["total"] = json!(total);
                json["offset"] = json!(p.offset);
            }
        }
        None => json["value"] = p.value.unwrap_or(Json::Null),
    }
    Ok(Answer {
        json,
        typed: Box::new(()),
        text: None,
    })
}
