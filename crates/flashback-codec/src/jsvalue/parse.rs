//! The JSON reader of the `json` serde: it reads what JS's `JSON.parse` reads, into a tree
//! ([`Node`]) that [`super::revive`] walks.
//!
//! * A string holding a UTF-16 surrogate that is not half of a pair (`"…\ud83d"`, what
//!   `JSON.stringify` writes for a string cut inside an emoji) is read, as JS reads it: kept
//!   with its exact token ([`Node::Lone`]) and shown with U+FFFD in place of the surrogate.
//! * Numbers keep their text ([`Node::Num`]), so one beyond 64-bit integers or float64 is not
//!   lost ([`super::number`]).
//! * The reader is iterative (no recursion, any depth). A list or dict opening deeper than
//!   `max_depth` levels is read past — its syntax checked, nothing built — and kept as its text
//!   ([`Node::Deep`]): one value too deep, not the whole document.
//! * Each dict keeps its exact text (what the decode cache shares `lc` envelopes by); a
//!   repeated key keeps its first place and its last value, as `JSON.parse` does.

use super::node::{Node, Obj};
use std::borrow::Cow;
use std::collections::HashMap;

/// Why a text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at byte {offset}: {message}")]
pub struct JsonError {
    /// Where reading stopped.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

/// Whether `text` is exactly one JSON number token.
pub fn is_number(text: &str) -> bool {
    let mut p = Reader::new(text.as_bytes());
    p.skip_number().is_ok() && p.pos == text.len()
}

/// Parse a whole JSON text; lists and dicts opening deeper than `max_depth` levels are read
/// past ([`Node::Deep`]).
pub(crate) fn parse(text: &[u8], max_depth: usize) -> Result<Node<'_>, JsonError> {
    let mut p = Reader::new(text);
    // The containers being built, and (past `max_depth`) those being read past: one flag each
    // (a dict?), nothing built; `deep_start` is where the outermost of those began.
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut deep: Vec<bool> = Vec::new();
    let mut deep_start = 0;
    'value: loop {
        p.ws();
        let mut node = match p.peek() {
            Some(open @ (b'[' | b'{')) => {
                let (start, dict) = (p.pos, open == b'{');
                p.pos += 1;
                p.ws();
                let empty = p.peek() == Some(if dict { b'}' } else { b']' });
                if empty {
                    p.pos += 1;
                }
                if deep.is_empty() && stack.len() < max_depth {
                    match (empty, dict) {
                        (true, false) => Node::Arr(Vec::new()),
                        (true, true) => Node::Obj(Obj {
                            members: Vec::new(),
                            text: Some(&text[start..p.pos]),
                        }),
                        (false, false) => {
                            stack.push(Frame::Arr(Vec::new()));
                            continue 'value;
                        }
                        (false, true) => {
                            let mut m = Members::new(start);
                            m.key = Some(p.key()?);
                            stack.push(Frame::Obj(m));
                            continue 'value;
                        }
                    }
                } else {
                    if deep.is_empty() {
                        deep_start = start;
                    }
                    if !empty {
                        deep.push(dict);
                        if dict {
                            p.skip_key()?;
                        }
                        continue 'value;
                    }
                    read_past(&deep, &p, deep_start)?
                }
            }
            Some(b'"') if deep.is_empty() => p.string()?,
            Some(b'"') => {
                p.skip_string()?;
                Node::Null
            }
            Some(b't') => p.literal("true", Node::Bool(true))?,
            Some(b'f') => p.literal("false", Node::Bool(false))?,
            Some(b'n') => p.literal("null", Node::Null)?,
            Some(b'-' | b'0'..=b'9') if deep.is_empty() => p.number()?,
            Some(b'-' | b'0'..=b'9') => {
                p.skip_number()?;
                Node::Null
            }
            Some(b) => return Err(p.err(&format!("unexpected character {:?}", b as char))),
            None => return Err(p.err("the text ends where a value should be")),
        };
        // Put the value in its container; close the containers that end here.
        loop {
            let dict = match (deep.last(), stack.last_mut()) {
                (Some(dict), _) => *dict,
                (None, Some(Frame::Arr(items))) => {
                    items.push(node);
                    false
                }
                (None, Some(Frame::Obj(m))) => {
                    m.insert(node);
                    true
                }
                (None, None) => {
                    p.ws();
                    if p.pos != text.len() {
                        return Err(p.err("unexpected text after the value"));
                    }
                    return Ok(node);
                }
            };
            p.ws();
            match (p.peek(), dict) {
                (Some(b','), _) => {
                    p.pos += 1;
                    match (dict, deep.is_empty(), stack.last_mut()) {
                        (true, true, Some(Frame::Obj(m))) => m.key = Some(p.key()?),
                        (true, _, _) => p.skip_key()?,
                        _ => {}
                    }
                    continue 'value;
                }
                (Some(b']'), false) | (Some(b'}'), true) => {
                    p.pos += 1;
                    node = if deep.pop().is_some() {
                        read_past(&deep, &p, deep_start)?
                    } else {
                        match stack.pop() {
                            Some(Frame::Arr(items)) => Node::Arr(items),
                            Some(Frame::Obj(m)) => Node::Obj(Obj {
                                text: Some(&text[m.start..p.pos]),
                                members: m.members,
                            }),
                            None => return Err(p.err("unbalanced")),
                        }
                    };
                }
                (_, false) => return Err(p.err("expected ',' or ']' after a list item")),
                (_, true) => return Err(p.err("expected ',' or '}' after a dict member")),
            }
        }
    }
}

/// A container read past has closed: the whole value too deep (from `start`) when it was the
/// outermost, else nothing (a placeholder inside it).
fn read_past<'a>(deep: &[bool], p: &Reader<'a>, start: usize) -> Result<Node<'a>, JsonError> {
    Ok(match deep.is_empty() {
        true => Node::Deep(p.str_of(start, p.pos)?),
        false => Node::Null,
    })
}

/// A container being built.
enum Frame<'a> {
    Arr(Vec<Node<'a>>),
    Obj(Members<'a>),
}

/// A dict's members while it is read: repeated keys are found through an index once there are
/// many.
struct Members<'a> {
    start: usize,
    members: Vec<(Node<'a>, Node<'a>)>,
    key: Option<Node<'a>>,
    index: Option<HashMap<KeyId, usize>>,
}

/// A key's identity: its text (or, with lone surrogates, its token).
#[derive(PartialEq, Eq, Hash)]
struct KeyId(bool, String);

fn key_id(k: &Node<'_>) -> KeyId {
    match k {
        Node::Lone(token, _) => KeyId(true, (*token).to_owned()),
        k => KeyId(false, k.as_str().unwrap_or_default().to_owned()),
    }
}

/// Dicts up to this many members find a repeated key by comparing.
const SCAN: usize = 16;

impl<'a> Members<'a> {
    fn new(start: usize) -> Self {
        Members {
            start,
            members: Vec::new(),
            key: None,
            index: None,
        }
    }

    fn insert(&mut self, value: Node<'a>) {
        let Some(key) = self.key.take() else { return };
        let found = match &self.index {
            Some(index) => index.get(&key_id(&key)).copied(),
            None => self.members.iter().position(|(k, _)| *k == key),
        };
        if let Some(i) = found {
            self.members[i].1 = value;
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key_id(&key), self.members.len());
        }
        self.members.push((key, value));
        if self.index.is_none() && self.members.len() > SCAN {
            let index = self
                .members
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (key_id(k), i))
                .collect();
            self.index = Some(index);
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }

    /// The text of `start..end`: only strings (and values kept as their text) are checked to
    /// be UTF-8; what is read past is not decoded at all.
    fn str_of(&self, start: usize, end: usize) -> Result<&'a str, JsonError> {
        std::str::from_utf8(&self.b[start..end]).map_err(|e| JsonError {
            offset: start + e.valid_up_to(),
            message: "the text is not UTF-8".into(),
        })
    }

    fn err(&self, message: &str) -> JsonError {
        JsonError {
            offset: self.pos,
            message: message.to_owned(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Result<Node<'a>, JsonError> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(node)
        } else {
            Err(self.err("unexpected word"))
        }
    }

    /// `"key"` then `:`.
    fn key(&mut self) -> Result<Node<'a>, JsonError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("a dict key must be a string"));
        }
        let key = self.string()?;
        self.colon()?;
        Ok(key)
    }

    /// [`Reader::key`] read past.
    fn skip_key(&mut self) -> Result<(), JsonError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("a dict key must be a string"));
        }
        self.skip_string()?;
        self.colon()
    }

    fn colon(&mut self) -> Result<(), JsonError> {
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err("expected ':' after a dict key"));
        }
        self.pos += 1;
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A number, as its token.
    fn number(&mut self) -> Result<Node<'a>, JsonError> {
        let start = self.pos;
        self.skip_number()?;
        Ok(Node::Num(Cow::Borrowed(self.str_of(start, self.pos)?)))
    }

    /// Read past `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn skip_number(&mut self) -> Result<(), JsonError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("a number needs digits")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("a fraction needs digits"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("an exponent needs digits"));
            }
        }
        Ok(())
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u16, JsonError> {
        let digits = self
            .b
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.err("\\u needs four hex digits"))?;
        let mut n = 0u16;
        for &d in digits {
            let v = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.err("\\u needs four hex digits"))?;
            n = (n << 4) | v as u16;
        }
        self.pos += 4;
        Ok(n)
    }

    /// Inside a string: to the end of its plain run, at the closing quote (`true`) or a
    /// backslash (`false`).
    fn run_end(&mut self) -> Result<bool, JsonError> {
        let Some(n) = special(&self.b[self.pos..]) else {
            self.pos = self.b.len();
            return Err(self.err("the text ends inside a string"));
        };
        self.pos += n;
        match self.b[self.pos] {
            b'"' => Ok(true),
            b'\\' => Ok(false),
            _ => Err(self.err("a control character inside a string")),
        }
    }

    /// Read past a string token, checking its escapes (not its UTF-8: nothing is decoded).
    fn skip_string(&mut self) -> Result<(), JsonError> {
        self.pos += 1;
        loop {
            if self.run_end()? {
                self.pos += 1;
                return Ok(());
            }
            match self.b.get(self.pos + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 2,
                Some(b'u') => {
                    self.pos += 2;
                    self.hex4()?;
                }
                _ => return Err(self.err("an invalid escape inside a string")),
            }
        }
    }

    /// A string token.
    fn string(&mut self) -> Result<Node<'a>, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Option<String> = None;
        let mut lone = false;
        let mut run = self.pos;
        loop {
            if self.run_end()? {
                break;
            }
            let buf = out.get_or_insert_with(String::new);
            buf.push_str(self.str_of(run, self.pos)?);
            self.pos += 1;
            let esc = self
                .peek()
                .ok_or_else(|| self.err("the text ends inside a string"))?;
            self.pos += 1;
            let c = match esc {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let unit = self.hex4()?;
                    match unit {
                        0xd800..=0xdbff if self.b[self.pos..].starts_with(b"\\u") => {
                            let at = self.pos;
                            self.pos += 2;
                            let low = self.hex4()?;
                            if (0xdc00..=0xdfff).contains(&low) {
                                let c = 0x10000
                                    + ((u32::from(unit) - 0xd800) << 10)
                                    + (u32::from(low) - 0xdc00);
                                char::from_u32(c).unwrap_or('\u{fffd}')
                            } else {
                                // Not its pair: the next escape is read on its own.
                                self.pos = at;
                                lone = true;
                                '\u{fffd}'
                            }
                        }
                        0xd800..=0xdfff => {
                            lone = true;
                            '\u{fffd}'
                        }
                        u => char::from_u32(u32::from(u)).unwrap_or('\u{fffd}'),
                    }
                }
                _ => return Err(self.err("an invalid escape inside a string")),
            };
            buf.push(c);
            run = self.pos;
        }
        let end = self.pos;
        self.pos += 1;
        Ok(match out {
            None => Node::Str(Cow::Borrowed(self.str_of(start + 1, end)?)),
            Some(mut s) => {
                s.push_str(self.str_of(run, end)?);
                if lone {
                    Node::Lone(self.str_of(start, self.pos)?, s)
                } else {
                    Node::Str(Cow::Owned(s))
                }
            }
        })
    }
}

/// Where the first `"`, `\\` or control character of `b` is: eight bytes at a time while
/// there is none (a string's plain run), then byte by byte.
fn special(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // A zero byte of x ^ c is a byte equal to c; a byte below 0x20 is a control character.
        if below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1)
            | below(x, 0x20)
            != 0
        {
            break;
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|n| i + n)
}
