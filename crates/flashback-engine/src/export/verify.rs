//! Verification ([`verify`]): finds the bundle in JSON or HTML input, parses it exactly,
//! recomputes every `hash`, `chain` link and the `bundle_hash`, names what was modified,
//! removed or reordered, and checks an HTML report's readable part against a re-rendering.

use super::canonical::{canonical_without, chain_of, chain_predecessors, sha256_hex, ChainInput};
use super::html::{SCRIPT_CLOSE, SCRIPT_OPEN};
use super::parse::{bundle_of, Cj, Parser};
use super::{render_html, FORMAT, HTML_BUNDLE_ID, ZERO_CHAIN};
use serde::Serialize;
use std::collections::HashMap;

/// The outcome of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VerifyReport {
    /// No problem found.
    pub ok: bool,
    /// Number of checkpoint entries found.
    pub checkpoints: usize,
    /// What is wrong, one sentence each (checkpoints named by id).
    pub problems: Vec<String>,
}

/// Verify a JSON bundle or an HTML report (see the [module docs](super)). Never panics.
pub fn verify(input: &str) -> VerifyReport {
    let internal = || VerifyReport {
        ok: false,
        checkpoints: 0,
        problems: vec!["internal error while verifying".to_owned()],
    };
    // Parsing, canonical forms and drops recurse once per nesting level (at most
    // `parse::MAX_DEPTH`): a thread of its own keeps that off callers with small stacks.
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("flashback-verify".into())
            .stack_size(VERIFY_STACK)
            .spawn_scoped(s, || std::panic::catch_unwind(|| verify_inner(input)));
        match worker {
            Ok(handle) => match handle.join() {
                Ok(Ok(r)) => r,
                _ => internal(),
            },
            // No thread to be had: verify here (the limit keeps the recursion shallow).
            Err(_) => {
                std::panic::catch_unwind(|| verify_inner(input)).unwrap_or_else(|_| internal())
            }
        }
    })
}

/// The verifier thread's stack (reserved address space; pages are touched only as used).
const VERIFY_STACK: usize = 64 << 20;

fn failed(problem: String) -> VerifyReport {
    VerifyReport {
        ok: false,
        checkpoints: 0,
        problems: vec![problem],
    }
}

/// Where the bundle JSON is: the whole input, or the element embedded in an HTML report.
fn extract(input: &str) -> Result<(&str, bool), String> {
    let trimmed = input.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return Ok((input, false));
    }
    let Some(open) = input.find(SCRIPT_OPEN) else {
        if trimmed.starts_with('<') {
            return Err(format!(
                "HTML without an embedded bundle (no <script type=\"application/json\" id=\"{HTML_BUNDLE_ID}\"> element): not a Flashback audit report"
            ));
        }
        return Err(
            "not a Flashback audit bundle: neither a JSON object nor an HTML report".into(),
        );
    };
    let body_start = open + SCRIPT_OPEN.len();
    if input[body_start..].contains(SCRIPT_OPEN) {
        return Err("the HTML report embeds more than one bundle".into());
    }
    let Some(len) = input[body_start..].find(SCRIPT_CLOSE) else {
        return Err("the HTML report's embedded bundle is not terminated (no </script>)".into());
    };
    Ok((&input[body_start..body_start + len], true))
}

fn label(ns: &str, id: &str) -> String {
    if ns.is_empty() {
        format!("checkpoint {id}")
    } else {
        format!("checkpoint {id} (namespace {ns:?})")
    }
}

struct Entry<'a> {
    ns: &'a str,
    id: &'a str,
    parent: Option<&'a str>,
    hash: &'a str,
    chain: &'a str,
    computed: String,
}

fn verify_inner(input: &str) -> VerifyReport {
    let (json_text, is_html) = match extract(input) {
        Ok(x) => x,
        Err(p) => return failed(p),
    };
    let root = match Parser::parse(json_text) {
        Ok(v) => v,
        Err(e) => {
            let what = if is_html {
                "the HTML report's embedded bundle"
            } else {
                "the input"
            };
            return failed(format!("{what} is not valid JSON: {e}"));
        }
    };
    if !matches!(root, Cj::Obj(_)) {
        return failed(format!("the bundle is {}, not an object", root.kind()));
    }
    match root.get("format") {
        Some(Cj::Str(f)) if f == FORMAT => {}
        Some(Cj::Str(f)) => {
            return failed(format!(
                "unsupported bundle format {f:?} (this version reads {FORMAT:?})"
            ))
        }
        _ => {
            return failed(format!(
                "not a Flashback audit bundle (no \"format\": {FORMAT:?})"
            ))
        }
    }
    let Some(Cj::Arr(items)) = root.get("checkpoints") else {
        return failed("the bundle has no \"checkpoints\" array".into());
    };

    let mut problems: Vec<String> = Vec::new();
    let mut entries: Vec<Entry> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = |name: &str| item.get(name).and_then(Cj::as_str);
        let parent = match item.get("parent_checkpoint_id") {
            Some(Cj::Null) => Some(None),
            Some(Cj::Str(s)) => Some(Some(s.as_str())),
            _ => None,
        };
        let (Some(ns), Some(id), Some(parent), Some(hash), Some(chain)) = (
            field("checkpoint_ns"),
            field("checkpoint_id"),
            parent,
            field("hash"),
            field("chain"),
        ) else {
            let which = ["checkpoint_ns", "checkpoint_id", "hash", "chain"]
                .into_iter()
                .filter(|f| field(f).is_none())
                .chain(parent.is_none().then_some("parent_checkpoint_id"))
                .collect::<Vec<_>>()
                .join(", ");
            let who = field("checkpoint_id")
                .map(|id| label(field("checkpoint_ns").unwrap_or(""), id))
                .unwrap_or_else(|| format!("checkpoint entry #{}", i + 1));
            problems.push(format!("{who}: missing or invalid field(s): {which}"));
            continue;
        };
        entries.push(Entry {
            ns,
            id,
            parent,
            hash,
            chain,
            computed: sha256_hex(canonical_without(item, &["hash", "chain"]).as_bytes()),
        });
    }

    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for e in &entries {
        let n = seen.entry((e.ns, e.id)).or_insert(0);
        *n += 1;
        if *n == 2 {
            problems.push(format!(
                "{} appears more than once in the bundle",
                label(e.ns, e.id)
            ));
        }
    }

    let links: Vec<ChainInput> = entries
        .iter()
        .map(|e| ChainInput {
            ns: e.ns,
            id: e.id,
            parent: e.parent,
        })
        .collect();
    let preds = chain_predecessors(&links);
    let prev_of = |i: usize| preds[i].map_or(ZERO_CHAIN, |j| entries[j].chain);
    // The chain each entry should have given its own predecessor's stored chain and hash.
    let local: Vec<String> = (0..entries.len())
        .map(|i| chain_of(prev_of(i), entries[i].hash))
        .collect();
    let link_ok = |i: usize| entries[i].chain == local[i];
    let present: HashMap<(&str, &str), usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.ns, e.id), i))
        .collect();

    for (i, e) in entries.iter().enumerate() {
        let who = label(e.ns, e.id);
        let content_ok = e.hash == e.computed;
        let chained = link_ok(i);
        if !content_ok {
            if chained {
                problems.push(format!(
                    "{who}: content was modified after export (its SHA-256 no longer matches its hash)"
                ));
            } else if e.chain == chain_of(prev_of(i), &e.computed) {
                problems.push(format!(
                    "{who}: its hash field was altered (content and chain match the original hash {})",
                    e.computed
                ));
            } else {
                problems.push(format!(
                    "{who}: content does not match its hash and its chain link is broken"
                ));
            }
            continue;
        }
        if chained {
            continue;
        }
        match preds[i] {
            Some(j) => {
                // A broken link caused by the predecessor's altered chain is reported there.
                let pred_altered = !link_ok(j) && e.chain == chain_of(&local[j], e.hash);
                if !pred_altered {
                    problems.push(format!(
                        "{who}: chain link broken (its chain does not extend the chain of its parent {})",
                        entries[j].id
                    ));
                }
            }
            None => match e.parent.filter(|p| !present.contains_key(&(e.ns, *p))) {
                Some(p) => problems.push(format!(
                    "{who}: its parent {p} is missing from the bundle, but its chain shows it was not exported as a root (the parent was removed, or the chain field altered)"
                )),
                None => match e.parent.and_then(|p| present.get(&(e.ns, p)).map(|&j| (p, j))) {
                    Some((p, j)) if j > i => problems.push(format!(
                        "{who}: appears before its parent {p} in the bundle (entries reordered)"
                    )),
                    _ => problems.push(format!("{who}: its chain field was altered")),
                },
            },
        }
    }

    let count = entries.len();
    match root.get("checkpoint_count") {
        Some(Cj::Num(n)) if n.parse::<usize>().ok() == Some(items.len()) => {}
        Some(Cj::Num(n)) => problems.push(format!(
            "the bundle declares {n} checkpoints but holds {} (checkpoints added or removed)",
            items.len()
        )),
        _ => problems.push("the bundle has no valid \"checkpoint_count\"".into()),
    }
    match root.get("bundle_hash") {
        Some(Cj::Str(stored)) => {
            let computed = sha256_hex(canonical_without(&root, &["bundle_hash"]).as_bytes());
            if *stored != computed {
                problems.push(
                    "bundle_hash does not match the bundle's content (the bundle was modified after export)"
                        .into(),
                );
            }
        }
        _ => problems.push("the bundle has no \"bundle_hash\"".into()),
    }

    if is_html && problems.is_empty() {
        match bundle_of(&root) {
            Ok(bundle) => {
                if let Some(p) = html_difference(input, &render_html(&bundle)) {
                    problems.push(p);
                }
            }
            Err(e) => problems.push(format!(
                "the embedded bundle does not have the expected structure: {e}"
            )),
        }
    }

    VerifyReport {
        ok: problems.is_empty(),
        checkpoints: count,
        problems,
    }
}

/// Compare an HTML report with the report its embedded bundle renders to, outside the
/// embedded element (which was verified on its own).
fn html_difference(input: &str, expected: &str) -> Option<String> {
    let split = |s: &str| -> Option<(usize, usize)> {
        let open = s.find(SCRIPT_OPEN)? + SCRIPT_OPEN.len();
        let close = open + s[open..].find(SCRIPT_CLOSE)?;
        Some((open, close))
    };
    let (Some((io, ic)), Some((eo, ec))) = (split(input), split(expected)) else {
        return Some("the HTML report's structure is damaged".into());
    };
    let parts = [
        (&input[..io], &expected[..eo], 0),
        (
            &input[ic..],
            &expected[ec..],
            input[..ic].matches('\n').count(),
        ),
    ];
    for (got, want, offset) in parts {
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
            return Some(format!(
                "the HTML report's readable part was edited: it differs from what its embedded bundle renders to (from line {})",
                offset + line + 1
            ));
        }
    }
    None
}
