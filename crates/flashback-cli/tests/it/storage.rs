//! `flashback storage`: the storage report job from the command line — `--json` is exactly the
//! result the app's job gives for the same request; tables for people; one-line errors.

use crate::common;
use common::*;
use flashback_api::{Api, OpenRequest};
use serde_json::{json, Value as Json};
use std::path::PathBuf;

/// The app's result for the same request: `dispatch` of `start_storage_report`, then
/// `job_poll` until it ends.
async fn app_report(location: &str, thread: Option<&str>, top: u32) -> Json {
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
    let req = json!({"req": {"db": db, "thread_id": thread, "top": top}});
    let job = api
        .dispatch("start_storage_report", &req)
        .await
        .expect("start");
    for _ in 0..600 {
        let snap = api
            .dispatch("job_poll", &json!({"req": {"job": job, "cursor": 0}}))
            .await
            .expect("poll");
        if snap["state"] != "running" {
            assert_eq!(snap["state"], "succeeded", "{snap}");
            return snap["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the storage report did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_json_is_the_apps_report() {
    let db = sqlite();
    let cli = json_ok(&["storage", &db, "--json"]);
    assert_eq!(cli, app_report(&db, None, 20).await);
    assert_eq!(cli["thread_count"], 12);
    assert_eq!(cli["layout"], "langgraph-sqlite");

    let cli = json_ok(&["storage", &db, "chat-tools", "--top", "3", "--json"]);
    assert_eq!(cli, app_report(&db, Some("chat-tools"), 3).await);
    assert_eq!(cli["growth"].as_array().map(Vec::len), Some(10));
    assert_eq!(cli["largest_values"].as_array().map(Vec::len), Some(3));
}

#[test]
fn storage_prints_tables_and_fails_in_one_line() {
    let out = flashback(&["storage", &sqlite(), "chat-tools"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("thread chat-tools: "), "{text}");
    for section in [
        "size per checkpoint",
        "largest values",
        "stored whole again at every step",
        "orphaned writes (no checkpoint row): -",
        "VACUUM would return 0 free pages",
    ] {
        assert!(text.contains(section), "{section}: {text}");
    }
    fails(&["storage", &sqlite(), "no-such-thread"], 3, "no thread");
    let out = flashback(&["storage", &sqlite(), "no-such-thread"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    let out = flashback(&["storage", &sqlite(), "--top", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_names_repeats_files_and_sends() {
    let db = fixture("storage.sqlite").to_string_lossy().into_owned();
    let cli = json_ok(&["storage", &db, "--json"]);
    assert_eq!(cli, app_report(&db, None, 20).await);
    assert_eq!(cli["sends"]["writes"]["count"], 5);
    assert_eq!(
        cli["embedded_files"]["by_type"][0]["media_type"],
        "image/png"
    );

    let out = flashback(&["storage", &db]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "repeated payloads of 1.0 kB or more",
        "strings inside values: ",
        "files stored as base64 text: ",
        "image/png",
        "application/pdf",
        "data URL",
        "Send payloads (__pregel_tasks): writes 103.6 kB (5)",
        "work",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_reports_a_langgraph_dev_folder() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/py");
    let dir = dir.to_string_lossy().into_owned();
    let out = flashback(&["storage", &dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("6 threads: "), "{text}");
    for section in [
        "(devserver; ",
        "largest threads",
        "by channel",
        "writes by node",
        "files on disk",
        ".langgraph_checkpoint.3.pckl",
        "orphaned writes (no checkpoint row): -",
    ] {
        assert!(text.contains(section), "{section}: {text}");
    }
    let cli = json_ok(&["storage", &dir, "--json"]);
    assert_eq!(cli, app_report(&dir, None, 20).await);
    assert_eq!(cli["layout"], "devserver");
    assert_eq!(cli["totals"]["total_bytes"], 24307 + 19564 + 13110 + 3850);
}
