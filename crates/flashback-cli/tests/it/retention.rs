//! `flashback prune` across the database (`--older-than`, `--status`, `--keep-last`,
//! `--vacuum`): `--json` is exactly the app's `prune_database` JSON; the preview for people;
//! usage errors in one line with exit 2. Writes go to a copy of the fixture.

use crate::common;
use common::*;
use flashback_api::{Api, OpenRequest};
use serde_json::{json, Value as Json};

/// The app's answer to `prune_database` with `req` (plus the handle) on `location`.
async fn app(location: &str, mut req: Json) -> Json {
    let api = Api::ephemeral().expect("api");
    let db = api
        .open_database(OpenRequest {
            location: location.to_owned(),
            password: None,
            remember: false,
            save_password: false,
        })
        .await
        .expect("open")
        .db;
    req["db"] = json!(db);
    api.dispatch("prune_database", &json!({ "req": req }))
        .await
        .expect("prune_database")
}

fn copy(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("langgraph.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &path).expect("copy");
    path.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_json_is_the_apps_report() {
    let db = sqlite();
    let before = std::fs::read(&db).expect("fixture");
    // Previews only: the committed fixture is read, never written.
    let cli = json_ok(&[
        "prune",
        &db,
        "--status",
        "failed",
        "--status",
        "interrupted",
        "--json",
    ]);
    let req = json!({"strategy": "keep_latest", "statuses": ["failed", "interrupted"],
                     "dry_run": true});
    assert_eq!(cli, app(&db, req).await);
    assert_eq!(cli["totals"]["threads"], 2);
    assert_eq!(cli["dry_run"], true);
    assert_eq!(cli["cutoff"], Json::Null);
    assert_eq!(cli["threads"][1]["thread_id"], "parallel-failure");
    assert_eq!(cli["threads"][1]["status"], "failed");

    // With an age the cutoff is "now" minus it: equal but for the moment each ran.
    let mut cli = json_ok(&[
        "prune",
        &db,
        "long",
        "--older-than",
        "1h",
        "--keep-last",
        "3",
        "--json",
    ]);
    let mut app = app(
        &db,
        json!({"thread_ids": ["long"], "older_than": "1h", "strategy": "keep_latest",
               "keep_last": 3, "dry_run": true}),
    )
    .await;
    assert!(cli["cutoff"].is_string());
    cli["cutoff"] = Json::Null;
    app["cutoff"] = Json::Null;
    assert_eq!(cli, app);
    assert_eq!(cli["threads"][0]["thread_id"], "long");
    assert_eq!(cli["threads"][0]["kept"], 3);
    assert_eq!(std::fs::read(&db).expect("fixture"), before);
}

#[test]
fn prune_previews_for_people_then_prunes_with_yes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(&dir);
    let before = std::fs::read(&db).expect("bytes");
    let out = flashback(&["prune", &db, "--older-than", "1h", "--keep-last", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("would prune 12 threads: "), "{text}");
    assert!(text.contains("(dry run; add --yes)"), "{text}");
    assert!(text.contains("older than 1h (before "), "{text}");
    assert!(
        text.contains("keep the latest 2 checkpoints per namespace"),
        "{text}"
    );
    for column in ["THREAD", "STATUS", "LAST CHECKPOINT", "GO", "KEPT", "BYTES"] {
        assert!(text.contains(column), "{column}: {text}");
    }
    let long = text
        .lines()
        .find(|l| l.starts_with("long "))
        .expect("long row");
    assert!(
        long.contains(" 298 ") && long.contains(" finished "),
        "{long}"
    );
    assert_eq!(
        std::fs::read(&db).expect("bytes"),
        before,
        "a preview writes nothing"
    );

    // The preview of a VACUUM says how long it stops every writer (issue 28).
    let out = flashback(&["prune", &db, "--status", "failed", "--vacuum"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("vacuum: rewrites the ") && text.contains("stops every writer for about "),
        "{text}"
    );
    assert_eq!(std::fs::read(&db).expect("bytes"), before);

    let done = json_ok(&[
        "prune",
        &db,
        "--status",
        "failed",
        "--strategy",
        "delete",
        "--yes",
        "--vacuum",
        "--json",
    ]);
    assert_eq!(done["transactions"], 1);
    assert_eq!(done["totals"]["skipped"], 0);
    assert_eq!(done["vacuum_error"], Json::Null);
    assert_eq!(done["dry_run"], false);
    assert_eq!(done["threads"][0]["thread_id"], "parallel-failure");
    assert!(
        done["vacuum"]["bytes_before"].as_u64().unwrap_or(0) > 0,
        "{done}"
    );
    let threads = json_ok(&["threads", &db, "--json"]);
    assert_eq!(threads.as_array().map(Vec::len), Some(11));
    let out = flashback(&["prune", &db, "long", "--keep-last", "1", "--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("pruned 1 thread: 299 checkpoints go (1 kept)"),
        "{text}"
    );
}

#[test]
fn prune_refuses_what_is_not_a_choice_in_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(&dir);
    // Never everything by accident.
    fails(&["prune", &db, "--yes"], 2, "choose what to prune");
    fails(&["prune", &db], 2, "choose what to prune");
    fails(
        &["prune", &db, "--vacuum", "--yes"],
        2,
        "choose what to prune",
    );
    fails(&["prune", &db, "--older-than", "30x"], 2, "is not an age");
    fails(
        &["prune", &db, "--older-than", "0d", "--yes"],
        2,
        "above zero",
    );
    fails(
        &["prune", &db, "--status", "failed", "--keep-last", "0"],
        2,
        "at least 1",
    );
    fails(
        &[
            "prune",
            &db,
            "--status",
            "failed",
            "--strategy",
            "delete",
            "--keep-last",
            "2",
        ],
        2,
        "keep_latest",
    );
    fails(
        &["prune", &db, "nope", "--older-than", "1d"],
        3,
        "no such thread",
    );
    // Issue 28: a missing thread is "not found" wherever a command names one.
    fails(&["prune", &db, "nope"], 3, "not found");
    fails(
        &[
            "prune",
            &db,
            "long",
            "nope",
            "--strategy",
            "delete",
            "--yes",
        ],
        3,
        "not found",
    );
    fails(&["delete", &db, "nope", "--yes"], 3, "not found");
    fails(
        &["delete-branch", &db, "nope", "1f0", "--yes"],
        3,
        "not found",
    );
    let threads = json_ok(&["threads", &db, "--json"]);
    assert_eq!(threads.as_array().map(Vec::len), Some(12), "nothing went");
}
