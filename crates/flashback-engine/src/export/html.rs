//! The standalone HTML report ([`render_html`]): escaping, folding of long strings, inline
//! CSS, and the `<script type="application/json">` element embedding the bundle.

use super::{Bundle, Scope, REDACTED};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The `id` of the `<script type="application/json">` element embedding the bundle in HTML.
pub const HTML_BUNDLE_ID: &str = "flashback-bundle";

pub(super) const SCRIPT_OPEN: &str = "<script type=\"application/json\" id=\"flashback-bundle\">";
pub(super) const SCRIPT_CLOSE: &str = "</script>";
/// Strings longer than this (in characters) are cut in the HTML's readable part.
const HTML_FOLD_CHARS: usize = 2000;

/// HTML-escape text (`&`, `<`, `>`, `"`, `'`).
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Cut long strings for display; returns how many were cut.
fn fold(v: &Json) -> (Json, usize) {
    fn go(v: &Json, n: &mut usize) -> Json {
        match v {
            Json::String(s) => {
                let len = s.chars().count();
                if len > HTML_FOLD_CHARS {
                    *n += 1;
                    let head: String = s.chars().take(HTML_FOLD_CHARS).collect();
                    Json::String(format!(
                        "{head}… [{} more characters not shown; the full value is in the embedded bundle]",
                        len - HTML_FOLD_CHARS
                    ))
                } else {
                    v.clone()
                }
            }
            Json::Array(items) => Json::Array(items.iter().map(|i| go(i, n)).collect()),
            Json::Object(m) => Json::Object(m.iter().map(|(k, x)| (k.clone(), go(x, n))).collect()),
            other => other.clone(),
        }
    }
    let mut n = 0;
    let out = go(v, &mut n);
    (out, n)
}

fn pretty(v: &Json) -> (String, usize) {
    let (folded, n) = fold(v);
    (serde_json::to_string_pretty(&folded).unwrap_or_default(), n)
}

fn fold_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "<p class=\"note\">1 long string was shortened here.</p>\n".to_owned(),
        n => format!("<p class=\"note\">{n} long strings were shortened here.</p>\n"),
    }
}

/// The bundle's JSON for a `<script type="application/json">` element: every `<` is written
/// `\u003c` (it only occurs inside JSON strings, where that is a valid escape), so neither
/// `</script>`, `<!--` nor `<script` can appear in the element and end it early.
fn embed_json(bundle: &Bundle) -> String {
    serde_json::to_string(bundle)
        .unwrap_or_default()
        .replace('<', "\\u003c")
}

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2330;background:#fff;line-height:1.4}
h1{font-size:1.6rem;margin-bottom:.3rem}h2{margin-top:2rem;border-bottom:2px solid #d7dce5}
h3{margin:0 0 .5rem;font-size:1.1rem}h4{margin:1rem 0 .3rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:1rem 0}
dl.meta dt{font-weight:600;color:#4a5568}dl.meta dd{margin:0}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:#f5f7fa;border:1px solid #e2e6ee;padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all;margin:.3rem 0}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #d7dce5;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f6}tr:nth-child(even) td{background:#fafbfd}
section.cp{border:1px solid #d7dce5;border-radius:6px;padding:1rem;margin:1.2rem 0}
.note{color:#6b7280;font-size:.85rem}.warn{color:#9a3412}
details{margin:.3rem 0}summary{cursor:pointer;font-weight:600}
@media print{details{display:block}body{margin:0}}
";

/// A standalone HTML report of a bundle: inline CSS, no scripts or external resources, all
/// text escaped; the bundle itself is embedded as
/// `<script type="application/json" id="flashback-bundle">` so [`verify`](super::verify()) can check the file
/// (every `<` in that JSON is written `\u003c`, so no `</script>` or `<!--` can occur in it).
/// Strings over 2000 characters are shortened in the readable part, with a note; the embedded
/// bundle is complete. Deterministic: the same bundle always renders to the same bytes.
pub fn render_html(bundle: &Bundle) -> String {
    let mut h = String::new();
    let title = format!("Flashback audit export: thread {}", bundle.thread_id);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let _ = writeln!(h, "<header>\n<h1>{}</h1>", esc(&title));
    h.push_str("<dl class=\"meta\">\n");
    let mut meta = |k: &str, v: String| {
        let _ = writeln!(h, "<dt>{}</dt><dd>{v}</dd>", esc(k));
    };
    meta("Thread", format!("<code>{}</code>", esc(&bundle.thread_id)));
    meta(
        "Scope",
        match bundle.scope {
            Scope::Branch => "branch (the head checkpoint and its ancestors)".to_owned(),
            Scope::Tree => "tree (every checkpoint, all namespaces)".to_owned(),
        },
    );
    meta(
        "Head",
        bundle.head.as_deref().map_or_else(
            || "none".to_owned(),
            |id| format!("<code>{}</code>", esc(id)),
        ),
    );
    meta("Checkpoints", bundle.checkpoints.len().to_string());
    meta("Generated", esc(&bundle.generated_at));
    meta(
        "Tool",
        format!("{} {}", esc(&bundle.tool.name), esc(&bundle.tool.version)),
    );
    meta(
        "Source",
        if bundle.source.schema.starts_with(&bundle.source.backend) {
            esc(&bundle.source.schema)
        } else {
            format!(
                "{} ({})",
                esc(&bundle.source.backend),
                esc(&bundle.source.schema)
            )
        },
    );
    meta(
        "Redactions",
        if bundle.redactions.is_empty() {
            "none".to_owned()
        } else {
            bundle
                .redactions
                .iter()
                .map(|p| format!("<code>{}</code>", esc(p)))
                .collect::<Vec<_>>()
                .join(", ")
        },
    );
    meta("Format", format!("<code>{}</code>", esc(&bundle.format)));
    meta(
        "Bundle hash",
        format!("<code>{}</code> (SHA-256)", esc(&bundle.bundle_hash)),
    );
    h.push_str("</dl>\n");
    let _ = writeln!(
        h,
        "<p class=\"note\">Secret values (pydantic <code>SecretStr</code>/<code>SecretBytes</code>) are \
         masked as <code>**********</code>; values under redacted keys read <code>{}</code>. Each \
         checkpoint carries the SHA-256 of its canonical JSON and a hash chain along parent links. \
         The complete bundle is embedded in this file; check it with \
         <code>flashback verify FILE</code>.</p>\n</header>",
        esc(REDACTED)
    );

    h.push_str("<main>\n<h2>Checkpoints</h2>\n<table>\n<thead><tr><th>#</th><th>Step</th><th>Source</th><th>Time</th><th>Namespace</th><th>Checkpoint</th><th>Parent</th><th>Hash</th></tr></thead>\n<tbody>\n");
    let anchors: HashMap<(&str, &str), usize> = bundle
        .checkpoints
        .iter()
        .enumerate()
        .rev()
        .map(|(i, c)| ((c.checkpoint_ns.as_str(), c.checkpoint_id.as_str()), i + 1))
        .collect();
    for (i, cp) in bundle.checkpoints.iter().enumerate() {
        let parent = match cp.parent_checkpoint_id.as_deref() {
            None => String::new(),
            Some(p) => match anchors.get(&(cp.checkpoint_ns.as_str(), p)) {
                Some(n) => format!("<a href=\"#cp-{n}\">{}</a>", esc(p)),
                None => format!("{} (not in this export)", esc(p)),
            },
        };
        let step = flashback_storage::metadata_step(&cp.metadata)
            .map(|s| s.to_string())
            .unwrap_or_default();
        let source = flashback_storage::metadata_source(&cp.metadata).unwrap_or_default();
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#cp-{n}\">{n}</a></td><td>{}</td><td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\"><a href=\"#cp-{n}\">{}</a></td><td class=\"mono\">{}</td><td class=\"mono\" title=\"{}\">{}</td></tr>",
            esc(&step),
            esc(source),
            esc(&cp.ts),
            esc(&cp.checkpoint_ns),
            esc(&cp.checkpoint_id),
            parent,
            esc(&cp.hash),
            esc(cp.hash.get(..12).unwrap_or(&cp.hash)),
            n = i + 1,
        );
    }
    h.push_str("</tbody>\n</table>\n");

    for (i, cp) in bundle.checkpoints.iter().enumerate() {
        let _ = writeln!(
            h,
            "<section class=\"cp\" id=\"cp-{}\">\n<h3>#{} <code>{}</code></h3>",
            i + 1,
            i + 1,
            esc(&cp.checkpoint_id)
        );
        h.push_str("<dl class=\"meta\">\n");
        let mut row = |k: &str, v: &str| {
            let _ = writeln!(h, "<dt>{}</dt><dd class=\"mono\">{}</dd>", esc(k), esc(v));
        };
        row(
            "Namespace",
            if cp.checkpoint_ns.is_empty() {
                "(root)"
            } else {
                &cp.checkpoint_ns
            },
        );
        row(
            "Parent",
            cp.parent_checkpoint_id.as_deref().unwrap_or("(none)"),
        );
        row("Time", &cp.ts);
        row("Hash", &cp.hash);
        row("Chain", &cp.chain);
        if let Some(problem) = &cp.problem {
            row("Unreadable", problem);
        }
        h.push_str("</dl>\n");

        let (meta_text, n) = pretty(&cp.metadata);
        let _ = write!(
            h,
            "<details>\n<summary>Metadata</summary>\n<pre>{}</pre>\n{}</details>\n",
            esc(&meta_text),
            fold_note(n)
        );

        let _ = writeln!(h, "<h4>Values ({})</h4>", cp.values.len());
        if cp.values.is_empty() {
            h.push_str("<p class=\"note\">No channel values.</p>\n");
        }
        for (channel, v) in &cp.values {
            let (text, n) = pretty(v);
            let _ = write!(
                h,
                "<details open>\n<summary><code>{}</code></summary>\n<pre>{}</pre>\n{}</details>\n",
                esc(channel),
                esc(&text),
                fold_note(n)
            );
        }

        let _ = writeln!(h, "<h4>Pending writes ({})</h4>", cp.pending_writes.len());
        if cp.pending_writes.is_empty() {
            h.push_str("<p class=\"note\">No pending writes.</p>\n");
        } else {
            h.push_str("<table>\n<thead><tr><th>Task</th><th>Path</th><th>Idx</th><th>Channel</th><th>Type</th><th>Value</th></tr></thead>\n<tbody>\n");
            for w in &cp.pending_writes {
                let (text, n) = pretty(&w.value);
                let _ = writeln!(
                    h,
                    "<tr><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td><pre>{}</pre>{}</td></tr>",
                    esc(&w.task_id),
                    esc(&w.task_path),
                    w.idx,
                    esc(&w.channel),
                    esc(&w.type_tag),
                    esc(&text),
                    fold_note(n).trim_end()
                );
            }
            h.push_str("</tbody>\n</table>\n");
        }
        h.push_str("</section>\n");
    }
    h.push_str("</main>\n<footer>\n<p class=\"note\">Generated by ");
    let _ = writeln!(
        h,
        "{} {}. The machine-readable bundle follows.</p>\n</footer>",
        esc(&bundle.tool.name),
        esc(&bundle.tool.version)
    );
    let _ = writeln!(h, "{SCRIPT_OPEN}{}{SCRIPT_CLOSE}", embed_json(bundle));
    h.push_str("</body>\n</html>\n");
    h
}
