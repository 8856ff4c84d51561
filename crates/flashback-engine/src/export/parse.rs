//! The verifier's exact JSON parser: [`Cj`] values with numbers kept as written and duplicate
//! keys rejected, their conversion to `serde_json`, and [`parse_bundle`].

use super::Bundle;
use serde_json::{Map, Number, Value as Json};

/// Nesting limit of the verifier's JSON parser: deeper than anything the exporter writes. The
/// codec accepts msgpack nested [`flashback_codec::msgpack::MAX_DEPTH`] deep; its JSON view adds
/// at most three levels per msgpack level (a dict with non-string keys becomes
/// `{"$items": [[k, v]]}`), and the bundle's envelope a few more. Stack use stays small: the
/// verifier runs on its own thread with a generous stack.
pub(super) const MAX_DEPTH: usize = 4 * flashback_codec::msgpack::MAX_DEPTH + 64;

/// A parsed JSON value with numbers kept as written.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cj {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Cj>),
    Obj(Vec<(String, Cj)>),
}

impl Cj {
    pub(super) fn get(&self, key: &str) -> Option<&Cj> {
        match self {
            Cj::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Cj::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            Cj::Null => "null",
            Cj::Bool(_) => "a boolean",
            Cj::Num(_) => "a number",
            Cj::Str(_) => "a string",
            Cj::Arr(_) => "an array",
            Cj::Obj(_) => "an object",
        }
    }
}

pub(super) struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn parse(s: &'a str) -> Result<Cj, String> {
        let mut p = Parser {
            s,
            b: s.as_bytes(),
            i: 0,
        };
        if p.s.starts_with('\u{feff}') {
            p.i = 3;
        }
        p.ws();
        let v = p.value(0)?;
        p.ws();
        if p.i < p.b.len() {
            return Err(p.err("unexpected content after the JSON value"));
        }
        Ok(v)
    }

    fn err(&self, msg: &str) -> String {
        let upto = self.b.get(..self.i).unwrap_or(self.b);
        let line = upto.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = upto.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
        format!("{msg} at line {line}, column {col}")
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &str, v: Cj) -> Result<Cj, String> {
        if self.b.get(self.i..self.i + word.len()) == Some(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Cj, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.lit("null", Cj::Null),
            Some(b't') => self.lit("true", Cj::Bool(true)),
            Some(b'f') => self.lit("false", Cj::Bool(false)),
            Some(b'"') => self.string().map(Cj::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Cj::Arr(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Cj::Arr(items));
                        }
                        _ => return Err(self.err("expected `,` or `]`")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut members: Vec<(String, Cj)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Cj::Obj(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    let at = self.i;
                    let k = self.string()?;
                    if !seen.insert(k.clone()) {
                        self.i = at;
                        return Err(self.err(&format!("duplicate key {k:?}")));
                    }
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err(self.err("expected `:`"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    members.push((k, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Cj::Obj(members));
                        }
                        _ => return Err(self.err("expected `,` or `}`")),
                    }
                }
            }
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Cj, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        let text = self
            .s
            .get(start..self.i)
            .ok_or_else(|| self.err("invalid number"))?;
        Ok(Cj::Num(text.to_owned()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let text = self
            .s
            .get(self.i..self.i + 4)
            .filter(|t| t.bytes().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| self.err("invalid \\u escape"))?;
        self.i += 4;
        u32::from_str_radix(text, 16).map_err(|_| self.err("invalid \\u escape"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            let run = self
                .s
                .get(start..self.i)
                .ok_or_else(|| self.err("invalid string"))?;
            out.push_str(run);
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.err("unterminated string"));
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{08}'),
                        b'f' => out.push('\u{0c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Err(self.err("lone surrogate in \\u escape"));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("invalid surrogate pair"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            let c = char::from_u32(code)
                                .ok_or_else(|| self.err("lone surrogate in \\u escape"))?;
                            out.push(c);
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }
}

/// A `serde_json` value as a [`Cj`], numbers written as `serde_json` prints them (strings are
/// moved, not copied), so a bundle being built is hashed by the same canonical writer that
/// [`verify`](super::verify()) uses on the bundle as written.
impl From<Json> for Cj {
    fn from(v: Json) -> Self {
        match v {
            Json::Null => Cj::Null,
            Json::Bool(b) => Cj::Bool(b),
            Json::Number(n) => Cj::Num(n.to_string()),
            Json::String(s) => Cj::Str(s),
            Json::Array(items) => Cj::Arr(items.into_iter().map(Cj::from).collect()),
            Json::Object(m) => Cj::Obj(m.into_iter().map(|(k, v)| (k, Cj::from(v))).collect()),
        }
    }
}

/// Convert to a `serde_json` value (floats parsed exactly by the standard library).
fn to_value(v: &Cj) -> Result<Json, String> {
    Ok(match v {
        Cj::Null => Json::Null,
        Cj::Bool(b) => Json::Bool(*b),
        Cj::Num(n) => Json::Number(number_of(n).ok_or_else(|| format!("number {n} out of range"))?),
        Cj::Str(s) => Json::String(s.clone()),
        Cj::Arr(items) => Json::Array(items.iter().map(to_value).collect::<Result<_, _>>()?),
        Cj::Obj(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, val) in m {
                out.insert(k.clone(), to_value(val)?);
            }
            Json::Object(out)
        }
    })
}

fn number_of(text: &str) -> Option<Number> {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(i) = text.parse::<i64>() {
            return Some(i.into());
        }
        if let Ok(u) = text.parse::<u64>() {
            return Some(u.into());
        }
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// Parse a JSON bundle exactly (numbers as written, no float rounding; duplicate keys
/// rejected). Prefer this to `serde_json::from_str` when a bundle is re-rendered or
/// re-serialized, so its hashes still verify.
pub fn parse_bundle(json: &str) -> Result<Bundle, String> {
    let cj = Parser::parse(json)?;
    bundle_of(&cj)
}

pub(super) fn bundle_of(cj: &Cj) -> Result<Bundle, String> {
    let v = to_value(cj)?;
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_round_trip_exactly() {
        // Values whose default serde_json parse may be off by one ulp.
        let v = json!([
            1e-7,
            1e16,
            0.30000000000000004,
            1.7976931348623157e308,
            5e-324,
            0.1,
            2.2250738585072014e-308,
            9007199254740993.0
        ]);
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.starts_with("[1e-7,1e+16,"), "{text}");
        let back = to_value(&Parser::parse(&text).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}
