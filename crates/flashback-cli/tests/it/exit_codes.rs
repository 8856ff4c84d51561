//! Exit codes that say the truth: every command that names a thread exits 3 (not found) with
//! one line on stderr when the thread is not there — nothing "done" about nothing — and a
//! conversion that left out every thread fails.

use crate::common;
use common::*;

const MISSING: &str = "no-such-thread";

/// Commands that name no thread (or name one but are checked elsewhere: `delete`,
/// `delete-branch` and `prune` are retention's, in `retention.rs`/`writes.rs`).
const NAMES_NO_THREAD: &[&str] = &[
    "threads",
    "verify",
    "bridge",
    "search",
    "serve",
    "store",
    "help",
    "mcp",
    "metadata-keys",
    "index",
];
const CHECKED_ELSEWHERE: &[&str] = &["delete", "delete-branch", "prune"];

/// The top-level subcommands, as `flashback --help` lists them.
fn subcommands() -> Vec<String> {
    let out = flashback(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn every_command_naming_a_missing_thread_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sqlite();
    let writable = dir.path().join("w.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &writable).expect("copy");
    let other = dir.path().join("other.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &other).expect("copy");
    let (w, other) = (
        writable.to_string_lossy().into_owned(),
        other.to_string_lossy().into_owned(),
    );
    let bundle = dir.path().join("bundle.json");
    let converted = dir.path().join("converted.sqlite");
    let (bundle_s, converted_s) = (
        bundle.to_string_lossy().into_owned(),
        converted.to_string_lossy().into_owned(),
    );
    let t = MISSING;
    let merge: [&str; 9] = [
        "merge",
        &w,
        t,
        "--into",
        "a",
        "--from",
        "b",
        "--channel",
        "x",
    ];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("activity", vec!["activity", &db, t]),
        ("activity", vec!["activity", &db, "forked", t, "--json"]),
        ("history", vec!["history", &db, t]),
        ("state", vec!["state", &db, t]),
        ("graph", vec!["graph", &db, t]),
        ("topology", vec!["topology", &db, t]),
        ("diff", vec!["diff", &db, t, "a", "b"]),
        ("replay", vec!["replay", &db, t]),
        ("replay", vec!["replay", &db, t, "--tip", "a"]),
        ("rebuild", vec!["rebuild", &db, t]),
        ("rebuild", vec!["rebuild", &w, t, "--repair"]),
        ("watch", vec!["watch", &db, t, "messages"]),
        ("storage", vec!["storage", &db, t]),
        ("export", vec!["export", &db, t, "-o", &bundle_s]),
        ("fork", vec!["fork", &w, t, "--checkpoint", "a"]),
        ("merge", merge.to_vec()),
        ("merge", [&merge[..], &["--dry-run"]].concat()),
        ("copy", vec!["copy", &w, t, "copied"]),
        ("copy", vec!["copy", &w, t, "copied", "--to", &other]),
        (
            "rerun",
            vec!["rerun", &w, t, "--checkpoint", "a", "--runner", "true"],
        ),
        (
            "convert",
            vec![
                "convert",
                &db,
                &converted_s,
                "--to",
                "three-table",
                "--thread",
                t,
            ],
        ),
    ];
    for (_, args) in &cases {
        let stderr = fails(args, 3, &format!("{t:?}"));
        assert!(stderr.contains("not found"), "{args:?}: {stderr}");
    }
    // Nothing was made for nothing.
    assert!(!bundle.exists() && !converted.exists());
    for db in [&w, &other] {
        fails(&["history", db, "copied"], 3, "copied");
    }

    // Every command is either in the table above or named here: a new command that takes a
    // thread id cannot slip through.
    let tested: Vec<&str> = cases.iter().map(|(c, _)| *c).collect();
    for cmd in subcommands() {
        let known = tested.contains(&cmd.as_str())
            || NAMES_NO_THREAD.contains(&cmd.as_str())
            || CHECKED_ELSEWHERE.contains(&cmd.as_str());
        assert!(
            known,
            "`flashback {cmd}`: add it to this test's table or lists"
        );
        if NAMES_NO_THREAD.contains(&cmd.as_str()) && cmd != "help" {
            let help = String::from_utf8_lossy(&flashback(&[&cmd, "--help"]).stdout).into_owned();
            assert!(
                !help.contains("THREAD"),
                "`flashback {cmd}` names a thread: {help}"
            );
        }
    }
}

#[test]
fn a_conversion_that_converted_nothing_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("damaged.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let damaged = rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.execute(
                "UPDATE checkpoints SET checkpoint = x'c1ffff' WHERE thread_id = 'reducers'",
                [],
            )
        })
        .expect("damage");
    assert!(damaged > 0);
    let target = dir.path().join("three.sqlite");
    let (db, target_s) = (
        db.to_string_lossy().into_owned(),
        target.to_string_lossy().into_owned(),
    );
    let convert: [&str; 7] = [
        "convert",
        &db,
        &target_s,
        "--to",
        "three-table",
        "--thread",
        "reducers",
    ];
    for extra in [&[][..], &["--dry-run"]] {
        fails(
            &[&convert[..], extra].concat(),
            1,
            "every thread was left out",
        );
        assert!(!target.exists(), "nothing is left behind");
    }
    // With one thread that converts, the one left out is reported and the command succeeds.
    let report = json_ok(&[&convert[..], &["--thread", "forked", "--json"]].concat());
    assert_eq!(report["threads"], 1, "{report}");
    assert_eq!(report["skipped"][0]["thread_id"], "reducers", "{report}");
}
