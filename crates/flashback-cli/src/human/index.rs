//! `flashback index`: the advice (one block per index: its state, the reads it serves, the
//! plan today and the rows it reads against the rows with the index), and what `--create` /
//! `--drop` ran or would run, with the reads timed before and after.

use super::clip;
use flashback_api::units::bytes as size;
use flashback_api::*;

/// Lines fit in this.
const WIDTH: usize = 100;

fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn state(s: IndexState) -> &'static str {
    match s {
        IndexState::Present => "present",
        IndexState::Missing => "missing",
        IndexState::Invalid => "INVALID (a failed build: create it again to rebuild)",
    }
}

/// The advice.
pub fn index_advice(r: &IndexReport) -> String {
    if !r.applicable {
        return format!("{}\n", r.summary);
    }
    let mut out = format!(
        "{} checkpoints, {}: {}\n",
        count(r.checkpoints),
        size(r.table_bytes),
        r.summary
    );
    for i in &r.indexes {
        let mark = if i.recommended { " (recommended)" } else { "" };
        out.push_str(&format!("\n{}  {}{mark}\n", i.name, state(i.state)));
        let line = |s: String| format!("{}\n", clip(&format!("    {s}"), WIDTH));
        out.push_str(&line(format!("speeds: {}", i.speeds.join("; "))));
        if let Some(e) = &i.estimate {
            out.push_str(&line(format!("{}: {}", e.read, e.plan)));
            let with = e
                .rows_with_index
                .map(|w| format!(", with the index ≈ {}", count(w)))
                .unwrap_or_default();
            let cost = e
                .cost_now
                .map(|c| format!(" (cost {c:.0})"))
                .unwrap_or_default();
            let now = match (e.uses_index, e.scans) {
                (true, _) => "uses it: reads ≈",
                (false, true) => "scans today: reads",
                (false, false) => "reads ≈",
            };
            out.push_str(&line(format!(
                "{now} {} rows{cost}{with}",
                count(e.rows_now)
            )));
        }
        match i.size_bytes {
            Some(b) => out.push_str(&line(format!("size: {}", size(b)))),
            None if i.state != IndexState::Present => out.push_str(&line(format!(
                "would take ≈ {}, ≈ {:.1} s to build",
                size(i.estimated_bytes),
                i.estimated_seconds
            ))),
            None => {}
        }
        out.push_str(&line(i.definition.clone()));
    }
    for o in &r.others {
        out.push_str(&format!(
            "\n{o}  (another flashback_ index; `--drop {o}` drops it)\n"
        ));
    }
    if !r.recommended().is_empty() {
        out.push_str("\npreview: flashback index DB --create all   (add --yes to build)\n");
    }
    out
}

/// What `--create` / `--drop` ran (or would run).
pub fn index_applied(r: &IndexApplyReport) -> String {
    let p = &r.plan;
    let (verb, done) = match p.action {
        IndexAction::Create => ("create", "created"),
        IndexAction::Drop => ("drop", "dropped"),
    };
    if p.statements.is_empty() {
        return format!("nothing to {verb}: the indexes are already as asked\n");
    }
    let mut out = match r.seconds {
        None => format!(
            "would {verb} {} (dry run; add --yes):\n",
            p.names.join(", ")
        ),
        Some(s) => format!("{done} {} in {s:.1} s:\n", p.names.join(", ")),
    };
    for s in &p.statements {
        out.push_str(&format!("  {s};\n"));
    }
    if p.action == IndexAction::Create && r.dry_run {
        out.push_str(&format!(
            "estimated: ≈ {}, ≈ {:.1} s\n",
            size(p.estimated_bytes),
            p.estimated_seconds
        ));
    }
    out.push_str(&format!("{}\n", p.note));
    for (b, a) in r.before.iter().zip(&r.after) {
        out.push_str(&clip(
            &format!(
                "{}: {:.0} ms before, {:.0} ms after ({} threads)",
                b.read, b.millis, a.millis, a.threads
            ),
            WIDTH,
        ));
        out.push('\n');
    }
    out
}
