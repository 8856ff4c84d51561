//! The read commands on a three-table store (`docs/three-table.md`) created by `flashback
//! bridge --create --schema three-table` and filled by `flashback copy --to`: they show it
//! exactly as the LangGraph fixture it was copied from, and create nothing beside the file.

use crate::common;
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

/// The head's `messages` version of chat-tools in a three-table file.
fn head_messages_version(db: &str) -> String {
    let state = json_ok(&["state", db, "chat-tools", "--json"]);
    let v = &state["channel_versions"]["messages"];
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebuild_repair_previews_then_writes_with_the_apps_json() {
    use flashback_api::{Api, OpenRequest, RepairRequest};
    let dir = tempfile::tempdir().expect("tempdir");
    let three = dir.path().join("three.sqlite");
    let db = three.to_str().expect("path");
    let fixture = sqlite();
    let out = flashback(&["convert", &fixture, db, "--to", "three-table"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = json_ok(&["state", db, "chat-tools", "--json"]);
    let gone = rusqlite::Connection::open(&three)
        .and_then(|c| {
            c.execute(
                "DELETE FROM checkpoint_blobs WHERE thread_id = 'chat-tools' \
                 AND channel = 'messages' AND version = ?1",
                [head_messages_version(db)],
            )
        })
        .expect("damage");
    assert_eq!(gone, 1);
    assert!(json_ok(&["state", db, "chat-tools", "--json"])["problem"].is_string());

    // The preview, as the app gets it.
    let cli = json_ok(&["rebuild", db, "chat-tools", "--repair", "--json"]);
    let api = Api::ephemeral().expect("api");
    let h = api
        .open_database(OpenRequest {
            location: db.to_owned(),
            password: None,
            remember: false,
            save_password: false,
        })
        .await
        .expect("open")
        .db;
    let app = api
        .repair_blobs(RepairRequest {
            db: h,
            thread_id: "chat-tools".into(),
            dry_run: true,
        })
        .await
        .expect("repair");
    assert_eq!(cli, serde_json::to_value(&app).expect("json"));
    assert_eq!(cli["damaged"][0]["reducer"], "add_messages", "{cli}");
    let human = flashback(&["rebuild", db, "chat-tools", "--repair"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.status.success()
            && text.contains("1 damaged blob row; 1 can be rebuilt")
            && text.contains("rebuilt with add_messages from 1 write")
            && text.contains("dry run; add --yes"),
        "{text}"
    );

    // Written: the state reads as before the damage.
    let done = json_ok(&["rebuild", db, "chat-tools", "--repair", "--yes", "--json"]);
    assert_eq!(
        (done["repaired"].as_u64(), done["left"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(json_ok(&["state", db, "chat-tools", "--json"]), before);
    let clean = flashback(&["rebuild", db, "chat-tools", "--repair"]);
    assert!(String::from_utf8_lossy(&clean.stdout).contains("no damaged blob rows"));

    // Bad uses.
    fails(
        &["rebuild", &fixture, "chat-tools", "--repair"],
        2,
        "three-table",
    );
    let yes = flashback(&["rebuild", db, "chat-tools", "--yes"]);
    assert_eq!(
        yes.status.code(),
        Some(2),
        "--yes without --repair is a usage error"
    );
    assert!(String::from_utf8_lossy(&yes.stderr).contains("--repair"));
    fails(&["rebuild", db, "nope", "--repair"], 3, "nope");
}
