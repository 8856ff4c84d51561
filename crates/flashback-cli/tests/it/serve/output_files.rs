//! `flashback serve --export-dir DIR` over HTTP: exports and conversions write only regular
//! files inside DIR — never onto a FIFO, a device or a directory, never through a symbolic link
//! or a hard link that may lead outside DIR — and each refusal is one `{code, message}`.
#![cfg(unix)]

use crate::common;
use common::server::*;
use common::*;
use serde_json::{json, Value as Json};
use std::os::unix::fs::FileTypeExt;

/// `flashback serve --export-dir DIR` on the fixture, and the fixture's handle.
fn serve_into(dir: &std::path::Path) -> Option<(Server, String)> {
    let server = running(serve_fixture(
        None,
        &["--export-dir", &dir.to_string_lossy()],
    ))?;
    let db = server.ok("app_info", Json::Null)["initial"]["db"]
        .as_str()
        .expect("db")
        .to_owned();
    Some((server, db))
}

#[test]
fn serve_writes_only_regular_files_inside_its_export_dir() {
    let exports = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = exports.path();
    let Some((server, db)) = serve_into(dir) else {
        return;
    };
    let precious = outside.path().join("precious.sqlite");
    std::fs::write(&precious, "precious").expect("write");
    std::fs::hard_link(&precious, dir.join("hard.json")).expect("hard link");
    std::os::unix::fs::symlink(&precious, dir.join("soft.json")).expect("symlink");
    std::os::unix::fs::symlink("/dev/null", dir.join("null.json")).expect("symlink");
    std::fs::create_dir(dir.join("folder.json")).expect("mkdir");
    mkfifo(&dir.join("pipe.json"));

    let export = |path: &str| json!({"db": db, "thread_id": "forked", "format": "json", "redact": [], "path": path});
    let convert = |target: &str| {
        json!({"db": db, "target": target, "to": "three-table", "whole_blobs": false,
               "threads": ["forked"], "dry_run": false})
    };
    for (name, code) in [
        ("hard.json", "not_allowed"),
        ("soft.json", "not_allowed"),
        ("null.json", "not_allowed"),
        ("folder.json", "invalid_input"),
        ("pipe.json", "invalid_input"),
        ("missing/x.json", "not_found"),
    ] {
        for (command, req) in [
            ("start_export", export(name)),
            ("start_convert", convert(name)),
        ] {
            let r = server.call(command, req);
            let body = String::from_utf8_lossy(&r.body).into_owned();
            assert_eq!(r.status, 400, "{command} {name}: {body}");
            assert_eq!(r.json()["code"], code, "{command} {name}: {body}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(&precious).expect("read"),
        "precious"
    );
    assert!(std::fs::symlink_metadata(dir.join("pipe.json"))
        .expect("fifo")
        .file_type()
        .is_fifo());

    // A regular file of its own inside is replaced whole; a new SQLite file is made.
    std::fs::write(dir.join("bundle.json"), "old").expect("write");
    let job = server.ok("start_export", export("bundle.json"));
    let done = server.follow(job.as_str().expect("job id"));
    assert_eq!(done["state"], "succeeded", "{done}");
    assert!(std::fs::read_to_string(dir.join("bundle.json"))
        .expect("read")
        .contains("flashback-audit"));
    let job = server.ok("start_convert", convert("three.sqlite"));
    let done = server.follow(job.as_str().expect("job id"));
    assert_eq!(done["state"], "succeeded", "{done}");
    assert!(dir.join("three.sqlite").is_file());
}

#[cfg(target_os = "linux")]
#[test]
fn an_export_dir_that_takes_no_new_file_fails_the_job_with_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let locked = read_only_folder(tmp.path());
    let Some((server, db)) = serve_into(&locked) else {
        return;
    };
    let job = server.ok(
        "start_export",
        json!({"db": db, "thread_id": "forked", "format": "json", "redact": [],
               "path": "flashback-x.json"}),
    );
    let done = server.follow(job.as_str().expect("job id"));
    assert_eq!(done["state"], "failed", "{done}");
    assert_eq!(done["error"]["code"], "io", "{done}");
    let message = done["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot write") && !message.contains('\n'),
        "{done}"
    );
    assert!(!locked.join("flashback-x.json").exists());
}
