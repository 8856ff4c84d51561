//! Checkpoint ids as people type them: in full, or in the short form the tables print
//! (`1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3` → `7f9a-6f8b-3e7c`), or as a unique start or end of
//! the id — resolved against the thread's checkpoints, so what `history` prints, `state
//! --checkpoint`, `diff`, `fork --checkpoint` and the others take.

use crate::human::short_id;
use flashback_api::{Api, ApiError, HistoryRequest};

/// Whether `id` is a whole UUID (no lookup needed).
fn whole(id: &str) -> bool {
    id.len() == 36 && id.split('-').map(str::len).eq([8, 4, 4, 4, 12])
}

/// The checkpoint of `thread` (in namespace `ns` when given) that `id` names. A whole id is
/// taken as it is; one that names no checkpoint is passed on, for the command to say it is not
/// found; one that names several is refused, with them.
pub async fn resolve(
    api: &Api,
    db: &str,
    thread: &str,
    ns: Option<&str>,
    id: &str,
) -> Result<String, ApiError> {
    if whole(id) || id.is_empty() {
        return Ok(id.to_owned());
    }
    let history = api
        .thread_history(HistoryRequest {
            db: db.to_owned(),
            thread_id: thread.to_owned(),
            checkpoint_ns: ns.map(str::to_owned),
            limit: None,
            before: None,
            filter: Default::default(),
        })
        .await?;
    if history.iter().any(|h| h.checkpoint_id == id) {
        return Ok(id.to_owned());
    }
    let mut found: Vec<&str> = history
        .iter()
        .map(|h| h.checkpoint_id.as_str())
        .filter(|c| short_id(c) == id || (id.len() >= 4 && (c.starts_with(id) || c.ends_with(id))))
        .collect();
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [] => Ok(id.to_owned()),
        [one] => Ok((*one).to_owned()),
        many => Err(ApiError::invalid(format!(
            "checkpoint {id:?} is ambiguous in thread {thread:?}: it matches {} checkpoints ({}); give more of it",
            many.len(),
            many.iter().take(4).map(|c| short_id(c)).collect::<Vec<_>>().join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::whole;

    #[test]
    fn whole_ids_need_no_lookup() {
        assert!(whole("1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3"));
        assert!(!whole("7f9a-6f8b-3e7c"));
        assert!(!whole("1f1e953f7f9a6f8b80023e7c14c2fed3aaaa"));
    }
}
