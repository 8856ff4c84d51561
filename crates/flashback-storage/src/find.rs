//! Finding threads by what their checkpoints say ([`CheckpointStore::find_threads`]): a
//! metadata filter matched as LangGraph's `list(None, filter=…)` matches it, per checkpoint,
//! and a time range read from the checkpoint ids.
//!
//! **A thread matches when one of its checkpoints (any namespace) matches every part of the
//! query at once**: each filter key equals its value in that checkpoint's metadata (SQLite:
//! `json_extract`, Postgres: `metadata @> filter`, as the Python savers' `list(filter=)`), and
//! the checkpoint was made within `[since, until)`. Times come from the checkpoint ids:
//! LangGraph's ids are version-6 UUIDs whose text sorts by the time they were made (Python's,
//! LangGraph.js's and the three-table store's alike), so a time bound is the lowest id of its
//! 100-ns tick and the range is a comparison of ids the database makes without reading a
//! document; an id that is not a v6 UUID carries no time and never matches a range. (The
//! document's `ts` would need every document read on SQLite, where it lives inside msgpack.)
//!
//! Threads come newest match first: ordered by their newest matching checkpoint id, then by
//! thread id (both descending), so a page ends at a `(matched id, thread id)` key the next
//! page starts after.

use crate::model::{CheckpointHeader, ListQuery, ThreadInfo};
use crate::{CheckpointStore, StoreError};
use serde_json::{Map, Value as Json};

/// Which threads to find.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadQuery {
    /// Metadata filter: every key must equal its value in one checkpoint's metadata (keys as
    /// [`crate::validate_filter_key`] allows, dotted keys reaching into nested objects on SQLite
    /// as `json_extract` does).
    pub filter: Map<String, Json>,
    /// Only checkpoints made at or after this id ([`time_bound`] of a time).
    pub since: Option<String>,
    /// Only checkpoints made before this id ([`time_bound`] of a time).
    pub until: Option<String>,
    /// Only threads after this key in the order (the last row of the previous page):
    /// `(matched checkpoint id, thread id)`.
    pub after: Option<(String, String)>,
    /// At most this many threads.
    pub limit: usize,
}

impl ThreadQuery {
    /// The checkpoint filter as a [`ListQuery`] over every thread and namespace.
    pub fn list_query(&self) -> ListQuery {
        ListQuery {
            filter: self.filter.clone(),
            ..Default::default()
        }
    }

    /// Whether a checkpoint id lies within the time range (always, without one).
    pub fn in_range(&self, id: &str) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        is_v6(id)
            && self.since.as_deref().is_none_or(|s| id >= s)
            && self.until.as_deref().is_none_or(|u| id < u)
    }

    /// Whether a thread whose newest match is `matched` comes after the cursor.
    pub fn after_cursor(&self, matched: &str, thread_id: &str) -> bool {
        self.after
            .as_ref()
            .is_none_or(|(m, t)| (matched, thread_id) < (m.as_str(), t.as_str()))
    }
}

/// A thread found, with the newest of its checkpoints that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundThread {
    /// The thread, as [`CheckpointStore::list_threads`] describes it.
    pub info: ThreadInfo,
    /// Its newest checkpoint that matched the query (any namespace).
    pub matched_checkpoint_id: String,
}

/// Whether `id` is a version-6 UUID's text (as LangGraph writes it, lowercase): the ids a
/// time range compares.
pub fn is_v6(id: &str) -> bool {
    id.len() == 36 && id.as_bytes().get(14) == Some(&b'6') && uuid::Uuid::try_parse(id).is_ok()
}

/// The lowest version-6 id made at `micros` (microseconds since 1970-01-01 UTC): every
/// checkpoint id made at or after that time sorts at or after it, every earlier one before.
pub fn time_bound(micros: i64) -> String {
    // 100-ns ticks since 1582-10-15, as uuid6 counts them.
    const GREGORIAN_OFFSET: i128 = 0x01B2_1DD2_1381_4000;
    let ticks = (i128::from(micros) * 10 + GREGORIAN_OFFSET).clamp(0, (1 << 60) - 1) as u128;
    let v = ((ticks >> 12) << 80) | ((0x6000 | (ticks & 0x0FFF)) << 64);
    uuid::Uuid::from_u128(v).hyphenated().to_string()
}

/// A time as people write it — `2026-11-26`, `2026-11-26T12:00`, `2026-11-26 12:00:05.5`,
/// with `Z` or `±HH:MM` (none: UTC) — as microseconds since 1970-01-01 UTC; `None` when it is
/// not one.
pub fn parse_time(text: &str) -> Option<i64> {
    match crate::memory::time::Stamp::parse(text) {
        crate::memory::time::Stamp::At { micros } => Some(micros),
        crate::memory::time::Stamp::Unreadable(_) => None,
    }
}

/// Threads sorted newest match first, after the cursor, at most `limit`.
pub(crate) fn page(mut found: Vec<FoundThread>, q: &ThreadQuery) -> Vec<FoundThread> {
    found.retain(|f| q.after_cursor(&f.matched_checkpoint_id, &f.info.thread_id));
    found.sort_by(|a, b| {
        (&b.matched_checkpoint_id, &b.info.thread_id)
            .cmp(&(&a.matched_checkpoint_id, &a.info.thread_id))
    });
    found.truncate(q.limit);
    found
}

/// Each thread's newest checkpoint among `headers` within the time range.
fn newest_matches(headers: &[CheckpointHeader], q: &ThreadQuery) -> Vec<(String, String)> {
    let mut newest: std::collections::HashMap<&str, &str> = Default::default();
    for h in headers {
        if !q.in_range(&h.checkpoint_id) {
            continue;
        }
        let e = newest.entry(&h.thread_id).or_insert(&h.checkpoint_id);
        if h.checkpoint_id.as_str() > *e {
            *e = &h.checkpoint_id;
        }
    }
    newest
        .into_iter()
        .map(|(t, id)| (t.to_owned(), id.to_owned()))
        .collect()
}

/// [`CheckpointStore::find_threads`] from `list_headers` (every checkpoint the filter matches,
/// as the source's `list(filter=)` answers it) and `list_threads`: for the sources read whole
/// (a `langgraph dev` folder, an Agent Server, the three-table store).
pub async fn find_threads<S: CheckpointStore + ?Sized>(
    store: &S,
    q: &ThreadQuery,
) -> Result<Vec<FoundThread>, StoreError> {
    let headers = store.list_headers(&q.list_query()).await?;
    let mut matched: std::collections::HashMap<String, String> =
        newest_matches(&headers, q).into_iter().collect();
    let found = store
        .list_threads()
        .await?
        .into_iter()
        .filter_map(|info| {
            let m = matched.remove(&info.thread_id)?;
            Some(FoundThread {
                info,
                matched_checkpoint_id: m,
            })
        })
        .collect();
    Ok(page(found, q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_sort_with_the_ids_made_then() {
        // 2026-11-26T12:00:00Z.
        let noon = 1_795_694_400_000_000;
        let at_noon =
            crate::pyfmt::uuid6_from_parts((noon as u64) * 10 + 0x01B2_1DD2_1381_4000, 3, 0xabc);
        let bound = time_bound(noon);
        assert!(is_v6(&bound), "{bound}");
        assert!(bound.as_str() <= at_noon.as_str());
        assert!(time_bound(noon + 1).as_str() > at_noon.as_str());
        assert_eq!(
            crate::pyfmt::uuid6_time(&bound).as_deref(),
            Some("2026-11-26T12:00:00+00:00")
        );
        let q = ThreadQuery {
            since: Some(bound),
            until: Some(time_bound(noon + 1)),
            ..Default::default()
        };
        assert!(q.in_range(&at_noon));
        assert!(!q.in_range("not-a-uuid"));
        assert!(!q.in_range("1ef4f797-8335-1000-8000-000000000000"));
    }

    #[test]
    fn a_cursor_pages_newest_first() {
        let info = |t: &str| ThreadInfo {
            thread_id: t.into(),
            namespaces: vec![String::new()],
            checkpoint_count: 1,
            latest_checkpoint_id: None,
            problem: None,
        };
        let found = |t: &str, m: &str| FoundThread {
            info: info(t),
            matched_checkpoint_id: m.into(),
        };
        let all = vec![found("a", "2"), found("b", "3"), found("c", "2")];
        let mut q = ThreadQuery {
            limit: 2,
            ..Default::default()
        };
        let first: Vec<_> = page(all.clone(), &q)
            .into_iter()
            .map(|f| f.info.thread_id)
            .collect();
        assert_eq!(first, ["b", "c"]);
        q.after = Some(("2".into(), "c".into()));
        let next: Vec<_> = page(all, &q)
            .into_iter()
            .map(|f| f.info.thread_id)
            .collect();
        assert_eq!(next, ["a"]);
    }
}
