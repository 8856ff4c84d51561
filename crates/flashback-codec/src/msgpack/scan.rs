//! Finding the large strings and byte strings inside a msgpack document without decoding it:
//! the storage report's duplicated payloads and embedded files (`docs/storage.md`).
//!
//! The walk follows maps (string keys name the path), arrays (indexes) and LangGraph's ext
//! payloads: a Python object (`[module, name, args, method?]`, ext 0–5) is walked through its
//! `args` without a path step of its own, so a message's content is `messages[3].content`; a
//! numpy array (ext 6) and a DeltaChannel snapshot (ext 7) are walked as the documents they
//! hold. An ext payload that is not msgpack is left alone (it has no strings to find).

use super::{MsgpackError, MAX_DEPTH};

/// One step of a path into a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// A map entry under a string key.
    Key(&'a str),
    /// A map entry under a key that is not a string.
    OtherKey,
    /// An array item.
    Index(usize),
}

/// `messages[3].content[1].image_url.url` (empty: the document itself).
pub fn path_text(steps: &[Step<'_>]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::OtherKey => out.push_str(if out.is_empty() { "?" } else { ".?" }),
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// A large string or byte string found in a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found<'a> {
    /// Its bytes (a `str`'s UTF-8 bytes, unchecked).
    pub bytes: &'a [u8],
    /// A msgpack `str` (else `bin`).
    pub is_str: bool,
}

/// Call `f` with every `str` and `bin` of at least `min` bytes in `data`, and its path.
/// Malformed input stops the walk with the error (what was found before it was reported).
pub fn scan_large<'a>(
    data: &'a [u8],
    min: usize,
    f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
) -> Result<(), MsgpackError> {
    let mut w = Walk {
        data,
        pos: 0,
        min,
        path: Vec::new(),
    };
    w.value(0, f)
}

struct Walk<'a> {
    data: &'a [u8],
    pos: usize,
    min: usize,
    path: Vec<Step<'a>>,
}

impl<'a> Walk<'a> {
    fn err(&self, message: impl Into<String>) -> MsgpackError {
        MsgpackError {
            offset: self.pos,
            message: message.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], MsgpackError> {
        match self.pos.checked_add(n).filter(|&e| e <= self.data.len()) {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.err(format!(
                "truncated: needed {n} more bytes, {} left",
                self.data.len() - self.pos
            ))),
        }
    }

    fn len(&mut self, width: usize) -> Result<usize, MsgpackError> {
        let b = self.take(width)?;
        Ok(b.iter().fold(0usize, |n, &x| (n << 8) | x as usize))
    }

    fn value(
        &mut self,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        if depth > MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let m = self.take(1)?[0];
        match m {
            0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => {}
            0x80..=0x8f => self.map((m & 0x0f) as usize, depth, f)?,
            0x90..=0x9f => self.array((m & 0x0f) as usize, depth, f)?,
            0xa0..=0xbf => self.bytes((m & 0x1f) as usize, true, f)?,
            0xd9..=0xdb => {
                let n = self.len(1 << (m - 0xd9))?;
                self.bytes(n, true, f)?;
            }
            0xc4..=0xc6 => {
                let n = self.len(1 << (m - 0xc4))?;
                self.bytes(n, false, f)?;
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (m - 0xc7))?;
                self.ext(n, depth, f)?;
            }
            0xd4..=0xd8 => self.ext(1 << (m - 0xd4), depth, f)?,
            0xca | 0xce | 0xd2 => drop(self.take(4)?),
            0xcb | 0xcf | 0xd3 => drop(self.take(8)?),
            0xcc | 0xd0 => drop(self.take(1)?),
            0xcd | 0xd1 => drop(self.take(2)?),
            0xdc | 0xdd => {
                let n = self.len(if m == 0xdc { 2 } else { 4 })?;
                self.array(n, depth, f)?;
            }
            0xde | 0xdf => {
                let n = self.len(if m == 0xde { 2 } else { 4 })?;
                self.map(n, depth, f)?;
            }
            0xc1 => return Err(self.err("reserved marker 0xc1")),
        }
        Ok(())
    }

    fn bytes(
        &mut self,
        n: usize,
        is_str: bool,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        let bytes = self.take(n)?;
        if n >= self.min {
            f(&self.path, Found { bytes, is_str });
        }
        Ok(())
    }

    fn array(
        &mut self,
        n: usize,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        for i in 0..n {
            self.path.push(Step::Index(i));
            let r = self.value(depth + 1, f);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    fn map(
        &mut self,
        n: usize,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        for _ in 0..n {
            let step = self.key(depth)?;
            self.path.push(step);
            let r = self.value(depth + 1, f);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    /// A map key: its text when it is a short string, else skipped.
    fn key(&mut self, depth: usize) -> Result<Step<'a>, MsgpackError> {
        let start = self.pos;
        let m = self.take(1)?[0];
        let n = match m {
            0xa0..=0xbf => Some((m & 0x1f) as usize),
            0xd9 => Some(self.len(1)?),
            _ => None,
        };
        if let Some(n) = n {
            if let Ok(k) = std::str::from_utf8(self.take(n)?) {
                return Ok(Step::Key(k));
            }
            return Ok(Step::OtherKey);
        }
        self.pos = start;
        self.value(depth + 1, &mut |_, _| {})?;
        Ok(Step::OtherKey)
    }

    /// An ext of `n` bytes (after its code).
    fn ext(
        &mut self,
        n: usize,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        let code = self.take(1)?[0] as i8;
        let payload = self.take(n)?;
        if !(0..=7).contains(&code) || n < self.min {
            return Ok(());
        }
        let mut inner = Walk {
            data: payload,
            pos: 0,
            min: self.min,
            path: std::mem::take(&mut self.path),
        };
        let r = if code <= 5 {
            inner.object(depth + 1, f)
        } else {
            inner.value(depth + 1, f)
        };
        self.path = inner.path;
        // A payload that is not msgpack holds nothing to find; the document goes on.
        let _ = r;
        Ok(())
    }

    /// A Python object's payload: `[module, name, args, method?]`; `args` walked in place.
    fn object(
        &mut self,
        depth: usize,
        f: &mut dyn FnMut(&[Step<'a>], Found<'a>),
    ) -> Result<(), MsgpackError> {
        let m = self.take(1)?[0];
        let n = match m {
            0x90..=0x9f => (m & 0x0f) as usize,
            0xdc => self.len(2)?,
            0xdd => self.len(4)?,
            _ => {
                self.pos = 0;
                return self.value(depth, f);
            }
        };
        for i in 0..n {
            if i == 2 {
                self.value(depth + 1, f)?;
            } else {
                self.value(depth + 1, &mut |_, _| {})?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::encode;
    use crate::value::Value;

    fn found(doc: &[u8], min: usize) -> Vec<(String, usize, bool)> {
        let mut out = Vec::new();
        scan_large(doc, min, &mut |p, x| {
            out.push((path_text(p), x.bytes.len(), x.is_str))
        })
        .unwrap();
        out
    }

    fn s(n: usize) -> Value {
        Value::Str("x".repeat(n).into())
    }

    #[test]
    fn finds_large_strings_and_bins_with_their_paths() {
        let doc = encode(&Value::Map(vec![
            (Value::Str("small".into()), s(3)),
            (
                Value::Str("messages".into()),
                Value::Array(vec![s(1), Value::Bin(vec![7; 40]), s(50)]),
            ),
            (Value::Int(5), s(40)),
        ]));
        assert_eq!(
            found(&doc, 32),
            vec![
                ("messages[1]".to_owned(), 40, false),
                ("messages[2]".to_owned(), 50, true),
                ("?".to_owned(), 40, true),
            ]
        );
        assert_eq!(
            found(&encode(&s(100)), 32),
            vec![(String::new(), 100, true)]
        );
    }

    #[test]
    fn walks_python_objects_through_their_args() {
        // ext 2: ["langchain_core.messages.human", "HumanMessage", {content: …}]
        let payload = encode(&Value::Array(vec![
            Value::Str("langchain_core.messages.human".repeat(3).into()),
            Value::Str("HumanMessage".into()),
            Value::Map(vec![(Value::Str("content".into()), s(64))]),
        ]));
        let mut doc = vec![0x91, 0xc8];
        doc.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        doc.push(2);
        doc.extend_from_slice(&payload);
        // The module name (87 bytes) is not a payload; the content is, at [0].content.
        assert_eq!(found(&doc, 32), vec![("[0].content".to_owned(), 64, true)]);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for bad in [&[0xdb, 0xff, 0xff, 0xff, 0xff][..], &[0xc1], &[0x92, 0x01]] {
            assert!(scan_large(bad, 1, &mut |_, _| {}).is_err());
        }
        let deep = vec![0x91; 10_000];
        assert!(scan_large(&deep, 1, &mut |_, _| {}).is_err());
        // An ext whose payload is not msgpack is skipped.
        assert!(scan_large(&[0xd4, 0x02, 0xc1], 1, &mut |_, _| {}).is_ok());
    }
}
