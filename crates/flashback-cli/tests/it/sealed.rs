//! Databases sealed with ciphers Flashback cannot open (issue 28): written by the real
//! LangGraph with `EncryptedSerializer` and a custom `CipherProtocol`
//! (`tests/fixtures/sealed_fixture.py`): every value `msgpack+kms`, or one `update_state` row
//! `msgpack+des` among `msgpack+aes` ones. With `LANGGRAPH_AES_KEY` set, `state` names the
//! cipher instead of asking for the key, and fork, `fork --set`, merge, copy and repair are
//! refused with the reason, leaving the database byte for byte (or row for row) as it was;
//! the AES rows of the mixed database still fork, sealed with `aes`.

use crate::common;
use common::*;
use std::process::Output;

const KEY: &str = "0123456789abcdef0123456789abcdef";
const KMS: &str = "sealed with `kms`, a cipher Flashback cannot open";
const DES: &str = "sealed with `des`, a cipher Flashback cannot open";

/// `flashback ARGS` with `LANGGRAPH_AES_KEY` set to the mixed database's key (or unset).
fn run(args: &[&str], key: bool) -> Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_flashback"));
    c.args(args);
    match key {
        true => c.env("LANGGRAPH_AES_KEY", KEY),
        false => c.env_remove("LANGGRAPH_AES_KEY"),
    };
    c.output().expect("run flashback")
}

fn ok(args: &[&str]) -> serde_json::Value {
    let out = run(args, true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Exit 1, one line on stderr naming `needle`, never asking for the AES key.
fn refused(args: &[&str], key: bool, needle: &str) {
    let out = run(args, key);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("LANGGRAPH_AES_KEY"), "{args:?}: {err}");
}

/// A private copy of a fixture.
fn copy(dir: &tempfile::TempDir, name: &str) -> String {
    let path = dir.path().join(name);
    std::fs::copy(fixture(name), &path).expect("copy fixture");
    path.to_string_lossy().into_owned()
}

fn bytes(path: &str) -> Vec<u8> {
    std::fs::read(path).expect("read")
}

/// The thread's checkpoint ids, newest first.
fn ids(db: &str, thread: &str) -> Vec<String> {
    ok(&["history", db, thread, "--json"])
        .as_array()
        .expect("history")
        .iter()
        .map(|h| h["checkpoint_id"].as_str().expect("id").to_owned())
        .collect()
}

/// The two branch tips of a thread (checkpoints no other names as its parent).
fn tips(db: &str, thread: &str) -> Vec<String> {
    let history = ok(&["history", db, thread, "--json"]);
    let rows = history.as_array().expect("history");
    let parents: Vec<&str> = rows
        .iter()
        .filter_map(|h| h["parent_checkpoint_id"].as_str())
        .collect();
    rows.iter()
        .map(|h| h["checkpoint_id"].as_str().expect("id"))
        .filter(|id| !parents.contains(id))
        .map(str::to_owned)
        .collect()
}

/// The writes the doors offer, refused with `needle`: a copy and an edit fork of each of
/// `forks`, a merge into `into` from `from`, a copy of the thread into `target`.
fn writes_refused(
    db: &str,
    thread: &str,
    forks: &[&str],
    (into, from): (&str, &str),
    target: &str,
    needle: &str,
) {
    for c in forks {
        refused(&["fork", db, thread, "--checkpoint", c], true, needle);
        let edit = [
            "fork",
            db,
            thread,
            "--checkpoint",
            c,
            "--set",
            r#"notes=["x"]"#,
        ];
        refused(&edit, true, needle);
    }
    let merge = ["merge", db, thread, "--into", into, "--from", from];
    refused(
        &[&merge[..], &["--channel", "notes=append"]].concat(),
        true,
        needle,
    );
    refused(
        &["copy", db, thread, "copied", "--to", target],
        true,
        needle,
    );
}

#[test]
fn a_database_sealed_with_kms_is_named_and_never_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(&dir, "sealed-kms.sqlite");
    let target = copy(&dir, "langgraph.sqlite");
    let (before, target_before) = (bytes(&db), bytes(&target));

    let threads = run(&["threads", &db], true);
    let text = String::from_utf8_lossy(&threads.stdout);
    assert!(threads.status.success() && text.contains(KMS), "{text}");
    for key in [true, false] {
        refused(&["state", &db, "kms"], key, KMS);
    }
    let all = ids(&db, "kms");
    assert_eq!(all.len(), 7, "{all:?}");
    let tips = tips(&db, "kms");
    assert_eq!(tips.len(), 2, "{tips:?}");
    let forks = [
        tips[0].as_str(),
        tips[1].as_str(),
        all[all.len() - 1].as_str(),
    ];
    writes_refused(&db, "kms", &forks, (&tips[0], &tips[1]), &target, KMS);
    refused(&["diff", &db, "kms", &tips[0], &tips[1]], true, KMS);

    assert!(bytes(&db) == before, "the kms database is unchanged");
    assert!(
        bytes(&target) == target_before,
        "the copy's target is unchanged"
    );
    // Copied within the file, the rows are carried as stored (nothing decoded or sealed again).
    let out = run(&["copy", &db, "kms", "kms-2"], true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tags = |thread: &str| -> Vec<(String, String)> {
        let c = rusqlite::Connection::open(&db).expect("open");
        let mut s = c
            .prepare("SELECT checkpoint_id, type FROM checkpoints WHERE thread_id = ? ORDER BY 1")
            .expect("prepare");
        let rows = s.query_map([thread], |r| Ok((r.get(0)?, r.get(1)?)));
        rows.expect("query").map(|r| r.expect("row")).collect()
    };
    assert_eq!(tags("kms-2"), tags("kms"));
}

#[test]
fn one_row_sealed_with_des_is_refused_and_the_aes_rows_still_fork() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = copy(&dir, "sealed-mixed.sqlite");
    let target = copy(&dir, "langgraph.sqlite");
    let (before, target_before) = (bytes(&db), bytes(&target));

    let threads = run(&["threads", &db], true);
    let text = String::from_utf8_lossy(&threads.stdout);
    assert!(threads.status.success(), "{text}");
    assert!(text.contains(&format!("some values are {DES}")), "{text}");
    refused(&["state", &db, "aes"], true, DES);
    let all = ids(&db, "aes");
    let head = all[0].clone();
    let older = all[2].clone();
    writes_refused(&db, "aes", &[&head], (&head, &older), &target, DES);
    refused(&["diff", &db, "aes", &head, &older], true, DES);
    assert!(bytes(&db) == before, "the mixed database is unchanged");
    assert!(
        bytes(&target) == target_before,
        "the copy's target is unchanged"
    );

    // An AES checkpoint reads and forks, sealed with `aes` as the program seals.
    let state = ok(&["state", &db, "aes", "--checkpoint", &older, "--json"]);
    assert!(state["values"]["messages"].is_array(), "{state}");
    let fork = ok(&["fork", &db, "aes", "--checkpoint", &older, "--json"]);
    let id = fork["checkpoint_id"].as_str().expect("id");
    let tag: String = rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.query_row(
                "SELECT type FROM checkpoints WHERE checkpoint_id = ?",
                [id],
                |r| r.get(0),
            )
        })
        .expect("fork row");
    assert_eq!(tag, "msgpack+aes");
    let forked = ok(&["state", &db, "aes", "--json"]);
    assert_eq!(forked["values"], state["values"]);
}

#[test]
fn a_three_table_thread_holding_a_value_sealed_with_kms_is_not_repaired() {
    let dir = tempfile::tempdir().expect("tempdir");
    let three = dir.path().join("three.sqlite");
    let db = three.to_str().expect("path");
    let out = flashback(&["convert", &sqlite(), db, "--to", "three-table"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = rusqlite::Connection::open(&three).expect("open");
    // One blob row damaged (gone), another sealed by a program whose cipher is `kms`.
    let versions: Vec<String> = c
        .prepare(
            "SELECT version FROM checkpoint_blobs WHERE thread_id = 'chat-tools' \
             AND channel = 'messages' ORDER BY version",
        )
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("versions");
    assert!(versions.len() >= 2, "{versions:?}");
    let gone = c.execute(
        "DELETE FROM checkpoint_blobs WHERE thread_id = 'chat-tools' AND channel = 'messages' \
         AND version = ?1",
        [&versions[versions.len() - 1]],
    );
    assert_eq!(gone.expect("damage"), 1);
    let sealed = c.execute(
        "UPDATE checkpoint_blobs SET type = 'msgpack+kms' WHERE thread_id = 'chat-tools' \
         AND channel = 'messages' AND version = ?1",
        [&versions[0]],
    );
    assert_eq!(sealed.expect("seal"), 1);
    drop(c);
    let before = bytes(db);
    for yes in [false, true] {
        let mut args = vec!["rebuild", db, "chat-tools", "--repair"];
        if yes {
            args.push("--yes");
        }
        refused(&args, true, KMS);
    }
    assert!(bytes(db) == before, "nothing was written");
}

/// Row counts of the three Postgres tables.
async fn counts(url: &str) -> Vec<i64> {
    let pool = sqlx::PgPool::connect(url).await.expect("connect");
    let mut out = Vec::new();
    for sql in [
        "SELECT count(*) FROM checkpoints",
        "SELECT count(*) FROM checkpoint_blobs",
        "SELECT count(*) FROM checkpoint_writes",
    ] {
        let n: i64 = sqlx::query_scalar(sql)
            .fetch_one(&pool)
            .await
            .expect("count");
        out.push(n);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sealed_with_kms_or_des_is_refused_the_same_way() {
    let Some(kms) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let Some(mixed) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    for (pg, dump) in [
        (&kms, "sealed-kms-postgres.sql"),
        (&mixed, "sealed-mixed-postgres.sql"),
    ] {
        let sql = std::fs::read_to_string(fixture(dump)).expect("dump");
        flashback_testkit::load_sql_dump(pg.url(), &sql)
            .await
            .expect("load");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let target = copy(&dir, "langgraph.sqlite");
    let (k, m) = (kms.url().to_owned(), mixed.url().to_owned());
    let (k_before, m_before) = (counts(&k).await, counts(&m).await);

    let sync = tokio::task::spawn_blocking(move || {
        refused(&["state", &k, "kms"], true, KMS);
        let all = ids(&k, "kms");
        let tips = tips(&k, "kms");
        let forks = [tips[0].as_str(), all[all.len() - 1].as_str()];
        writes_refused(&k, "kms", &forks, (&tips[0], &tips[1]), &target, KMS);

        refused(&["state", &m, "aes"], true, DES);
        let all = ids(&m, "aes");
        writes_refused(&m, "aes", &[&all[0]], (&all[0], &all[2]), &target, DES);
        (k, m, all[2].clone())
    });
    let (k, m, older) = sync.await.expect("cli");
    assert_eq!(counts(&k).await, k_before, "the kms database is unchanged");
    assert_eq!(
        counts(&m).await,
        m_before,
        "the mixed database is unchanged"
    );
    // The AES checkpoints still fork.
    let fork = tokio::task::spawn_blocking(move || {
        ok(&[
            "fork",
            &m,
            "aes",
            "--checkpoint",
            &older,
            "--set",
            r#"notes=["z"]"#,
            "--json",
        ])
    });
    assert!(fork.await.expect("fork")["checkpoint_id"].is_string());
    drop((kms, mixed));
}
