//! Canonical JSON and hashing: the canonical form the hashes are computed over (specified in
//! the [module docs](super)), SHA-256 in hex, and the hash chain along parent links.

use super::parse::Cj;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The chain value before a root of the export: 64 zeros.
pub const ZERO_CHAIN: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The canonical form (see the [module docs](super)) of a `serde_json` value: converted to a
/// [`Cj`] (numbers as `serde_json` prints them) and written by [`write_canonical`], the one
/// canonical writer, which the verifier uses on bundles as parsed.
pub(super) fn canonical_of_value(v: Json) -> String {
    let mut out = String::new();
    write_canonical(&Cj::from(v), &mut out);
    out
}

fn write_canonical(v: &Cj, out: &mut String) {
    match v {
        Cj::Null => out.push_str("null"),
        Cj::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Cj::Num(n) => out.push_str(n),
        Cj::Str(s) => write_canonical_str(s, out),
        Cj::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Cj::Obj(m) => {
            let mut members: Vec<&(String, Cj)> = m.iter().collect();
            members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, val)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical_str(k, out);
                out.push(':');
                write_canonical(val, out);
            }
            out.push('}');
        }
    }
}

pub(super) fn canonical_without(v: &Cj, skip: &[&str]) -> String {
    let mut out = String::new();
    match v {
        Cj::Obj(m) => {
            let kept: Vec<(String, Cj)> = m
                .iter()
                .filter(|(k, _)| !skip.contains(&k.as_str()))
                .cloned()
                .collect();
            write_canonical(&Cj::Obj(kept), &mut out);
        }
        other => write_canonical(other, &mut out),
    }
    out
}

fn write_canonical_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub(super) fn chain_of(prev: &str, hash: &str) -> String {
    let mut buf = String::with_capacity(prev.len() + hash.len());
    buf.push_str(prev);
    buf.push_str(hash);
    sha256_hex(buf.as_bytes())
}

pub(super) struct ChainInput<'a> {
    pub(super) ns: &'a str,
    pub(super) id: &'a str,
    pub(super) parent: Option<&'a str>,
}

/// For each entry, the index of its chain predecessor: the earlier entry with the same
/// namespace whose id is its parent id (the first such entry).
pub(super) fn chain_predecessors(entries: &[ChainInput]) -> Vec<Option<usize>> {
    let mut first: HashMap<(&str, &str), usize> = HashMap::new();
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let pred = e
            .parent
            .and_then(|p| first.get(&(e.ns, p)).copied())
            .filter(|&j| j < i);
        out.push(pred);
        first.entry((e.ns, e.id)).or_insert(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::parse::Parser;
    use serde_json::json;

    #[test]
    fn canonical_form() {
        let v = json!({"b": [1, 2.5, -0.0, 1e300, u64::MAX], "a": "x\"\\\u{1}\n/é😀", "é": null, "Z": true});
        let c = canonical_of_value(v.clone());
        assert_eq!(
            c,
            "{\"Z\":true,\"a\":\"x\\\"\\\\\\u0001\\n/é😀\",\"b\":[1,2.5,-0.0,1e+300,18446744073709551615],\"é\":null}"
        );
        // The exact parser reproduces it from any formatting, numbers as written.
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let mut out = String::new();
        write_canonical(&Parser::parse(&pretty).unwrap(), &mut out);
        assert_eq!(out, c);
        let mut out = String::new();
        write_canonical(
            &Parser::parse("{\"n\": 1.50E+3, \"s\": \"\\ud83d\\ude00\\/\"}").unwrap(),
            &mut out,
        );
        assert_eq!(out, "{\"n\":1.50E+3,\"s\":\"😀/\"}");
    }
}
