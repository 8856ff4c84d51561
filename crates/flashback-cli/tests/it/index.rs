//! `flashback index` (issue 36): the advice, `--create`/`--drop` previewed (nothing written)
//! and run with `--yes` (only `flashback_*` indexes), its JSON equal to the app's, bad
//! arguments and sources without SQL as one line.

use crate::common;
use common::*;
use flashback_api::{Api, OpenRequest};
use serde_json::{json, Value as Json};

/// A copy of the filters fixture (the real SqliteSaver's, with `user_id` in its metadata).
fn copy(dir: &std::path::Path) -> String {
    let path = dir.join("filters.sqlite");
    std::fs::copy(fixture("filters.sqlite"), &path).expect("copy");
    path.to_string_lossy().into_owned()
}

fn indexes(path: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
        .expect("prepare");
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("names");
    names
}

fn names(advice: &Json) -> Vec<String> {
    advice["indexes"]
        .as_array()
        .expect("indexes")
        .iter()
        .map(|i| i["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_advises_previews_creates_and_drops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(dir.path());
    let bare = indexes(&db);

    let advice = json_ok(&["index", &db, "--json"]);
    assert_eq!(advice["applicable"], json!(true));
    let proposed = names(&advice);
    assert!(proposed.contains(&"flashback_checkpoints_recent".to_owned()));
    assert!(proposed.contains(&"flashback_checkpoints_meta_user_id".to_owned()));
    assert!(proposed.iter().all(|n| n.starts_with("flashback_")));
    // The same JSON as the app's.
    let api = Api::ephemeral().expect("api");
    let h = api
        .open_database(OpenRequest {
            location: db.clone(),
            password: None,
            remember: false,
            save_password: false,
        })
        .await
        .expect("open")
        .db;
    let app = api
        .dispatch("index_advice", &json!({"req": {"db": h}}))
        .await
        .expect("dispatch");
    assert_eq!(advice, app);
    let text = String::from_utf8_lossy(&flashback(&["index", &db]).stdout).into_owned();
    assert!(
        text.contains("not needed") && text.contains("flashback_checkpoints_recent"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");

    // A preview writes nothing.
    let preview = json_ok(&["index", &db, "--create", "all", "--json"]);
    assert_eq!(preview["dry_run"], json!(true));
    assert_eq!(
        preview["plan"]["statements"].as_array().map(Vec::len),
        Some(proposed.len())
    );
    assert_eq!(indexes(&db), bare);
    let text =
        String::from_utf8_lossy(&flashback(&["index", &db, "--create", "all"]).stdout).into_owned();
    assert!(text.contains("dry run; add --yes"), "{text}");

    // --yes creates them, and times the reads before and after.
    let created = json_ok(&["index", &db, "--create", "all", "--yes", "--json"]);
    assert_eq!(created["dry_run"], json!(false));
    for n in &proposed {
        assert!(indexes(&db).contains(n), "{n} created");
    }
    assert_eq!(created["before"].as_array().map(Vec::len), Some(2));
    assert_eq!(created["after"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        created["before"][1]["threads"],
        created["after"][1]["threads"]
    );
    let again = json_ok(&["index", &db, "--create", "all", "--yes", "--json"]);
    assert_eq!(again["plan"]["statements"], json!([]));
    // The thread list reads the same through them.
    let found = json_ok(&["threads", &db, "--where", "user_id=u-48213", "--json"]);
    assert_eq!(found.as_array().map(Vec::len), Some(3));

    // --drop previews, then drops ours and nothing else.
    json_ok(&["index", &db, "--drop", "all", "--json"]);
    assert_ne!(indexes(&db), bare);
    json_ok(&[
        "index",
        &db,
        "--drop",
        "flashback_checkpoints_recent",
        "--yes",
        "--json",
    ]);
    assert!(!indexes(&db).contains(&"flashback_checkpoints_recent".to_owned()));
    json_ok(&["index", &db, "--drop", "all", "--yes", "--json"]);
    assert_eq!(indexes(&db), bare);
}

#[test]
fn bad_index_arguments_are_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(dir.path());
    fails(&["index", &db, "--yes"], 2, "--create");
    fails(
        &[
            "index",
            &db,
            "--create",
            "sqlite_autoindex_checkpoints_1",
            "--yes",
        ],
        2,
        "no index",
    );
    let out = flashback(&["index", &db, "--create", "all", "--drop", "all"]);
    assert_eq!(out.status.code(), Some(2));
    fails(&["index", "/no/such/file.sqlite"], 3, "file.sqlite");
}

#[test]
fn a_folder_is_not_applicable_in_one_line() {
    let folder = fixture("../devserver-fixtures/py");
    let folder = folder.to_string_lossy().into_owned();
    let out = flashback(&["index", &folder]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("not applicable"), "{text}");
    fails(
        &["index", &folder, "--create", "all", "--yes"],
        2,
        "not applicable",
    );
}
