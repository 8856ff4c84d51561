//! `flashback state DB THREAD --path …`: a page of a long list inside one checkpoint, a search
//! over all of it, long strings folded; the whole checkpoint's JSON without --path unchanged.

use crate::common;
use common::*;

#[test]
fn a_page_of_the_messages_and_the_items_holding_a_text() {
    let whole = json_ok(&["state", &sqlite(), "chat-tools", "--json"]);
    let messages = whole["values"]["messages"].as_array().expect("messages");
    assert!(
        whole.get("pages").is_none(),
        "no `pages` without a page asked for"
    );
    let page = json_ok(&[
        "state",
        &sqlite(),
        "chat-tools",
        "--path",
        "messages",
        "--offset",
        "1",
        "--limit",
        "2",
        "--json",
    ]);
    assert_eq!(page["total"], messages.len());
    assert_eq!(page["offset"], 1);
    assert_eq!(page["items"].as_array().unwrap(), &messages[1..3].to_vec());
    // Past the end: an empty page, the length still said.
    let past = json_ok(&[
        "state",
        &sqlite(),
        "chat-tools",
        "--path",
        "messages",
        "--offset",
        "999",
        "--json",
    ]);
    assert_eq!(past["items"], serde_json::json!([]));
    assert_eq!(past["total"], messages.len());
    // The human page: one line per item, who said it.
    let out = flashback(&[
        "state",
        &sqlite(),
        "chat-tools",
        "--path",
        "messages",
        "--limit",
        "2",
        "--find",
        "a",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("messages: items 0–1 of {}", messages.len())),
        "{text}"
    );
    assert!(text.contains("[0] human: "), "{text}");
    assert!(text.contains(" \"a\"\n"), "{text}");
}

#[test]
fn a_long_string_is_folded_and_fetched_whole_by_its_path() {
    let folded = json_ok(&[
        "state",
        &sqlite(),
        "rich-types",
        "--path",
        "big_text",
        "--fold",
        "100",
        "--json",
    ]);
    assert_eq!(folded["total"], serde_json::Value::Null);
    let chars = folded["value"]["$folded"]["chars"]
        .as_u64()
        .expect("folded");
    assert!(chars > 90_000, "{chars}");
    assert_eq!(folded["value"]["$folded"]["path"], "big_text");
    assert_eq!(folded["folded"], 1);
    let whole = json_ok(&[
        "state",
        &sqlite(),
        "rich-types",
        "--path",
        "big_text",
        "--fold",
        "0",
        "--json",
    ]);
    assert_eq!(
        whole["value"].as_str().map(|s| s.chars().count() as u64),
        Some(chars)
    );
}

#[test]
fn bad_paths_are_one_line_errors() {
    for (args, code, says) in [
        (vec!["--path", "messages["], 2, "bad path"),
        (vec!["--path", "no_such"], 3, "no channel \"no_such\""),
        (
            vec!["--path", "messages[9999]"],
            3,
            "nothing at messages[9999]",
        ),
        (
            vec!["--path", "messages", "--limit", "0"],
            2,
            "limit: expected 1 to 1000",
        ),
        (vec!["--offset", "3"], 2, "--path"),
    ] {
        let mut full = vec!["state", sqlite_leak(), "chat-tools"];
        full.extend(args.iter().copied());
        let out = flashback(&full);
        assert_eq!(out.status.code(), Some(code), "{full:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{full:?}: {err}");
    }
}

fn sqlite_leak() -> &'static str {
    Box::leak(sqlite().into_boxed_str())
}
