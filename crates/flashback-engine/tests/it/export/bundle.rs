//! Audit export bundles built from the committed SQLite fixture: scope, order, secrets,
//! redaction, the hash/chain definitions, determinism and the HTML report.

use flashback_engine::export::{
    build_bundle, parse_bundle, render_html, verify, Bundle, ExportOptions, Scope, FORMAT,
    REDACTED, ZERO_CHAIN,
};
use flashback_engine::{EngineError, ThreadDag};
use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, ListQuery};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

/// A store over a private copy of the fixture (the dir must outlive the store).
async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("langgraph.sqlite");
    std::fs::copy(FIXTURE, &path).unwrap();
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    (dir, store)
}

fn opts(checkpoint_id: Option<&str>, redact: &[&str]) -> ExportOptions {
    ExportOptions {
        checkpoint_id: checkpoint_id.map(str::to_owned),
        redact: redact.iter().map(|s| s.to_string()).collect(),
        tool_version: "0.1.0-test".into(),
        generated_at: Some("2026-01-02T03:04:05+00:00".into()),
        ..Default::default()
    }
}

async fn dag(store: &SqliteStore, thread: &str) -> ThreadDag {
    let headers = store
        .list_headers(&ListQuery::thread(thread))
        .await
        .unwrap();
    ThreadDag::build(&headers).unwrap()
}

fn ids(b: &Bundle) -> Vec<(String, String)> {
    b.checkpoints
        .iter()
        .map(|c| (c.checkpoint_ns.clone(), c.checkpoint_id.clone()))
        .collect()
}

/// Every entry comes after its parent when the parent is in the bundle.
fn assert_parents_first(b: &Bundle) {
    let pos: HashMap<(String, String), usize> = ids(b)
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i))
        .collect();
    for (i, c) in b.checkpoints.iter().enumerate() {
        if let Some(p) = &c.parent_checkpoint_id {
            if let Some(&j) = pos.get(&(c.checkpoint_ns.clone(), p.clone())) {
                assert!(j < i, "{} comes before its parent {p}", c.checkpoint_id);
            }
        }
    }
}

#[tokio::test]
async fn forked_tree_and_branches_match_the_dag() {
    let (_dir, store) = store().await;
    let dag = dag(&store, "forked").await;

    let tree = build_bundle(&store, "forked", &opts(None, &[]))
        .await
        .unwrap();
    assert_eq!(tree.format, FORMAT);
    assert_eq!(tree.scope, Scope::Tree);
    assert_eq!(tree.thread_id, "forked");
    assert_eq!(tree.checkpoints.len(), dag.len());
    assert_eq!(tree.checkpoints.len(), 14);
    assert_eq!(tree.checkpoint_count, 14);
    assert_eq!(tree.head.as_deref(), dag.head());
    assert_eq!(tree.tool.name, "flashback");
    assert_eq!(tree.tool.version, "0.1.0-test");
    assert_eq!(tree.source.backend, "sqlite");
    assert!(!tree.source.schema.is_empty());
    assert!(tree.redactions.is_empty());
    assert_parents_first(&tree);
    let mut all: Vec<_> = dag
        .nodes()
        .map(|n| (n.ns.clone(), n.checkpoint_id.clone()))
        .collect();
    let mut got = ids(&tree);
    all.sort();
    got.sort();
    assert_eq!(got, all);

    // One branch per tip: the tip's lineage, oldest first, and nothing else.
    let tips: Vec<String> = dag
        .nodes()
        .filter(|n| n.children.is_empty())
        .map(|n| n.checkpoint_id.clone())
        .collect();
    assert!(tips.len() >= 3, "forked has several branches: {tips:?}");
    for tip in &tips {
        let b = build_bundle(&store, "forked", &opts(Some(tip), &[]))
            .await
            .unwrap();
        assert_eq!(b.scope, Scope::Branch);
        assert_eq!(b.head.as_deref(), Some(tip.as_str()));
        let mut want: Vec<String> = dag
            .lineage("", tip)
            .iter()
            .map(|n| n.checkpoint_id.clone())
            .collect();
        want.reverse();
        let got: Vec<String> = b
            .checkpoints
            .iter()
            .map(|c| c.checkpoint_id.clone())
            .collect();
        assert_eq!(got, want);
        assert!(b.checkpoints.len() < tree.checkpoints.len());
        // The root entry starts the chain; the others extend their parent's chain.
        assert_eq!(b.checkpoints[0].parent_checkpoint_id, None);
        for w in b.checkpoints.windows(2) {
            assert_eq!(
                w[1].parent_checkpoint_id.as_deref(),
                Some(w[0].checkpoint_id.as_str())
            );
            assert_eq!(w[1].chain, chain(&w[0].chain, &w[1].hash));
        }
        // Shared checkpoints have the same hash and chain in the branch and the tree.
        for c in &b.checkpoints {
            let t = tree
                .checkpoints
                .iter()
                .find(|t| t.checkpoint_id == c.checkpoint_id)
                .unwrap();
            assert_eq!((&c.hash, &c.chain), (&t.hash, &t.chain));
        }
        assert!(verify(&serde_json::to_string(&b).unwrap()).ok);
    }

    // Values and pending writes are exported (update_state at the head wrote on its parent).
    let writes: usize = tree
        .checkpoints
        .iter()
        .map(|c| c.pending_writes.len())
        .sum();
    assert_eq!(writes, 24);
    let head = tree
        .checkpoints
        .iter()
        .find(|c| Some(c.checkpoint_id.as_str()) == dag.head())
        .unwrap();
    assert_eq!(
        head.values["log"].as_array().unwrap().last().unwrap(),
        "note at head"
    );
    let parent = tree
        .checkpoints
        .iter()
        .find(|c| Some(&c.checkpoint_id) == head.parent_checkpoint_id.as_ref())
        .unwrap();
    assert_eq!(parent.pending_writes.len(), 1);
}

#[tokio::test]
async fn subgraph_tree_includes_every_namespace() {
    let (_dir, store) = store().await;
    let dag = dag(&store, "subgraph").await;
    let tree = build_bundle(&store, "subgraph", &opts(None, &[]))
        .await
        .unwrap();
    assert_eq!(tree.checkpoints.len(), 13);
    assert_eq!(tree.checkpoints.len(), dag.len());
    assert_parents_first(&tree);
    let namespaces: std::collections::BTreeSet<&str> = tree
        .checkpoints
        .iter()
        .map(|c| c.checkpoint_ns.as_str())
        .collect();
    assert_eq!(namespaces.len(), 3);
    // Each namespace's root starts its own chain.
    for c in &tree.checkpoints {
        if c.parent_checkpoint_id.is_none() {
            assert_eq!(c.chain, chain(ZERO_CHAIN, &c.hash));
        }
    }
    // A subgraph checkpoint as the branch head: its lineage in its own namespace.
    let sub = dag.namespaces().iter().find(|n| !n.ns.is_empty()).unwrap();
    let b = build_bundle(&store, "subgraph", &opts(sub.head.as_deref(), &[]))
        .await
        .unwrap();
    assert_eq!(b.checkpoints.len(), sub.checkpoint_ids.len());
    assert!(b.checkpoints.iter().all(|c| c.checkpoint_ns == sub.ns));
    let report = verify(&serde_json::to_string(&b).unwrap());
    assert!(report.ok, "{report:?}");
}

#[tokio::test]
async fn unknown_thread_and_checkpoint_are_errors() {
    let (_dir, store) = store().await;
    let err = build_bundle(&store, "no-such-thread", &opts(None, &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Store(_)), "{err:?}");
    let err = build_bundle(&store, "forked", &opts(Some("nope"), &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(err, EngineError::UnknownCheckpoint { ref id, .. } if id == "nope"),
        "{err:?}"
    );
}

/// Collect every value found under `key` (object members and `$items` pairs).
fn values_under<'a>(v: &'a Json, key: &str, out: &mut Vec<&'a Json>) {
    match v {
        Json::Object(m) => {
            for (k, x) in m {
                if k == key {
                    out.push(x);
                }
                values_under(x, key, out);
            }
            if let Some(Json::Array(items)) = m.get("$items") {
                for item in items {
                    if let Some([Json::String(k), x]) = item.as_array().map(Vec::as_slice) {
                        if k == key {
                            out.push(x);
                        }
                    }
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|i| values_under(i, key, out)),
        _ => {}
    }
}

#[tokio::test]
async fn secrets_are_always_masked() {
    let (_dir, store) = store().await;
    let b = build_bundle(&store, "rich-types", &opts(None, &[]))
        .await
        .unwrap();
    let json = serde_json::to_string(&b).unwrap();
    let html = render_html(&b);
    for plain in ["sk-live-should-not-show", "hunter2"] {
        assert!(!json.contains(plain), "{plain} leaked into the JSON bundle");
        assert!(!html.contains(plain), "{plain} leaked into the HTML report");
    }
    let v: Json = serde_json::to_value(&b).unwrap();
    let mut keys = Vec::new();
    values_under(&v, "api_key", &mut keys);
    assert!(!keys.is_empty());
    for k in keys {
        assert_eq!(k["$type"], "pydantic.types.SecretStr");
        assert_eq!(k["$value"], "**********");
        assert_eq!(k["$secret"], true);
    }
    let last = b.checkpoints.last().unwrap();
    assert_eq!(last.values["secret"]["$value"], "**********");
    assert!(verify(&json).ok);
    assert!(verify(&html).ok);
}

#[tokio::test]
async fn redaction_masks_keys_everywhere() {
    let (_dir, store) = store().await;
    // Case-insensitive whole-key globs; `$ref` is a real dict key (in `$items`), `by_*` a
    // nested dict key, `secret` a channel name (values and pending writes).
    let patterns = ["API_KEY", "$ref", "by_*", "secret", "zip"];
    let b = build_bundle(&store, "rich-types", &opts(None, &patterns))
        .await
        .unwrap();
    assert_eq!(b.redactions, patterns);
    let v: Json = serde_json::to_value(&b).unwrap();
    for key in ["api_key", "$ref", "by_id", "secret", "zip"] {
        let mut found = Vec::new();
        values_under(&v, key, &mut found);
        assert!(!found.is_empty(), "{key} not found");
        for x in found {
            assert_eq!(x, REDACTED, "value under {key} not redacted");
        }
    }
    // Channel `secret`: the channel value and the writes to it.
    let mut writes = 0;
    for c in &b.checkpoints {
        if let Some(x) = c.values.get("secret") {
            assert_eq!(x, REDACTED);
        }
        for w in c.pending_writes.iter().filter(|w| w.channel == "secret") {
            assert_eq!(w.value, REDACTED);
            writes += 1;
        }
    }
    assert!(writes > 0);
    // Sibling keys survive; view markers are not matched by the patterns.
    let mut plain = Vec::new();
    values_under(&v, "plain", &mut plain);
    assert!(plain.iter().all(|x| **x == 1));
    let mut names = Vec::new();
    values_under(&v, "name", &mut names);
    assert!(names.contains(&&Json::from("Ada")));

    // Messages: every `content` field and a metadata key, in values and writes.
    let b = build_bundle(&store, "chat-tools", &opts(None, &["content", "USER_*"]))
        .await
        .unwrap();
    let json = serde_json::to_string(&b).unwrap();
    assert!(!json.contains("What is 2+3"));
    assert!(!json.contains("alice"));
    let v: Json = serde_json::to_value(&b).unwrap();
    let mut contents = Vec::new();
    values_under(&v, "content", &mut contents);
    assert!(contents.len() > 10);
    assert!(contents.iter().all(|x| **x == REDACTED));
    for c in &b.checkpoints {
        assert_eq!(c.metadata["user_id"], REDACTED);
        assert_eq!(c.metadata["tenant"], "acme");
    }
    assert!(verify(&json).ok);
    assert!(!render_html(&b).contains("What is 2+3"));

    // The hashes cover the redacted content: a different redaction, different hashes.
    let plain = build_bundle(&store, "chat-tools", &opts(None, &[]))
        .await
        .unwrap();
    assert_ne!(plain.checkpoints[0].hash, b.checkpoints[0].hash);
    assert_ne!(plain.bundle_hash, b.bundle_hash);
}

/// Canonical JSON written independently of the implementation, from the documented rules.
fn canonical(v: &Json) -> String {
    match v {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", serde_json::to_string(k).unwrap(), canonical(&m[k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Json::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => serde_json::to_string(other).unwrap(),
    }
}

fn sha(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn chain(prev: &str, hash: &str) -> String {
    sha(&format!("{prev}{hash}"))
}

#[tokio::test]
async fn hashes_follow_the_documented_definition() {
    let (_dir, store) = store().await;
    let b = build_bundle(&store, "forked", &opts(None, &[]))
        .await
        .unwrap();
    let text = serde_json::to_string_pretty(&b).unwrap();
    let v: Json = serde_json::from_str(&text).unwrap();
    let mut chains: HashMap<(String, String), String> = HashMap::new();
    for e in v["checkpoints"].as_array().unwrap() {
        let mut m = e.as_object().unwrap().clone();
        let hash = m.shift_remove("hash").unwrap();
        let stored_chain = m.shift_remove("chain").unwrap();
        assert_eq!(hash, sha(&canonical(&Json::Object(m))));
        let ns = e["checkpoint_ns"].as_str().unwrap().to_owned();
        let prev = e["parent_checkpoint_id"]
            .as_str()
            .and_then(|p| chains.get(&(ns.clone(), p.to_owned())))
            .cloned()
            .unwrap_or_else(|| ZERO_CHAIN.to_owned());
        assert_eq!(stored_chain, chain(&prev, hash.as_str().unwrap()));
        chains.insert(
            (ns, e["checkpoint_id"].as_str().unwrap().to_owned()),
            stored_chain.as_str().unwrap().to_owned(),
        );
    }
    let mut top = v.as_object().unwrap().clone();
    let bundle_hash = top.shift_remove("bundle_hash").unwrap();
    assert_eq!(bundle_hash, sha(&canonical(&Json::Object(top))));
    // Pretty-printed JSON verifies too (whitespace is not part of the canonical form).
    assert!(verify(&text).ok);
}

#[tokio::test]
async fn bundles_are_deterministic_and_round_trip() {
    let (_dir, store) = store().await;
    for thread in ["forked", "rich-types", "subgraph", "chat-tools"] {
        let a = build_bundle(&store, thread, &opts(None, &["id"]))
            .await
            .unwrap();
        let b = build_bundle(&store, thread, &opts(None, &["id"]))
            .await
            .unwrap();
        let ja = serde_json::to_string(&a).unwrap();
        assert_eq!(ja, serde_json::to_string(&b).unwrap());
        assert_eq!(render_html(&a), render_html(&b));
        // The exact parser gives back the same bundle, byte for byte once serialized.
        let back = parse_bundle(&ja).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), ja);
        let report = verify(&ja);
        assert!(report.ok, "{thread}: {report:?}");
        assert_eq!(report.checkpoints, a.checkpoints.len());
    }
    // Without a fixed time, generated_at is now and only the bundle hash changes.
    let mut o = opts(None, &[]);
    o.generated_at = None;
    let now = build_bundle(&store, "forked", &o).await.unwrap();
    assert!(now.generated_at.ends_with("+00:00"));
    let fixed = build_bundle(&store, "forked", &opts(None, &[]))
        .await
        .unwrap();
    assert_eq!(now.checkpoints, fixed.checkpoints);
}

#[tokio::test]
async fn html_report_is_standalone_and_escaped() {
    let (_dir, store) = store().await;
    let b = build_bundle(&store, "rich-types", &opts(None, &[]))
        .await
        .unwrap();
    let html = render_html(&b);
    assert!(html.starts_with("<!DOCTYPE html>"));
    // No scripts other than the embedded JSON, no external resources.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("<script type=\"application/json\" id=\"flashback-bundle\">"));
    for external in ["src=", "href=\"http", "@import", "url("] {
        assert!(!html.contains(external), "{external} in the HTML");
    }
    // Header facts.
    assert!(html.contains(&b.bundle_hash));
    assert!(html.contains("0.1.0-test"));
    assert!(html.contains("2026-01-02T03:04:05+00:00"));
    for c in &b.checkpoints {
        assert!(html.contains(&c.checkpoint_id));
        assert!(html.contains(&c.hash[..12]));
    }
    // The ~100 KB text is shortened in the readable part (with a note), complete in the bundle.
    assert!(html.contains("more characters not shown"));
    assert!(
        html.contains("long string was shortened") || html.contains("long strings were shortened")
    );
    // The string with a NUL and the `<`/`&` characters of values are escaped in the readable
    // part, and the embedded JSON never closes the element early.
    let (before, embedded) = html.split_once("id=\"flashback-bundle\">").unwrap();
    let embedded = embedded.split_once("</script>").unwrap().0;
    assert!(!embedded.contains("</"));
    assert!(!before.contains("\u{0}"));
    let report = verify(&html);
    assert!(report.ok, "{report:?}");
    assert_eq!(report.checkpoints, b.checkpoints.len());
}

#[tokio::test]
async fn html_escapes_hostile_text() {
    let (_dir, store) = store().await;
    let mut b = build_bundle(&store, "forked", &opts(None, &[]))
        .await
        .unwrap();
    // Values that try to break out of the HTML and the embedded script element.
    let hostile = "</script><script>alert(1)</script><!--<script>& 'x' \"y\"";
    b.checkpoints[0]
        .values
        .insert("note".into(), Json::String(hostile.into()));
    b.checkpoints[0].metadata["source"] = Json::String(hostile.into());
    b.tool.version = hostile.into();
    flashback_engine::export::seal(&mut b);
    let html = render_html(&b);
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
    assert!(!html.contains("<!--"));
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)"));
    let report = verify(&html);
    assert!(report.ok, "{report:?}");
    let back = parse_bundle(&serde_json::to_string(&b).unwrap()).unwrap();
    assert_eq!(back.checkpoints[0].values["note"], hostile);
}

#[tokio::test]
async fn export_reports_progress_and_stops_when_told() {
    use flashback_engine::export::{build_bundle_observed, ExportProgress};
    let (_dir, store) = store().await;
    let mut seen = Vec::new();
    let bundle = build_bundle_observed(&store, "long", &opts(None, &[]), &mut |p| {
        seen.push(p);
        true
    })
    .await
    .expect("export");
    assert_eq!(
        seen.first(),
        Some(&ExportProgress::Loading {
            total: bundle.checkpoint_count
        })
    );
    assert_eq!(
        seen.last(),
        Some(&ExportProgress::Hashing {
            done: bundle.checkpoint_count,
            total: bundle.checkpoint_count
        })
    );
    assert_eq!(
        seen.len(),
        bundle.checkpoint_count + 1,
        "one report per checkpoint"
    );

    let mut calls = 0;
    let err = build_bundle_observed(&store, "long", &opts(None, &[]), &mut |_| {
        calls += 1;
        calls < 10
    })
    .await
    .expect_err("cancelled");
    assert!(matches!(err, EngineError::Cancelled), "{err}");
    assert_eq!(calls, 10, "no work after the observer said stop");
}
