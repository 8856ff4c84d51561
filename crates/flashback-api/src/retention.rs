//! Retention across the whole database (`prune_database`): choose threads by id, by the age of
//! their latest checkpoint and by status, prune them (the storage's measured prune:
//! `keep_latest` with `keep_last`, or `delete`) in short writing transactions, and optionally
//! VACUUM.
//!
//! The choice reads what the thread list reads: every thread's keys (one aggregate), then a
//! chunk of threads at a time their marks (`SaverMaintenance::thread_marks`) and then their
//! thread-list summaries (`summaries::read_chunk`), giving `checkpoint.ts` (the age) and the
//! status. Only the chosen threads are kept in memory. The judgment is made outside the
//! writing transactions, so each chosen thread carries the mark read before it was judged:
//! the storage reads it again inside the transaction that prunes the thread and skips the
//! thread when it changed (LangGraph wrote to it since), so nothing is pruned on a stale
//! judgment. The report says per thread what went, or why it was skipped.
//!
//! A VACUUM runs after the prune committed: its failure does not undo the prune, so it is
//! reported as data beside the prune's report (`vacuum_error`).

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::summaries;
use crate::types::{
    RetentionFilters, RetentionReport, RetentionRequest, RetentionThread, RetentionTotals,
    StatusFilter, VacuumSummary,
};
use crate::Api;
use flashback_engine::ThreadStatus;
use flashback_storage::maintenance::{
    Guarded, Mark, PruneStrategy, SaverMaintenance, SkipReason, ThreadPrune,
};
use flashback_storage::memory::Stamp;
use flashback_storage::{CheckpointStore, ThreadInfo};
use std::collections::{HashMap, HashSet};

/// Threads whose latest checkpoint is read per batch while choosing.
const CHOOSE_CHUNK: usize = 1_000;

impl Api {
    /// Prune the threads chosen by id, age and status (or preview it): short writing
    /// transactions, each re-checking its threads are still as judged, then an optional
    /// VACUUM outside them.
    pub async fn prune_database(&self, req: RetentionRequest) -> ApiResult<RetentionReport> {
        let age = req.older_than.as_deref().map(parse_age).transpose()?;
        if req.thread_ids.is_empty() && age.is_none() && req.statuses.is_empty() {
            return Err(ApiError::invalid(
                "choose what to prune: thread ids, an age (--older-than 30d) or statuses \
                 (--status failed); nothing is pruned by default",
            ));
        }
        let keep_last =
            match (req.strategy, req.keep_last) {
                (_, Some(0)) => {
                    return Err(ApiError::invalid(
                        "keep_last must be at least 1 (the head of each namespace stays)",
                    ))
                }
                (PruneStrategy::Delete, Some(_)) => return Err(ApiError::invalid(
                    "keep_last goes with the keep_latest strategy; delete removes whole threads",
                )),
                (PruneStrategy::Delete, None) => 0,
                (PruneStrategy::KeepLatest, n) => n.unwrap_or(1),
            };
        let session = self.session(&req.db)?;
        let saver = self.writable(&req.db).await?;
        let vacuum_preview = if req.vacuum {
            let preview = saver.vacuum_preview().await?;
            if let Some(why) = preview
                .refusal()
                .filter(|_| !req.force_vacuum && !req.dry_run)
            {
                return Err(ApiError::new(ErrorCode::Locked, why));
            }
            Some(preview)
        } else {
            None
        };
        let cutoff = age.map(|a| Stamp::now_micros().saturating_sub(a));
        let chosen = choose(
            session.store.as_ref(),
            saver.as_ref(),
            &req.thread_ids,
            cutoff,
            &req.statuses,
        )
        .await?;
        let guards: Vec<Guarded> = chosen
            .iter()
            .filter_map(|c| {
                c.mark.clone().map(|mark| Guarded {
                    thread_id: c.thread_id.clone(),
                    mark: Some(mark),
                })
            })
            .collect();
        let run = saver
            .prune_measured(&guards, req.strategy, keep_last as usize, req.dry_run)
            .await?;
        let mut by_id: HashMap<String, _> = run
            .threads
            .into_iter()
            .map(|p| (p.thread_id.clone(), p))
            .collect();
        let mut totals = RetentionTotals::default();
        let threads: Vec<RetentionThread> = chosen
            .into_iter()
            .map(|c| {
                let p = by_id.remove(&c.thread_id).unwrap_or_else(|| ThreadPrune {
                    skipped: Some(SkipReason::Changed),
                    ..Default::default()
                });
                totals.threads += 1;
                totals.skipped += u64::from(p.skipped.is_some());
                totals.checkpoints += p.checkpoints;
                totals.kept += p.kept;
                totals.writes += p.writes;
                totals.blobs += p.blobs;
                totals.bytes += p.bytes;
                RetentionThread {
                    thread_id: c.thread_id,
                    status: c.status,
                    last_checkpoint_ts: c.ts,
                    checkpoints: p.checkpoints,
                    kept: p.kept,
                    writes: p.writes,
                    blobs: p.blobs,
                    bytes: p.bytes,
                    skipped: p.skipped,
                }
            })
            .collect();
        let (vacuum, vacuum_error) = if req.vacuum && !req.dry_run {
            match saver.vacuum(req.force_vacuum).await {
                Ok(v) => (
                    Some(VacuumSummary {
                        bytes_before: v.bytes_before,
                        bytes_after: v.bytes_after,
                        bytes_returned: v.bytes_before.saturating_sub(v.bytes_after),
                    }),
                    None,
                ),
                Err(e) => (None, Some(ApiError::from(e).message)),
            }
        } else {
            (None, None)
        };
        Ok(RetentionReport {
            cutoff: cutoff.map(iso),
            filters: RetentionFilters {
                thread_ids: req.thread_ids,
                older_than: req.older_than,
                statuses: req.statuses,
                strategy: req.strategy,
                keep_last,
            },
            threads,
            totals,
            vacuum,
            vacuum_preview,
            vacuum_error,
            transactions: run.transactions,
            longest_transaction_ms: run.longest_ms,
            dry_run: req.dry_run,
        })
    }
}

/// An age (`90m`, `12h`, `30d`, `2w`, `45s`) in microseconds.
pub(crate) fn parse_age(text: &str) -> ApiResult<i64> {
    let bad = || {
        ApiError::invalid(format!(
            "older than {text:?} is not an age: give a whole number and a unit (s, m, h, d or \
             w), e.g. 90m, 12h, 30d or 2w"
        ))
    };
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (digits, unit) = t.split_at(split);
    let n: i64 = digits.parse().map_err(|_| bad())?;
    let seconds: i64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(bad()),
    };
    if n == 0 {
        return Err(ApiError::invalid(format!(
            "older than {text:?} would choose every thread: give an age above zero"
        )));
    }
    n.checked_mul(seconds)
        .and_then(|s| s.checked_mul(1_000_000))
        .ok_or_else(bad)
}

/// Microseconds since the epoch as ISO 8601 in UTC.
fn iso(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let sub = u32::try_from(micros.rem_euclid(1_000_000)).unwrap_or(0);
    flashback_storage::pyfmt::isoformat_utc(secs, sub)
}

/// A thread chosen, with what the report shows of it and its mark read before it was judged
/// (`None`: it changed while being judged, so it is skipped unjudged).
struct Chosen {
    thread_id: String,
    mark: Option<Mark>,
    status: Option<ThreadStatus>,
    ts: Option<String>,
}

fn matches(filter: StatusFilter, status: ThreadStatus) -> bool {
    matches!(
        (filter, status),
        (StatusFilter::Finished, ThreadStatus::Finished)
            | (StatusFilter::Failed, ThreadStatus::Failed)
            | (StatusFilter::Interrupted, ThreadStatus::Interrupted)
            | (StatusFilter::Pending, ThreadStatus::Pending)
    )
}

/// The threads that pass every condition given, by id: each thread's status and time are its
/// thread-list summary's, read a chunk at a time after the chunk's marks (so any write after
/// the mark, seen by the judgment or not, changes it).
async fn choose(
    store: &dyn CheckpointStore,
    saver: &dyn SaverMaintenance,
    ids: &[String],
    cutoff: Option<i64>,
    statuses: &[StatusFilter],
) -> ApiResult<Vec<Chosen>> {
    let mut threads = store.list_threads().await?;
    if !ids.is_empty() {
        let want: HashSet<&str> = ids.iter().map(String::as_str).collect();
        threads.retain(|t| want.contains(t.thread_id.as_str()));
        let found: HashSet<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
        let missing: Vec<&str> = ids
            .iter()
            .map(String::as_str)
            .filter(|t| !found.contains(t))
            .collect();
        if !missing.is_empty() {
            return Err(ApiError::not_found(format!(
                "no such thread: {}",
                missing.join(", ")
            )));
        }
    }
    let mut out = Vec::new();
    let mut rest = threads.into_iter();
    loop {
        let chunk: Vec<ThreadInfo> = rest.by_ref().take(CHOOSE_CHUNK).collect();
        if chunk.is_empty() {
            break;
        }
        let chunk_ids: Vec<String> = chunk.iter().map(|t| t.thread_id.clone()).collect();
        let mut marks = saver.thread_marks(&chunk_ids).await?;
        // The list was read before the marks: a thread written to in between is judged on
        // a stale head (the summary reads the checkpoint the list named), so it is not
        // judged at all but skipped, as one written to after judging would be.
        let (chunk, stale): (Vec<ThreadInfo>, Vec<ThreadInfo>) = chunk.into_iter().partition(|t| {
            marks
                .get(&t.thread_id)
                .is_some_and(|m| m.checkpoints() == t.checkpoint_count)
        });
        out.extend(stale.into_iter().map(|t| Chosen {
            thread_id: t.thread_id,
            mark: None,
            status: None,
            ts: None,
        }));
        let read = summaries::read_chunk(store, chunk).await?;
        for s in summaries::summarize_chunk(read, store.schema().dialect).await? {
            let old = cutoff.is_none_or(|cut| {
                s.latest_ts.as_deref().is_some_and(
                    |ts| matches!(Stamp::parse(ts), Stamp::At { micros } if micros < cut),
                )
            });
            let wanted = statuses.is_empty()
                || s.status
                    .is_some_and(|st| statuses.iter().any(|f| matches(*f, st)));
            if old && wanted {
                out.push(Chosen {
                    mark: marks.remove(&s.thread_id),
                    thread_id: s.thread_id,
                    status: s.status,
                    ts: s.latest_ts,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn ages_parse_and_bad_ones_say_why_in_one_line() {
        assert_eq!(parse_age("90m").unwrap(), 90 * 60 * 1_000_000);
        assert_eq!(parse_age("12h").unwrap(), 12 * 3_600 * 1_000_000);
        assert_eq!(parse_age("30d").unwrap(), 30 * 86_400 * 1_000_000);
        assert_eq!(parse_age("2w").unwrap(), 14 * 86_400 * 1_000_000);
        for bad in [
            "",
            "30",
            "d",
            "30x",
            "3.5d",
            "-1d",
            "30 d",
            "99999999999999999999w",
            "0d",
        ] {
            let e = parse_age(bad).expect_err(bad);
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
            assert!(!e.message.contains('\n'), "{bad}: {}", e.message);
        }
    }
}
