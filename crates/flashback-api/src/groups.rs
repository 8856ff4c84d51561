//! Runs of similar threads: ids that differ only in a trailing number or id (`bulk-000001`,
//! `bulk-000002`, …, `run:1f1e953f-…`). A list holding many of them folds them into one row —
//! the app's thread list and `flashback threads` alike — so that they do not bury the rest.
//! The rule lives here once; a thread carries its group in [`ThreadSummary::group`].

use crate::ThreadSummary;
use std::collections::HashMap;

/// A group folds when at least this many threads of a list share it.
pub const GROUP_MIN: usize = 20;

/// The group a thread id belongs to: the id up to the separator (`-`, `_`, `:`, `.`, `/`)
/// after which only a number, or a hex run of 8+ digits followed by `-`-joined hex runs of 4+
/// (a UUID), trails — the first such separator from the left (`bulk-000123` → `bulk-`,
/// `user_42` → `user_`, `run:1f1e953f-7f9a-…` → `run:`); `None` when nothing trails.
pub fn group_prefix(id: &str) -> Option<&str> {
    id.char_indices()
        .filter(|&(_, c)| matches!(c, '-' | '_' | ':' | '.' | '/'))
        .map(|(i, _)| i + 1)
        .find(|&end| end > 0 && trailing_id(&id[end..]))
        .map(|end| &id[..end])
}

/// A number, or hex runs as a UUID's (the first of 8+ digits, the rest of 4+, `-`-joined).
fn trailing_id(s: &str) -> bool {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let hex = |p: &str, min: usize| p.len() >= min && p.bytes().all(|b| b.is_ascii_hexdigit());
    let mut parts = s.split('-');
    parts.next().is_some_and(|first| hex(first, 8)) && parts.all(|p| hex(p, 4))
}

/// Marks the threads of `rows` whose group at least [`GROUP_MIN`] of them share.
pub fn mark_groups(rows: &mut [ThreadSummary]) {
    let mut size: HashMap<String, usize> = HashMap::new();
    for r in rows.iter() {
        if let Some(p) = group_prefix(&r.thread_id) {
            *size.entry(p.to_owned()).or_default() += 1;
        }
    }
    for r in rows.iter_mut() {
        r.group = group_prefix(&r.thread_id)
            .filter(|p| size.get(*p).is_some_and(|&n| n >= GROUP_MIN))
            .map(str::to_owned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(group_prefix("bulk-000123"), Some("bulk-"));
        assert_eq!(group_prefix("user_42"), Some("user_"));
        assert_eq!(
            group_prefix("run:1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3"),
            Some("run:")
        );
        assert_eq!(group_prefix("a-b-123"), Some("a-b-"));
        assert_eq!(group_prefix("chat-tools"), None);
        assert_eq!(group_prefix("42"), None);
        assert_eq!(group_prefix("forked"), None);
        assert_eq!(group_prefix("-12"), Some("-"));
        assert_eq!(group_prefix("x-"), None);
        assert_eq!(group_prefix("é-1"), Some("é-"));
        assert_eq!(group_prefix("job-deadbeef"), Some("job-"));
        assert_eq!(group_prefix("job-deadbee"), None);
        assert_eq!(group_prefix("job-deadbeef-12"), Some("job-deadbeef-"));
    }

    fn summary(id: &str) -> ThreadSummary {
        ThreadSummary {
            thread_id: id.into(),
            namespaces: vec![String::new()],
            checkpoint_count: 1,
            latest_checkpoint_id: None,
            latest_ts: None,
            latest_step: None,
            status: None,
            interrupts: Vec::new(),
            error: None,
            next: Vec::new(),
            problem: None,
            locked: false,
            server: None,
            tokens: None,
            group: None,
            matched_checkpoint_id: None,
            cursor: None,
        }
    }

    #[test]
    fn only_groups_of_twenty_fold() {
        let mut rows: Vec<ThreadSummary> = (0..GROUP_MIN)
            .map(|i| summary(&format!("bulk-{i:06}")))
            .chain((0..GROUP_MIN - 1).map(|i| summary(&format!("user_{i}"))))
            .chain([summary("chat")])
            .collect();
        mark_groups(&mut rows);
        let grouped = |p: &str| {
            rows.iter()
                .filter(|r| r.group.as_deref() == Some(p))
                .count()
        };
        assert_eq!(grouped("bulk-"), GROUP_MIN);
        assert_eq!(grouped("user_"), 0);
        assert!(rows.iter().filter(|r| r.group.is_none()).count() == GROUP_MIN);
    }
}
