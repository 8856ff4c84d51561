//! Exports of hostile-but-genuine data verify: the deepest value the codec accepts, rendered to
//! the JSON view and exported, passes `verify` (it used to be called TAMPERED past 512 levels);
//! nesting beyond anything the exporter writes is refused in one line, without a crash.

use flashback_codec::{decode_typed, view_decoded, ViewOptions};
use flashback_engine::export::{build_bundle, render_html, seal, verify, ExportOptions};
use flashback_storage::sqlite::SqliteStore;
use serde_json::Value as Json;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

/// `{1: {1: … {1: None}}}` nested `levels` deep, as msgpack.
fn int_keyed_maps(levels: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(levels * 2 + 1);
    for _ in 0..levels {
        b.extend_from_slice(&[0x81, 0x01]);
    }
    b.push(0xc0);
    b
}

/// The JSON view of the deepest int-keyed map the codec decodes, and its nesting depth.
fn deepest_view() -> (Json, usize) {
    let mut levels = flashback_codec::msgpack::MAX_DEPTH + 8;
    loop {
        let bytes = int_keyed_maps(levels);
        if let flashback_codec::Decoded::Msgpack(v) = decode_typed("msgpack", Some(&bytes)) {
            let view = view_decoded(
                &flashback_codec::Decoded::Msgpack(v),
                ViewOptions::default(),
            )
            .expect("a value has a view");
            return (view.clone(), depth(&view));
        }
        levels -= 1;
    }
}

fn depth(v: &Json) -> usize {
    match v {
        Json::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Json::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[tokio::test]
async fn the_deepest_exportable_value_verifies() {
    let (view, d) = deepest_view();
    assert!(
        d > 512,
        "the view nests {d} deep; the test needs more than 512"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("langgraph.sqlite");
    std::fs::copy(FIXTURE, &path).unwrap();
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    let opts = ExportOptions {
        checkpoint_id: None,
        redact: vec![],
        tool_version: "0.1.0-test".into(),
        generated_at: Some("2026-01-02T03:04:05+00:00".into()),
        ..Default::default()
    };
    let mut bundle = build_bundle(&store, "forked", &opts).await.unwrap();
    bundle.checkpoints[0].values.insert("deep".into(), view);
    seal(&mut bundle);

    let json = serde_json::to_string(&bundle).unwrap();
    let report = verify(&json);
    assert!(report.ok, "{report:?}");
    let report = verify(&render_html(&bundle));
    assert!(report.ok, "{report:?}");

    // Tampering inside the deep value is still caught.
    let at = json.find("\"deep\"").unwrap();
    let tampered = format!("{}{}", &json[..at], json[at..].replacen("null", "true", 1));
    assert_ne!(tampered, json);
    assert!(!verify(&tampered).ok);
}

#[test]
fn nesting_beyond_any_export_is_one_line_not_a_crash() {
    for n in [5_000usize, 200_000] {
        let text = format!("{}{}", "{\"a\":[".repeat(n), "]}".repeat(n));
        let report = verify(&text);
        assert!(!report.ok);
        assert_eq!(report.problems.len(), 1, "{report:?}");
        assert!(
            report.problems[0].contains("nesting too deep"),
            "{report:?}"
        );
        assert!(!report.problems[0].contains('\n'));
    }
}
