//! `flashback threads --where/--since/--until/--status/--after` on the database the real
//! SqliteSaver wrote with run metadata (`tests/fixtures/filters.sqlite`, made by
//! `filters_fixture.py`), and a bad flag as one line.

use crate::common;
use common::*;
use serde_json::Value as Json;
use std::path::PathBuf;

fn db() -> String {
    fixture("filters.sqlite").to_string_lossy().into_owned()
}

fn ids(v: &Json) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn where_finds_the_threads_of_a_user_newest_match_first() {
    let db = db();
    let found = json_ok(&["threads", &db, "--where", "user_id=u-48213", "--json"]);
    assert_eq!(ids(&found), ["handover", "support-2", "support-1"]);
    for t in found.as_array().expect("array") {
        let m = t["matched_checkpoint_id"].as_str().expect("matched");
        assert_eq!(
            t["cursor"],
            format!("{m}/{}", t["thread_id"].as_str().unwrap_or(""))
        );
    }
    let both = json_ok(&[
        "threads",
        &db,
        "--where",
        "user_id=u-48213",
        "--where",
        "assistant_id=asst-support",
        "--json",
    ]);
    assert_eq!(ids(&both), ["handover", "support-1"]);
    let waiting = json_ok(&[
        "threads",
        &db,
        "--where",
        "user_id=u-48213",
        "--status",
        "interrupted",
        "--json",
    ]);
    assert_eq!(ids(&waiting), ["support-2"]);
    assert_eq!(waiting[0]["status"], "interrupted");
    // A plain list is unchanged: no matched id, no cursor.
    let plain = json_ok(&["threads", &db, "--json"]);
    assert!(plain[0].get("cursor").is_none() && plain[0].get("matched_checkpoint_id").is_none());

    let out = flashback(&["threads", &db, "--where", "user_id=u-48213"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("THREAD"), "{text}");
    assert!(
        text.contains("support-2") && !text.contains("other-user"),
        "{text}"
    );
    let none = flashback(&["threads", &db, "--where", "user_id=nobody"]);
    assert!(String::from_utf8_lossy(&none.stdout).starts_with("no threads match"));
}

#[test]
fn since_until_and_pages() {
    let db = db();
    let all = json_ok(&["threads", &db, "--json"]);
    let ts = |t: &str| -> String {
        let row = all.as_array().unwrap().iter().find(|r| r["thread_id"] == t);
        let id = row
            .and_then(|r| r["latest_checkpoint_id"].as_str())
            .expect("id");
        flashback_storage::pyfmt::uuid6_time(id).expect("a v6 id")
    };
    // The time `support-2`'s head was made: `--since` holds it (at or after), `--until` holds
    // only the checkpoints made before it (its earlier ones, and `support-1`'s).
    let at = ts("support-2");
    let since_found = json_ok(&["threads", &db, "--since", &at, "--json"]);
    assert_eq!(
        ids(&since_found),
        ["handover", "plain", "other-user", "support-2"]
    );
    let before = json_ok(&["threads", &db, "--until", &at, "--json"]);
    assert_eq!(ids(&before), ["support-2", "support-1"]);
    assert_ne!(
        before[0]["matched_checkpoint_id"],
        before[0]["latest_checkpoint_id"]
    );
    let other = ts("other-user");
    let window = json_ok(&["threads", &db, "--since", &at, "--until", &other, "--json"]);
    assert_eq!(ids(&window), ["other-user", "support-2"]);
    assert!(
        json_ok(&["threads", &db, "--since", "2100-01-01", "--json"])
            .as_array()
            .is_some_and(|a| a.is_empty())
    );

    // Two at a time, each page after the last thread of the one before.
    let mut args = vec![
        "threads".to_owned(),
        db.clone(),
        "--since".into(),
        "2000-01-01".into(),
    ];
    args.extend(["--limit".into(), "2".into(), "--json".into()]);
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut a = args.clone();
        if let Some(c) = &after {
            a.extend(["--after".into(), c.clone()]);
        }
        let page = json_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let rows = page.as_array().expect("array");
        seen.extend(ids(&page));
        if rows.len() < 2 {
            break;
        }
        after = rows[1]["cursor"].as_str().map(str::to_owned);
    }
    assert_eq!(
        seen,
        ["handover", "plain", "other-user", "support-2", "support-1"]
    );
    let out = flashback(&["threads", &db, "--since", "2000-01-01", "--limit", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the next page: --after '"), "{text}");
}

#[test]
fn metadata_keys_lists_what_where_can_match() {
    let keys = json_ok(&["metadata-keys", &db(), "--json"]);
    let user = keys
        .as_array()
        .and_then(|a| a.iter().find(|k| k["key"] == "user_id"))
        .expect("user_id");
    assert!(user["values"]
        .as_array()
        .is_some_and(|v| v.contains(&"u-48213".into())));
    let out = flashback(&["metadata-keys", &db()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("KEY") && text.contains("assistant_id"),
        "{text}"
    );
}

#[test]
fn a_dev_server_folder_is_filtered_in_memory() {
    let py = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/py");
    let found = json_ok(&[
        "threads",
        py.to_str().unwrap_or(""),
        "--where",
        "graph_id=research",
        "--json",
    ]);
    let rows = found.as_array().expect("array");
    assert_eq!(rows.len(), 1, "{found}");
    assert_eq!(rows[0]["server"]["metadata"]["graph_id"], "research");
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/js");
    let js = js.to_str().unwrap_or("");
    let all = json_ok(&["threads", js, "--json"]);
    let agent = json_ok(&[
        "threads",
        js,
        "--where",
        "graph_id=agent",
        "--since",
        "2020-01-01",
        "--json",
    ]);
    assert_eq!(ids(&agent).len(), ids(&all).len());
    assert!(
        json_ok(&["threads", js, "--where", "graph_id=nope", "--json"])
            .as_array()
            .is_some_and(|a| a.is_empty())
    );
}

#[test]
fn a_bad_flag_is_one_line() {
    let db = db();
    fails(
        &["threads", &db, "--since", "yesterday"],
        2,
        "--since \"yesterday\" is not a time",
    );
    fails(
        &["threads", &db, "--until", "2026-13-01"],
        2,
        "--until \"2026-13-01\" is not a time",
    );
    fails(
        &["threads", &db, "--where", "user_id"],
        2,
        "expected KEY=VALUE",
    );
    fails(
        &["threads", &db, "--where", "user id=x"],
        2,
        "--where \"user id\"",
    );
    fails(
        &["threads", &db, "--status", "done"],
        2,
        "--status \"done\"",
    );
    fails(
        &[
            "threads",
            &db,
            "--since",
            "2026-11-30",
            "--until",
            "2026-11-01",
        ],
        2,
        "is not before --until",
    );
    fails(
        &["threads", &db, "--after", "nothing"],
        2,
        "is not a cursor this list gave",
    );
}
