//! The decode budget for JSON checkpoint documents (LangGraph.js's SQLite saver keeps every
//! channel value inside one JSON document): [`slim_json_document`] streams a document, copying
//! it except for the values of `channel_values` larger than the limit, which are scanned past
//! without being held in memory — as [`crate::budget::slim_document`] does for msgpack.

use crate::budget::Slim;
use std::io::{self, BufRead};

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("JSON document: {what}"))
}

struct Reader<R> {
    r: R,
}

impl<R: BufRead> Reader<R> {
    fn peek(&mut self) -> io::Result<Option<u8>> {
        Ok(self.r.fill_buf()?.first().copied())
    }

    fn next(&mut self) -> io::Result<u8> {
        let b = self.peek()?.ok_or_else(|| bad("ends early"))?;
        self.r.consume(1);
        Ok(b)
    }

    fn skip_ws(&mut self) -> io::Result<()> {
        while let Some(b) = self.peek()? {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.r.consume(1);
        }
        Ok(())
    }

    fn expect(&mut self, want: u8) -> io::Result<()> {
        self.skip_ws()?;
        match self.next()? {
            b if b == want => Ok(()),
            b => Err(bad(&format!(
                "expected {:?}, found {:?}",
                want as char, b as char
            ))),
        }
    }

    /// One value, its bytes handed to `out` until it has `keep` of them (the rest is only
    /// counted). Returns its length. Syntax is checked only as far as finding its end;
    /// the kept bytes are parsed fully later.
    fn value(&mut self, out: &mut Vec<u8>, keep: u64) -> io::Result<u64> {
        self.skip_ws()?;
        let mut len = 0u64;
        let mut push = |b: u8, len: &mut u64| {
            if *len < keep {
                out.push(b);
            }
            *len += 1;
        };
        let mut depth = 0usize;
        let mut in_str = false;
        let mut escaped = false;
        loop {
            let Some(b) = self.peek()? else {
                return if depth == 0 && !in_str && len > 0 {
                    Ok(len)
                } else {
                    Err(bad("ends inside a value"))
                };
            };
            if in_str {
                self.r.consume(1);
                push(b, &mut len);
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => {
                        in_str = false;
                        if depth == 0 {
                            return Ok(len);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                // Counted, not recursed into: any depth is scanned (the values kept are read by
                // the `json` reader, which keeps what is too deep as its text).
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    if depth == 0 {
                        // The end of the enclosing object: this scalar ended before it.
                        return if len > 0 {
                            Ok(len)
                        } else {
                            Err(bad("a value is missing"))
                        };
                    }
                    depth -= 1;
                }
                b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {
                    return if len > 0 {
                        Ok(len)
                    } else {
                        Err(bad("a value is missing"))
                    };
                }
                _ => {}
            }
            self.r.consume(1);
            push(b, &mut len);
            if depth == 0 && matches!(b, b'}' | b']') {
                return Ok(len);
            }
        }
    }

    /// A string (an object key), whole.
    fn key(&mut self) -> io::Result<Vec<u8>> {
        self.skip_ws()?;
        if self.peek()? != Some(b'"') {
            return Err(bad("an object key is not a string"));
        }
        let mut out = Vec::new();
        // Keys are short in practice; a long one is still read whole (it is the output too).
        self.value(&mut out, u64::MAX)?;
        Ok(out)
    }

    /// After a member: `,` (more follow) or the closing `}` (none).
    fn more(&mut self) -> io::Result<bool> {
        self.skip_ws()?;
        match self.next()? {
            b',' => Ok(true),
            b'}' => Ok(false),
            b => Err(bad(&format!("expected ',' or '}}', found {:?}", b as char))),
        }
    }

    fn empty_object(&mut self) -> io::Result<bool> {
        self.skip_ws()?;
        if self.peek()? == Some(b'}') {
            self.r.consume(1);
            return Ok(true);
        }
        Ok(false)
    }
}

/// What a JSON value starting with `first` is, for the placeholder of one left out.
fn kind(first: Option<&u8>) -> &'static str {
    match first {
        Some(b'[') => "list",
        Some(b'{') => "dict",
        Some(b'"') => "str",
        _ => "value",
    }
}

/// Stream a JSON checkpoint document (an object) from `r`, copying it except for values of its
/// `channel_values` object longer than `max_value_bytes`, which are left out (never held in
/// memory; the slim document has no entry for them) and reported with their stored length.
/// Memory: the slim document plus one value up to the limit.
pub fn slim_json_document<R: BufRead>(r: R, max_value_bytes: u64) -> io::Result<Slim> {
    slim_json_with(r, |_| Some(max_value_bytes))
}

/// The document keeping only the values of the channels `keep` accepts (a selecting read, as
/// [`crate::budget::select_channels`] for msgpack): the others are scanned past, not parsed.
pub fn select_json_channels(doc: &[u8], keep: &dyn Fn(&str) -> bool) -> io::Result<Vec<u8>> {
    slim_json_with(doc, |c| keep(c).then_some(u64::MAX)).map(|s| s.document)
}

/// The walk: `limit(channel)` is the longest value kept for that channel (`None`: left out
/// unreported); a longer one is left out and reported in [`Slim::too_large`].
fn slim_json_with<R: BufRead>(r: R, limit: impl Fn(&str) -> Option<u64>) -> io::Result<Slim> {
    let mut rd = Reader { r };
    let mut out = Vec::new();
    let mut too_large = Vec::new();
    rd.expect(b'{')?;
    out.push(b'{');
    let mut first = true;
    if !rd.empty_object()? {
        loop {
            let key = rd.key()?;
            rd.expect(b':')?;
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(&key);
            out.push(b':');
            if key == b"\"channel_values\"" {
                rd.skip_ws()?;
                if rd.peek()? == Some(b'{') {
                    rd.next()?;
                    out.push(b'{');
                    let mut first_value = true;
                    if !rd.empty_object()? {
                        loop {
                            let channel = rd.key()?;
                            rd.expect(b':')?;
                            let name: String = serde_json::from_slice(&channel)
                                .map_err(|e| bad(&e.to_string()))?;
                            let max = limit(&name);
                            let mut value = Vec::new();
                            let len =
                                rd.value(&mut value, max.map_or(0, |m| m.saturating_add(1)))?;
                            let Some(max) = max else {
                                if !rd.more()? {
                                    break;
                                }
                                continue;
                            };
                            if len > max {
                                too_large.push((name, len, kind(value.first()).to_owned()));
                            } else {
                                if !first_value {
                                    out.push(b',');
                                }
                                first_value = false;
                                out.extend_from_slice(&channel);
                                out.push(b':');
                                out.extend_from_slice(&value);
                            }
                            if !rd.more()? {
                                break;
                            }
                        }
                    }
                    out.push(b'}');
                } else {
                    rd.value(&mut out, u64::MAX)?;
                }
            } else {
                rd.value(&mut out, u64::MAX)?;
            }
            if !rd.more()? {
                break;
            }
        }
    }
    out.push(b'}');
    Ok(Slim {
        document: out,
        too_large,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Left = Vec<(String, u64, String)>;

    fn slim(doc: &str, limit: u64) -> io::Result<(serde_json::Value, Left)> {
        let s = slim_json_document(std::io::Cursor::new(doc.as_bytes()), limit)?;
        let v = serde_json::from_slice(&s.document).map_err(|e| bad(&e.to_string()))?;
        Ok((v, s.too_large))
    }

    #[test]
    fn big_values_are_left_out_and_the_rest_copied() {
        let big = "x".repeat(100);
        let doc = format!(
            r#"{{"v":4, "id":"1f0","channel_values":{{"a":[1,{{"b":"}}]\"{{"}}],"big":"{big}","n":-1.5e3,"t":true,"arr":[{big:?}]}},"channel_versions":{{"a":3}}}}"#
        );
        let (v, out) = slim(&doc, 50).unwrap();
        assert_eq!(
            v,
            json!({"v": 4, "id": "1f0", "channel_values": {"a": [1, {"b": "}]\"{"}], "n": -1.5e3, "t": true},
                   "channel_versions": {"a": 3}})
        );
        assert_eq!(
            out,
            vec![
                ("big".into(), 102, "str".into()),
                ("arr".into(), 104, "list".into())
            ]
        );
        // A selecting read keeps only the channels asked for.
        let picked = select_json_channels(doc.as_bytes(), &|c| c == "n").unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&picked).unwrap()["channel_values"],
            json!({"n": -1.5e3})
        );
        // Under the limit, the document is unchanged.
        let (whole, none) = slim(&doc, 1000).unwrap();
        assert_eq!(
            whole,
            serde_json::from_str::<serde_json::Value>(&doc).unwrap()
        );
        assert!(none.is_empty());
    }

    #[test]
    fn bad_documents_are_errors_not_panics() {
        for doc in [
            "",
            "[]",
            "{",
            r#"{"a":"#,
            r#"{"a":1"#,
            r#"{"channel_values":{"a":}"#,
            r#"{1:2}"#,
            r#"{"channel_values":{"a":"unterminated}}"#,
            r#"{"a":1 "b":2}"#,
        ] {
            assert!(slim(doc, 10).is_err(), "{doc:?}");
        }
        let deep = format!(
            r#"{{"channel_values":{{"a":{}1{},"b":2}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let s = slim_json_document(std::io::Cursor::new(deep.as_bytes()), 10).unwrap();
        assert_eq!(s.too_large, vec![("a".into(), 200_001, "list".into())]);
        let whole = slim_json_document(std::io::Cursor::new(deep.as_bytes()), u64::MAX).unwrap();
        assert_eq!(whole.document, deep.as_bytes());
        assert_eq!(slim("{}", 10).unwrap().0, json!({}));
        assert_eq!(
            slim(r#"{"channel_values":{}}"#, 10).unwrap().0,
            json!({"channel_values": {}})
        );
    }
}
