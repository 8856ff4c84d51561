//! `flashback threads` and `flashback history` as tables that fit [`WIDTH`] columns: short
//! checkpoint ids, long thread ids and namespaces clipped, times relative to now ("3 min ago").
//! `--wide` prints every id and timestamp in full.

use super::{clip, ns_label, opt, problems, table, wire_name, WIDTH};
use flashback_api::{HistoryEntry, Stamp, ThreadSummary};
use std::collections::HashMap;

/// How much of each value a table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Fit [`WIDTH`] columns.
    Fit,
    /// Everything in full.
    Wide,
}

/// The widest a thread id or namespace gets in a fitted table.
const KEY_WIDTH: usize = 28;

/// A checkpoint id's distinctive parts (`1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3` →
/// `7f9a-6f8b-3e7c`: the time's middle and low parts and the start of the random node), as the
/// app's DAG shows it; other ids are clipped.
pub fn short_id(id: &str) -> String {
    let parts: Vec<&str> = id.split('-').collect();
    match parts.as_slice() {
        [_, mid, low, _, node] if node.len() >= 4 => format!("{mid}-{low}-{}", &node[..4]),
        _ => clip(id, 14),
    }
}

/// `ts` relative to `now` (microseconds): "just now", "42 s ago", "3 min ago", "5 h ago",
/// "12 d ago", else the date; in the future (clock skew) "in 3 min"; an unreadable `ts` as is.
pub fn ago(ts: &str, now: i64) -> String {
    let Stamp::At { micros } = Stamp::parse(ts) else {
        return if ts.is_empty() {
            "-".into()
        } else {
            clip(ts, 20)
        };
    };
    let secs = (now - micros) / 1_000_000;
    let (n, future) = (secs.unsigned_abs(), secs < 0);
    let text = match n {
        0..=4 => return "just now".into(),
        5..=59 => format!("{n} s"),
        60..=3_599 => format!("{} min", n / 60),
        3_600..=86_399 => format!("{} h", n / 3_600),
        86_400..=2_591_999 => format!("{} d", n / 86_400),
        _ => return ts.get(..10).unwrap_or(ts).to_owned(),
    };
    if future {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// `flashback threads`; `recovered`: each thread's tasks that raised, then recovered on a
/// retry (from `thread_activity`; a thread missing from it is not marked). Runs of similar ids
/// (`ThreadSummary::group`) are one row each unless `unfold`.
pub fn threads(
    rows: &[ThreadSummary],
    recovered: &HashMap<String, Vec<String>>,
    width: Width,
    unfold: bool,
) -> String {
    if rows.is_empty() {
        return "no threads\n".into();
    }
    let now = Stamp::now_micros();
    let wide = width == Width::Wide;
    // A server's folder: the server's own status, graph and runs too (as Studio lists them).
    let served = rows.iter().any(|r| r.server.is_some());
    // Token usage, when any thread's model calls carried it.
    let tokens = rows.iter().any(|r| r.tokens.is_some());
    let row = |r: &ThreadSummary| thread_row(r, recovered, now, wide, tokens, served);
    let mut folded = 0;
    let body: Vec<Vec<String>> = folds(rows, unfold)
        .into_iter()
        .map(|e| match e {
            Entry::Thread(r) => row(r),
            Entry::Group(prefix, members) => {
                folded += members.len();
                group_row(prefix, &members, now, wide, tokens, served)
            }
        })
        .collect();
    let headers = ["THREAD", "STATUS", "CHECKPOINTS", "SUBGRAPHS"];
    let last = if wide {
        ["LAST ACTIVITY", "LATEST CHECKPOINT"]
    } else {
        ["ACTIVE", "LATEST"]
    };
    // Fitted, only the runs: STATUS says the server's status from the checkpoints, and the
    // graph is in `--wide`.
    let server = match (served, wide) {
        (true, true) => &["SERVER", "GRAPH", "RUNS"][..],
        (true, false) => &["RUNS"][..],
        (false, _) => &[][..],
    };
    let tokens_header: &[&str] = if tokens { &["TOKENS"] } else { &[] };
    let mut out = table(
        &[&headers[..], &last[..], tokens_header, server].concat(),
        &body,
    );
    if folded > 0 {
        out.push_str(&format!(
            "{folded} threads with similar ids are folded into `PREFIX*` rows (--unfold lists them)\n"
        ));
    }
    out.push_str(&problems(
        rows.iter()
            .map(|r| (r.thread_id.as_str(), r.problem.as_ref())),
    ));
    if served
        && !wide
        && rows
            .iter()
            .any(|r| server_columns(r, false)[0].contains('✕'))
    {
        out.push_str("RUNS ✕: one of the thread's runs failed (--wide: the server's status, graph and runs)\n");
    }
    for r in rows {
        if let Some(nodes) = recovered.get(&r.thread_id).filter(|n| !n.is_empty()) {
            let mut nodes = nodes.clone();
            nodes.dedup();
            out.push_str(&format!(
                "↻ {}: raised, then recovered on retry ({})\n",
                r.thread_id,
                nodes.join(", ")
            ));
        }
    }
    fitted(out, width)
}

/// A row of the table: one thread, or a run of similar ids folded into one row.
enum Entry<'a> {
    Thread(&'a ThreadSummary),
    Group(&'a str, Vec<&'a ThreadSummary>),
}

/// `rows` in order, each group at its first member's place holding all its members.
fn folds(rows: &[ThreadSummary], unfold: bool) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry<'_>> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for r in rows {
        match r.group.as_deref().filter(|_| !unfold) {
            Some(g) => match at.get(g) {
                Some(&i) => {
                    if let Entry::Group(_, members) = &mut out[i] {
                        members.push(r);
                    }
                }
                None => {
                    at.insert(g, out.len());
                    out.push(Entry::Group(g, vec![r]));
                }
            },
            None => out.push(Entry::Thread(r)),
        }
    }
    out
}

/// One thread's row.
fn thread_row(
    r: &ThreadSummary,
    recovered: &HashMap<String, Vec<String>>,
    now: i64,
    wide: bool,
    tokens: bool,
    served: bool,
) -> Vec<String> {
    let subgraphs = r.namespaces.len().saturating_sub(1);
    let status = status_word(r);
    let status = match recovered.get(&r.thread_id) {
        Some(nodes) if !nodes.is_empty() => format!("{status} ↻"),
        _ => status,
    };
    let latest = r.latest_checkpoint_id.as_deref().unwrap_or("-");
    let mut row = vec![
        if wide {
            r.thread_id.clone()
        } else {
            clip(&r.thread_id, KEY_WIDTH)
        },
        status,
        r.checkpoint_count.to_string(),
        if subgraphs > 0 {
            subgraphs.to_string()
        } else {
            "-".into()
        },
        match (&r.latest_ts, wide) {
            (Some(ts), true) => ts.clone(),
            (Some(ts), false) => ago(ts, now),
            (None, _) => "-".into(),
        },
        if wide {
            latest.to_owned()
        } else {
            short_id(latest)
        },
    ];
    if tokens {
        row.push(
            r.tokens
                .map_or_else(|| "-".into(), |t| token_count(t.total)),
        );
    }
    if served {
        row.extend(server_columns(r, wide));
    }
    row
}

/// A folded run's row: `bulk-* ×40`, its statuses counted, checkpoints and tokens summed, the
/// newest activity.
fn group_row(
    prefix: &str,
    members: &[&ThreadSummary],
    now: i64,
    wide: bool,
    tokens: bool,
    served: bool,
) -> Vec<String> {
    let mut statuses: Vec<(String, usize)> = Vec::new();
    for r in members {
        let s = status_word(r);
        match statuses.iter_mut().find(|(w, _)| *w == s) {
            Some((_, n)) => *n += 1,
            None => statuses.push((s, 1)),
        }
    }
    statuses.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let checkpoints: u64 = members.iter().map(|r| u64::from(r.checkpoint_count)).sum();
    let latest = members.iter().filter_map(|r| r.latest_ts.as_deref()).max();
    let mut row = vec![
        format!("{prefix}* ×{}", members.len()),
        statuses
            .iter()
            .map(|(w, n)| format!("{n} {w}"))
            .collect::<Vec<_>>()
            .join(", "),
        checkpoints.to_string(),
        "-".into(),
        match (latest, wide) {
            (Some(ts), true) => ts.to_owned(),
            (Some(ts), false) => ago(ts, now),
            (None, _) => "-".into(),
        },
        "-".into(),
    ];
    if tokens {
        let total: u64 = members
            .iter()
            .filter_map(|r| r.tokens.map(|t| u64::from(t.total)))
            .sum();
        row.push(if total > 0 {
            token_count(u32::try_from(total).unwrap_or(u32::MAX))
        } else {
            "-".into()
        });
    }
    if served {
        let n = server_columns(members[0], wide).len();
        row.extend(std::iter::repeat_n("-".to_owned(), n));
    }
    row
}

/// A thread's status in one word (`unreadable`, `locked` or `-` when none is known).
fn status_word(r: &ThreadSummary) -> String {
    match (&r.status, &r.problem) {
        (Some(s), _) => wire_name(s),
        (None, Some(_)) => "unreadable".into(),
        (None, None) if r.locked => "locked".into(),
        (None, None) => "-".into(),
    }
}

/// A token count as people read it: `950`, `12.3k`, `4.1M`.
pub(super) fn token_count(n: u32) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", f64::from(n) / 1e3),
        _ => format!("{:.1}M", f64::from(n) / 1e6),
    }
}

/// The server's status (`wide`), graph and runs of a thread (`3 (1 error)`).
fn server_columns(r: &ThreadSummary, wide: bool) -> Vec<String> {
    let Some(s) = &r.server else {
        return vec!["-".into(); if wide { 3 } else { 1 }];
    };
    let failed = s
        .runs
        .iter()
        .filter(|run| run.status.as_deref() == Some("error"))
        .count();
    let runs = match (s.runs.len(), failed, wide) {
        (0, _, _) => "-".to_owned(),
        (n, 0, _) => n.to_string(),
        (n, f, true) => format!("{n} ({f} failed)"),
        (n, _, false) => format!("{n} ✕"),
    };
    match wide {
        true => vec![opt(&s.status), opt(&s.graph_id), runs],
        false => vec![runs],
    }
}

/// `flashback history`.
/// `nodes`: what ran to make each checkpoint, by `(namespace, id)` (the graph's rows).
pub fn history(
    items: &[HistoryEntry],
    nodes: &std::collections::HashMap<(String, String), Vec<String>>,
    width: Width,
) -> String {
    if items.is_empty() {
        return "no checkpoints\n".into();
    }
    let now = Stamp::now_micros();
    let wide = width == Width::Wide;
    let id = |id: &str| {
        if wide {
            id.to_owned()
        } else {
            short_id(id)
        }
    };
    let body: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let ns = ns_label(&i.checkpoint_ns);
            let ran = nodes
                .get(&(i.checkpoint_ns.clone(), i.checkpoint_id.clone()))
                .filter(|r| !r.is_empty())
                .map_or_else(|| "-".into(), |r| super::ran_label(r));
            vec![
                id(&i.checkpoint_id),
                opt(&i.step),
                opt(&i.source),
                if wide { ran } else { clip(&ran, KEY_WIDTH) },
                if wide { i.ts.clone() } else { ago(&i.ts, now) },
                if wide { ns } else { clip(&ns, KEY_WIDTH) },
                i.parent_checkpoint_id
                    .as_deref()
                    .map_or_else(|| "-".into(), id),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "CHECKPOINT",
            "STEP",
            "SOURCE",
            "NODE",
            "TIME",
            "NAMESPACE",
            "PARENT",
        ],
        &body,
    );
    out.push_str(&problems(
        items
            .iter()
            .map(|i| (i.checkpoint_id.as_str(), i.problem.as_ref())),
    ));
    fitted(out, width)
}

/// A fitted table's lines clipped to [`WIDTH`] (a problem line can be longer than the table),
/// with a pointer to `--wide` when the table shortened anything.
fn fitted(text: String, width: Width) -> String {
    if width == Width::Wide {
        return text;
    }
    let mut out: String = text
        .lines()
        .map(|l| clip(l, WIDTH) + "\n")
        .collect::<Vec<_>>()
        .concat();
    out.push_str("(short ids and relative times: --wide for full ones)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_keep_the_distinctive_parts() {
        assert_eq!(
            short_id("1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3"),
            "7f9a-6f8b-3e7c"
        );
        assert_eq!(short_id("not-a-uuid"), "not-a-uuid");
        assert_eq!(short_id("a-very-long-checkpoint-id-x"), "a-very-long-c…");
    }

    #[test]
    fn times_are_relative_to_now() {
        let now = match Stamp::parse("2026-11-26T12:00:00+00:00") {
            Stamp::At { micros } => micros,
            Stamp::Unreadable(_) => unreachable!(),
        };
        assert_eq!(ago("2026-11-26T11:59:58.5+00:00", now), "just now");
        assert_eq!(ago("2026-11-26T11:59:18+00:00", now), "42 s ago");
        assert_eq!(ago("2026-11-26T11:57:00+00:00", now), "3 min ago");
        assert_eq!(ago("2026-11-26T13:00:00+01:00", now), "just now");
        assert_eq!(ago("2026-11-26T07:00:00+00:00", now), "5 h ago");
        assert_eq!(ago("2026-11-14T12:00:00+00:00", now), "12 d ago");
        assert_eq!(ago("2025-01-02T03:04:05+00:00", now), "2025-01-02");
        assert_eq!(ago("2026-11-26T12:03:00+00:00", now), "in 3 min");
        assert_eq!(ago("not a time", now), "not a time");
        assert_eq!(ago("", now), "-");
    }
}
