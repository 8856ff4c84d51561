//! The read commands on a three-table store (`docs/three-table.md`) created by `flashback
//! bridge --create --schema three-table` and filled by `flashback copy --to`: they show it
//! exactly as the LangGraph fixture it was copied from, and create nothing beside the file.

mod common;
use common::*;

#[test]
fn read_commands_show_a_three_table_copy_of_the_fixture_like_the_fixture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let three = dir.path().join("three.sqlite");
    let db = three.to_str().expect("path");
    let out = flashback(&["bridge", db, "--create", "--schema", "three-table"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fixture = sqlite();
    let threads = json_ok(&["threads", &fixture, "--json"]);
    let ids: Vec<String> = thread_statuses(&threads)
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert!(ids.len() >= 10);
    for t in &ids {
        let out = flashback(&["copy", &fixture, t, t, "--to", db]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stored: String = rusqlite::Connection::open(&three)
        .and_then(|c| {
            c.query_row(
                "SELECT group_concat(name) FROM pragma_table_info('checkpoints')",
                [],
                |r| r.get(0),
            )
        })
        .expect("columns");
    assert!(stored.contains("checkpoint_ns_hash"), "{stored}");

    assert_eq!(threads, json_ok(&["threads", db, "--json"]));
    for t in &ids {
        for cmd in ["state", "history", "graph"] {
            assert_eq!(
                json_ok(&[cmd, &fixture, t, "--json"]),
                json_ok(&[cmd, db, t, "--json"]),
                "{cmd} {t}"
            );
        }
    }
    let out = flashback(&["state", db, "chat-tools"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("messages"));
    for side in ["-wal", "-shm", "-journal"] {
        assert!(
            !dir.path().join(format!("three.sqlite{side}")).exists(),
            "{side}"
        );
    }
}
