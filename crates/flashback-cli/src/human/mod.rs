//! Human-readable rendering of the API's responses (tables and short summaries). `--json`
//! prints the responses themselves.

use flashback_api::*;
use serde::Serialize;
use serde_json::Value as Json;

mod approvals;
mod diff;
mod index;
mod lists;
mod messages;
mod page;
mod repair;
mod retention;
mod search;
mod state;
mod storage;
mod topology;
mod watch;
pub use diff::diff;
pub use index::{index_advice, index_applied};
pub use lists::{history, short_id, threads, Width};
pub use page::page;
pub use repair::repaired;
pub use retention::{retention, vacuum_failed};
pub use search::{search_header, search_hit, searched};
pub use state::state;
pub use storage::storage;
pub use topology::topology;
pub use watch::watch;

/// What a line of human output fits in (unless `--wide`).
const WIDTH: usize = 100;

/// The table width a `--wide` flag asks for.
pub fn width(wide: bool) -> Width {
    if wide {
        Width::Wide
    } else {
        Width::Fit
    }
}

/// A count and its noun, singular for one: `1 checkpoint`, `3 checkpoints`, `2 copies`.
pub(crate) fn n<N: Into<u64>>(count: N, noun: &str) -> String {
    let count = count.into();
    if count == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o']))
    {
        format!("{count} {stem}ies")
    } else {
        format!("{count} {noun}s")
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".into(), T::to_string)
}

/// A JSON value on one line (strings without quotes; a value left undecoded by the decode
/// budget as its message).
fn one_line(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        Json::Object(m) if m.contains_key("$too_large") => m
            .get("$message")
            .and_then(Json::as_str)
            .map(|msg| format!("⟨{msg} with --full⟩"))
            .unwrap_or_else(|| "⟨too large⟩".into()),
        other => other.to_string(),
    }
}

/// A value as JSON on one line, or, left undecoded by the decode budget, its message.
fn shown(v: &Json) -> String {
    match v {
        Json::Object(m) if m.contains_key("$too_large") => one_line(v),
        other => other.to_string(),
    }
}

/// A serialisable enum's wire name (`finished`, `keep_latest`, …).
fn wire_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

pub(crate) use flashback_api::clip_line as clip;

fn ns_label(ns: &str) -> String {
    if ns.is_empty() {
        "-".into()
    } else {
        ns.to_owned()
    }
}

/// `! <what>: <problem>` lines for the rows that could not be read in full.
pub(crate) fn problems<'a>(
    items: impl IntoIterator<Item = (&'a str, Option<&'a String>)>,
) -> String {
    items
        .into_iter()
        .filter_map(|(what, problem)| Some(format!("! {what}: {}\n", problem?)))
        .collect()
}

pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    let head: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    line(&head, &mut out);
    for r in rows {
        line(r, &mut out);
    }
    out
}

/// Under `flashback threads`: a line about the database's memory store, if it has one.
pub fn store_note(location: &str, holds: DbHolds, store: &Option<StoreSummary>) -> String {
    let Some(s) = store else {
        return String::new();
    };
    let what = format!(
        "a LangGraph memory store ({} in {}): see `flashback store ls {location}`",
        n(s.items, "item"),
        n(s.namespaces, "namespace")
    );
    match holds {
        DbHolds::Store => format!("this database holds only {what}\n"),
        DbHolds::Checkpoints | DbHolds::Mixed => format!("\nalso {what}\n"),
    }
}

/// Under `flashback threads`: a line about an encrypted database, if it is one.
pub fn sealed_note(encryption: &Option<flashback_api::EncryptionInfo>) -> String {
    let Some(e) = encryption else {
        return String::new();
    };
    let tags = e.tags.join(", ");
    let mut out = match (&e.key_problem, e.unlocked) {
        (Some(p), _) => format!("\nencrypted ({tags}): {p}\n"),
        (None, true) => format!("\nencrypted ({tags}), decrypted with its key\n"),
        (None, false) => format!(
            "\nencrypted ({tags}): statuses and values are locked; set LANGGRAPH_AES_KEY to read them\n"
        ),
    };
    if e.mixed {
        out.push_str("plaintext values were found among the encrypted ones (LangGraph reads them silently)\n");
    }
    if let Some(foreign) = e.some_unopenable() {
        out.push_str(&format!(
            "some values are {foreign}: they stay locked, and nothing is written from them\n"
        ));
    }
    out
}

/// `flashback graph`: lanes as text, like `git log --graph`.
pub fn graph(g: &ThreadGraph) -> String {
    let mut out = render_text(&g.rows, |row| {
        // What made the checkpoint: the nodes of its step when known, else its source.
        let made = if row.ran.is_empty() {
            opt(&row.source)
        } else {
            ran_label(&row.ran)
        };
        let mut label = format!("{} step {} {made}", row.id, opt(&row.step));
        if !row.ns.is_empty() {
            label.push_str(&format!(" [{}]", row.ns));
        }
        if row.head {
            label.push_str(" (HEAD)");
        }
        if let Some(b) = &row.branch_label {
            label.push_str(&format!(" <{b}>"));
        }
        if row.fork_point {
            label.push_str(" ⑂ fork point");
        }
        if let Some(t) = &row.tokens {
            label.push_str(&format!(
                " · {} tokens ({} in, {} out)",
                t.total, t.input, t.output
            ));
        }
        if !row.models.is_empty() {
            label.push_str(&format!(" · {}", row.models.join(", ")));
        }
        // Each mark on the row of the node it is about: a task of the step after this row
        // failed or waits; one of the step that made it recovered or was resumed.
        let nodes = if row.mark_nodes.is_empty() {
            String::new()
        } else {
            format!(" {}", row.mark_nodes.join(", "))
        };
        for m in &row.marks {
            label.push_str(&match m {
                StepMark::Failed => format!(" ✕{nodes} raised (next step)"),
                StepMark::Recovered => format!(" ↻{nodes} raised, then recovered on retry"),
                StepMark::Interrupted => format!(" ⏸{nodes} waits at an interrupt"),
                StepMark::Resumed => format!(" ▶{nodes} interrupted, then resumed"),
            });
        }
        label
    });
    if let Some(t) = &g.tokens {
        out.push_str(&format!(
            "tokens: {} ({} in, {} out{}{}){}\n",
            t.total,
            t.input,
            t.output,
            if t.cached > 0 {
                format!(", {} cached", t.cached)
            } else {
                String::new()
            },
            if t.reasoning > 0 {
                format!(", {} reasoning", t.reasoning)
            } else {
                String::new()
            },
            if g.models.is_empty() {
                String::new()
            } else {
                format!(" · {}", g.models.join(", "))
            }
        ));
    }
    for w in &g.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push_str(&problems(
        g.unreadable
            .iter()
            .map(|u| (u.checkpoint_id.as_str(), Some(&u.problem))),
    ));
    out
}

/// The hooks LangChain's agent middleware run as graph nodes (`<Middleware>.<hook>`).
const HOOKS: [&str; 4] = ["before_agent", "before_model", "after_model", "after_agent"];

/// A node as people read it: a middleware hook `SummarizationMiddleware.before_model` as
/// `Summarization · before model`; any other name as it is.
fn node_label(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((owner, hook)) if !owner.is_empty() && HOOKS.contains(&hook) => {
            let owner = owner
                .strip_suffix("Middleware")
                .filter(|o| !o.is_empty())
                .unwrap_or(owner);
            format!("{owner} · {}", hook.replace('_', " "))
        }
        _ => name.to_owned(),
    }
}

/// The nodes that ran, each once with a count when it ran several times (`tools ×3`).
fn ran_label(ran: &[String]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for n in ran {
        match counts.iter_mut().find(|(m, _)| m == n) {
            Some((_, k)) => *k += 1,
            None => counts.push((n, 1)),
        }
    }
    counts
        .iter()
        .map(|(n, k)| {
            if *k > 1 {
                format!("{} ×{k}", node_label(n))
            } else {
                node_label(n)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `flashback replay`.
pub fn replay(steps: &[ReplayStep]) -> String {
    let body: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            vec![
                s.index.to_string(),
                s.checkpoint_id.clone(),
                opt(&s.step),
                opt(&s.source),
                s.tasks.next.join(", "),
                s.changed_channels.join(", "),
            ]
        })
        .collect();
    let mut out = table(
        &["#", "CHECKPOINT", "STEP", "SOURCE", "RAN", "CHANGED"],
        &body,
    );
    out.push_str(&problems(
        steps
            .iter()
            .map(|s| (s.checkpoint_id.as_str(), s.problem.as_ref())),
    ));
    out
}

/// `flashback rebuild`.
pub fn rebuild(report: &[ChannelRebuild]) -> String {
    if report.is_empty() {
        return "no written channels to check\n".into();
    }
    let mut out = String::new();
    for r in report {
        let reducer = r.reducer.as_ref().map_or_else(|| "none".into(), wire_name);
        out.push_str(&format!(
            "{:<24} {:<14} {} consistent steps{}\n",
            r.channel,
            reducer,
            r.consistent_steps,
            if r.disagreements.is_empty() {
                String::new()
            } else {
                format!(", disagrees at {}", r.disagreements.join(", "))
            }
        ));
        if !r.unreadable.is_empty() {
            out.push_str(&format!(
                "{:<24} not checked at {} (unreadable)\n",
                "",
                r.unreadable.join(", ")
            ));
        }
    }
    out
}

/// `flashback export`.
pub fn exported(r: &ExportResult) -> String {
    format!(
        "wrote {} ({}) to {}; bundle hash {}\n",
        n(r.checkpoints, "checkpoint"),
        flashback_api::units::bytes(u64::from(r.size)),
        r.path.as_deref().unwrap_or("-"),
        r.bundle_hash
    )
}

/// `flashback convert`.
pub fn converted(r: &ConvertReport, target: &str) -> String {
    let mb = |b: f64| flashback_api::units::bytes(b.max(0.0) as u64);
    let verb = if r.dry_run {
        "would convert"
    } else {
        "converted"
    };
    let mut out = format!(
        "{verb} {} ({}, {}) into {target}\n",
        n(r.threads, "thread"),
        n(r.checkpoints, "checkpoint"),
        n(r.writes, "write")
    );
    out.push_str(&format!(
        "values as LangGraph's SQLite saver stores them (every checkpoint whole): {}\n",
        mb(r.value_bytes)
    ));
    if let Some(b) = r.three_table_bytes {
        let ratio = if b > 0.0 { r.value_bytes / b } else { 0.0 };
        out.push_str(&format!(
            "in the three-table store: {} ({ratio:.1}× smaller)\n",
            mb(b)
        ));
    }
    if !r.skipped.is_empty() {
        out.push_str(&format!(
            "left out {} thread{} that cannot be converted as stored:\n",
            r.skipped.len(),
            if r.skipped.len() == 1 { "" } else { "s" }
        ));
        for s in &r.skipped {
            out.push_str(&format!("  {}: {}\n", s.thread_id, s.reason));
        }
    }
    if r.dry_run {
        out.push_str("(dry run: nothing written)\n");
    }
    out
}

/// `flashback verify`.
pub fn verify(r: &VerifyReport) -> String {
    if r.ok {
        format!(
            "OK: {}, every hash and chain link verified\n",
            n(r.checkpoints as u64, "checkpoint")
        )
    } else {
        let lines: Vec<String> = r.problems.iter().map(|p| format!("  - {p}")).collect();
        format!("TAMPERED:\n{}\n", lines.join("\n"))
    }
}

/// One checkpoint a re-run wrote.
pub fn rerun_event(e: &JobEvent) -> String {
    match e {
        JobEvent::Checkpoint {
            checkpoint_ns,
            checkpoint_id,
            step,
            source,
            ..
        } => {
            let ns = if checkpoint_ns.is_empty() {
                String::new()
            } else {
                format!(" [{checkpoint_ns}]")
            };
            format!("+ {checkpoint_id} step {} {}{ns}\n", opt(step), opt(source))
        }
        JobEvent::Output { line, .. } => format!("{line}\n"),
        JobEvent::SearchHit { .. } => search_hit(e, ""),
    }
}

/// `flashback delete`.
pub fn deleted(r: &DeleteReport) -> String {
    if r.dry_run {
        format!(
            "would delete thread {:?}: {}, {} (dry run; add --yes)\n",
            r.thread_id,
            n(r.checkpoints, "checkpoint"),
            n(r.writes, "write")
        )
    } else {
        format!(
            "deleted thread {:?}: {}, {}\n",
            r.thread_id,
            n(r.checkpoints, "checkpoint"),
            n(r.writes, "write")
        )
    }
}

/// `flashback prune`.
pub fn pruned(r: &PruneSummary) -> String {
    if let Some(why) = r.skipped {
        return format!(
            "deleted nothing: the branch was {} (it is not the one previewed); look again\n",
            why.describe()
        );
    }
    let verb = if r.dry_run { "would delete" } else { "deleted" };
    let mut out = format!(
        "{verb} {}, {}, {}",
        n(r.checkpoints.len() as u64, "checkpoint"),
        n(r.writes, "write"),
        n(r.blobs, "blob")
    );
    if r.dry_run {
        out.push_str(" (dry run; add --yes)");
    }
    out.push('\n');
    for k in &r.checkpoints {
        out.push_str(&format!(
            "  {} {} {}\n",
            k.thread_id,
            ns_label(&k.checkpoint_ns),
            k.checkpoint_id
        ));
    }
    out
}

/// `flashback activity`: one line per thread that recovered from an error on a retry.
pub fn activity(rows: &[ThreadActivity]) -> String {
    let mut out = String::new();
    for a in rows {
        if let Some(p) = &a.problem {
            out.push_str(&format!("{}: cannot be read: {p}\n", a.thread_id));
        } else if !a.recovered.is_empty() {
            out.push_str(&format!(
                "{}: raised, then recovered on retry: {}\n",
                a.thread_id,
                a.recovered.join(", ")
            ));
        }
    }
    if out.is_empty() {
        out.push_str(&format!(
            "no retried errors in {} thread{}\n",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        ));
    }
    out
}

/// `flashback copy`.
pub fn copied(r: &CopyReport, source: &str, target: &str) -> String {
    format!(
        "copied {source:?} to {target:?}: {}, {}, {}\n",
        n(r.checkpoints, "checkpoint"),
        n(r.writes, "write"),
        n(r.blobs, "blob")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middleware_hooks_read_as_what_they_are() {
        assert_eq!(
            node_label("SummarizationMiddleware.before_model"),
            "Summarization · before model"
        );
        assert_eq!(
            node_label("HumanInTheLoopMiddleware.after_model"),
            "HumanInTheLoop · after model"
        );
        assert_eq!(
            node_label("Middleware.after_agent"),
            "Middleware · after agent"
        );
        assert_eq!(node_label("tools"), "tools");
        assert_eq!(node_label("a.b"), "a.b");
        let ran: Vec<String> = ["tools", "tools", "TodoListMiddleware.after_model"]
            .map(String::from)
            .into();
        assert_eq!(ran_label(&ran), "tools ×2, TodoList · after model");
    }
}
