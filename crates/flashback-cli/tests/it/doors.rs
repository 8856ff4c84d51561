//! One front door: every operation of `flashback-api` is reachable from the CLI, and the CLI's
//! `--json` is exactly the JSON the app receives for the same request.
//!
//! The app's JSON is taken from `Api::dispatch`, which is what `flashback serve` answers over
//! HTTP (`serve/requests.rs` tests that transport) and what the Tauri commands return
//! (`tests/ipc_commands.rs` compares those with `dispatch`). Reads are compared value for
//! value on the fixture; writes (which make new ids and timestamps) on copies of it, by shape.

use flashback_api::{Api, OpenRequest, COMMANDS};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Commands that exist for the app's own session and have no CLI subcommand: the CLI takes a
/// location per call instead of a handle, has no recent connections, settings or jobs to poll
/// (it follows its jobs itself), validates edits when it writes them, and takes an encrypted
/// database's key from `LANGGRAPH_AES_KEY` as LangGraph does (instead of `unlock_database`).
const APP_ONLY: &[&str] = &[
    "app_info",
    "open_database",
    "open_demo",
    "open_recent",
    "recent_connections",
    "forget_connection",
    "close_database",
    "validate_edit",
    "job_poll",
    "job_cancel",
    "set_setting",
    "unlock_database",
];

fn fixture_copy(dir: &Path, name: &str) -> String {
    let db = dir.join(name);
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    std::fs::copy(src, &db).expect("copy fixture");
    db.to_string_lossy().into_owned()
}

fn cli_json(args: &[&str]) -> Json {
    let out = Command::new(env!("CARGO_BIN_EXE_flashback"))
        .args(args)
        .output()
        .expect("run flashback");
    assert!(
        out.status.success(),
        "flashback {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "flashback {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The app's answer: `dispatch` with Tauri-shaped arguments, `db` filled in.
async fn app_json(api: &Api, db: &str, command: &str, mut req: Json) -> Json {
    if let Some(obj) = req.as_object_mut() {
        obj.insert("db".into(), json!(db));
    }
    api.dispatch(command, &json!({ "req": req }))
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

async fn open(api: &Api, location: &str) -> String {
    api.open_database(OpenRequest {
        location: location.to_owned(),
        password: None,
        remember: false,
        save_password: false,
    })
    .await
    .expect("open")
    .db
}

/// The keys of every object, recursively (the shape of a response without its values).
fn shape(v: &Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Json::Array(a) => Json::Array(a.first().map(shape).into_iter().collect()),
        _ => Json::Null,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_json_equals_the_apps_json_for_every_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_copy(dir.path(), "agents.sqlite");
    let api = Api::ephemeral().expect("api");
    let h = open(&api, &db).await;

    let history = app_json(
        &api,
        &h,
        "thread_history",
        json!({"thread_id": "forked", "checkpoint_ns": ""}),
    )
    .await;
    let ids: Vec<String> = history
        .as_array()
        .expect("history")
        .iter()
        .map(|e| e["checkpoint_id"].as_str().expect("id").to_owned())
        .collect();
    let (newest, oldest, middle) = (&ids[0], &ids[ids.len() - 1], &ids[ids.len() / 2]);
    let export = dir
        .path()
        .join("forked.json")
        .to_string_lossy()
        .into_owned();
    let _ = cli_json(&["export", &db, "forked", "-o", &export, "--json"]);

    let cases: Vec<(Vec<&str>, &str, Json)> = vec![
        (vec!["threads"], "list_threads", json!({})),
        (
            vec!["threads", "--limit", "3"],
            "list_threads",
            json!({"limit": 3}),
        ),
        (
            vec!["history", "forked"],
            "thread_history",
            json!({"thread_id": "forked", "checkpoint_ns": ""}),
        ),
        (
            vec!["history", "subgraph", "--all-ns", "--limit", "4"],
            "thread_history",
            json!({"thread_id": "subgraph", "limit": 4}),
        ),
        (
            vec![
                "history",
                "long",
                "--filter",
                "source=loop",
                "--before",
                middle,
            ],
            "thread_history",
            json!({"thread_id": "long", "checkpoint_ns": "", "filter": {"source": "loop"}, "before": middle}),
        ),
        (
            vec!["state", "interrupt-waiting"],
            "checkpoint_detail",
            json!({"thread_id": "interrupt-waiting"}),
        ),
        (
            vec!["state", "forked", "--checkpoint", middle],
            "checkpoint_detail",
            json!({"thread_id": "forked", "checkpoint_id": middle}),
        ),
        (
            vec!["state", "rich-types", "--reveal-secrets"],
            "checkpoint_detail",
            json!({"thread_id": "rich-types", "reveal_secrets": true}),
        ),
        (
            vec![
                "state",
                "chat-tools",
                "--path",
                "messages",
                "--offset",
                "1",
                "--limit",
                "2",
                "--find",
                "tool",
            ],
            "state_page",
            json!({"thread_id": "chat-tools", "path": "messages", "offset": 1, "limit": 2, "query": "tool"}),
        ),
        (
            vec!["state", "rich-types", "--path", "big_text", "--fold", "100"],
            "state_page",
            json!({"thread_id": "rich-types", "path": "big_text", "fold": 100}),
        ),
        (
            vec!["graph", "subgraph"],
            "thread_graph",
            json!({"thread_id": "subgraph"}),
        ),
        (
            vec!["topology", "subgraph"],
            "thread_topology",
            json!({"thread_id": "subgraph"}),
        ),
        (
            vec!["topology", "chat-tools", "forked"],
            "thread_topology",
            json!({"thread_id": "chat-tools", "thread_ids": ["forked"]}),
        ),
        (
            vec!["diff", "forked", oldest, newest],
            "diff_checkpoints",
            json!({"thread_id": "forked", "a": {"checkpoint_id": oldest}, "b": {"checkpoint_id": newest}}),
        ),
        (
            vec!["replay", "forked"],
            "replay_steps",
            json!({"thread_id": "forked"}),
        ),
        (
            vec!["rebuild", "reducers"],
            "rebuild_report",
            json!({"thread_id": "reducers"}),
        ),
        (
            vec!["activity", "forked", "long"],
            "thread_activity",
            json!({"thread_ids": ["forked", "long"]}),
        ),
        (
            vec!["watch", "forked", "value"],
            "watch_key",
            json!({"thread_id": "forked", "path": "value"}),
        ),
        (
            vec!["watch", "chat-tools", "messages[-1].content"],
            "watch_key",
            json!({"thread_id": "chat-tools", "checkpoint_ns": "", "path": "messages[-1].content"}),
        ),
        (
            vec![
                "merge",
                "forked",
                "--into",
                newest,
                "--from",
                middle,
                "--channel",
                "log",
                "--dry-run",
            ],
            "merge_preview",
            json!({"thread_id": "forked", "into": newest, "from": middle, "channels": ["log"]}),
        ),
        (
            vec!["delete", "reducers"],
            "delete_thread",
            json!({"thread_id": "reducers", "dry_run": true}),
        ),
        (
            vec!["prune", "long", "forked"],
            "prune_threads",
            json!({"thread_ids": ["long", "forked"], "strategy": "keep_latest", "dry_run": true}),
        ),
    ];
    for (args, command, req) in cases {
        let mut full = vec![args[0], db.as_str()];
        full.extend(&args[1..]);
        full.push("--json");
        let mut cli = cli_json(&full);
        let app = app_json(&api, &h, command, req).await;
        if command == "list_threads" {
            // `threads --json` adds each thread's token usage, as `thread_activity` (the app's
            // list asks it per row in view) answers it.
            let ids: Vec<Json> = app
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["thread_id"].clone())
                .collect();
            let activity = app_json(&api, &h, "thread_activity", json!({"thread_ids": ids})).await;
            for (t, a) in cli
                .as_array_mut()
                .into_iter()
                .flatten()
                .zip(activity.as_array().into_iter().flatten())
            {
                let tokens = t.as_object_mut().and_then(|o| o.remove("tokens"));
                assert_eq!(tokens.unwrap_or(Json::Null), a["tokens"], "{t}");
            }
            if args.len() == 1 {
                let used = activity.as_array().into_iter().flatten();
                assert!(
                    used.filter(|a| !a["tokens"].is_null()).count() > 0,
                    "chat-tools used tokens"
                );
            }
        }
        assert_eq!(cli, app, "flashback {args:?} --json vs {command}");
    }
    let verify_cli = cli_json(&["verify", &export, "--json"]);
    let verify_app = api
        .dispatch("verify_export", &json!({"req": {"path": export}}))
        .await
        .expect("verify");
    assert_eq!(verify_cli, verify_app, "verify");
    assert_eq!(verify_app["ok"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_json_has_the_apps_shape_for_every_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (
        fixture_copy(dir.path(), "a.sqlite"),
        fixture_copy(dir.path(), "b.sqlite"),
    );
    let api = Api::ephemeral().expect("api");
    let h = open(&api, &b).await;
    let history = cli_json(&["history", &a, "forked", "--json"]);
    let ids: Vec<&str> = history
        .as_array()
        .expect("history")
        .iter()
        .map(|e| e["checkpoint_id"].as_str().expect("id"))
        .collect();
    let (newest, middle) = (ids[0], ids[ids.len() / 2]);
    // Each side copies into a database of its own.
    let other = fixture_copy(dir.path(), "other-a.sqlite");
    let h_other = open(&api, &fixture_copy(dir.path(), "other-b.sqlite")).await;

    let cases: Vec<(Vec<&str>, &str, Json)> = vec![
        (
            vec!["fork", "forked", "--checkpoint", middle],
            "fork_checkpoint",
            json!({"thread_id": "forked", "checkpoint_id": middle}),
        ),
        (
            vec![
                "fork",
                "forked",
                "--checkpoint",
                middle,
                "--set",
                "log=[\"x\"]",
            ],
            "fork_checkpoint",
            json!({"thread_id": "forked", "checkpoint_id": middle, "edits": [{"channel": "log", "value": ["x"]}]}),
        ),
        (
            vec![
                "merge",
                "forked",
                "--into",
                newest,
                "--from",
                middle,
                "--channel",
                "log=append",
            ],
            "merge_branches",
            json!({"thread_id": "forked", "into": newest, "from": middle, "channels": [{"channel": "log", "mode": "append_b"}]}),
        ),
        (
            vec!["copy", "long", "long-2"],
            "copy_thread",
            json!({"thread_id": "long", "target_thread_id": "long-2"}),
        ),
        (
            vec!["copy", "long", "long-3", "--to", other.as_str()],
            "copy_thread",
            json!({"thread_id": "long", "target_thread_id": "long-3", "to_db": h_other}),
        ),
        (
            vec!["delete", "reducers", "--yes"],
            "delete_thread",
            json!({"thread_id": "reducers", "dry_run": false}),
        ),
        (
            vec!["delete-branch", "forked", middle],
            "delete_branch",
            json!({"thread_id": "forked", "checkpoint_id": middle, "dry_run": true}),
        ),
        (
            vec!["prune", "long", "--yes"],
            "prune_threads",
            json!({"thread_ids": ["long"], "strategy": "keep_latest", "dry_run": false}),
        ),
    ];
    for (args, command, req) in cases {
        let mut full = vec![args[0], a.as_str()];
        full.extend(&args[1..]);
        full.push("--json");
        let cli = cli_json(&full);
        let app = app_json(&api, &h, command, req).await;
        assert_eq!(
            shape(&cli),
            shape(&app),
            "flashback {args:?} --json vs {command}"
        );
    }
}

/// A SQLite file holding only a memory store (the tables `SqliteStore.setup()` makes).
fn store_db(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    let conn = rusqlite::Connection::open(&path).expect("create");
    conn.execute_batch(
        "CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL, \
         created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, \
         expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key)); \
         INSERT INTO store (prefix, key, value, updated_at) VALUES \
           ('users.u-1', 'prefs', '{\"theme\":\"dark\"}', '2025-01-01 00:00:01'), \
           ('users.u-1', 'notes', '{\"text\":\"tea\"}', '2025-01-01 00:00:02'), \
           ('users2', 'k', '{\"theme\":\"light\"}', '2025-01-01 00:00:03'); \
         UPDATE store SET expires_at = '2999-01-01 00:00:00+00:00', ttl_minutes = 5 WHERE key = 'notes';",
    )
    .expect("store");
    path.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_commands_print_the_apps_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = store_db(dir.path(), "memory.sqlite");
    let api = Api::ephemeral().expect("api");
    let h = open(&api, &db).await;
    let reads: Vec<(Vec<&str>, &str, Json)> = vec![
        (vec!["ls"], "store_list", json!({})),
        (
            vec!["ls", "--prefix", "users", "--limit", "1", "--offset", "1"],
            "store_list",
            json!({"prefix": ["users"], "limit": 1, "offset": 1}),
        ),
        (
            vec!["get", "users/u-1", "notes"],
            "store_get",
            json!({"namespace": ["users", "u-1"], "key": "notes"}),
        ),
        (
            vec!["search", "--query", "DARK", "--prefix", "users"],
            "store_search",
            json!({"prefix": ["users"], "query": "DARK"}),
        ),
        (vec!["namespaces"], "store_namespaces", json!({})),
        (
            vec!["delete", "users/u-1", "prefs"],
            "store_delete",
            json!({"namespace": ["users", "u-1"], "key": "prefs", "dry_run": true}),
        ),
    ];
    for (args, command, req) in reads {
        let mut full = vec!["store", args[0], db.as_str()];
        full.extend(&args[1..]);
        full.push("--json");
        let cli = cli_json(&full);
        let app = app_json(&api, &h, command, req).await;
        assert_eq!(cli, app, "flashback {full:?} vs {command}");
    }

    // Writes, each side on a database of its own, compared by shape.
    let a = store_db(dir.path(), "a.sqlite");
    let h_b = open(&api, &store_db(dir.path(), "b.sqlite")).await;
    let writes: Vec<(Vec<&str>, &str, Json)> = vec![
        (
            vec![
                "put",
                "users/u-1",
                "prefs",
                "{\"theme\": \"blue\"}",
                "--ttl",
                "5",
            ],
            "store_put",
            json!({"namespace": ["users", "u-1"], "key": "prefs", "value": {"theme": "blue"}, "ttl_minutes": 5.0}),
        ),
        (
            vec!["delete", "users2", "k", "--yes"],
            "store_delete",
            json!({"namespace": ["users2"], "key": "k", "dry_run": false}),
        ),
    ];
    for (args, command, req) in writes {
        let mut full = vec!["store", args[0], a.as_str()];
        full.extend(&args[1..]);
        full.push("--json");
        let cli = cli_json(&full);
        let app = app_json(&api, &h_b, command, req).await;
        assert_eq!(shape(&cli), shape(&app), "flashback {full:?} vs {command}");
    }
}

#[test]
fn every_operation_has_a_cli_subcommand() {
    // The subcommand each API command is reached by (the test above runs each of them).
    let cli: &[(&str, &str)] = &[
        ("list_threads", "threads"),
        ("thread_history", "history"),
        ("thread_graph", "graph"),
        ("thread_topology", "topology"),
        ("checkpoint_detail", "state"),
        ("state_page", "state"),
        ("diff_checkpoints", "diff"),
        ("replay_steps", "replay"),
        ("rebuild_report", "rebuild"),
        ("repair_blobs", "rebuild"),
        ("watch_key", "watch"),
        ("thread_activity", "activity"),
        ("metadata_keys", "metadata-keys"),
        ("fork_checkpoint", "fork"),
        ("merge_preview", "merge"),
        ("merge_branches", "merge"),
        ("start_export", "export"),
        ("verify_export", "verify"),
        ("start_rerun", "rerun"),
        ("start_convert", "convert"),
        ("start_search", "search"),
        ("start_storage_report", "storage"),
        ("index_advice", "index"),
        ("index_apply", "index"),
        ("start_index_apply", "index"),
        ("delete_thread", "delete"),
        ("prune_threads", "prune"),
        ("prune_database", "prune"),
        ("delete_branch", "delete-branch"),
        ("copy_thread", "copy"),
        ("store_list", "store"),
        ("store_get", "store"),
        ("store_search", "store"),
        ("store_namespaces", "store"),
        ("store_put", "store"),
        ("store_delete", "store"),
    ];
    let help = Command::new(env!("CARGO_BIN_EXE_flashback"))
        .arg("--help")
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    for command in COMMANDS {
        if APP_ONLY.contains(command) {
            continue;
        }
        let Some((_, sub)) = cli.iter().find(|(c, _)| c == command) else {
            panic!("{command} has no CLI subcommand: add one (or list it as app-only here)");
        };
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "flashback --help lists {sub}"
        );
    }
    for (command, _) in cli {
        assert!(COMMANDS.contains(command), "{command} is an API command");
    }
}

#[test]
fn the_cli_names_only_the_api() {
    // The CLI is a door onto flashback-api: apart from `bridge` (the saver protocol for the
    // interop tests), its sources name neither storage, engine nor codec.
    let mut dirs = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("bridge.rs") {
                files.push(path);
            }
        }
    }
    let mut checked = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        for layer in ["flashback_storage", "flashback_engine", "flashback_codec"] {
            assert!(
                !text.contains(layer),
                "{} names {layer}: go through flashback_api",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 8,
        "checked {checked} files (subfolders included)"
    );
}
