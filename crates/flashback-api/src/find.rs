//! Finding threads ([`ThreadsRequest::finds`]): the storage's `find_threads` (a metadata
//! filter and a time range, matched per checkpoint, newest match first) paged by a cursor,
//! each page summarised as the thread list is, and the statuses asked for kept.

use crate::error::{ApiError, ApiResult};
use crate::summaries::summaries_of;
use crate::types::{MetadataKey, ThreadSummary, ThreadsRequest};
use flashback_storage::find::time_bound;
use flashback_storage::{CheckpointStore, ThreadQuery};
use serde_json::Value as Json;
use std::collections::HashMap;

/// Threads a page holds when no `limit` is given.
pub const DEFAULT_PAGE: u32 = 100;
/// The largest page.
pub const MAX_PAGE: u32 = 1_000;

/// A time as `since`/`until` take it (`2026-11-26`, `2026-11-26T12:00`, with `Z` or
/// `±HH:MM`; no zone: UTC) in microseconds since the epoch; `None` when it is not one.
pub fn parse_time(text: &str) -> Option<i64> {
    flashback_storage::find::parse_time(text)
}

/// Whether a metadata filter key is one LangGraph's savers accept (`^[a-zA-Z0-9_.-]+$`).
pub fn filter_key_ok(key: &str) -> bool {
    flashback_storage::validate_filter_key(key).is_ok()
}

/// A time of the request as microseconds since the epoch, or the one-line error naming the
/// field and the forms it takes.
pub fn time_of(field: &str, text: &str) -> ApiResult<i64> {
    parse_time(text).ok_or_else(|| {
        ApiError::invalid(format!(
            "{field} {text:?} is not a time: write 2026-11-26, 2026-11-26T12:00 or \
             2026-11-26T12:00:00+01:00 (no zone: UTC)"
        ))
    })
}

/// The cursor after a thread: its newest matching checkpoint id (`%` and `/` escaped), `/`,
/// its thread id.
pub fn cursor_of(matched: &str, thread_id: &str) -> String {
    let id = matched.replace('%', "%25").replace('/', "%2F");
    format!("{id}/{thread_id}")
}

/// The `(matched checkpoint id, thread id)` a cursor names.
pub fn parse_cursor(cursor: &str) -> ApiResult<(String, String)> {
    let bad = || {
        ApiError::invalid(format!(
            "after {cursor:?} is not a cursor this list gave (CHECKPOINT_ID/THREAD_ID)"
        ))
    };
    let (id, thread) = cursor.split_once('/').ok_or_else(bad)?;
    if id.is_empty() {
        return Err(bad());
    }
    let id = id.replace("%2F", "/").replace("%25", "%");
    Ok((id, thread.to_owned()))
}

/// The query a request asks for (checked: filter keys, times, cursor, page size).
pub fn thread_query(req: &ThreadsRequest) -> ApiResult<ThreadQuery> {
    for key in req.filter.keys() {
        flashback_storage::validate_filter_key(key)
            .map_err(|e| ApiError::invalid(e.to_string()))?;
    }
    let since = req
        .since
        .as_deref()
        .map(|t| time_of("since", t))
        .transpose()?;
    let until = req
        .until
        .as_deref()
        .map(|t| time_of("until", t))
        .transpose()?;
    if let (Some(s), Some(u)) = (since, until) {
        if s >= u {
            return Err(ApiError::invalid(format!(
                "since {:?} is not before until {:?}",
                req.since.as_deref().unwrap_or_default(),
                req.until.as_deref().unwrap_or_default()
            )));
        }
    }
    let limit = req.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::invalid(format!(
            "a page holds 1 to {MAX_PAGE} threads ({limit} asked)"
        )));
    }
    Ok(ThreadQuery {
        filter: req.filter.clone(),
        since: since.map(time_bound),
        until: until.map(time_bound),
        after: req.after.as_deref().map(parse_cursor).transpose()?,
        limit: limit as usize,
    })
}

/// One page of the threads a request finds, newest match first. With `status`, pages of the
/// storage's answer are summarised until the page is full or the threads run out: a page
/// shorter than `limit` is the last.
pub async fn find_summaries(
    store: &dyn CheckpointStore,
    req: &ThreadsRequest,
) -> ApiResult<Vec<ThreadSummary>> {
    let mut q = thread_query(req)?;
    let page = q.limit;
    if !req.status.is_empty() {
        // Statuses are read from each thread's latest checkpoint, after the query.
        q.limit = page.max(200);
    }
    let mut out = Vec::new();
    loop {
        let found = store.find_threads(&q).await?;
        let ended = found.len() < q.limit;
        q.after = found
            .last()
            .map(|f| (f.matched_checkpoint_id.clone(), f.info.thread_id.clone()));
        let matched: Vec<String> = found
            .iter()
            .map(|f| f.matched_checkpoint_id.clone())
            .collect();
        let summaries = summaries_of(store, found.into_iter().map(|f| f.info).collect()).await?;
        for (mut s, m) in summaries.into_iter().zip(matched) {
            let wanted =
                req.status.is_empty() || s.status.is_some_and(|st| req.status.contains(&st));
            if wanted {
                s.cursor = Some(cursor_of(&m, &s.thread_id));
                s.matched_checkpoint_id = Some(m);
                out.push(s);
            }
        }
        if out.len() >= page || ended || q.after.is_none() {
            break;
        }
    }
    out.truncate(page);
    Ok(out)
}

/// How often each value was seen (by its JSON text), with the value.
type ValueCounts = HashMap<String, (u32, Json)>;

/// Threads sampled for [`metadata_keys`], newest first.
const SAMPLE_THREADS: usize = 50;
/// Checkpoints sampled per thread, newest first.
const SAMPLE_PER_THREAD: u64 = 10;

/// The metadata keys of the newest checkpoints (the newest checkpoints of the most recently
/// active threads: a bounded read, never a scan of every checkpoint), most common first, each
/// with its most common scalar values.
pub async fn metadata_keys(store: &dyn CheckpointStore) -> ApiResult<Vec<MetadataKey>> {
    let threads = store.list_recent_threads(SAMPLE_THREADS).await?;
    let mut keys: HashMap<String, (u32, ValueCounts)> = HashMap::new();
    for t in threads {
        let query = flashback_storage::ListQuery {
            thread_id: Some(t.thread_id),
            limit: Some(SAMPLE_PER_THREAD),
            ..Default::default()
        };
        for h in store.list_headers(&query).await? {
            let Json::Object(m) = h.metadata else {
                continue;
            };
            for (k, v) in m {
                let entry = keys.entry(k).or_default();
                entry.0 += 1;
                if matches!(v, Json::String(_) | Json::Number(_) | Json::Bool(_))
                    && v.to_string().len() <= 200
                {
                    entry.1.entry(v.to_string()).or_insert((0, v)).0 += 1;
                }
            }
        }
    }
    let mut out: Vec<MetadataKey> = keys
        .into_iter()
        .map(|(key, (count, values))| {
            let mut values: Vec<(u32, String, Json)> =
                values.into_iter().map(|(t, (n, v))| (n, t, v)).collect();
            values.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            MetadataKey {
                key,
                count,
                values: values.into_iter().take(8).map(|(_, _, v)| v).collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back() {
        for (id, t) in [("1f1e-6a", "handover"), ("a/b%2F", "t/1 x")] {
            assert_eq!(
                parse_cursor(&cursor_of(id, t)).unwrap(),
                (id.to_owned(), t.to_owned())
            );
        }
        assert!(parse_cursor("nothing").is_err());
    }

    #[test]
    fn a_bad_request_is_one_line() {
        let req = |f: fn(&mut ThreadsRequest)| {
            let mut r = ThreadsRequest::default();
            f(&mut r);
            thread_query(&r).map(|_| ()).map_err(|e| e.message)
        };
        let e = req(|r| r.since = Some("yesterday".into())).unwrap_err();
        assert!(e.starts_with("since \"yesterday\" is not a time"), "{e}");
        let e = req(|r| {
            r.since = Some("2026-11-27".into());
            r.until = Some("2026-11-26T12:00".into());
        })
        .unwrap_err();
        assert!(e.contains("is not before until"), "{e}");
        let e = req(|r| {
            r.filter.insert("user id".into(), "x".into());
        })
        .unwrap_err();
        assert!(e.contains("^[a-zA-Z0-9_.-]+$"), "{e}");
        assert!(req(|r| r.limit = Some(0)).is_err());
        assert!(req(|r| r.until = Some("2026-11-26T12:00:00+01:00".into())).is_ok());
    }
}
