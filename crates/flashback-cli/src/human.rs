//! Human-readable rendering of the JSON results (tables and short summaries).

use flashback_engine::layout::Row;
use flashback_storage::CheckpointHeader;
use serde_json::Value as Json;

const WIDTH: usize = 100;

fn s(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        other => other.to_string(),
    }
}

fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(headers.iter().map(|h| h.to_string()).collect(), &mut out);
    for r in rows {
        line(r.clone(), &mut out);
    }
    out
}

/// `flashback threads`.
pub fn threads(rows: &[Json]) -> String {
    if rows.is_empty() {
        return "no threads\n".into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let ns = r["namespaces"]
                .as_array()
                .map_or(0, |a| a.len().saturating_sub(1));
            vec![
                s(&r["thread_id"]),
                s(&r["status"]),
                s(&r["checkpoint_count"]),
                if ns > 0 { ns.to_string() } else { "-".into() },
                s(&r["latest_ts"]),
                s(&r["latest_checkpoint_id"]),
            ]
        })
        .collect();
    table(
        &[
            "THREAD",
            "STATUS",
            "CHECKPOINTS",
            "SUBGRAPHS",
            "LAST ACTIVITY",
            "LATEST CHECKPOINT",
        ],
        &body,
    )
}

/// `flashback history`.
pub fn history(items: &[Json]) -> String {
    if items.is_empty() {
        return "no checkpoints\n".into();
    }
    let body: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let m = &i["metadata"];
            vec![
                s(&i["checkpoint_id"]),
                s(&m["step"]),
                s(&m["source"]),
                s(&i["ts"]),
                if i["checkpoint_ns"] == "" {
                    "-".into()
                } else {
                    s(&i["checkpoint_ns"])
                },
                s(&i["parent_checkpoint_id"]),
            ]
        })
        .collect();
    table(
        &[
            "CHECKPOINT",
            "STEP",
            "SOURCE",
            "TIME",
            "NAMESPACE",
            "PARENT",
        ],
        &body,
    )
}

/// `flashback state`.
pub fn state(st: &Json) -> String {
    let mut out = String::new();
    let m = &st["metadata"];
    out.push_str(&format!(
        "checkpoint {}  step {}  source {}  {}\n",
        s(&st["checkpoint_id"]),
        s(&m["step"]),
        s(&m["source"]),
        s(&st["ts"])
    ));
    out.push_str(&format!("parent     {}\n", s(&st["parent_checkpoint_id"])));
    if st["checkpoint_ns"] != "" {
        out.push_str(&format!("namespace  {}\n", s(&st["checkpoint_ns"])));
    }
    out.push_str("\nvalues:\n");
    if let Some(values) = st["values"].as_object() {
        let w = values.keys().map(|k| k.len()).max().unwrap_or(0);
        for (k, v) in values {
            out.push_str(&format!("  {k:<w$}  {}\n", clip(&v.to_string(), WIDTH)));
        }
    }
    let writes = st["pending_writes"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!("\npending writes ({}):\n", writes.len()));
    for w in &writes {
        out.push_str(&format!(
            "  {} {:>3} {:<20} {}\n",
            clip(&s(&w["task_id"]), 12),
            s(&w["idx"]),
            s(&w["channel"]),
            clip(&w["value"].to_string(), WIDTH - 40)
        ));
    }
    let next: Vec<String> = st["next"]
        .as_array()
        .map_or(Vec::new(), |a| a.iter().map(s).collect());
    out.push_str(&format!(
        "\nnext: {}\n",
        if next.is_empty() {
            "(none)".into()
        } else {
            next.join(", ")
        }
    ));
    if let Some(tasks) = st["tasks"].as_array() {
        for t in tasks {
            let mut line = format!("  task {} {}", s(&t["name"]), s(&t["id"]));
            if !t["error"].is_null() {
                line.push_str(&format!("  error: {}", clip(&s(&t["error"]), 60)));
            }
            if t["interrupts"].as_array().is_some_and(|a| !a.is_empty()) {
                line.push_str(&format!(
                    "  interrupts: {}",
                    clip(&t["interrupts"].to_string(), 60)
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// One row label in `flashback graph`.
pub fn graph_label(h: &CheckpointHeader, row: &Row) -> String {
    let m = &h.metadata;
    let mut label = format!(
        "{} step {} {}",
        h.checkpoint_id,
        s(&m["step"]),
        s(&m["source"])
    );
    if !h.checkpoint_ns.is_empty() {
        label.push_str(&format!(" [{}]", h.checkpoint_ns));
    }
    if row.is_head {
        label.push_str(" (HEAD)");
    }
    label
}
