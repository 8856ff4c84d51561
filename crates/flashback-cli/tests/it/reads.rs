//! The `flashback` binary's read commands on the committed fixtures (SQLite and Postgres),
//! and bad input.

use crate::common;
use common::*;
use serde_json::Value as Json;
use std::path::PathBuf;

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

/// A copy of the fixture with `n` copies of the thread "reducers" as `bulk-0000`, `bulk-0001`, …
fn with_similar_threads(dir: &std::path::Path, n: usize) -> String {
    let db = dir.join("similar.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    for table in ["checkpoints", "writes"] {
        let cols: Vec<String> = c
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .filter(|c: &String| c != "thread_id")
            .collect();
        let cols = cols.join(", ");
        for i in 0..n {
            c.execute(
                &format!(
                    "INSERT INTO {table} (thread_id, {cols}) SELECT ?1, {cols} FROM {table} \
                     WHERE thread_id = 'reducers'"
                ),
                [format!("bulk-{i:04}")],
            )
            .unwrap();
        }
    }
    db.to_string_lossy().into_owned()
}

#[test]
fn similar_threads_fold_into_one_row_as_in_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_similar_threads(dir.path(), 25);
    let out = flashback(&["threads", &db]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("bulk-* ×25"))
        .unwrap_or_else(|| panic!("one row for the run: {text}"));
    assert!(row.contains("25 finished"), "{row}");
    assert!(!text.contains("bulk-0003"), "{text}");
    assert!(
        text.contains("25 threads with similar ids are folded"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // --unfold lists them; --json has every thread with its group.
    let all =
        String::from_utf8_lossy(&flashback(&["threads", &db, "--unfold"]).stdout).into_owned();
    assert!(
        all.contains("bulk-0003") && !all.contains("bulk-* ×"),
        "{all}"
    );
    let json = json_ok(&["threads", &db, "--json"]);
    let rows = json.as_array().unwrap();
    let grouped = rows.iter().filter(|t| t["group"] == "bulk-").count();
    assert_eq!(grouped, 25);
    assert!(rows
        .iter()
        .filter(|t| t["group"].is_null())
        .all(|t| !t["thread_id"].as_str().unwrap().starts_with("bulk-")));
    // A handful of similar ids is not a run.
    let few_dir = tempfile::tempdir().unwrap();
    let few = with_similar_threads(few_dir.path(), 5);
    let text = String::from_utf8_lossy(&flashback(&["threads", &few]).stdout).into_owned();
    assert!(
        text.contains("bulk-0004") && !text.contains("folded"),
        "{text}"
    );
}

#[test]
fn diff_reads_message_by_message_within_100_columns() {
    // chat-tools: step 1 (the question) against step 8 (the answer, after a tool call).
    let out = flashback(&[
        "diff",
        &sqlite(),
        "chat-tools",
        "1f1e641e-e2cc-69d7-8001-e37cf14529c3",
        "1f1e641e-e387-6e5b-8008-a728a060a3d3",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(
        text.starts_with("e2cc-69d7-e37c → e387-6e5b-a728: "),
        "{text}"
    );
    let head = text
        .lines()
        .find(|l| l.contains("messages:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(head.contains("messages differ"), "{head}");
    // Each added message on its own line: who said it, then the text.
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("+ #") && l.contains(" ai ")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("+ #") && l.contains(" tool ")),
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
        "channels",
        "writes",
        "tasks",
    ] {
        assert!(st.get(key).is_some(), "state has {key}: {st}");
    }
    assert!(
        !st["tasks"]["next"].as_array().expect("next").is_empty(),
        "waiting thread has next: {st}"
    );
    let interrupts = st["tasks"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .flat_map(|t| t["interrupts"].as_array().cloned().unwrap_or_default())
        .collect::<Vec<_>>();
    assert!(!interrupts.is_empty(), "the interrupt is shown: {st}");
    assert_eq!(interrupts[0]["$type"], "langgraph.types.Interrupt");
    let group = &st["writes"][0];
    for key in ["task_id", "task_path", "node", "status", "writes"] {
        assert!(group.get(key).is_some(), "write group has {key}: {group}");
    }
    let w = &group["writes"][0];
    for key in ["idx", "channel", "type_tag", "value", "size", "kind"] {
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
fn state_says_whose_writes_it_shows() {
    // chat-tools, oldest first: input, __start__, agent, tools, … Step 1 was made by `agent`;
    // its own pending writes are `tools`' (the next step's).
    let hist = json_ok(&["history", &sqlite(), "chat-tools", "--json"]);
    let step1 = hist
        .as_array()
        .expect("array")
        .iter()
        .find(|h| h["step"] == 1)
        .expect("step 1")["checkpoint_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let st = json_ok(&[
        "state",
        &sqlite(),
        "chat-tools",
        "--checkpoint",
        &step1,
        "--json",
    ]);
    assert_eq!(st["made_by"][0]["node"], "agent", "{}", st["made_by"]);
    assert_eq!(st["writes"][0]["node"], "tools");
    let out = flashback(&["state", &sqlite(), "chat-tools", "--checkpoint", &step1]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\nmade by: agent (2 writes stored on the parent)\n"),
        "{text}"
    );
    assert!(
        text.contains("\npending writes (2, the next step's: tools):\n"),
        "{text}"
    );
    // The input checkpoint: no step made it.
    let input = json_ok(&[
        "state",
        &sqlite(),
        "chat-tools",
        "--checkpoint",
        hist[hist.as_array().expect("array").len() - 1]["checkpoint_id"]
            .as_str()
            .expect("id"),
        "--json",
    ]);
    assert_eq!(input["made_by"], Json::Array(Vec::new()));
}

#[test]
fn watch_reads_along_lineage_under_branch_headings() {
    let out = flashback(&["watch", &sqlite(), "forked", "value"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[2], "── the head's line ──", "{text}");
    let branches = lines.iter().filter(|l| l.starts_with("── branch ")).count();
    assert!(branches >= 2, "{text}");
    let json = json_ok(&["watch", &sqlite(), "forked", "value", "--json"]);
    let on_head: Vec<bool> = json["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["on_head_branch"].as_bool().expect("bool"))
        .collect();
    let line = on_head.iter().take_while(|h| **h).count();
    assert!(
        line > 0 && on_head[line..].iter().all(|h| !h),
        "{on_head:?}"
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
fn topology_nests_subgraphs_under_the_node_that_ran_them() {
    let out = flashback(&["topology", &sqlite(), "subgraph"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // The root graph's nodes, `mid`'s graph under `mid`, `inner`'s under `inner`, each graph's
    // transitions after its nodes.
    let want = "\
thread subgraph
__start__  ×1
prep       ×1
mid        ×1
  ↳ mid (1 call)
    __start__  ×1
    mid_pre    ×1
    inner      ×1
      ↳ mid|inner (1 call)
        __start__   ×1
        inner_step  ×1
        __end__     ×1
        __start__ → inner_step ×1
        inner_step → __end__ ×1
    mid_post   ×1
    __end__    ×1
    __start__ → mid_pre ×1
    mid_pre → inner ×1
    inner → mid_post ×1
    mid_post → __end__ ×1
post       ×1
__end__    ×1
__start__ → prep ×1
prep → mid ×1
mid → post ×1
post → __end__ ×1
";
    assert_eq!(text, want);
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
    assert!(!st["tasks"]["next"].as_array().expect("next").is_empty());
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
fn the_langgraphjs_dev_servers_folder_lists_its_threads_and_refuses_writes() {
    let folder =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/js");
    let folder = folder.to_string_lossy();
    let threads = json_ok(&["threads", &folder, "--json"]);
    let statuses: Vec<(&str, &str)> = threads
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| {
            (
                t["status"].as_str().expect("status"),
                t["server"]["status"].as_str().expect("server status"),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("finished", "idle"),
            ("failed", "error"),
            ("interrupted", "interrupted"),
            ("finished", "idle")
        ]
    );
    let out = flashback(&["threads", &folder]);
    assert!(out.status.success());
    let head = json_ok(&[
        "history",
        &folder,
        "00000000-0000-4000-8000-000000000001",
        "--json",
    ]);
    let id = head[0]["checkpoint_id"].as_str().expect("id");
    fails(
        &[
            "fork",
            &folder,
            "00000000-0000-4000-8000-000000000001",
            "--checkpoint",
            id,
        ],
        2,
        "writing the LangGraph.js dev server's files is not supported yet: convert it to SQLite",
    );
}

/// The short ids the tables print (`7f9a-6f8b-3e7c`) name checkpoints wherever an id is taken;
/// a start of an id that several share is refused with them (exit 2).
#[test]
fn short_ids_from_the_tables_name_checkpoints() {
    let hist = json_ok(&["history", &sqlite(), "reducers", "--json"]);
    let ids: Vec<String> = hist
        .as_array()
        .expect("array")
        .iter()
        .map(|h| h["checkpoint_id"].as_str().expect("id").to_owned())
        .collect();
    let (newest, oldest) = (&ids[0], &ids[ids.len() - 1]);
    let table = String::from_utf8_lossy(&flashback(&["history", &sqlite(), "reducers"]).stdout)
        .into_owned();
    let short = table
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("a short id")
        .to_owned();
    assert!(short.len() < 20 && newest.contains(&short[..4]), "{short}");
    let st = json_ok(&[
        "state",
        &sqlite(),
        "reducers",
        "--checkpoint",
        &short,
        "--json",
    ]);
    assert_eq!(st["checkpoint_id"], newest.as_str());
    let tail = &oldest[oldest.len() - 12..];
    let diff = json_ok(&["diff", &sqlite(), "reducers", tail, &short, "--json"]);
    assert!(diff.is_object(), "{diff}");
    // Every id of the thread starts the same way: ambiguous.
    let err = fails(
        &["state", &sqlite(), "reducers", "--checkpoint", &newest[..8]],
        2,
        "ambiguous",
    );
    assert!(err.contains("give more of it"), "{err}");
    // An id that names nothing is still not found (exit 3).
    fails(
        &["state", &sqlite(), "reducers", "--checkpoint", "zzzz-zzzz"],
        3,
        "zzzz",
    );
}
