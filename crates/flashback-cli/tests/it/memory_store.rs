//! `flashback store …` and `flashback threads` on databases holding LangGraph's memory Store:
//! human output, one-line errors and their exit codes.

use crate::common;
use common::*;

/// A SQLite file holding only a memory store, or (`mixed`) a copy of the fixture with one.
fn store_db(dir: &std::path::Path, mixed: bool) -> String {
    let path = dir.join("db.sqlite");
    if mixed {
        std::fs::copy(fixture("langgraph.sqlite"), &path).expect("copy");
    }
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch(
            "CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL, \
             created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, \
             expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key)); \
             INSERT INTO store (prefix, key, value) VALUES ('users.u-1', 'prefs', '{\"theme\":\"dark\"}'), \
             ('users.u-2', 'bad', 'not json');",
        )
        .expect("store");
    path.to_string_lossy().into_owned()
}

fn stdout(args: &[&str]) -> String {
    let out = flashback(args);
    assert!(
        out.status.success(),
        "flashback {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn threads_on_a_store_only_database_says_so_in_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = store_db(dir.path(), false);
    let text = stdout(&["threads", &db]);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("only a LangGraph memory store (2 items in 2 namespaces)"),
        "{text}"
    );
    assert!(text.contains("flashback store ls"), "{text}");
    assert_eq!(json_ok(&["threads", &db, "--json"]), serde_json::json!([]));

    let dir = tempfile::tempdir().expect("tempdir");
    let mixed = store_db(dir.path(), true);
    let text = stdout(&["threads", &mixed]);
    assert!(text.starts_with("THREAD"), "{text}");
    assert!(text.contains("also a LangGraph memory store"), "{text}");
}

#[test]
fn store_commands_print_tables_and_one_line_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = store_db(dir.path(), false);
    let ls = stdout(&["store", "ls", &db]);
    assert!(ls.starts_with("NAMESPACE"), "{ls}");
    assert!(
        ls.contains("users/u-1") && ls.contains("{\"theme\":\"dark\"}"),
        "{ls}"
    );
    assert!(
        ls.contains("! users/u-2/bad: the value is not valid JSON"),
        "{ls}"
    );
    let get = stdout(&["store", "get", &db, "users/u-1", "prefs"]);
    assert!(
        get.contains("namespace  users/u-1") && get.contains("\"theme\": \"dark\""),
        "{get}"
    );
    let tree = stdout(&["store", "namespaces", &db]);
    assert_eq!(tree.lines().count(), 3, "{tree}");

    fails(
        &["store", "get", &db, "users/u-1", "nope"],
        3,
        "no item \"nope\"",
    );
    fails(
        &["store", "ls", &db, "--prefix", "a.b"],
        2,
        "contains a dot",
    );
    fails(
        &["store", "put", &db, "users", "k", "{oops"],
        2,
        "not valid JSON",
    );
    fails(
        &["store", "put", &db, "users", "k", "[1]"],
        2,
        "JSON object",
    );
    fails(
        &["store", "put", &db, "users", "k", "{}", "--ttl=-3"],
        2,
        "positive",
    );
    fails(&["store", "ls", &sqlite()], 4, "no LangGraph memory store");

    let preview = stdout(&["store", "delete", &db, "users/u-1", "prefs"]);
    assert!(
        preview.contains("would delete users/u-1/prefs") && preview.contains("--yes"),
        "{preview}"
    );
    stdout(&["store", "get", &db, "users/u-1", "prefs"]);
    let put = stdout(&[
        "store",
        "put",
        &db,
        "users/u-3",
        "k",
        "{\"a\": 1}",
        "--ttl",
        "60",
    ]);
    assert!(put.starts_with("created users/u-3/k (expires "), "{put}");
    let deleted = stdout(&["store", "delete", &db, "users/u-1", "prefs", "--yes"]);
    assert_eq!(deleted, "deleted users/u-1/prefs\n");
    fails(&["store", "get", &db, "users/u-1", "prefs"], 3, "no item");
}
