//! The `flashback` binary's write commands on copies of the fixture: forks, edit forks,
//! export and verify, merge and rebuild, delete, prune and copy.

use crate::common;
use common::*;
use serde_json::Value as Json;

#[test]
fn fork_writes_a_copy_that_becomes_the_head() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let db = db.to_string_lossy().into_owned();
    let hist = json_ok(&["history", &db, "interrupt-waiting", "--json"]);
    let waiting = hist[0]["checkpoint_id"].as_str().expect("id").to_owned();
    let before = json_ok(&[
        "state",
        &db,
        "interrupt-waiting",
        "--checkpoint",
        &waiting,
        "--json",
    ]);

    let forked = json_ok(&[
        "fork",
        &db,
        "interrupt-waiting",
        "--checkpoint",
        &waiting,
        "--json",
    ]);
    let new_id = forked["checkpoint_id"].as_str().expect("new id").to_owned();
    assert_eq!(forked["parent_checkpoint_id"], waiting.as_str());
    assert_eq!(
        forked["step"],
        before["metadata"]["step"].as_i64().expect("step") + 1
    );
    assert!(new_id > waiting, "the fork has the newest id");

    let head = json_ok(&["state", &db, "interrupt-waiting", "--json"]);
    assert_eq!(
        head["checkpoint_id"],
        new_id.as_str(),
        "the thread head moved to the fork"
    );
    assert_eq!(head["parent_checkpoint_id"], waiting.as_str());
    assert_eq!(head["metadata"]["source"], "fork");
    assert_eq!(
        head["metadata"]["flashback"]["forked_from"],
        waiting.as_str()
    );
    for key in ["values", "channel_versions", "versions_seen"] {
        assert_eq!(head[key], before[key], "{key} copied");
    }
    assert_eq!(
        head["writes"],
        serde_json::json!([]),
        "a fork starts with no writes"
    );
    assert_eq!(
        head["tasks"]["next"], before["tasks"]["next"],
        "the same tasks run next"
    );

    let out = flashback(&["fork", &db, "interrupt-waiting", "--checkpoint", &waiting]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim().len(),
        36,
        "plain output is the id"
    );
    fails(
        &[
            "fork",
            &db,
            "interrupt-waiting",
            "--checkpoint",
            "1f000000-0000-6000-8000-000000000000",
        ],
        3,
        "not found",
    );
    fails(
        &["fork", &db, "no-such-thread", "--checkpoint", &waiting],
        3,
        "thread \"no-such-thread\" not found",
    );
}

#[test]
fn fork_with_set_edits_a_value_and_keeps_its_type() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let db = db.to_string_lossy().into_owned();
    let head = json_ok(&["state", &db, "chat-tools", "--json"]);
    let id = head["checkpoint_id"].as_str().expect("id").to_owned();
    let mut messages = head["values"]["messages"].clone();
    let last = messages
        .as_array_mut()
        .expect("messages")
        .last_mut()
        .expect("a message");
    assert_eq!(last["$type"], "langchain_core.messages.ai.AIMessage");
    last["content"] = "Edited by Flashback".into();
    let set = format!("messages={messages}");
    let forked = json_ok(&[
        "fork",
        &db,
        "chat-tools",
        "--checkpoint",
        &id,
        "--set",
        &set,
        "--json",
    ]);
    let after = json_ok(&["state", &db, "chat-tools", "--json"]);
    assert_eq!(after["checkpoint_id"], forked["checkpoint_id"]);
    assert_eq!(after["metadata"]["source"], "update");
    assert_eq!(
        after["values"]["messages"], messages,
        "the edit is stored, types intact"
    );
    assert_ne!(
        after["channel_versions"]["messages"], head["channel_versions"]["messages"],
        "the edited channel's version is bumped"
    );
    fails(
        &[
            "fork",
            &db,
            "chat-tools",
            "--checkpoint",
            &id,
            "--set",
            "messages",
        ],
        2,
        "expected CHANNEL=JSON",
    );
    fails(
        &[
            "fork",
            &db,
            "chat-tools",
            "--checkpoint",
            &id,
            "--set",
            "messages={",
        ],
        2,
        "not valid JSON",
    );
    fails(
        &[
            "fork",
            &db,
            "chat-tools",
            "--checkpoint",
            &id,
            "--set",
            r#"messages=[{"$error":"x","$type":"y","raw_base64":""}]"#,
        ],
        2,
        "cannot set channel \"messages\"",
    );
}

#[test]
fn export_then_verify_and_detect_tampering() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json_path = dir.path().join("audit.json");
    let html_path = dir.path().join("audit.html");
    let json_file = json_path.to_string_lossy().into_owned();
    let html_file = html_path.to_string_lossy().into_owned();
    for (file, extra) in [
        (&json_file, vec![]),
        (&html_file, vec!["--redact", "*secret*"]),
    ] {
        let db = sqlite();
        let mut args = vec!["export", db.as_str(), "rich-types", "-o", file.as_str()];
        args.extend(extra);
        let out = flashback(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let verify = flashback(&["verify", file.as_str()]);
        assert!(
            verify.status.success(),
            "fresh export verifies: {}",
            String::from_utf8_lossy(&verify.stdout)
        );
    }
    let text = std::fs::read_to_string(&json_path).expect("read");
    assert!(
        !text.contains("sk-live"),
        "SecretStr values never leave unmasked"
    );
    let html = std::fs::read_to_string(&html_path).expect("read");
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "standalone HTML"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network references"
    );

    let bundle: Json = serde_json::from_str(&text).expect("bundle JSON");
    let step = bundle["checkpoints"][1]["metadata"]["step"].clone();
    let tampered = text.replacen(&format!("\"step\": {step}"), "\"step\": 99", 1);
    assert_ne!(tampered, text, "the test changes something");
    std::fs::write(&json_path, tampered).expect("write");
    let out = flashback(&["verify", &json_file]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "tampering is reported with exit 5"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("modified"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    fails(
        &["export", &sqlite(), "nothread", "-o", &json_file],
        3,
        "nothread",
    );
    fails(
        &["verify", &dir.path().join("missing.json").to_string_lossy()],
        3,
        "cannot read",
    );
}

#[test]
fn merge_dry_run_then_merge_and_rebuild_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let db = db.to_string_lossy().into_owned();
    let hist = json_ok(&["history", &db, "forked", "--json"]);
    let items = hist.as_array().expect("history");
    let parents: Vec<&str> = items
        .iter()
        .filter_map(|i| i["parent_checkpoint_id"].as_str())
        .collect();
    let leaves: Vec<&str> = items
        .iter()
        .map(|i| i["checkpoint_id"].as_str().expect("id"))
        .filter(|id| !parents.contains(id))
        .collect();
    let (a, b) = (leaves[0], leaves[1]);
    let view = json_ok(&[
        "merge",
        &db,
        "forked",
        "--into",
        a,
        "--from",
        b,
        "--channel",
        "log=append",
        "--dry-run",
    ]);
    assert_eq!(view[0]["channel"], "log");
    assert!(view[0]["list"]["added_in_b"].is_array(), "{view}");
    assert_eq!(
        json_ok(&["history", &db, "forked", "--json"]),
        hist,
        "a dry run writes nothing"
    );

    let merged = json_ok(&[
        "merge",
        &db,
        "forked",
        "--into",
        a,
        "--from",
        b,
        "--channel",
        "value",
        "--json",
    ]);
    assert_eq!(merged["parent_checkpoint_id"], a);
    let st = json_ok(&[
        "state",
        &db,
        "forked",
        "--checkpoint",
        merged["checkpoint_id"].as_str().expect("id"),
        "--json",
    ]);
    let b_state = json_ok(&["state", &db, "forked", "--checkpoint", b, "--json"]);
    assert_eq!(
        st["values"]["value"], b_state["values"]["value"],
        "value taken from B"
    );
    assert_eq!(st["metadata"]["flashback"]["action"], "merge");
    fails(
        &[
            "merge",
            &db,
            "forked",
            "--into",
            a,
            "--from",
            b,
            "--channel",
            "value=mix",
        ],
        2,
        "take or append",
    );

    let report = json_ok(&["rebuild", &db, "chat-tools", "--json"]);
    let messages = report
        .as_array()
        .expect("report")
        .iter()
        .find(|r| r["channel"] == "messages")
        .expect("messages");
    assert_eq!(messages["reducer"], "add_messages");
    assert_eq!(messages["disagreements"], serde_json::json!([]));
    let reducers = json_ok(&["rebuild", &db, "reducers", "--json"]);
    let best = reducers
        .as_array()
        .expect("report")
        .iter()
        .find(|r| r["channel"] == "best")
        .expect("best");
    assert!(
        !best["disagreements"].as_array().expect("list").is_empty(),
        "a custom reducer (keep_max) is reported where no known reducer reproduces the state: {best}"
    );
}

#[test]
fn delete_prune_and_copy_ask_before_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let db = db.to_string_lossy().into_owned();
    let count = |thread: &str| {
        json_ok(&["history", &db, thread, "--all-ns", "--json"])
            .as_array()
            .map_or(0, Vec::len)
    };
    let long = count("long");

    let out = flashback(&["delete", &db, "reducers"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("dry run"),
        "delete without --yes is a dry run"
    );
    assert!(count("reducers") > 0, "nothing deleted");
    assert!(flashback(&["delete", &db, "reducers", "--yes"])
        .status
        .success());
    fails(&["history", &db, "reducers"], 3, "not found");

    let dry = json_ok(&["prune", &db, "long", "--json"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(
        dry["checkpoints"].as_array().expect("list").len(),
        long - 1,
        "all but the latest would go"
    );
    assert_eq!(count("long"), long, "a dry run writes nothing");

    let out = flashback(&["copy", &db, "long", "long-copy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(count("long-copy"), long);
    let other = dir.path().join("other.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &other).expect("copy");
    let other = other.to_string_lossy().into_owned();
    let out = flashback(&["copy", &db, "long", "long-elsewhere", "--to", &other]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        json_ok(&["history", &other, "long-elsewhere", "--json"])
            .as_array()
            .map_or(0, Vec::len),
        long,
        "copied across databases"
    );
    // An existing target is a bad argument: invalid_input, exit 2 (the one mapping).
    fails(&["copy", &db, "long", "long-copy"], 2, "long-copy");

    let real = json_ok(&["prune", &db, "long", "--yes", "--json"]);
    assert_eq!(real["dry_run"], false);
    assert_eq!(count("long"), 1, "keep_latest keeps one checkpoint");
}
