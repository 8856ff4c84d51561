//! `flashback search`: the value search job from the command line, as lines for people and as
//! the app's job events with `--json`.

use crate::common;
use common::*;
use serde_json::Value as Json;

#[test]
fn search_prints_one_line_per_match_fitted() {
    let out = flashback(&["search", &sqlite(), "LoveLace"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("THREAD "), "{text}");
    assert!(lines[1].starts_with("rich-types "), "{text}");
    assert!(lines[1].contains("customer.address.city"), "{text}");
    assert!(lines[1].ends_with("Lovelace"), "{text}");
    assert!(
        text.contains("1 thread holds \"LoveLace\" (12 threads searched)"),
        "{text}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{text}");
    // Progress goes to a terminal only: nothing on stderr here.
    assert!(out.stderr.is_empty());

    let out = flashback(&["search", &sqlite(), "no such text zq"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text,
        "no thread's latest state holds \"no such text zq\" (12 threads searched)\n"
    );
}

#[test]
fn search_json_prints_the_apps_events_then_the_summary() {
    let out = flashback(&["search", &sqlite(), "e", "--limit", "2", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Json> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    for hit in &lines[..2] {
        assert_eq!(hit["type"], "search_hit");
        assert!(hit["thread_id"].is_string() && hit["checkpoint_id"].is_string());
        assert!(hit["matches"][0]["path"].is_string());
        assert!(hit["matches"][0]["snippet"].is_string());
    }
    assert_eq!(lines[2]["type"], "finished");
    let summary = &lines[2]["result"];
    assert_eq!(summary["threads_matched"], 2);
    assert_eq!(summary["truncated"], true);
}

#[test]
fn search_refuses_an_empty_text_and_a_zero_limit() {
    fails(&["search", &sqlite(), "  "], 2, "enter some text");
    let out = flashback(&["search", &sqlite(), "x", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
