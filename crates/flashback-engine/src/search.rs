//! Search inside values: where a text occurs in a checkpoint's state, any case.
//!
//! The state is searched as the app shows it: each channel's JSON view (`docs/json-view.md`,
//! secrets masked), control channels left out as the state view hides them. A match is a
//! **key** (a dict key, an object's field, a channel name) or a **scalar** (a string, or a
//! number as its JSON text) holding the text; booleans and `null` are not searched. Each match
//! comes with its path in the syntax of [`crate::watch::KeyPath`] (`messages[2].content`) and a
//! one-line snippet of at most [`SNIPPET_CHARS`] characters around the hit.
//!
//! What the view adds is not searched: `$type` names, `$method`, binary (`base64`,
//! `raw_base64`) and hashes. Locked values (`$locked`: encrypted without the key), masked
//! secrets (`$secret`), values over the decode budget (`$too_large`) and values that could not
//! be decoded (`$error`) are skipped whole. Inside sets, deques and other `$value`/`$items`
//! containers items are reached by index, as the path resolves them; inside a typed value whose
//! parts are not addressable by a path (`$args`, a scalar `$value`, a dict key that is neither
//! text nor an integer) a match names the typed value itself. Nesting deeper than 300 levels
//! is not searched.

use crate::is_control_channel;
use crate::watch::{KeyPath, Segment};
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::CheckpointTuple;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Matches kept per checkpoint by default.
pub const MAX_MATCHES: usize = 5;

/// The longest snippet, in characters (ellipses included).
pub const SNIPPET_CHARS: usize = 120;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 200;

/// Nesting deeper than this is not searched (the codec's own limit is lower).
const MAX_DEPTH: usize = 300;

/// The keys of the view's own that say a value is not there to search.
const OPAQUE: [&str; 5] = ["$locked", "$secret", "$too_large", "$error", "$encrypted"];

/// Keys that hold binary or digests, never text a person wrote.
const BINARY: [&str; 3] = ["base64", "raw_base64", "sha256"];

/// One place the text occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ValueHit {
    /// Where: `channel.key[2].field` (the syntax of [`crate::watch::KeyPath`]).
    pub path: String,
    /// The text around the hit on one line, at most [`SNIPPET_CHARS`] characters (`…` where
    /// it was cut); for a key, `key: value`.
    pub snippet: String,
}

/// What one checkpoint holds of the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The first matches, in the order the state view shows them.
    pub hits: Vec<ValueHit>,
    /// Whether there were more than the cap.
    pub more: bool,
}

/// Why a query cannot be searched for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Nothing to search for.
    #[error("enter some text to search for")]
    Empty,
    /// Longer than [`MAX_QUERY_CHARS`].
    #[error("the search text is too long ({0} characters; at most {MAX_QUERY_CHARS})")]
    TooLong(usize),
}

/// A text to search for, any case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    lowered: String,
    chars: usize,
}

/// Lower-case `text` char by char (the same mapping for the needle and the haystack).
fn lower(text: &str) -> String {
    text.chars().flat_map(char::to_lowercase).collect()
}

impl Needle {
    /// The text to search for (surrounding whitespace ignored).
    pub fn new(text: &str) -> Result<Needle, QueryError> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 {
            return Err(QueryError::Empty);
        }
        if chars > MAX_QUERY_CHARS {
            return Err(QueryError::TooLong(chars));
        }
        Ok(Needle {
            lowered: lower(text),
            chars,
        })
    }

    /// Where the text first occurs in `hay`: `(start, end)` in chars of `hay`.
    fn find_in(&self, hay: &str) -> Option<(usize, usize)> {
        let lowered = lower(hay);
        let at = lowered.find(&self.lowered)?;
        // Map the lowered bytes back to the chars of `hay` they came from.
        let (mut bytes, mut start, mut end) = (0, None, None);
        for (i, c) in hay.chars().enumerate() {
            let next = bytes + c.to_lowercase().map(char::len_utf8).sum::<usize>();
            if start.is_none() && next > at {
                start = Some(i);
            }
            if next >= at + self.lowered.len() {
                end = Some(i + 1);
                break;
            }
            bytes = next;
        }
        let start = start?;
        Some((start, end.unwrap_or(start + self.chars).max(start + 1)))
    }
}

/// `text` on one line (control characters as spaces), cut to [`SNIPPET_CHARS`] around the
/// chars `start..end`.
fn snippet(text: &str, start: usize, end: usize) -> String {
    window(text, start, end, SNIPPET_CHARS)
}

/// `text` on one line (control characters as spaces), cut to `max` chars around the chars
/// `start..end`, with `…` where it was cut.
fn window(text: &str, start: usize, end: usize, max: usize) -> String {
    let chars: Vec<char> = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if chars.len() <= max {
        return chars.into_iter().collect();
    }
    let room = max.saturating_sub(2); // an ellipsis each side at most
    let hit = end.saturating_sub(start).min(room);
    let before = (room - hit) / 2;
    let mut from = start.saturating_sub(before);
    let to = (from + room).min(chars.len());
    from = to.saturating_sub(room);
    let mut out = String::with_capacity(max * 4);
    if from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if to < chars.len() {
        out.push('…');
    }
    out
}

/// `text` cut to `max` chars around the first occurrence of `query` (any case; from the start
/// when it does not occur), on one line, with `…` where it was cut: a snippet re-cut to a
/// narrower column.
pub fn around(text: &str, query: &str, max: usize) -> String {
    let (start, end) = Needle::new(query)
        .ok()
        .and_then(|n| n.find_in(text))
        .unwrap_or((0, 0));
    window(text, start, end, max)
}

/// A scalar's text, if it is one that is searched.
fn scalar_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A short view of a value after its key in a snippet.
fn brief(v: &Json) -> String {
    match v {
        Json::String(s) if s.chars().count() > SNIPPET_CHARS => {
            let head: String = s.chars().take(SNIPPET_CHARS).collect();
            format!("{:?}…", head)
        }
        Json::String(s) => format!("{s:?}"),
        Json::Array(a) if a.is_empty() => "[]".into(),
        Json::Array(_) => "[…]".into(),
        Json::Object(o) => match o.get("$type").and_then(Json::as_str) {
            Some(t) => format!("{}(…)", t.rsplit('.').next().unwrap_or(t)),
            None if o.is_empty() => "{}".into(),
            None => "{…}".into(),
        },
        other => other.to_string(),
    }
}

struct Walk<'a> {
    needle: &'a Needle,
    cap: usize,
    channel: &'a str,
    steps: Vec<Segment>,
    /// Inside a part no path reaches (`$args`, …): matches name the value around it.
    frozen: usize,
    found: Found,
}

/// How a step down was taken, to be undone by [`Walk::leave`].
enum Entered {
    Pushed,
    Froze,
    Stayed,
}

impl Walk<'_> {
    /// Whether the cap is passed (then nothing more is looked at).
    fn full(&self) -> bool {
        self.found.more
    }

    fn enter(&mut self, seg: Option<Segment>) -> Entered {
        match seg {
            Some(_) if self.frozen > 0 => Entered::Stayed,
            Some(s) => {
                self.steps.push(s);
                Entered::Pushed
            }
            None => {
                self.frozen += 1;
                Entered::Froze
            }
        }
    }

    fn leave(&mut self, e: Entered) {
        match e {
            Entered::Pushed => {
                self.steps.pop();
            }
            Entered::Froze => self.frozen -= 1,
            Entered::Stayed => {}
        }
    }

    fn hit(&mut self, snippet: String) {
        if self.found.hits.len() >= self.cap {
            self.found.more = true;
            return;
        }
        let path = KeyPath {
            channel: self.channel.to_owned(),
            steps: self.steps.clone(),
        };
        self.found.hits.push(ValueHit {
            path: path.to_string(),
            snippet,
        });
    }

    /// A key named `name` whose value is `v` (its step already entered).
    fn key(&mut self, name: &str, v: &Json) {
        if let Some((start, end)) = self.needle.find_in(name) {
            let text = format!("{name}: {}", brief(v));
            self.hit(snippet(&text, start, end));
        }
    }

    fn scalar(&mut self, v: &Json) {
        if let Some(text) = scalar_text(v) {
            if let Some((start, end)) = self.needle.find_in(&text) {
                self.hit(snippet(&text, start, end));
            }
        }
    }

    /// Visit `v` one step down (`seg`: its step, or `None` for a part no path reaches), after
    /// matching its key `name`.
    fn child(&mut self, seg: Option<Segment>, name: Option<&str>, v: &Json, depth: usize) {
        let e = self.enter(seg);
        if let Some(name) = name {
            self.key(name, v);
        }
        self.value(v, depth + 1);
        self.leave(e);
    }

    /// List items, reached by index (`indexed`) or not.
    fn items(&mut self, items: &[Json], indexed: bool, depth: usize) {
        for (i, item) in items.iter().enumerate() {
            if self.full() {
                return;
            }
            let seg = indexed.then(|| Segment::Index(i64::try_from(i).unwrap_or(i64::MAX)));
            self.child(seg, None, item, depth);
        }
    }

    fn value(&mut self, v: &Json, depth: usize) {
        if self.full() || depth > MAX_DEPTH {
            return;
        }
        match v {
            Json::Array(items) => self.items(items, true, depth),
            Json::Object(o) => self.object(o, depth),
            scalar => self.scalar(scalar),
        }
    }

    fn object(&mut self, o: &Map<String, Json>, depth: usize) {
        if OPAQUE.iter().any(|k| o.contains_key(*k)) {
            return;
        }
        let is_dict = o.get("$type").and_then(Json::as_str) == Some("builtins.dict");
        // A plain dict's keys are all data (`$defs` included); a typed value's are markers.
        let marked = flashback_codec::view::is_marked(o);
        for (k, v) in o {
            if self.full() {
                return;
            }
            match (k.as_str(), v) {
                ("$items", Json::Array(pairs)) if is_dict => self.dict_items(pairs, depth),
                ("$value" | "$items", Json::Array(items)) => self.items(items, true, depth),
                ("$value" | "$items" | "$args", v) => self.child(None, None, v, depth),
                (k, _) if BINARY.contains(&k) => {}
                // A field named `$x` is written `$$x`.
                (k, v) if k.starts_with("$$") => {
                    let name = &k[1..];
                    self.child(Some(Segment::Key(name.to_owned())), Some(name), v, depth);
                }
                (k, _) if marked && k.starts_with('$') => {}
                (k, v) => self.child(Some(Segment::Key(k.to_owned())), Some(k), v, depth),
            }
        }
    }

    /// A dict with keys that are not all text: `[[key_view, value_view], …]`.
    fn dict_items(&mut self, pairs: &[Json], depth: usize) {
        for pair in pairs {
            if self.full() {
                return;
            }
            let Some([k, v]) = pair.as_array().map(Vec::as_slice) else {
                continue;
            };
            let seg = match k {
                Json::String(s) => Some(Segment::Key(s.clone())),
                Json::Number(n) => n.as_i64().map(Segment::Index),
                _ => None,
            };
            let name = scalar_text(k);
            self.child(seg, name.as_deref(), v, depth);
        }
    }
}

/// Search one channel's value (its JSON view), adding to `found`.
fn search_channel(channel: &str, value: &Json, needle: &Needle, cap: usize, found: Found) -> Found {
    let mut walk = Walk {
        needle,
        cap,
        channel,
        steps: Vec::new(),
        frozen: 0,
        found,
    };
    walk.key(channel, value);
    walk.value(value, 0);
    walk.found
}

/// Search one value found at `at` inside a channel (its JSON view; `at`'s own name is not
/// searched): the first `cap` matches, their paths starting with `at` — one item of a long
/// list searched at a time.
pub fn search_at(at: &KeyPath, value: &Json, needle: &Needle, cap: usize) -> Found {
    let mut walk = Walk {
        needle,
        cap,
        channel: &at.channel,
        steps: at.steps.clone(),
        frozen: 0,
        found: Found::default(),
    };
    walk.value(value, 0);
    walk.found
}

/// Search channel values (each a JSON view) in order: the first `cap` matches.
pub fn search_values<'a>(
    channels: impl IntoIterator<Item = (&'a str, &'a Json)>,
    needle: &Needle,
    cap: usize,
) -> Found {
    let mut found = Found::default();
    for (channel, value) in channels {
        found = search_channel(channel, value, needle, cap, found);
        if found.more {
            break;
        }
    }
    found
}

/// Search a checkpoint's state as the state view shows it (control channels left out,
/// secrets masked): the first `cap` matches. One channel's view is built at a time.
pub fn search_checkpoint(tuple: &CheckpointTuple, needle: &Needle, cap: usize) -> Found {
    let mut found = Found::default();
    for (channel, value) in &tuple.checkpoint.channel_values {
        if is_control_channel(channel) {
            continue;
        }
        let Some(view) = view_decoded(value, ViewOptions::default()) else {
            continue;
        };
        found = search_channel(channel, &view, needle, cap, found);
        if found.more {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests;
