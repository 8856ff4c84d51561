//! `flashback prune` across the database (`--older-than`, `--status`, `--keep-last`): what
//! goes, per thread and in all, for people.

use super::{clip, n, opt, table, wire_name};
use flashback_api::*;

/// Threads listed in the table; `--json` has every one.
const ROWS: usize = 100;

use flashback_api::units::bytes as size;

/// The report: a summary line, the threads skipped, what was asked, one row per thread, the
/// VACUUM (its preview, outcome or failure).
pub fn retention(r: &RetentionReport) -> String {
    let t = &r.totals;
    let verb = if r.dry_run { "would prune" } else { "pruned" };
    let mut out = format!(
        "{verb} {}: {} go ({} kept), {}, {}, {}",
        n(t.threads - t.skipped, "thread"),
        n(t.checkpoints, "checkpoint"),
        t.kept,
        n(t.writes, "write"),
        n(t.blobs, "blob"),
        size(t.bytes)
    );
    if r.dry_run {
        out.push_str(" (dry run; add --yes)");
    } else if r.transactions > 0 {
        out.push_str(&format!(
            " (committed in {}, the longest holding the write lock {} ms)",
            n(r.transactions, "transaction"),
            r.longest_transaction_ms
        ));
    }
    out.push('\n');
    if t.skipped > 0 {
        out.push_str(&format!(
            "skipped {} of the {} threads chosen: LangGraph wrote to them after they were chosen \
             (or they were gone), so they no longer match as judged\n",
            t.skipped, t.threads
        ));
    }
    let f = &r.filters;
    let mut asked = Vec::new();
    if let (Some(age), Some(cutoff)) = (&f.older_than, &r.cutoff) {
        asked.push(format!("older than {age} (before {cutoff})"));
    }
    if !f.statuses.is_empty() {
        let s: Vec<String> = f.statuses.iter().map(wire_name).collect();
        asked.push(format!("status {}", s.join(", ")));
    }
    if !f.thread_ids.is_empty() {
        asked.push(format!("{} named", n(f.thread_ids.len() as u64, "thread")));
    }
    asked.push(match f.strategy {
        PruneStrategy::Delete => "delete whole threads".to_owned(),
        PruneStrategy::KeepLatest => format!(
            "keep the latest {} per namespace",
            if f.keep_last == 1 {
                "checkpoint".to_owned()
            } else {
                format!("{} checkpoints", f.keep_last)
            }
        ),
    });
    out.push_str(&format!("{}\n", asked.join("; ")));
    if !r.threads.is_empty() {
        let rows: Vec<Vec<String>> = r
            .threads
            .iter()
            .take(ROWS)
            .map(|th| {
                vec![
                    clip(&th.thread_id, 40),
                    th.status.as_ref().map_or_else(|| "-".into(), wire_name),
                    opt(&th.last_checkpoint_ts),
                    th.checkpoints.to_string(),
                    th.kept.to_string(),
                    th.writes.to_string(),
                    th.blobs.to_string(),
                    match th.skipped {
                        Some(why) => format!("skipped: {}", why.describe()),
                        None => size(th.bytes),
                    },
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "THREAD",
                "STATUS",
                "LAST CHECKPOINT",
                "GO",
                "KEPT",
                "WRITES",
                "BLOBS",
                "BYTES",
            ],
            &rows,
        ));
        if r.threads.len() > ROWS {
            out.push_str(&format!(
                "… and {} more threads (--json lists every one)\n",
                r.threads.len() - ROWS
            ));
        }
    }
    if let (Some(p), true) = (&r.vacuum_preview, r.dry_run) {
        out.push_str(&vacuum_preview(p));
    }
    if let Some(v) = &r.vacuum {
        out.push_str(&format!(
            "vacuum: {} → {}, {} returned\n",
            size(v.bytes_before),
            size(v.bytes_after),
            size(v.bytes_returned)
        ));
    }
    if let Some(e) = &r.vacuum_error {
        out.push_str(&format!("{}\n", vacuum_failed(e)));
    }
    out
}

/// What a VACUUM would do, for the dry run.
fn vacuum_preview(p: &VacuumPreview) -> String {
    let mut out = if p.blocks_writers {
        format!(
            "vacuum: rewrites the {} file and stops every writer for about {} s (a LangGraph \
             program waits 5 s, then fails with \"database is locked\")\n",
            size(p.bytes),
            p.seconds
        )
    } else {
        format!(
            "vacuum: VACUUM ANALYZE of the saver's tables ({}); writers go on meanwhile\n",
            size(p.bytes)
        )
    };
    if let Some(why) = p.refusal() {
        out.push_str(&format!("{why}\n"));
    }
    out
}

/// The line saying a VACUUM failed after the prune committed.
pub fn vacuum_failed(error: &str) -> String {
    format!(
        "VACUUM failed: {error} — the prune above is committed and the database is consistent; \
         run the same `flashback prune … --vacuum --yes` again once the cause is gone (disk \
         space freed, the program stopped)"
    )
}
