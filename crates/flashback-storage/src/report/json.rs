//! Measuring JSON-stored values (the `json` serde: every value of a LangGraph.js database, and
//! LangGraph Python's 2024 legacy format) as exactly as msgpack ones, without building them:
//!
//! * a checkpoint document's `channel_values` split into each value's stored bytes, in document
//!   order (serde_json's borrowed [`RawValue`]s: the exact slices of the document);
//! * `channel_versions` as the blobs' version text (JS versions are integers: `3` → `"3"`);
//! * the large strings inside a value ([`scan_large`]), walked over the text as the msgpack walk
//!   walks msgpack (`flashback_codec::msgpack::scan`): objects by key, arrays by index, and an
//!   `lc` constructor envelope through its `kwargs` (or an `lc: 2` record's `args`) without a
//!   path step of its own, as a Python object is walked through its arguments — so a message's
//!   text is `messages[3].content` on both. A string's unit is its text **as stored** between
//!   the quotes (escapes included: what the bytes of the row hold); its unescaped text is what
//!   is previewed and sniffed for base64 files ([`unescaped`]);
//! * the `Send` packets of `__pregel_tasks`: LangGraph.js stores plain `{"node", "args"}`
//!   objects, typed as `langgraph.types.Send` by `flashback_codec::jsvalue::for_channel`.
//!
//! Nothing here panics on malformed input: an error is returned (the walk reports what it found
//! before it).

use flashback_codec::jsvalue;
use flashback_codec::msgpack::scan::Step;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Nesting deeper than this stops the walk (serde_json's own limit).
const MAX_DEPTH: usize = 128;

/// An object's entries in document order, each value as its stored text.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    out.push((k, map.next_value::<&'a RawValue>()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The two fields of a checkpoint document measured here (the others are checked and skipped).
#[derive(serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow, default)]
    channel_values: Option<Entries<'a>>,
    #[serde(default)]
    channel_versions: Option<serde_json::Map<String, serde_json::Value>>,
}

fn doc(doc: &[u8]) -> Result<Doc<'_>, String> {
    // (A derived struct would also accept an array.)
    if doc.trim_ascii_start().first() != Some(&b'{') {
        return Err("the JSON document is not an object".into());
    }
    serde_json::from_slice(doc).map_err(|e| format!("the JSON document is unreadable: {e}"))
}

/// Each channel value's stored bytes in a JSON checkpoint document, in document order.
pub(crate) fn inline_values(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    Ok(doc(bytes)?
        .channel_values
        .map(|e| e.0)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.get().as_bytes()))
        .collect())
}

/// `channel_versions` of a JSON checkpoint document as the blob rows' version text.
pub(crate) fn versions(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    Ok(doc(bytes)?
        .channel_versions
        .unwrap_or_default()
        .iter()
        .filter_map(|(c, v)| Some((c.clone(), crate::model::Version::from_json(v)?.as_text())))
        .collect())
}

/// The node a JSON `Send` packet goes to (`None`: not a readable Send).
pub(crate) fn send_node(bytes: &[u8]) -> Option<String> {
    let v = jsvalue::revive_text(bytes).ok()?;
    super::send::send_target(&jsvalue::for_channel(jsvalue::TASKS, v))
}

/// The items of a JSON array, each as its stored bytes (`None`: not an array).
pub(crate) fn items(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let items: Vec<&RawValue> = serde_json::from_slice(bytes).ok()?;
    Some(items.into_iter().map(|v| v.get().as_bytes()).collect())
}

/// A large string found in a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JsonStr<'a> {
    /// Its text as stored, between the quotes.
    pub(crate) raw: &'a [u8],
    /// Whether the text holds escapes (`\n`, `\"`, `\u00e9`, …).
    pub(crate) escaped: bool,
}

/// The string's text with its escapes resolved (as stored when it has none, or when they are
/// not valid JSON escapes).
pub(crate) fn unescaped<'a>(s: &JsonStr<'a>) -> Cow<'a, [u8]> {
    if !s.escaped {
        return Cow::Borrowed(s.raw);
    }
    let mut quoted = Vec::with_capacity(s.raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(s.raw);
    quoted.push(b'"');
    match serde_json::from_slice::<String>(&quoted) {
        Ok(text) => Cow::Owned(text.into_bytes()),
        Err(_) => Cow::Borrowed(s.raw),
    }
}

/// Call `f` with every string value (not key) of at least `min` stored bytes in the JSON text
/// `data`, and its path. Malformed input stops the walk with an error (what was found before
/// it was reported).
pub(crate) fn scan_large<'a>(
    data: &'a [u8],
    min: usize,
    f: &mut dyn FnMut(&[Step<'a>], JsonStr<'a>),
) -> Result<(), String> {
    let mut w = Walk {
        data,
        pos: 0,
        min,
        path: Vec::new(),
    };
    w.value(0, f)?;
    w.space();
    if w.pos != data.len() {
        return Err(w.err("trailing characters"));
    }
    Ok(())
}

struct Walk<'a> {
    data: &'a [u8],
    pos: usize,
    min: usize,
    path: Vec<Step<'a>>,
}

impl<'a> Walk<'a> {
    fn err(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.pos)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.data.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.data.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", b as char)))
        }
    }

    /// The string at `pos` (after its opening quote has been seen): its stored text.
    fn string(&mut self) -> Result<JsonStr<'a>, String> {
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            match self.data.get(self.pos) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    self.pos += 2;
                }
                Some(&b) if b < 0x20 => return Err(self.err("control character in a string")),
                Some(_) => self.pos += 1,
            }
        }
        let raw = &self.data[start..self.pos];
        self.pos += 1;
        Ok(JsonStr { raw, escaped })
    }

    fn value(
        &mut self,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], JsonStr<'a>),
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(self.err(&format!("nesting deeper than {MAX_DEPTH}")));
        }
        match self.peek() {
            Some(b'{') => self.object(depth, f),
            Some(b'[') => self.array(depth, f),
            Some(b'"') => {
                let s = self.string()?;
                if s.raw.len() >= self.min {
                    f(&self.path, s);
                }
                Ok(())
            }
            Some(b't' | b'f' | b'n' | b'-' | b'0'..=b'9') => {
                let start = self.pos;
                while let Some(b) = self.data.get(self.pos) {
                    if !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) {
                        break;
                    }
                    self.pos += 1;
                }
                match &self.data[start..self.pos] {
                    b"true" | b"false" | b"null" => Ok(()),
                    n if n[0] == b'-' || n[0].is_ascii_digit() => Ok(()),
                    _ => Err(self.err("not a JSON value")),
                }
            }
            _ => Err(self.err("not a JSON value")),
        }
    }

    fn object(
        &mut self,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], JsonStr<'a>),
    ) -> Result<(), String> {
        self.pos += 1;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        // An `lc` constructor envelope (`lc` and `type` come first as both serdes write them).
        let (mut lc, mut constructor) = (false, false);
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a key"));
            }
            let key = self.string()?;
            let name = std::str::from_utf8(key.raw).ok();
            self.expect(b':')?;
            let through = lc && constructor && matches!(name, Some("kwargs" | "args"));
            if !through {
                self.path.push(name.map_or(Step::OtherKey, Step::Key));
            }
            self.space();
            let start = self.pos;
            let walked = self.value(depth + 1, f);
            if !through {
                self.path.pop();
            }
            walked?;
            let value = &self.data[start..self.pos];
            match name {
                Some("lc") => lc = matches!(value, b"1" | b"2"),
                Some("type") => constructor = value == b"\"constructor\"",
                _ => {}
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn array(
        &mut self,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], JsonStr<'a>),
    ) -> Result<(), String> {
        self.pos += 1;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut i = 0;
        loop {
            self.path.push(Step::Index(i));
            let walked = self.value(depth + 1, f);
            self.path.pop();
            walked?;
            i += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
