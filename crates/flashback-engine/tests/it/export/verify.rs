//! `verify` on fresh and tampered audit bundles (JSON and HTML) and on garbage.

use flashback_engine::export::{
    build_bundle, parse_bundle, render_html, verify, Bundle, ExportOptions,
};
use flashback_storage::sqlite::SqliteStore;
use serde_json::Value as Json;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

async fn bundle(thread: &str) -> Bundle {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("langgraph.sqlite");
    std::fs::copy(FIXTURE, &path).unwrap();
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    let opts = ExportOptions {
        checkpoint_id: None,
        redact: vec!["api_key".into()],
        tool_version: "0.1.0-test".into(),
        generated_at: Some("2026-01-02T03:04:05+00:00".into()),
        ..Default::default()
    };
    build_bundle(&store, thread, &opts).await.unwrap()
}

fn json(b: &Bundle) -> String {
    serde_json::to_string(b).unwrap()
}

fn problems(text: &str) -> Vec<String> {
    let r = verify(text);
    assert_eq!(r.ok, r.problems.is_empty(), "{r:?}");
    r.problems
}

/// The index of an entry that has a child in the bundle, and that child's index.
fn parent_and_child(b: &Bundle) -> (usize, usize) {
    for (i, c) in b.checkpoints.iter().enumerate() {
        if let Some(j) = b.checkpoints.iter().position(|x| {
            x.checkpoint_ns == c.checkpoint_ns
                && x.parent_checkpoint_id.as_deref() == Some(c.checkpoint_id.as_str())
        }) {
            if i > 0 {
                return (i, j);
            }
        }
    }
    panic!("no parent with a child");
}

const BUNDLE_HASH: &str =
    "bundle_hash does not match the bundle's content (the bundle was modified after export)";

#[tokio::test]
async fn fresh_bundles_verify() {
    for thread in ["forked", "rich-types", "subgraph", "interrupt-resumed"] {
        let b = bundle(thread).await;
        let r = verify(&json(&b));
        assert!(r.ok, "{thread}: {r:?}");
        assert_eq!(r.checkpoints, b.checkpoints.len());
        let r = verify(&render_html(&b));
        assert!(r.ok, "{thread} (html): {r:?}");
        assert_eq!(r.checkpoints, b.checkpoints.len());
    }
}

#[tokio::test]
async fn a_changed_value_is_reported_by_checkpoint() {
    let b = bundle("forked").await;
    let mut t = parse_bundle(&json(&b)).unwrap();
    let k = 3;
    let id = t.checkpoints[k].checkpoint_id.clone();
    t.checkpoints[k]
        .values
        .insert("value".into(), Json::from(999_999));
    assert_eq!(
        problems(&json(&t)),
        [
            format!("checkpoint {id}: content was modified after export (its SHA-256 no longer matches its hash)"),
            BUNDLE_HASH.to_owned(),
        ]
    );

    // The same edit made in the text of the JSON file.
    let text = json(&b);
    let needle = format!("\"checkpoint_id\":\"{id}\"");
    let at = text.find(&needle).unwrap();
    let ts_at = at + text[at..].find("\"ts\":\"").unwrap() + 6;
    let mut edited = text.clone();
    edited.replace_range(ts_at..ts_at + 4, "1999");
    assert_eq!(
        problems(&edited),
        [
            format!("checkpoint {id}: content was modified after export (its SHA-256 no longer matches its hash)"),
            BUNDLE_HASH.to_owned(),
        ]
    );

    // Header fields are covered by the bundle hash only.
    let mut t = parse_bundle(&json(&b)).unwrap();
    t.thread_id = "someone-else".into();
    assert_eq!(problems(&json(&t)), [BUNDLE_HASH]);
}

#[tokio::test]
async fn altered_hash_and_chain_fields_are_named() {
    let b = bundle("forked").await;
    let (p, c) = parent_and_child(&b);
    let pid = b.checkpoints[p].checkpoint_id.clone();

    let mut t = b.clone();
    t.checkpoints[p].hash = "ab".repeat(32);
    let msg = problems(&json(&t));
    assert_eq!(msg.len(), 2, "{msg:?}");
    assert!(
        msg[0].starts_with(&format!("checkpoint {pid}: its hash field was altered")),
        "{msg:?}"
    );
    assert_eq!(msg[1], BUNDLE_HASH);

    // An altered chain is reported on its own checkpoint, not on its children.
    let mut t = b.clone();
    t.checkpoints[p].chain = "cd".repeat(32);
    assert_eq!(
        problems(&json(&t)),
        [
            format!("checkpoint {pid}: chain link broken (its chain does not extend the chain of its parent {})",
                b.checkpoints[p].parent_checkpoint_id.clone().unwrap()),
            BUNDLE_HASH.to_owned(),
        ]
    );
    assert!(c > p);
}

#[tokio::test]
async fn a_deleted_checkpoint_is_reported() {
    let b = bundle("forked").await;
    let (p, c) = parent_and_child(&b);
    let pid = b.checkpoints[p].checkpoint_id.clone();
    let mut t = b.clone();
    t.checkpoints.remove(p);
    let children: Vec<String> = b
        .checkpoints
        .iter()
        .filter(|x| x.parent_checkpoint_id.as_deref() == Some(pid.as_str()))
        .map(|x| x.checkpoint_id.clone())
        .collect();
    assert!(children.contains(&b.checkpoints[c].checkpoint_id));
    let mut want: Vec<String> = children
        .iter()
        .map(|id| format!("checkpoint {id}: its parent {pid} is missing from the bundle, but its chain shows it was not exported as a root (the parent was removed, or the chain field altered)"))
        .collect();
    want.push(format!(
        "the bundle declares {} checkpoints but holds {} (checkpoints added or removed)",
        b.checkpoints.len(),
        b.checkpoints.len() - 1
    ));
    want.push(BUNDLE_HASH.to_owned());
    assert_eq!(problems(&json(&t)), want);

    // A deleted leaf leaves no orphan: the count and the bundle hash tell.
    let leaf = b
        .checkpoints
        .iter()
        .rposition(|x| {
            !b.checkpoints
                .iter()
                .any(|y| y.parent_checkpoint_id.as_deref() == Some(x.checkpoint_id.as_str()))
        })
        .unwrap();
    let mut t = b.clone();
    t.checkpoints.remove(leaf);
    assert_eq!(problems(&json(&t)).len(), 2);

    // Moving a child before its parent.
    let mut t = b.clone();
    let child = t.checkpoints.remove(c);
    t.checkpoints.insert(0, child);
    let msg = problems(&json(&t));
    assert!(
        msg.contains(&format!(
            "checkpoint {}: appears before its parent {pid} in the bundle (entries reordered)",
            b.checkpoints[c].checkpoint_id
        )),
        "{msg:?}"
    );
}

#[tokio::test]
async fn tampered_html_is_reported() {
    let b = bundle("rich-types").await;
    let html = render_html(&b);
    assert!(verify(&html).ok);

    // Edit a value inside the embedded JSON.
    let (head, rest) = html.split_once("id=\"flashback-bundle\">").unwrap();
    let (embedded, tail) = rest.split_once("</script>").unwrap();
    assert!(embedded.contains("\"name\":\"Ada\""));
    let edited = format!(
        "{head}id=\"flashback-bundle\">{}</script>{tail}",
        embedded.replacen("\"name\":\"Ada\"", "\"name\":\"Eve\"", 1)
    );
    let msg = problems(&edited);
    let first = b
        .checkpoints
        .iter()
        .find(|c| {
            serde_json::to_string(c)
                .unwrap()
                .contains("\"name\":\"Ada\"")
        })
        .unwrap();
    assert_eq!(
        msg,
        [
            format!("checkpoint {}: content was modified after export (its SHA-256 no longer matches its hash)", first.checkpoint_id),
            BUNDLE_HASH.to_owned(),
        ]
    );

    // Edit only the readable part: the embedded bundle is intact, the page is not.
    let visible = html.replacen("Ada", "Eve", 1);
    assert!(visible.find("Eve").unwrap() < visible.find("flashback-bundle\">").unwrap());
    let msg = problems(&visible);
    assert_eq!(msg.len(), 1, "{msg:?}");
    assert!(
        msg[0].starts_with("the HTML report's readable part was edited"),
        "{msg:?}"
    );

    // A broken embedded element.
    let msg = problems(&html.replace("</script>", ""));
    assert_eq!(
        msg,
        ["the HTML report's embedded bundle is not terminated (no </script>)"]
    );
    let msg = problems(&format!(
        "{head}id=\"flashback-bundle\">{{\"format\"</script>{tail}"
    ));
    assert_eq!(msg.len(), 1);
    assert!(
        msg[0].starts_with("the HTML report's embedded bundle is not valid JSON"),
        "{msg:?}"
    );
}

#[tokio::test]
async fn garbage_is_not_ok() {
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "not a Flashback audit bundle"),
        ("hello".into(), "not a Flashback audit bundle"),
        ("{".into(), "the input is not valid JSON"),
        ("{\"a\":1}".into(), "not a Flashback audit bundle (no \"format\""),
        ("{\"format\":\"flashback-audit/9\"}".into(), "unsupported bundle format"),
        ("{\"format\":\"flashback-audit/1\"}".into(), "the bundle has no \"checkpoints\" array"),
        ("{\"format\":\"flashback-audit/1\",\"format\":\"x\"}".into(), "the input is not valid JSON: duplicate key"),
        ("[1,2,3]".into(), "not a Flashback audit bundle"),
        ("<html><body>hi</body></html>".into(), "HTML without an embedded bundle"),
        (format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)), "not a Flashback audit bundle"),
        (format!("{{\"a\":{}1{}}}", "[".repeat(100_000), "]".repeat(100_000)), "nesting too deep"),
        ("{\"format\":\"flashback-audit/1\",\"checkpoints\":[1,{}],\"bundle_hash\":\"x\",\"checkpoint_count\":2}".into(),
            "checkpoint entry #1: missing or invalid field(s)"),
        ("{\"s\":\"\\ud800\"}".into(), "lone surrogate"),
        ("{\"n\":01}".into(), "not valid JSON"),
        ("\u{feff}{\"x\":\"\u{0}\"}".into(), "control character in string"),
    ];
    for (input, want) in cases {
        let r = verify(&input);
        assert!(!r.ok, "{input:.60}: {r:?}");
        assert!(
            r.problems.iter().any(|p| p.contains(want)),
            "{input:.60}: expected {want:?} in {:?}",
            r.problems
        );
    }
}
