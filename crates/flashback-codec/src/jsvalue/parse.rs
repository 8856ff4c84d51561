//! The JSON reader of the `json` serde: it reads what JS's `JSON.parse` reads, into a tree
//! ([`Node`]) that [`super::revive`] walks.
//!
//! * A string holding a UTF-16 surrogate that is not half of a pair (`"…\ud83d"`, what
//!   `JSON.stringify` writes for a string cut inside an emoji) is read, as JS reads it: kept
//!   with its exact token ([`Node::Lone`]) and shown with U+FFFD in place of the surrogate.
//! * Numbers keep their text ([`Node::Num`]), so one beyond 64-bit integers or float64 is not
//!   lost ([`number`]).
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
    let mut p = Reader::new(text);
    p.number().is_ok() && p.pos == text.len()
}

/// Parse a whole JSON text; lists and dicts opening deeper than `max_depth` levels are read
/// past ([`Node::Deep`]).
pub(crate) fn parse(text: &str, max_depth: usize) -> Result<Node<'_>, JsonError> {
    let mut p = Reader::new(text);
    let mut stack: Vec<Frame<'_>> = Vec::new();
    // While reading past a value too deep: the depth and offset where it starts.
    let mut skip: Option<(usize, usize)> = None;
    'value: loop {
        p.ws();
        let mut node = match p.peek() {
            Some(open @ (b'[' | b'{')) => {
                let start = p.pos;
                if skip.is_none() && stack.len() >= max_depth {
                    skip = Some((stack.len(), start));
                }
                p.pos += 1;
                let mut frame = match (skip.is_some(), open) {
                    (true, _) => Frame::Skip { obj: open == b'{' },
                    (false, b'[') => Frame::Arr(Vec::new()),
                    (false, _) => Frame::Obj(Members::new(start)),
                };
                p.ws();
                if p.peek() == Some(if open == b'[' { b']' } else { b'}' }) {
                    p.pos += 1;
                    finish(frame, &p, &mut skip, stack.len())
                } else {
                    if let Frame::Obj(m) = &mut frame {
                        m.key = Some(p.key(false)?);
                    } else if let Frame::Skip { obj: true } = frame {
                        p.key(true)?;
                    }
                    stack.push(frame);
                    continue 'value;
                }
            }
            Some(b'"') => p.string(skip.is_some())?,
            Some(b't') => p.literal("true", Node::Bool(true))?,
            Some(b'f') => p.literal("false", Node::Bool(false))?,
            Some(b'n') => p.literal("null", Node::Null)?,
            Some(b'-' | b'0'..=b'9') => p.number()?,
            Some(b) => return Err(p.err(&format!("unexpected character {:?}", b as char))),
            None => return Err(p.err("the text ends where a value should be")),
        };
        // Put the value in its container; close the containers that end here.
        loop {
            let Some(top) = stack.last_mut() else {
                p.ws();
                if p.pos != text.len() {
                    return Err(p.err("unexpected text after the value"));
                }
                return Ok(node);
            };
            let obj = match top {
                Frame::Arr(items) => {
                    items.push(node);
                    false
                }
                Frame::Obj(m) => {
                    m.insert(node);
                    true
                }
                Frame::Skip { obj } => *obj,
            };
            p.ws();
            match (p.peek(), obj) {
                (Some(b','), _) => {
                    p.pos += 1;
                    if obj {
                        let skipping = matches!(top, Frame::Skip { .. });
                        let key = p.key(skipping)?;
                        if let Frame::Obj(m) = top {
                            m.key = Some(key);
                        }
                    }
                    continue 'value;
                }
                (Some(b']'), false) | (Some(b'}'), true) => {
                    p.pos += 1;
                    let Some(frame) = stack.pop() else {
                        return Err(p.err("unbalanced"));
                    };
                    node = finish(frame, &p, &mut skip, stack.len());
                }
                (_, false) => return Err(p.err("expected ',' or ']' after a list item")),
                (_, true) => return Err(p.err("expected ',' or '}' after a dict member")),
            }
        }
    }
}

/// A container being read.
enum Frame<'a> {
    Arr(Vec<Node<'a>>),
    Obj(Members<'a>),
    /// Inside a value too deep: nothing is kept.
    Skip {
        obj: bool,
    },
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

/// The node of a container that has just closed (at `depth`, the stack's length without it).
fn finish<'a>(
    frame: Frame<'a>,
    p: &Reader<'a>,
    skip: &mut Option<(usize, usize)>,
    depth: usize,
) -> Node<'a> {
    match frame {
        Frame::Arr(items) => Node::Arr(items),
        Frame::Obj(m) => Node::Obj(Obj {
            members: m.members,
            text: Some(&p.text[m.start..p.pos]),
        }),
        Frame::Skip { .. } => match *skip {
            Some((at, start)) if at == depth => {
                *skip = None;
                Node::Deep(&p.text[start..p.pos])
            }
            // Inside the value read past: nothing is kept.
            _ => Node::Null,
        },
    }
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            b: text.as_bytes(),
            pos: 0,
        }
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
    fn key(&mut self, skipping: bool) -> Result<Node<'a>, JsonError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("a dict key must be a string"));
        }
        let key = self.string(skipping)?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err("expected ':' after a dict key"));
        }
        self.pos += 1;
        Ok(key)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as its token.
    fn number(&mut self) -> Result<Node<'a>, JsonError> {
        let start = self.pos;
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
        Ok(Node::Num(Cow::Borrowed(&self.text[start..self.pos])))
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

    /// A string token. With `skipping`, only checked (a [`Node::Null`] stands for it).
    fn string(&mut self, skipping: bool) -> Result<Node<'a>, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Option<String> = None;
        let mut lone = false;
        let mut run = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.err("the text ends inside a string"));
            };
            match b {
                b'"' => break,
                b'\\' => {}
                0x00..=0x1f => return Err(self.err("a control character inside a string")),
                _ => {
                    self.pos += 1;
                    continue;
                }
            }
            let buf = out.get_or_insert_with(String::new);
            if !skipping {
                buf.push_str(&self.text[run..self.pos]);
            }
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
            if !skipping {
                buf.push(c);
            }
            run = self.pos;
        }
        let body = &self.text[start + 1..self.pos];
        self.pos += 1;
        if skipping {
            return Ok(Node::Null);
        }
        Ok(match out {
            None => Node::Str(Cow::Borrowed(body)),
            Some(mut s) => {
                s.push_str(&self.text[run..self.pos - 1]);
                if lone {
                    Node::Lone(&self.text[start..self.pos], s)
                } else {
                    Node::Str(Cow::Owned(s))
                }
            }
        })
    }
}
