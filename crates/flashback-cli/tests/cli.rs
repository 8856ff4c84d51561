//! End-to-end tests of the `flashback` binary on the committed fixtures (SQLite and Postgres).

use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn sqlite() -> String {
    fixture("langgraph.sqlite").to_string_lossy().into_owned()
}

fn flashback(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashback"))
        .args(args)
        .output()
        .expect("run flashback")
}

fn json_ok(args: &[&str]) -> Json {
    let out = flashback(args);
    assert!(
        out.status.success(),
        "flashback {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn fails(args: &[&str], code: i32, needle: &str) {
    let out = flashback(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code of {args:?}; stderr: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
    assert!(
        stderr.contains(needle),
        "stderr mentions {needle:?}: {stderr}"
    );
}

fn thread_statuses(threads: &Json) -> Vec<(String, String, u64)> {
    threads
        .as_array()
        .expect("array")
        .iter()
        .map(|t| {
            (
                t["thread_id"].as_str().expect("id").to_owned(),
                t["status"].as_str().expect("status").to_owned(),
                t["checkpoint_count"].as_u64().expect("count"),
            )
        })
        .collect()
}

fn check_threads(threads: &Json) {
    let rows = thread_statuses(threads);
    let status = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1.as_str());
    assert_eq!(status("interrupt-waiting"), Some("interrupted"), "{rows:?}");
    assert_eq!(status("parallel-failure"), Some("failed"), "{rows:?}");
    assert_eq!(status("reducers"), Some("finished"), "{rows:?}");
    let long = rows.iter().find(|r| r.0 == "long").expect("long thread");
    assert!(long.2 >= 300, "long thread has {} checkpoints", long.2);
    let sub = threads
        .as_array()
        .expect("array")
        .iter()
        .find(|t| t["thread_id"] == "subgraph")
        .expect("subgraph thread");
    assert!(
        sub["namespaces"].as_array().expect("namespaces").len() > 1,
        "{sub}"
    );
}

#[test]
fn threads_json_lists_every_thread_with_a_status() {
    check_threads(&json_ok(&["threads", &sqlite(), "--json"]));
}

#[test]
fn threads_human_table() {
    let out = flashback(&["threads", &sqlite()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("THREAD"), "{text}");
    assert!(
        text.contains("interrupt-waiting") && text.contains("interrupted"),
        "{text}"
    );
}

#[test]
fn history_is_newest_first_with_parents_and_limits() {
    let items = json_ok(&["history", &sqlite(), "forked", "--json"]);
    let items = items.as_array().expect("array");
    assert!(items.len() >= 10, "{} items", items.len());
    let ids: Vec<&str> = items
        .iter()
        .map(|i| i["checkpoint_id"].as_str().expect("id"))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "newest first");
    for key in [
        "checkpoint_id",
        "parent_checkpoint_id",
        "checkpoint_ns",
        "ts",
        "metadata",
    ] {
        assert!(items[0].get(key).is_some(), "item has {key}");
    }
    let limited = json_ok(&[
        "history",
        &sqlite(),
        "forked",
        "--limit",
        "3",
        "--before",
        ids[1],
        "--json",
    ]);
    let limited: Vec<&str> = limited
        .as_array()
        .expect("array")
        .iter()
        .map(|i| i["checkpoint_id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        limited,
        ids[2..5].to_vec(),
        "--before excludes, --limit caps"
    );
    let forks = json_ok(&[
        "history",
        &sqlite(),
        "forked",
        "--filter",
        "source=fork",
        "--json",
    ]);
    let forks = forks.as_array().expect("array");
    assert!(!forks.is_empty(), "the forked thread has fork checkpoints");
    assert!(forks.iter().all(|f| f["metadata"]["source"] == "fork"));
}

#[test]
fn history_all_namespaces_includes_subgraphs() {
    let root = json_ok(&["history", &sqlite(), "subgraph", "--json"]);
    let all = json_ok(&["history", &sqlite(), "subgraph", "--all-ns", "--json"]);
    let all = all.as_array().expect("array");
    assert!(all.len() > root.as_array().expect("array").len());
    assert!(
        all.iter().any(|i| i["checkpoint_ns"] != ""),
        "subgraph rows present"
    );
}

#[test]
fn state_shows_values_writes_and_next() {
    let st = json_ok(&["state", &sqlite(), "interrupt-waiting", "--json"]);
    for key in [
        "checkpoint_id",
        "parent_checkpoint_id",
        "metadata",
        "values",
        "channel_versions",
        "versions_seen",
        "pending_writes",
        "next",
        "tasks",
    ] {
        assert!(st.get(key).is_some(), "state has {key}: {st}");
    }
    assert!(
        !st["next"].as_array().expect("next").is_empty(),
        "waiting thread has next: {st}"
    );
    let interrupts = st["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .flat_map(|t| t["interrupts"].as_array().cloned().unwrap_or_default())
        .collect::<Vec<_>>();
    assert!(!interrupts.is_empty(), "the interrupt is shown: {st}");
    assert_eq!(interrupts[0]["$type"], "langgraph.types.Interrupt");
    let w = &st["pending_writes"][0];
    for key in ["task_id", "task_path", "idx", "channel", "type", "value"] {
        assert!(w.get(key).is_some(), "pending write has {key}: {w}");
    }
}

#[test]
fn state_decodes_messages_and_masks_secrets() {
    let st = json_ok(&["state", &sqlite(), "chat-tools", "--json"]);
    let text = st["values"].to_string();
    assert!(
        text.contains("langchain_core.messages.ai.AIMessage"),
        "{text}"
    );
    assert!(text.contains("tool_calls"), "{text}");
    let rich = json_ok(&["state", &sqlite(), "rich-types", "--json"]).to_string();
    assert!(
        rich.contains("pydantic.types.SecretStr"),
        "a SecretStr is in the fixture"
    );
    assert!(rich.contains("\"$secret\":true"), "masked by default");
    let revealed = json_ok(&[
        "state",
        &sqlite(),
        "rich-types",
        "--reveal-secrets",
        "--json",
    ])
    .to_string();
    assert!(
        !revealed.contains("\"$secret\":true"),
        "--reveal-secrets shows the value"
    );
}

#[test]
fn state_of_an_explicit_checkpoint_and_human_output() {
    let hist = json_ok(&["history", &sqlite(), "reducers", "--json"]);
    let oldest = hist.as_array().expect("array").last().expect("one")["checkpoint_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let st = json_ok(&[
        "state",
        &sqlite(),
        "reducers",
        "--checkpoint",
        &oldest,
        "--json",
    ]);
    assert_eq!(st["checkpoint_id"], oldest.as_str());
    assert_eq!(st["parent_checkpoint_id"], Json::Null);
    let out = flashback(&["state", &sqlite(), "reducers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.starts_with("checkpoint "),
        "{text}"
    );
}

#[test]
fn graph_draws_branch_lanes() {
    let out = flashback(&["graph", &sqlite(), "forked"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(HEAD)"), "{text}");
    assert!(text.contains("|/"), "a fork is drawn: {text}");
    let layout = json_ok(&["graph", &sqlite(), "forked", "--json"]);
    assert!(layout["rows"].as_array().expect("rows").len() >= 10);
}

#[test]
fn bad_input_gives_one_clear_line_and_an_exit_code() {
    fails(
        &["state", &sqlite(), "no-such-thread"],
        3,
        "thread \"no-such-thread\" not found",
    );
    fails(&["history", &sqlite(), "no-such-thread"], 3, "not found");
    fails(
        &[
            "state",
            &sqlite(),
            "reducers",
            "--checkpoint",
            "1f000000-0000-6000-8000-000000000000",
        ],
        3,
        "checkpoint 1f000000-0000-6000-8000-000000000000 not found",
    );
    fails(&["threads", "/nonexistent/db.sqlite"], 3, "no such file");
    let readme = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    fails(
        &["threads", &readme.to_string_lossy()],
        4,
        "not a SQLite database",
    );
    fails(
        &["history", &sqlite(), "reducers", "--filter", "bad key=1"],
        2,
        "must match",
    );
    fails(
        &["threads", "postgres://nobody@127.0.0.1:1/db"],
        1,
        "cannot connect",
    );
}

#[tokio::test]
async fn the_same_commands_work_on_postgres() {
    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let dump = std::fs::read_to_string(fixture("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let url = pg.url().to_owned();
    let threads = tokio::task::spawn_blocking(move || json_ok(&["threads", &url, "--json"]))
        .await
        .expect("join");
    check_threads(&threads);
    let url = pg.url().to_owned();
    let (st, graph) = tokio::task::spawn_blocking(move || {
        (
            json_ok(&["state", &url, "interrupt-waiting", "--json"]),
            flashback(&["graph", &url, "forked"]),
        )
    })
    .await
    .expect("join");
    assert!(!st["next"].as_array().expect("next").is_empty());
    assert!(String::from_utf8_lossy(&graph.stdout).contains("(HEAD)"));
    let pw = pg.url().replace("postgres@", "postgres:hunter2@");
    let out =
        tokio::task::spawn_blocking(move || flashback(&["threads", &format!("{pw}_missing")]))
            .await
            .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "missing database fails");
    assert!(
        !stderr.contains("hunter2"),
        "the password never appears: {stderr}"
    );
}

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
        head["pending_writes"],
        serde_json::json!([]),
        "a fork starts with no writes"
    );
    assert_eq!(head["next"], before["next"], "the same tasks run next");

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
    fails(&["copy", &db, "long", "long-copy"], 1, "long-copy");

    let real = json_ok(&["prune", &db, "long", "--yes", "--json"]);
    assert_eq!(real["dry_run"], false);
    assert_eq!(count("long"), 1, "keep_latest keeps one checkpoint");
}
