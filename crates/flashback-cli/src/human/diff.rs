//! `flashback diff` for people, within [`WIDTH`] columns: short ids, each changed channel, a
//! list item by item (messages as role and text), and a changed text shown around where it
//! changes, `[-old-]{+new+}`, so two long values that share a beginning never read the same.

use super::messages::message_parts;
use super::{clip, lists::short_id, ns_label, shown, wire_name, WIDTH};
use flashback_api::{ChannelDiff, CheckpointDiff, ItemDiff};
use serde_json::Value as Json;

/// Characters of unchanged text kept before a change (and after it).
const CONTEXT: usize = 24;

/// `flashback diff`.
pub fn diff(d: &CheckpointDiff) -> String {
    let s = &d.summary;
    let side = |ns: &str, id: &str| {
        if ns.is_empty() {
            short_id(id)
        } else {
            format!("{} {}", ns_label(ns), short_id(id))
        }
    };
    let mut out = vec![format!(
        "{} → {}: {} added, {} removed, {} changed, {} unchanged",
        side(&d.a_ns, &d.a_id),
        side(&d.b_ns, &d.b_id),
        s.added,
        s.removed,
        s.changed,
        s.unchanged
    )];
    // Where the two lines meet, as the app's compare says it.
    if let Some(m) = &d.common_ancestor {
        let step = m.step.map(|n| format!(" step {n}")).unwrap_or_default();
        out.push(if m.checkpoint_id == d.a_id {
            "B descends from A (one line)".to_owned()
        } else if m.checkpoint_id == d.b_id {
            "A descends from B (one line)".to_owned()
        } else {
            format!("branches meet at {}{step}", short_id(&m.checkpoint_id))
        });
    }
    let changed: Vec<&ChannelDiff> = d
        .channels
        .iter()
        .filter(|c| wire_name(&c.change) != "unchanged")
        .collect();
    for c in changed.iter().filter(|c| !c.control) {
        channel(&mut out, c);
    }
    // LangGraph's own channels (triggers, tasks) on one line: which changed, not their values.
    let control: Vec<String> = changed
        .iter()
        .filter(|c| c.control)
        .map(|c| format!("{}{}", sign(&wire_name(&c.change)), c.channel))
        .collect();
    if !control.is_empty() {
        out.push(format!("control   {}", control.join(" ")));
    }
    let mut text: String = out
        .iter()
        .map(|l| clip(l, WIDTH))
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    text
}

fn channel(out: &mut Vec<String>, c: &ChannelDiff) {
    let change = wire_name(&c.change);
    match &c.items {
        Some(items) => {
            let differ: Vec<&ItemDiff> = items
                .iter()
                .filter(|i| wire_name(&i.change) != "unchanged")
                .collect();
            let noun = if items.iter().any(|i| item(i).is_some_and(is_message)) {
                "messages"
            } else {
                "items"
            };
            out.push(format!(
                "{change:<9} {}: {} of {} {noun} differ",
                c.channel,
                differ.len(),
                items.len()
            ));
            for i in differ {
                out.push(format!("    {}", item_line(i)));
            }
        }
        None => {
            out.push(format!("{change:<9} {}", c.channel));
            match (&c.a, &c.b) {
                (Some(a), Some(b)) => {
                    out.push(format!("    ~ {}", changed_text(&text(a), &text(b))))
                }
                (Some(a), None) => out.push(format!("    - {}", text(a))),
                (None, Some(b)) => out.push(format!("    + {}", text(b))),
                (None, None) => {}
            }
        }
    }
}

/// `+` added, `-` removed, `~` changed.
fn sign(change: &str) -> &'static str {
    match change {
        "added" => "+",
        "removed" => "-",
        _ => "~",
    }
}

fn item(i: &ItemDiff) -> Option<&Json> {
    i.b.as_ref().or(i.a.as_ref())
}

fn is_message(v: &Json) -> bool {
    message_parts(v).is_some()
}

/// `+ #4 ai 3e7c14c2  The weather is sunny` (added), `- #2 …` (removed), `~ #1 human …
/// [-weather-]{+forecast+} …` (changed); positions are B's (A's for a removed item).
fn item_line(i: &ItemDiff) -> String {
    let change = wire_name(&i.change);
    let at = match change.as_str() {
        "added" => i.b_index,
        "removed" => i.a_index,
        _ => i.b_index.or(i.a_index),
    };
    let sign = sign(&change);
    let at = at.map_or_else(|| "?".into(), |n| n.to_string());
    let id =
        i.id.as_deref()
            .map(|id| format!(" {}", id_head(id)))
            .unwrap_or_default();
    let who = item(i)
        .and_then(message_parts)
        .map(|(who, _)| format!(" {who}"))
        .unwrap_or_default();
    let body = match (i.a.as_ref().map(item_text), i.b.as_ref().map(item_text)) {
        (Some(a), Some(b)) => changed_text(&a, &b),
        (Some(t), None) | (None, Some(t)) => t,
        (None, None) => String::new(),
    };
    format!("{sign} #{at}{who}{id}  {body}")
}

/// A message id's first 8 characters (`lc_run--…` and `run-…` prefixes dropped).
fn id_head(id: &str) -> String {
    let bare = id
        .strip_prefix("lc_run--")
        .or_else(|| id.strip_prefix("run-"))
        .unwrap_or(id);
    bare.chars().take(8).collect()
}

/// An item as one line of text: a message's text, anything else as JSON.
fn item_text(v: &Json) -> String {
    message_parts(v).map_or_else(|| text(v), |(_, t)| t)
}

/// A value on one line: a string as is, anything else as JSON.
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => shown(other),
    }
}

/// Two texts as one line around where they differ: the common start and end cut to
/// [`CONTEXT`] characters, the change as `[-old-]{+new+}`, newlines as `⏎`.
pub(super) fn changed_text(a: &str, b: &str) -> String {
    let a: Vec<char> = a.chars().map(flat).collect();
    let b: Vec<char> = b.chars().map(flat).collect();
    let mut pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    // Whole words: a change inside a word takes the word (`[-input-]{+collect+}`, not
    // `[-inpu-]{+collec+}t`).
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    let changed = pre < a.len() - suf || pre < b.len() - suf;
    while changed && pre > 0 && word(&a[pre - 1]) {
        pre -= 1;
    }
    while changed && suf > 0 && word(&a[a.len() - suf]) {
        suf -= 1;
    }
    let head: String = if pre > CONTEXT {
        std::iter::once('…')
            .chain(a[pre - CONTEXT..pre].iter().copied())
            .collect()
    } else {
        a[..pre].iter().collect()
    };
    let tail_start = a.len() - suf;
    let tail: String = if suf > CONTEXT {
        a[tail_start..tail_start + CONTEXT]
            .iter()
            .copied()
            .chain(std::iter::once('…'))
            .collect()
    } else {
        a[tail_start..].iter().collect()
    };
    let old: String = a[pre..tail_start].iter().collect();
    let new: String = b[pre..b.len() - suf].iter().collect();
    let mut out = head;
    if !old.is_empty() {
        out.push_str(&format!("[-{}-]", clip(&old, WIDTH / 3)));
    }
    if !new.is_empty() {
        out.push_str(&format!("{{+{}+}}", clip(&new, WIDTH / 3)));
    }
    out.push_str(&tail);
    out
}

fn flat(c: char) -> char {
    if c == '\n' {
        '⏎'
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_api::{Change, CommonAncestor, DiffSummary};
    use serde_json::json;

    #[test]
    fn a_change_is_shown_where_it_is() {
        let long = "x".repeat(200);
        let a = format!("{long} the weather in SF");
        let b = format!("{long} the forecast in SF");
        let line = changed_text(&a, &b);
        assert!(line.contains("[-weather-]{+forecast+} in SF"), "{line}");
        assert!(line.starts_with('…') && line.chars().count() < 60, "{line}");
        assert_eq!(changed_text("1", "2"), "[-1-]{+2+}");
        assert_eq!(changed_text("ab", "abc"), "[-ab-]{+abc+}");
        assert_eq!(changed_text("a\nb", "a\nc"), "a⏎[-b-]{+c+}");
        assert_eq!(changed_text("input", "collect"), "[-input-]{+collect+}");
        assert_eq!(
            changed_text("the big dog", "the bog dog"),
            "the [-big-]{+bog+} dog"
        );
        assert_eq!(changed_text("same", "same"), "same");
    }

    fn msg(id: &str, role: &str, text: &str) -> Json {
        let class = match role {
            "human" => "human.HumanMessage",
            _ => "ai.AIMessage",
        };
        json!({"$type": format!("langchain_core.messages.{class}"), "type": role, "id": id, "content": text})
    }

    fn item(
        change: Change,
        a: Option<u32>,
        b: Option<u32>,
        id: &str,
        va: Option<Json>,
        vb: Option<Json>,
    ) -> ItemDiff {
        ItemDiff {
            change,
            a_index: a,
            b_index: b,
            id: Some(id.into()),
            a: va,
            b: vb,
        }
    }

    fn channel(
        name: &str,
        change: Change,
        a: Option<Json>,
        b: Option<Json>,
        items: Option<Vec<ItemDiff>>,
    ) -> ChannelDiff {
        ChannelDiff {
            channel: name.into(),
            change,
            version_a: None,
            version_b: None,
            a,
            b,
            items,
            control: false,
        }
    }

    #[test]
    fn messages_read_by_role_and_text_within_the_width() {
        let long = "word ".repeat(60);
        let asked = |w: &str| {
            msg(
                "7d0e0a55-1111-2222-3333-444455556666",
                "human",
                &format!("{long}what is the {w}"),
            )
        };
        let items = vec![
            item(
                Change::Changed,
                Some(0),
                Some(0),
                "7d0e0a55-1111-2222-3333-444455556666",
                Some(asked("weather")),
                Some(asked("forecast")),
            ),
            item(
                Change::Added,
                None,
                Some(1),
                "lc_run--0199aabb-cc",
                None,
                Some(msg("lc_run--0199aabb-cc", "ai", "Sunny")),
            ),
            item(
                Change::Unchanged,
                Some(1),
                Some(2),
                "x",
                None,
                Some(msg("x", "ai", "same")),
            ),
        ];
        let d = CheckpointDiff {
            a_ns: String::new(),
            a_id: "1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3".into(),
            b_ns: String::new(),
            b_id: "1f1e953f-7f9b-6f8b-8003-4e7c14c2fed3".into(),
            summary: DiffSummary {
                added: 0,
                removed: 0,
                changed: 2,
                unchanged: 1,
            },
            common_ancestor: Some(CommonAncestor {
                checkpoint_id: "1f1e953f-7f90-6f8b-8001-2e7c14c2fed3".into(),
                step: Some(1),
            }),
            channels: vec![
                channel(
                    "messages",
                    Change::Changed,
                    Some(json!([])),
                    Some(json!([])),
                    Some(items),
                ),
                channel(
                    "count",
                    Change::Changed,
                    Some(json!(1)),
                    Some(json!(2)),
                    None,
                ),
                channel("same", Change::Unchanged, Some(json!(1)), None, None),
                ChannelDiff {
                    control: true,
                    ..channel(
                        "branch:to:tools",
                        Change::Removed,
                        Some(Json::Null),
                        None,
                        None,
                    )
                },
            ],
        };
        let text = diff(&d);
        for l in text.lines() {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        assert!(
            text.starts_with("7f9a-6f8b-3e7c → 7f9b-6f8b-4e7c: 0 added"),
            "{text}"
        );
        assert!(text.contains("messages: 2 of 3 messages differ"), "{text}");
        assert!(text.contains("~ #0 human 7d0e0a55  …"), "{text}");
        assert!(text.contains("[-weather-]{+forecast+}"), "{text}");
        assert!(text.contains("+ #1 ai 0199aabb  Sunny"), "{text}");
        assert!(text.contains("    ~ [-1-]{+2+}"), "{text}");
        assert!(!text.contains("same"), "{text}");
        assert!(text.ends_with("control   -branch:to:tools\n"), "{text}");
    }
}
