//! `flashback watch`: one line per change — short checkpoint id, step, relative time, the node
//! whose write produced the value, and the value — fitted to [`WIDTH`] columns; listed along
//! lineage (the head's line, then branch by branch), each group under a line naming it when
//! there are several.

use super::lists::{ago, short_id};
use super::{clip, opt, table, Width, WIDTH};
use flashback_api::{ChangeKind, Stamp, WatchChange, WatchReport};

/// Who made the change: the nodes whose writes produced it, else how the checkpoint was made.
fn by(c: &WatchChange) -> String {
    let mut nodes: Vec<&str> = Vec::new();
    for w in &c.writes {
        let n = w.node.as_deref().unwrap_or("?");
        if !nodes.contains(&n) {
            nodes.push(n);
        }
    }
    match (nodes.is_empty(), &c.source) {
        (false, _) => nodes.join(","),
        (true, Some(s)) => format!("({s})"),
        (true, None) => "-".into(),
    }
}

fn value(c: &WatchChange) -> String {
    match (&c.value, c.kind) {
        (None, _) => "(removed)".into(),
        (Some(v), ChangeKind::Appeared) => format!("+ {}", v.preview),
        (Some(v), _) => v.preview.clone(),
    }
}

/// Where each group of changes starts (index into `changes`) and its heading: the head's line,
/// then one group per other branch (the API lists them so: `WatchReport::changes`). None when
/// every change is on the head's line.
fn groups(changes: &[WatchChange], wide: bool) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut last: Option<(bool, &str)> = None;
    for (i, c) in changes.iter().enumerate() {
        let key = (
            c.on_head_branch,
            if c.on_head_branch {
                ""
            } else {
                c.branch_key.as_str()
            },
        );
        if last == Some(key) {
            continue;
        }
        last = Some(key);
        let name = if c.on_head_branch {
            "the head's line".to_owned()
        } else if wide {
            format!("branch {}", c.branch_key)
        } else {
            format!("branch {}", short_id(&c.branch_key))
        };
        out.push((i, format!("── {name} ──")));
    }
    if out.len() < 2 && changes.iter().all(|c| c.on_head_branch) {
        out.clear();
    }
    out
}

/// `flashback watch`.
pub fn watch(r: &WatchReport, width: Width) -> String {
    let wide = width == Width::Wide;
    let what = format!(
        "{} in thread {}{}: {} change{} over {} checkpoint{}",
        r.path,
        r.thread_id,
        if r.checkpoint_ns.is_empty() {
            String::new()
        } else {
            format!(" [{}]", r.checkpoint_ns)
        },
        r.changes.len(),
        if r.changes.len() == 1 { "" } else { "s" },
        r.checkpoints_read,
        if r.checkpoints_read == 1 { "" } else { "s" },
    );
    let mut out = if wide { what } else { clip(&what, WIDTH) };
    out.push('\n');
    if r.changes.is_empty() {
        out.push_str("no checkpoint has a value there\n");
        return out;
    }
    let now = Stamp::now_micros();
    let body: Vec<Vec<String>> = r
        .changes
        .iter()
        .map(|c| {
            vec![
                if wide {
                    c.checkpoint_id.clone()
                } else {
                    short_id(&c.checkpoint_id)
                },
                opt(&c.step),
                if wide { c.ts.clone() } else { ago(&c.ts, now) },
                if c.on_head_branch { "" } else { "⑂" }.into(),
                if wide { by(c) } else { clip(&by(c), 16) },
                value(c),
            ]
        })
        .collect();
    let text = table(&["CHECKPOINT", "STEP", "TIME", "", "BY", "VALUE"], &body);
    let headings = groups(&r.changes, wide);
    for (i, l) in text.lines().enumerate() {
        // Line 0 is the header; change k is on line k + 1.
        if let Some((_, h)) = headings.iter().find(|(at, _)| i > 0 && *at == i - 1) {
            out.push_str(h);
            out.push('\n');
        }
        out.push_str(&if wide { l.to_owned() } else { clip(l, WIDTH) });
        out.push('\n');
    }
    if r.changes.iter().any(|c| !c.on_head_branch) {
        out.push_str("⑂ not on the head's branch\n");
    }
    if r.unreadable > 0 {
        out.push_str(&format!(
            "{} checkpoint{} could not be read in full and {} not compared\n",
            r.unreadable,
            if r.unreadable == 1 { "" } else { "s" },
            if r.unreadable == 1 { "was" } else { "were" },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_api::{WatchValue, WatchWrite};

    fn value(preview: &str) -> Option<WatchValue> {
        Some(WatchValue {
            value: None,
            truncated: true,
            size: 9999,
            preview: preview.into(),
        })
    }

    fn change(n: u32, kind: ChangeKind, node: Option<&str>, head: bool) -> WatchChange {
        WatchChange {
            checkpoint_id: format!("1f1e641e-e3e{n}-692c-8000-344b464b8069"),
            parent_checkpoint_id: None,
            step: Some(i64::from(n)),
            source: Some(if node.is_some() { "loop" } else { "update" }.into()),
            ts: "2026-11-22T06:57:06.951790+00:00".into(),
            kind,
            branch_key: "b".into(),
            on_head_branch: head,
            value: if kind == ChangeKind::Removed {
                None
            } else {
                value(&"x".repeat(150))
            },
            writes: node
                .map(|n| WatchWrite {
                    task_id: "t".into(),
                    node: Some(n.into()),
                    idx: 0,
                    channel: "plan".into(),
                    value: value("1").expect("value"),
                })
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn one_line_per_change_fitted_to_the_width() {
        let report = WatchReport {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            path: "plan.steps".into(),
            channel: "plan".into(),
            checkpoints_read: 7,
            unreadable: 1,
            head: None,
            changes: vec![
                change(0, ChangeKind::Appeared, Some("__start__"), true),
                change(
                    2,
                    ChangeKind::Removed,
                    Some("a_rather_long_node_name"),
                    true,
                ),
                change(1, ChangeKind::Changed, None, false),
            ],
        };
        let text = watch(&report, Width::Fit);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "plan.steps in thread t: 3 changes over 7 checkpoints"
        );
        assert!(lines[1].starts_with("CHECKPOINT      STEP  TIME"), "{text}");
        // Along lineage: the head's line, then the other branch, each under its name.
        assert_eq!(lines[2], "── the head's line ──", "{text}");
        assert!(lines[3].starts_with("e3e0-692c-344b  0"), "{text}");
        assert!(lines[4].starts_with("e3e2-692c-344b  2"), "{text}");
        assert_eq!(lines[5], "── branch b ──", "{text}");
        assert!(lines[6].starts_with("e3e1-692c-344b  1"), "{text}");
        // The last words of a line (the time before them is relative to now).
        let tail = |i: usize, n: usize| {
            let w: Vec<&str> = lines[i].split_whitespace().collect();
            w[w.len() - n..].join(" ")
        };
        let xs = format!("{}…", "x".repeat(45));
        assert_eq!(tail(3, 3), format!("__start__ + {xs}"), "{text}");
        assert!(tail(6, 3).starts_with("⑂ (update) xxx"), "{text}");
        assert!(
            lines[6].ends_with('…'),
            "the value is cut to the width: {text}"
        );
        assert_eq!(tail(4, 2), "a_rather_long_n… (removed)", "{text}");
        assert!(text.contains("⑂ not on the head's branch"));
        assert!(text.contains("1 checkpoint could not be read in full"));
        for l in &lines {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        let wide = watch(&report, Width::Wide);
        assert!(wide.contains("1f1e641e-e3e0-692c-8000-344b464b8069"));
        assert!(wide.lines().any(|l| l.chars().count() > WIDTH));
        // One line only (all on the head's): no headings.
        let one = WatchReport {
            changes: vec![change(0, ChangeKind::Appeared, Some("__start__"), true)],
            ..report
        };
        assert!(!watch(&one, Width::Fit).contains("──"));
    }
}
