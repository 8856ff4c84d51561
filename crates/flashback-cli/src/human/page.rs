//! A page of a list inside a checkpoint (`flashback state --path`), one line per item.

use super::messages::message_parts;
use super::{clip, n};
use flashback_api::StatePage;
use serde_json::Value as Json;

/// The page: where it is in the list, each item on one line (a message as who and text), and
/// the items that hold the searched text.
pub fn page(p: &StatePage, query: Option<&str>) -> String {
    let mut out = String::new();
    let Some(total) = p.total else {
        let v = p.value.as_ref().unwrap_or(&Json::Null);
        out.push_str(&format!("{}: {}\n", p.path, item_line(v)));
        return out;
    };
    let shown = u32::try_from(p.items.len()).unwrap_or(u32::MAX);
    if shown == 0 {
        out.push_str(&format!(
            "{}: {} — none from {}\n",
            p.path,
            n(total, "item"),
            p.offset
        ));
    } else {
        out.push_str(&format!(
            "{}: items {}–{} of {}\n",
            p.path,
            p.offset,
            p.offset + shown - 1,
            total
        ));
    }
    for (i, item) in p.items.iter().enumerate() {
        let at = p.offset as usize + i;
        out.push_str(&clip(&format!("[{at}] {}", item_line(item)), 100));
        out.push('\n');
    }
    if p.folded > 0 {
        out.push_str(&format!(
            "{} folded (fetch one with --path and its path)\n",
            n(p.folded, "long string")
        ));
    }
    if let Some(q) = query {
        let verb = if p.hit_count == 1 { "holds" } else { "hold" };
        out.push_str(&format!("{} {verb} {q:?}\n", n(p.hit_count, "item")));
        for h in &p.hits {
            out.push_str(&clip(
                &format!("  [{}] {}: {}", h.index, h.path, h.snippet),
                100,
            ));
            out.push('\n');
        }
    }
    out
}

fn item_line(v: &Json) -> String {
    if let Some((who, text)) = message_parts(v) {
        return format!("{who}: {text}");
    }
    match v {
        Json::Object(o) if o.contains_key("$folded") => {
            let chars = o["$folded"]["chars"].as_u64().unwrap_or(0);
            let head = o.get("$value").and_then(Json::as_str).unwrap_or("");
            format!("{head}… ({chars} characters, folded)")
        }
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
