//! Answers made for a model's context window: a page of the main list (`limit`/`cursor`), then,
//! only when the answer is still over its budget, long strings folded to their start and their
//! length and long lists to their head, a count and their tail — tighter and tighter until it
//! fits. An answer within the budget is returned exactly as the other doors return it.

use serde_json::{json, Map, Value as Json};

/// Characters per token, roughly, for JSON and English text.
pub const CHARS_PER_TOKEN: usize = 4;
/// The default budget of one answer, in tokens.
pub const DEFAULT_TOKENS: usize = 8_000;
/// The most a caller may ask for, in tokens.
pub const MAX_TOKENS: usize = 100_000;

/// The folding levels: (longest string kept, list head kept, list tail kept, deepest level).
const LEVELS: &[(usize, usize, usize, usize)] = &[
    (4_000, 60, 5, 64),
    (1_000, 30, 3, 32),
    (300, 12, 2, 16),
    (120, 6, 1, 10),
    (60, 3, 1, 6),
    (30, 2, 1, 4),
];

/// What bounding did to an answer.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Bounded {
    /// The (possibly folded) value.
    pub value: Json,
    /// How many strings, lists or levels were folded.
    pub folded: usize,
}

/// The size of a value as compact JSON text.
pub fn size(v: &Json) -> usize {
    serde_json::to_string(v)
        .map(|s| s.len())
        .unwrap_or(usize::MAX)
}

/// `v` within `budget` characters: unchanged when it fits, else folded.
pub fn fit(v: Json, budget: usize) -> Bounded {
    if size(&v) <= budget {
        return Bounded {
            value: v,
            folded: 0,
        };
    }
    let mut last = Bounded::default();
    for &(string, head, tail, depth) in LEVELS {
        let mut folded = 0;
        let value = fold(&v, string, head, tail, depth, &mut folded);
        let fits = size(&value) <= budget;
        last = Bounded { value, folded };
        if fits {
            return last;
        }
    }
    // Still too large (a dict of thousands of keys): say what it is.
    let keys = match &v {
        Json::Object(o) => o.keys().take(50).cloned().collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    Bounded {
        value: json!({
            "$folded": format!("{} characters of JSON, too large for this answer", size(&v)),
            "keys": keys,
        }),
        folded: last.folded.max(1),
    }
}

/// A string longer than `max` characters, folded to its start and its length.
fn fold_string(s: &str, max: usize) -> Option<String> {
    let n = s.chars().count();
    if n <= max {
        return None;
    }
    let start: String = s.chars().take(max).collect();
    Some(format!("{start}… [folded: {n} characters in all]"))
}

fn fold(v: &Json, string: usize, head: usize, tail: usize, depth: usize, n: &mut usize) -> Json {
    if depth == 0 {
        return match v {
            Json::Array(a) if !a.is_empty() => {
                *n += 1;
                json!(format!("[… a list of {} items, folded]", a.len()))
            }
            Json::Object(o) if !o.is_empty() => {
                *n += 1;
                json!(format!("{{… {} keys, folded}}", o.len()))
            }
            other => fold(other, string, head, tail, 1, n),
        };
    }
    match v {
        Json::String(s) => match fold_string(s, string) {
            Some(f) => {
                *n += 1;
                Json::String(f)
            }
            None => v.clone(),
        },
        Json::Array(a) if a.len() > head + tail + 1 => {
            *n += 1;
            let mut out: Vec<Json> = a[..head]
                .iter()
                .map(|x| fold(x, string, head, tail, depth - 1, n))
                .collect();
            out.push(json!(format!(
                "… {} more items folded ({} in all; items {}..{} not shown)",
                a.len() - head - tail,
                a.len(),
                head,
                a.len() - tail
            )));
            out.extend(
                a[a.len() - tail..]
                    .iter()
                    .map(|x| fold(x, string, head, tail, depth - 1, n)),
            );
            Json::Array(out)
        }
        Json::Array(a) => Json::Array(
            a.iter()
                .map(|x| fold(x, string, head, tail, depth - 1, n))
                .collect(),
        ),
        Json::Object(o) => {
            let mut out = Map::new();
            for (k, x) in o {
                let key = match fold_string(k, string.max(60)) {
                    Some(f) => {
                        *n += 1;
                        f
                    }
                    None => k.clone(),
                };
                out.insert(key, fold(x, string, head, tail, depth - 1, n));
            }
            Json::Object(out)
        }
        _ => v.clone(),
    }
}

/// A page of a list: `items[cursor..]`, at most `limit` of them, and as many as fit in
/// `budget` characters (at least one). Returns the page and where the next one starts.
pub fn page(
    items: &[Json],
    cursor: usize,
    limit: Option<usize>,
    budget: usize,
) -> (Vec<Json>, Option<usize>) {
    let start = cursor.min(items.len());
    let end = match limit {
        Some(l) => start.saturating_add(l).min(items.len()),
        None => items.len(),
    };
    let mut used = 2;
    let mut out = Vec::new();
    for item in &items[start..end] {
        let s = size(item) + 1;
        if !out.is_empty() && used + s > budget {
            break;
        }
        used += s;
        out.push(item.clone());
    }
    let next = start + out.len();
    (out, (next < items.len()).then_some(next))
}

/// Text cut to `budget` characters at a line end, with what was left out said.
pub fn cut_text(text: &str, budget: usize) -> (String, bool) {
    if text.len() <= budget {
        return (text.to_owned(), false);
    }
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind('\n').map(|i| i + 1).unwrap_or(end);
    let left = match text[cut..].lines().count() {
        1 => "1 more line".to_owned(),
        n => format!("{n} more lines"),
    };
    (format!("{}… ({left} not shown)\n", &text[..cut]), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_within_budget_is_unchanged() {
        let v = json!({"a": [1, 2, 3], "b": "x".repeat(100)});
        assert_eq!(
            fit(v.clone(), 1000),
            Bounded {
                value: v,
                folded: 0
            }
        );
    }

    #[test]
    fn a_long_string_is_folded_with_its_length() {
        let v = json!({"big": "y".repeat(1_000_000)});
        let b = fit(v, 2_000);
        assert!(size(&b.value) <= 2_000, "{}", size(&b.value));
        let s = b.value["big"].as_str().unwrap_or_default();
        assert!(s.ends_with("[folded: 1000000 characters in all]"), "{s}");
    }

    #[test]
    fn a_long_list_keeps_head_count_and_tail() {
        let v = Json::Array((0..10_000).map(|i| json!(i)).collect());
        let b = fit(v, 500);
        let a = b.value.as_array().cloned().unwrap_or_default();
        assert_eq!(a.first(), Some(&json!(0)));
        assert_eq!(a.last(), Some(&json!(9999)));
        assert!(a
            .iter()
            .any(|x| x.as_str().is_some_and(|s| s.contains("10000 in all"))));
    }

    #[test]
    fn pages_follow_the_cursor() {
        let items: Vec<Json> = (0..10).map(|i| json!(i)).collect();
        assert_eq!(
            page(&items, 0, Some(4), 1000),
            (items[..4].to_vec(), Some(4))
        );
        assert_eq!(page(&items, 8, Some(4), 1000), (items[8..].to_vec(), None));
        let (p, next) = page(&items, 0, None, 8);
        assert_eq!((p.len(), next), (3, Some(3)));
    }

    #[test]
    fn text_is_cut_at_a_line() {
        let text = "one\ntwo\nthree\n";
        let (t, cut) = cut_text(text, 9);
        assert!(cut);
        assert_eq!(t, "one\ntwo\n… (1 more line not shown)\n");
    }
}
