//! The path of a watched value: a channel, then keys and list indexes inside its JSON view.
//!
//! ```text
//!   messages                 the whole channel
//!   messages[2].content      item 2 of the list, its field `content`
//!   messages[-1]             the last item
//!   plan.steps               key `steps` of the dict (or field of the object)
//!   plan["a.b"]["x y"]       keys that are not plain words, as JSON strings
//!   ["my channel"].x         a channel name that is not a plain word
//! ```
//!
//! A plain word is one or more letters, digits, `_`, `$`, `-` or `:` (`branch:to:agent` is a
//! channel name). This is the one parser every door uses; [`KeyPath`]'s `Display` writes the
//! canonical form, which parses back to the same path.
//!
//! Resolution follows the JSON view (`docs/json-view.md`) as the state view shows it: a list
//! index also reaches into sets and deques (`$value`) and other `$items` containers, a dict with
//! non-string keys (`builtins.dict` `$items`) is looked up by the key's view, and a field
//! written `$$x` (a field named `$x`) is found as `$x`.

use serde_json::Value as Json;
use std::fmt;

/// One step into a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A dict key or an object's field.
    Key(String),
    /// A list index; negative counts from the end (`-1` is the last item).
    Index(i64),
}

/// A parsed path: the channel and the steps inside its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath {
    /// The channel.
    pub channel: String,
    /// The steps inside the channel's value (empty: the whole value).
    pub steps: Vec<Segment>,
}

/// A path that does not parse: what was expected, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad path {path:?}: {reason} at character {at} (write e.g. messages[2].content or plan[\"a.b\"])"
)]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// Character position (1-based) of the problem.
    pub at: usize,
    /// What is wrong.
    pub reason: String,
}

fn plain_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-' | ':')
}

fn is_plain(s: &str) -> bool {
    !s.is_empty() && s.chars().all(plain_char)
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn fail<T>(&self, reason: impl Into<String>) -> Result<T, PathError> {
        Err(PathError {
            path: self.text.to_owned(),
            at: self.pos + 1,
            reason: reason.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn word(&mut self) -> Result<String, PathError> {
        let start = self.pos;
        while self.peek().is_some_and(plain_char) {
            self.pos += 1;
        }
        if self.pos == start {
            return match self.peek() {
                None => self.fail("expected a key, found the end"),
                Some(c) => self.fail(format!("expected a key, found {c:?}")),
            };
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// After `[`: a JSON string or an integer, then `]`.
    fn bracket(&mut self) -> Result<Segment, PathError> {
        let seg = match self.peek() {
            Some('"') => Segment::Key(self.string()?),
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let start = self.pos;
                self.pos += 1;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits: String = self.chars[start..self.pos].iter().collect();
                match digits.parse::<i64>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) => {
                        self.pos = start;
                        return self.fail(format!("{digits:?} is not a list index"));
                    }
                }
            }
            Some(c) => return self.fail(format!("expected a number or a quoted key, found {c:?}")),
            None => return self.fail("unclosed \"[\""),
        };
        match self.peek() {
            Some(']') => {
                self.pos += 1;
                Ok(seg)
            }
            Some(c) => self.fail(format!("expected \"]\", found {c:?}")),
            None => self.fail("unclosed \"[\""),
        }
    }

    /// A JSON string literal starting at `"`.
    fn string(&mut self) -> Result<String, PathError> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    let literal: String = self.chars[start..self.pos].iter().collect();
                    return serde_json::from_str(&literal).or_else(|_| {
                        self.pos = start;
                        self.fail("the quoted key is not a valid JSON string")
                    });
                }
                _ => {}
            }
        }
        self.pos = start;
        self.fail("unclosed quoted key")
    }
}

impl KeyPath {
    /// Parse a path (see the module docs).
    pub fn parse(text: &str) -> Result<KeyPath, PathError> {
        let mut p = Parser {
            text,
            chars: text.chars().collect(),
            pos: 0,
        };
        if text.trim().is_empty() {
            return p.fail("empty: give a channel, e.g. messages");
        }
        let channel = if p.peek() == Some('[') {
            p.pos += 1;
            match p.bracket()? {
                Segment::Key(k) => k,
                Segment::Index(_) => {
                    p.pos = 0;
                    return p.fail("the path starts with a channel name, not an index");
                }
            }
        } else {
            p.word()?
        };
        let mut steps = Vec::new();
        while let Some(c) = p.peek() {
            p.pos += 1;
            match c {
                '.' => steps.push(Segment::Key(p.word()?)),
                '[' => steps.push(p.bracket()?),
                other => {
                    p.pos -= 1;
                    return p.fail(format!("expected \".\" or \"[\", found {other:?}"));
                }
            }
        }
        Ok(KeyPath { channel, steps })
    }

    /// The value at this path inside the channel's JSON view, if there is one.
    pub fn resolve<'a>(&self, channel_value: &'a Json) -> Option<&'a Json> {
        self.steps
            .iter()
            .try_fold(channel_value, |v, s| step_into(v, s))
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
        if is_plain(&self.channel) {
            f.write_str(&self.channel)?;
        } else {
            write!(f, "[{}]", quoted(&self.channel))?;
        }
        for s in &self.steps {
            match s {
                Segment::Key(k) if is_plain(k) => write!(f, ".{k}")?,
                Segment::Key(k) => write!(f, "[{}]", quoted(k))?,
                Segment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

fn at_index(items: &[Json], i: i64) -> Option<&Json> {
    let n = i64::try_from(items.len()).ok()?;
    let i = if i < 0 { n + i } else { i };
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

/// The `[key_view, value_view]` pairs of a dict with keys that are not all plain strings.
fn dict_items(o: &serde_json::Map<String, Json>) -> Option<&Vec<Json>> {
    if o.get("$type").and_then(Json::as_str) != Some("builtins.dict") {
        return None;
    }
    o.get("$items").and_then(Json::as_array)
}

fn lookup<'a>(pairs: &'a [Json], key: &Json) -> Option<&'a Json> {
    pairs
        .iter()
        .find_map(|p| match p.as_array().map(Vec::as_slice) {
            Some([k, v]) if k == key => Some(v),
            _ => None,
        })
}

fn step_into<'a>(v: &'a Json, s: &Segment) -> Option<&'a Json> {
    match (v, s) {
        (Json::Array(items), Segment::Index(i)) => at_index(items, *i),
        (Json::Object(o), Segment::Key(k)) => {
            if let Some(pairs) = dict_items(o) {
                return lookup(pairs, &Json::String(k.clone()));
            }
            // A field named `$x` is written `$$x` in the view.
            if k.starts_with('$') {
                if let Some(v) = o.get(&format!("${k}")) {
                    return Some(v);
                }
            }
            o.get(k)
        }
        (Json::Object(o), Segment::Index(i)) => {
            if let Some(pairs) = dict_items(o) {
                return lookup(pairs, &Json::from(*i));
            }
            // Sets, frozensets, deques (`$value`) and other item containers (`$items`).
            let items = o
                .get("$value")
                .and_then(Json::as_array)
                .or_else(|| o.get("$items").and_then(Json::as_array))?;
            at_index(items, *i)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> KeyPath {
        KeyPath::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn paths_parse_and_print_back() {
        let p = parse("messages[2].content");
        assert_eq!(p.channel, "messages");
        assert_eq!(p.steps, [Segment::Index(2), Segment::Key("content".into())]);
        for text in [
            "messages",
            "messages[-1]",
            "plan.steps[0].title",
            r#"plan["a.b"]["x y"].c"#,
            r#"["my channel"].x"#,
            "branch:to:agent",
            r#"x["say \"hi\""]"#,
            "rich.$args[0]",
        ] {
            assert_eq!(parse(text).to_string(), text, "{text}");
        }
        // Quoted plain words print bare.
        assert_eq!(parse(r#"["plan"]["steps"]"#).to_string(), "plan.steps");
    }

    #[test]
    fn bad_paths_say_what_and_where_on_one_line() {
        for (text, at, reason) in [
            ("", 1, "empty"),
            ("messages.", 10, "expected a key, found the end"),
            ("messages[x]", 10, "expected a number or a quoted key"),
            ("messages[2", 11, "unclosed"),
            ("messages[2}", 11, "expected \"]\""),
            (r#"plan["a.b]"#, 6, "unclosed quoted key"),
            ("[3].x", 1, "starts with a channel name"),
            ("a b", 2, "expected \".\" or \"[\""),
            ("m[99999999999999999999]", 3, "is not a list index"),
        ] {
            let e = KeyPath::parse(text).expect_err(text);
            assert_eq!(e.at, at, "{text}: {e}");
            assert!(e.reason.contains(reason), "{text}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn resolution_follows_the_json_view() {
        let v = json!({
            "steps": ["a", "b", "c"],
            "tags": {"$type": "builtins.set", "$value": ["x", "y"]},
            "by_int": {"$type": "builtins.dict", "$items": [[1, "one"], [null, "none"]]},
            "dollar": {"$type": "m.Obj", "$$value": 5},
            "msg": {"$type": "langchain_core.messages.ai.AIMessage", "content": "hi"},
        });
        let at = |p: &str| parse(&format!("plan{p}")).resolve(&v).cloned();
        assert_eq!(at(""), Some(v.clone()));
        assert_eq!(at(".steps[1]"), Some(json!("b")));
        assert_eq!(at(".steps[-1]"), Some(json!("c")));
        assert_eq!(at(".steps[3]"), None);
        assert_eq!(at(".steps[-4]"), None);
        assert_eq!(at(".tags[1]"), Some(json!("y")));
        assert_eq!(at(".by_int[1]"), Some(json!("one")));
        assert_eq!(at(r#"["dollar"]["$value"]"#), Some(json!(5)));
        assert_eq!(at(".msg.content"), Some(json!("hi")));
        assert_eq!(at(".missing"), None);
        assert_eq!(at(".steps.x"), None);
    }
}
