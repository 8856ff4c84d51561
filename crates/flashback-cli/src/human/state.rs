//! `flashback state`: the thread's status and which view this is, a checkpoint's values (a
//! message list as one readable line per message; internal channels folded), its pending writes
//! by node and its next tasks (approvals as cards, other interrupts in full).

use super::messages::message_parts;
use super::{clip, one_line, opt, shown, WIDTH};
use flashback_api::{CheckpointDetail, TaskStatus, ThreadStatus};
use serde_json::Value as Json;

/// The nodes whose writes these are, each once in task order (`agent`, `input/update`).
fn writers(groups: &[flashback_api::WriteGroup]) -> String {
    let mut names: Vec<String> = Vec::new();
    for g in groups {
        let name = match (&g.node, g.task_id.as_str()) {
            (Some(node), _) => super::node_label(node),
            (None, "00000000-0000-0000-0000-000000000000") => "input/update".to_owned(),
            (None, id) => format!("task {}", clip(id, 8)),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join(", ")
}

/// The status line: what the snapshot says of the thread, and which view it is.
fn status_line(d: &CheckpointDetail) -> String {
    let waiting: usize = d.tasks.tasks.iter().map(|t| t.interrupts.len()).sum();
    let status = match d.status {
        // No tasks can be derived from a document that does not read.
        _ if d.problem.is_some() => "unknown (the checkpoint cannot be read)".to_owned(),
        ThreadStatus::Finished => "finished".to_owned(),
        ThreadStatus::Failed => "failed".to_owned(),
        ThreadStatus::Pending => format!("pending (next: {})", d.tasks.next.join(", ")),
        ThreadStatus::Interrupted => format!(
            "waiting for a human ({waiting} interrupt{})",
            if waiting == 1 { "" } else { "s" }
        ),
    };
    let view = if d.live {
        let nodes: Vec<&str> = d.applied.iter().filter_map(|a| a.node.as_deref()).collect();
        if nodes.is_empty() {
            "live (get_state)".to_owned()
        } else {
            format!(
                "live (get_state: with the writes of finished {})",
                nodes.join(", ")
            )
        }
    } else {
        "step record (get_state with this checkpoint id: values as the step started)".to_owned()
    };
    format!(
        "status     {status}
view       {view}
"
    )
}

/// `flashback state`; `internal`: list the internal channels too (else folded into one line).
pub fn state(d: &CheckpointDetail, internal: bool) -> String {
    let mut out = format!(
        "checkpoint {}  step {}  source {}  {}\n",
        d.checkpoint_id,
        opt(&d.step),
        opt(&d.source),
        d.ts
    );
    out.push_str(&format!("parent     {}\n", opt(&d.parent_checkpoint_id)));
    if !d.checkpoint_ns.is_empty() {
        out.push_str(&format!("namespace  {}\n", d.checkpoint_ns));
    }
    if let Some(problem) = &d.problem {
        out.push_str(&format!("unreadable {problem}\n"));
    }
    out.push_str(&status_line(d));
    out.push_str("\nvalues:\n");
    let folded: Vec<&str> = d
        .channels
        .iter()
        .filter(|c| c.internal && !internal)
        .map(|c| c.channel.as_str())
        .collect();
    let shown_values: Vec<(&String, &Json)> = d
        .values
        .iter()
        .filter(|(c, _)| !folded.contains(&c.as_str()))
        .collect();
    let defaults: Vec<&str> = d
        .channels
        .iter()
        .filter(|c| c.default)
        .map(|c| c.channel.as_str())
        .collect();
    let w = shown_values.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (channel, value) in shown_values {
        if defaults.contains(&channel.as_str()) {
            out.push_str(&format!(
                "  {channel:<w$}  {}  (empty start, not stored)\n",
                shown(value)
            ));
            continue;
        }
        match messages(value) {
            Some(lines) => {
                let n = lines.len();
                out.push_str(&format!(
                    "  {channel:<w$}  {n} message{}\n",
                    if n == 1 { "" } else { "s" }
                ));
                for line in lines {
                    out.push_str(&format!("    {line}\n"));
                }
            }
            None => out.push_str(&format!(
                "  {channel:<w$}  {}\n",
                clip(&shown(value), WIDTH)
            )),
        }
    }
    if !folded.is_empty() {
        out.push_str(&format!(
            "  internal: {} (--internal lists them)\n",
            clip(&folded.join(", "), WIDTH - 40)
        ));
    }
    if !d.rebuilt.is_empty() {
        out.push_str(
            "\nrebuilt (DeltaChannels, as the graph sees them; --raw for the stored view):\n",
        );
        let w = d.rebuilt.keys().map(String::len).max().unwrap_or(0);
        for (channel, r) in &d.rebuilt {
            let from = match r.from_step {
                Some(step) => format!("step {step}"),
                None if r.from_checkpoint.is_some() => "a stored value".to_owned(),
                None => "empty".to_owned(),
            };
            let how = if r.inferred { "inferred" } else { "chosen" };
            let line = match &r.error {
                Some(e) => format!("not shown: {e}"),
                None => format!(
                    "from {from} + {} write{} ({}, {how})",
                    r.writes,
                    if r.writes == 1 { "" } else { "s" },
                    r.reducer.short_name()
                ),
            };
            out.push_str(&format!("  {channel:<w$}  {line}\n"));
        }
    }
    // Whose writes: those that made this checkpoint are its parent's; its own are the next
    // step's (the app's Writes tab says the same).
    if !d.made_by.is_empty() {
        let n: usize = d.made_by.iter().map(|g| g.writes.len()).sum();
        out.push_str(&format!(
            "\nmade by: {} ({n} write{} stored on the parent)\n",
            writers(&d.made_by),
            if n == 1 { "" } else { "s" }
        ));
    }
    let count: usize = d.writes.iter().map(|g| g.writes.len()).sum();
    out.push_str(&format!(
        "\npending writes ({count}{}):\n",
        if d.writes.is_empty() {
            String::new()
        } else {
            format!(", the next step's: {}", writers(&d.writes))
        }
    ));
    for g in &d.writes {
        let by = match (&g.node, g.task_id.as_str()) {
            (Some(node), id) => format!("{} {}", super::node_label(node), clip(id, 8)),
            (None, "00000000-0000-0000-0000-000000000000") => "input/update".to_owned(),
            (None, id) => clip(id, 12),
        };
        for w in &g.writes {
            out.push_str(&format!(
                "  {:<28} {:>3} {:<20} {}\n",
                clip(&by, 28),
                w.idx,
                w.channel,
                clip(&shown(&w.value), WIDTH - 56)
            ));
        }
    }
    let next = &d.tasks.next;
    out.push_str(&format!(
        "\nnext: {}\n",
        if next.is_empty() {
            "(none)".into()
        } else {
            next.join(", ")
        }
    ));
    let approved_tasks: Vec<&str> = d.approvals.iter().map(|a| a.task_id.as_str()).collect();
    for t in &d.tasks.tasks {
        let mut line = format!("  task {} {}", t.name, t.id);
        if let Some(ns) = &t.state {
            line.push_str(&format!("  (its sub-graph: --ns '{ns}')"));
        }
        if let Some(e) = &t.error {
            let what = if t.status == TaskStatus::Recovered {
                "raised, then recovered on retry"
            } else {
                "error"
            };
            line.push_str(&format!("  {what}: {}", clip(&one_line(e), 60)));
        }
        out.push_str(&line);
        out.push('\n');
        if approved_tasks.contains(&t.id.as_str()) {
            continue;
        }
        // Interrupts in full: the question the program waits on is the point.
        for i in &t.interrupts {
            out.push_str(&interrupt_text(i));
        }
    }
    out.push_str(&super::approvals::approvals(d));
    out
}

/// One interrupt, readably: its id, then its value — a string as text (its newlines kept),
/// anything else as indented JSON.
fn interrupt_text(i: &Json) -> String {
    let (value, id) = match i.as_object() {
        Some(o) if o.contains_key("$type") && o.contains_key("value") => (
            o.get("value").unwrap_or(&Json::Null),
            o.get("id").and_then(Json::as_str),
        ),
        _ => (i, None),
    };
    let mut out = match id {
        Some(id) => format!("    interrupt {id}:\n"),
        None => "    interrupt:\n".to_owned(),
    };
    let text = match value {
        Json::String(s) => s.clone(),
        v => serde_json::to_string_pretty(v).unwrap_or_default(),
    };
    for l in text.lines() {
        out.push_str(&format!("      {l}\n"));
    }
    out
}

/// A list of LangChain messages (their JSON view: `$type` `langchain_core.messages.*`) as one
/// line each: the role, the text, and an AI message's tool calls; `None` for anything else.
fn messages(v: &Json) -> Option<Vec<String>> {
    let items = v.as_array().filter(|a| !a.is_empty())?;
    items
        .iter()
        .map(|m| {
            let (who, text) = message_parts(m)?;
            Some(format!("{who:<10} {}", clip(&text, WIDTH - 15)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_read_as_lines() {
        let v = json!([
            {"$type": "langchain_core.messages.human.HumanMessage", "type": "human", "content": "What is 2+3?"},
            {"$type": "langchain_core.messages.ai.AIMessage", "type": "ai", "content": "",
             "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]},
            {"$type": "langchain_core.messages.tool.ToolMessage", "type": "tool", "name": "add", "content": "5"},
            {"$type": "langchain_core.messages.ai.AIMessageChunk", "type": "AIMessageChunk",
             "content": [{"type": "text", "text": "It is"}, {"type": "image_url"}, "5."]},
        ]);
        let lines = messages(&v).expect("messages");
        assert_eq!(lines[0], "human      What is 2+3?");
        assert_eq!(lines[1], r#"ai         → add({"a":2,"b":3})"#);
        assert_eq!(lines[2], "tool add   5");
        assert_eq!(lines[3], "AIMessage  It is [image_url] 5.");
        // Anything else is not a message list.
        assert!(messages(&json!([1, 2])).is_none());
        assert!(messages(&json!([])).is_none());
        assert!(messages(&json!([{"$type": "fixture_types.Point"}])).is_none());
    }
}
