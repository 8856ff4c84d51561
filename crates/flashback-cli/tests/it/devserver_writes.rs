//! Writes to a `langgraph dev` server's folder (a copy of `tests/devserver-fixtures/py`, which
//! the real server wrote): fork and edit fork read back, delete branch, delete thread, copy
//! thread, conversion to SQLite, the refusal while a server runs on the folder, and the
//! written pickles loaded by Python and listed by LangGraph's own `InMemorySaver` (when the
//! project's dev Python is there).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// chat-fork: its checkpoint waiting on `tools` (the server's own update_state fork's source).
const CHAT_FORK: &str = "88bc3ad2-bebf-5003-8740-c06da9320f9e";
const WAITING: &str = "1f1eb9a2-c5d4-6d53-8001-9380bd243c59";
/// chat-failed.
const CHAT_FAILED: &str = "e783c7a8-a31c-51ff-b8a0-fd493fabadba";

/// A copy of the fixture project (`.langgraph_api/` inside); the temp dir and the project.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let from = fixture("../devserver-fixtures/py/.langgraph_api");
    let state = tmp.path().join("proj/.langgraph_api");
    std::fs::create_dir_all(&state).expect("mkdir");
    for e in std::fs::read_dir(&from).expect("fixture").flatten() {
        std::fs::copy(e.path(), state.join(e.file_name())).expect("copy");
    }
    let proj = tmp.path().join("proj");
    (tmp, proj)
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn ids(history: &serde_json::Value) -> Vec<String> {
    history
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["checkpoint_id"].as_str().expect("id").to_owned())
        .collect()
}

/// A Python with LangGraph installed: `FLASHBACK_PYTHON`, else the test suite's venv
/// (`scripts/test` makes it for the interop tests), else a developer's dev venv.
fn dev_python() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    std::env::var_os("FLASHBACK_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            home.join(".cache/flashback/venv-test/bin/python"),
            PathBuf::from("/work/notes/venv-dev/bin/python"),
        ])
        .find(|p| p.is_file())
}

/// Run `code` with the dev Python (LangGraph installed), `None` when it is not there.
fn python(code: &str, state: &Path) -> Option<String> {
    let Some(dev_python) = dev_python() else {
        eprintln!("skipped: no Python with LangGraph (FLASHBACK_PYTHON)");
        return None;
    };
    let drive = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver");
    let out = Command::new(dev_python)
        .arg("-c")
        .arg(code)
        .arg(state)
        .env("PYTHONPATH", drive)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn an_edit_fork_is_written_into_the_folder_and_read_back_by_flashback_and_langgraph() {
    let (_tmp, proj) = project();
    let db = s(&proj);
    let before = ids(&json_ok(&["history", &db, CHAT_FORK, "--json"]));
    let forked = json_ok(&[
        "fork",
        &db,
        CHAT_FORK,
        "--checkpoint",
        WAITING,
        "--set",
        "turns=7",
        "--json",
    ]);
    let fork = forked["checkpoint_id"].as_str().expect("id").to_owned();
    assert_eq!(forked["parent_checkpoint_id"], WAITING);
    let after = ids(&json_ok(&["history", &db, CHAT_FORK, "--json"]));
    assert_eq!(after[0], fork, "the fork is the thread's newest checkpoint");
    assert_eq!(&after[1..], &before[..]);
    let state = json_ok(&["state", &db, CHAT_FORK, "--checkpoint", &fork, "--json"]);
    assert_eq!(state["values"]["turns"], 7);
    assert_eq!(state["source"], "update");
    let src = json_ok(&["state", &db, CHAT_FORK, "--checkpoint", WAITING, "--json"]);
    assert_eq!(state["values"]["messages"], src["values"]["messages"]);
    assert_eq!(state["next"], src["next"]);

    let state_dir = proj.join(".langgraph_api");
    let bak = state_dir.join(".langgraph_checkpoint.1.pckl.flashback-bak");
    assert_eq!(
        std::fs::read(&bak).expect("backup"),
        std::fs::read(fixture(
            "../devserver-fixtures/py/.langgraph_api/.langgraph_checkpoint.1.pckl"
        ))
        .expect("fixture"),
        "the previous file is kept"
    );
    assert!(!state_dir.join(".langgraph_checkpoint.1.pckl.tmp").exists());

    // LangGraph's own InMemorySaver over the folder (PersistentDict, as the server loads it).
    let code = "import sys, pathlib, drive\n\
                s = drive.python_saver(pathlib.Path(sys.argv[1]))\n\
                t = s.get_tuple({'configurable': {'thread_id': '88bc3ad2-bebf-5003-8740-c06da9320f9e', 'checkpoint_ns': ''}})\n\
                print(t.config['configurable']['checkpoint_id'], t.checkpoint['channel_values']['turns'], \
                t.parent_config['configurable']['checkpoint_id'], t.metadata['source'])";
    if let Some(out) = python(code, &state_dir) {
        assert_eq!(out.trim(), format!("{fork} 7 {WAITING} update"));
    }
}

#[test]
fn branches_and_threads_are_deleted_and_copied_in_the_folder() {
    let (_tmp, proj) = project();
    let db = s(&proj);
    let before = ids(&json_ok(&["history", &db, CHAT_FORK, "--json"]));
    let forked = json_ok(&["fork", &db, CHAT_FORK, "--checkpoint", WAITING, "--json"]);
    let fork = forked["checkpoint_id"].as_str().expect("id").to_owned();

    let gone = json_ok(&["delete-branch", &db, CHAT_FORK, &fork, "--yes", "--json"]);
    assert_eq!(gone["checkpoints"].as_array().expect("list").len(), 1);
    assert_eq!(
        ids(&json_ok(&["history", &db, CHAT_FORK, "--json"])),
        before
    );

    let copied = json_ok(&["copy", &db, CHAT_FORK, "copied", "--json"]);
    assert_eq!(copied["checkpoints"], before.len());
    assert_eq!(ids(&json_ok(&["history", &db, "copied", "--json"])), before);
    let a = json_ok(&["state", &db, CHAT_FORK, "--json"]);
    let b = json_ok(&["state", &db, "copied", "--json"]);
    assert_eq!(a["values"], b["values"]);

    json_ok(&["delete", &db, CHAT_FAILED, "--yes", "--json"]);
    let threads = json_ok(&["threads", &db, "--json"]);
    let listed: Vec<&str> = threads
        .as_array()
        .expect("array")
        .iter()
        .filter(|t| t["checkpoint_count"].as_u64().unwrap_or(0) > 0)
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert!(!listed.contains(&CHAT_FAILED), "{listed:?}");
    assert!(listed.contains(&"copied"), "{listed:?}");
    // The server's own thread list lost it too (as the server's thread delete does): no note
    // of a listed thread without checkpoints, and its backup kept.
    let out = flashback(&["threads", &db]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("does not hold"), "{err}");
    assert!(proj
        .join(".langgraph_api/.langgraph_ops.pckl.flashback-bak")
        .is_file());

    let code = "import sys, pickle, pathlib, drive\n\
                d = pathlib.Path(sys.argv[1])\n\
                s = pickle.load(open(d / '.langgraph_checkpoint.1.pckl', 'rb'))\n\
                a, b = s['copied'], s['88bc3ad2-bebf-5003-8740-c06da9320f9e']\n\
                assert type(a) is type(b) and a is not b and a[''] is not b[''] and a[''] == b['']\n\
                saver = drive.python_saver(d)\n\
                print(len(list(saver.list({'configurable': {'thread_id': 'copied'}}))), \
                len(list(saver.list({'configurable': {'thread_id': 'e783c7a8-a31c-51ff-b8a0-fd493fabadba'}}))))";
    if let Some(out) = python(code, &proj.join(".langgraph_api")) {
        assert_eq!(out.trim(), format!("{} 0", before.len()));
    }

    // The folder converts to SQLite through the read store.
    let out = proj.parent().expect("tmp").join("out.sqlite");
    let out = s(&out);
    let converted = flashback(&["convert", &db, &out, "--to", "langgraph"]);
    assert!(
        converted.status.success(),
        "{}",
        String::from_utf8_lossy(&converted.stderr)
    );
    assert_eq!(
        ids(&json_ok(&["history", &out, "copied", "--json"])),
        before
    );
}

#[test]
fn nothing_is_written_while_a_server_runs_on_the_folder() {
    let (_tmp, proj) = project();
    let db = s(&proj);
    let state_dir = proj.join(".langgraph_api");
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .expect("dir")
            .flatten()
            .map(|e| {
                let bytes = std::fs::read(e.path()).expect("read");
                (e.file_name().to_string_lossy().into_owned(), bytes)
            })
            .collect();
        v.sort();
        v
    };
    let before = files(&state_dir);
    // A process whose working folder is the project and whose command line is `langgraph dev`.
    let mut server = Command::new("bash")
        .args(["-c", "exec -a 'langgraph dev' sleep 30"])
        .current_dir(&proj)
        .spawn()
        .expect("spawn");
    let pid = server.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The read notes the server; the write is refused in one line naming it.
    let refused = |args: &[&str]| {
        let out = flashback(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "nothing on stdout");
        let last = stderr.lines().last().unwrap_or_default().to_owned();
        assert!(
            last.starts_with("flashback: ") && last.contains(&format!("pid {pid}")),
            "{last}"
        );
        assert!(last.contains("nothing was written"), "{last}");
    };
    refused(&["fork", &db, CHAT_FORK, "--checkpoint", WAITING, "--json"]);
    refused(&["delete", &db, CHAT_FAILED, "--yes"]);
    refused(&["copy", &db, CHAT_FORK, "x"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(files(&state_dir), before, "nothing was written");
}
