//! Encrypted databases through the API: locked without a key, `unlock_database` (wrong key
//! refused, right key used for reads and encrypted forks, remembered in the keyring), and the
//! key from the keyring on the next open. (The real library's encrypted databases are checked
//! by `tests/interop/encrypted_test.py`.)

use crate::common;

use common::*;
use flashback_api::*;
use flashback_storage::maintenance::copy_thread_between;
use flashback_storage::sqlite::{SqliteSaver, SqliteStore};
use std::sync::Arc;

const KEY: &str = "0123456789abcdef0123456789abcdef";

/// The fixture's first two threads, copied into a new file written encrypted with [`KEY`].
async fn encrypted_copy(dir: &std::path::Path) -> (String, Vec<String>) {
    let plain = SqliteStore::open(fixtures().join("langgraph.sqlite").to_str().unwrap())
        .await
        .unwrap();
    let path = dir.join("encrypted.sqlite");
    let key = Arc::new(flashback_codec::AesKey::from_text(KEY).unwrap());
    let saver = SqliteSaver::create(path.to_str().unwrap())
        .await
        .unwrap()
        .with_key(Some(key));
    use flashback_storage::CheckpointStore;
    let threads: Vec<String> = plain
        .list_threads()
        .await
        .unwrap()
        .into_iter()
        .take(2)
        .map(|t| t.thread_id)
        .collect();
    for t in &threads {
        copy_thread_between(&plain, &saver, t, t).await.unwrap();
    }
    (path.to_string_lossy().into_owned(), threads)
}

fn detail_request(db: &DbInfo, thread: &str, allow_locked: bool) -> CheckpointRequest {
    CheckpointRequest {
        live: None,
        page: None,
        db: db.db.clone(),
        thread_id: thread.into(),
        checkpoint_ns: String::new(),
        checkpoint_id: None,
        reveal_secrets: false,
        full: false,
        raw: false,
        reducers: Default::default(),
        allow_locked,
    }
}

#[tokio::test]
async fn locked_then_unlocked_then_remembered() {
    if std::env::var_os("LANGGRAPH_AES_KEY").is_some() {
        eprintln!("skipped: LANGGRAPH_AES_KEY is set in this environment");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (path, threads) = encrypted_copy(dir.path()).await;
    let rows: Vec<String> = rusqlite::Connection::open(&path)
        .unwrap()
        .prepare("SELECT DISTINCT type FROM checkpoints UNION SELECT DISTINCT type FROM writes")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        rows.iter().all(|t| t.ends_with("+aes")),
        "written encrypted: {rows:?}"
    );

    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, &path).await;
    let enc = db.encryption.clone().expect("detected as encrypted");
    assert!(
        enc.tags.contains(&"msgpack+aes".to_string()),
        "{:?}",
        enc.tags
    );
    assert!(!enc.unlocked);

    // Locked: the threads list, without statuses; state fails in one line; forks refused.
    let listed = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), threads.len());
    assert!(listed
        .iter()
        .all(|t| t.locked && t.status.is_none() && t.problem.is_none()));
    let e = api
        .checkpoint_detail(detail_request(&db, &threads[0], false))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Encrypted);
    assert!(
        e.message.contains("LANGGRAPH_AES_KEY") && !e.message.contains('\n'),
        "{e:?}"
    );
    let locked = api
        .checkpoint_detail(detail_request(&db, &threads[0], true))
        .await
        .unwrap();
    assert!(locked.sealing.as_ref().is_some_and(|s| s.locked));
    assert!(
        locked.problem.is_none(),
        "locked is not a fault: {:?}",
        locked.problem
    );
    let fork = ForkRequest {
        as_node: None,
        db: db.db.clone(),
        thread_id: threads[0].clone(),
        checkpoint_ns: String::new(),
        checkpoint_id: locked.checkpoint_id.clone(),
        edits: Vec::new(),
    };
    assert_eq!(
        api.fork_checkpoint(fork.clone()).await.unwrap_err().code,
        ErrorCode::Encrypted
    );

    // Unlock: a short key and a wrong key are refused.
    let unlock = |key: &str, remember: bool| UnlockRequest {
        db: db.db.clone(),
        key: key.into(),
        remember,
    };
    let e = api
        .unlock_database(unlock("short", false))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e:?}");
    let e = api
        .unlock_database(unlock(&"x".repeat(32), false))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Encrypted, "{e:?}");
    assert!(e.message.contains("does not open"), "{e:?}");

    let unlocked = api.unlock_database(unlock(KEY, true)).await.unwrap();
    let enc = unlocked.encryption.expect("still encrypted");
    assert!(enc.unlocked && enc.key_problem.is_none());
    assert_eq!(enc.key_source, Some(KeySource::Keyring));
    assert_eq!(unlocked.db, db.db, "the same handle");

    // Unlocked: the values are those of the plaintext fixture.
    let plain = opened_fixture().await;
    for t in &threads {
        let got = api
            .checkpoint_detail(detail_request(&db, t, false))
            .await
            .unwrap();
        let want = plain
            .api
            .checkpoint_detail(detail_request(&plain.db, t, false))
            .await
            .unwrap();
        assert_eq!(got.values, want.values, "thread {t}");
        assert_eq!(got.tasks, want.tasks, "thread {t}");
        assert!(got
            .sealing
            .as_ref()
            .is_some_and(|s| !s.locked && s.plaintext.is_empty()));
    }
    let listed = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        listed.iter().all(|t| !t.locked && t.status.is_some()),
        "{listed:?}"
    );

    // Forks are written encrypted.
    let forked = api.fork_checkpoint(fork).await.unwrap();
    let tag: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT type FROM checkpoints WHERE checkpoint_id = ?",
            [&forked.checkpoint_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tag, "msgpack+aes");

    // Remembered: the next open finds the key in the keyring.
    let again = open(&api, &path).await;
    let enc = again.encryption.expect("encrypted");
    assert!(enc.unlocked);
    assert_eq!(enc.key_source, Some(KeySource::Keyring));
}

/// A copy of one of `tests/fixtures/sealed-*.sqlite` (written by the real LangGraph with a
/// custom `CipherProtocol`: `tests/fixtures/sealed_fixture.py`), opened.
async fn sealed(dir: &std::path::Path, name: &str) -> (Api, DbInfo) {
    let path = dir.join(name);
    std::fs::copy(fixtures().join(name), &path).unwrap();
    let api = api_in(dir, Initial::None);
    let db = open(&api, path.to_str().unwrap()).await;
    (api, db)
}

#[tokio::test]
async fn a_cipher_flashback_cannot_open_is_named_and_no_key_unlocks_it() {
    if std::env::var_os("LANGGRAPH_AES_KEY").is_some() {
        eprintln!("skipped: LANGGRAPH_AES_KEY is set in this environment");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kms = "sealed with `kms`, a cipher Flashback cannot open";

    let (api, db) = sealed(dir.path(), "sealed-kms.sqlite").await;
    let enc = db.encryption.clone().expect("encrypted");
    assert_eq!(enc.ciphers, ["kms"]);
    assert!(
        enc.key_problem.as_deref().is_some_and(|p| p.contains(kms)),
        "{enc:?}"
    );
    let e = api
        .unlock_database(UnlockRequest {
            db: db.db.clone(),
            key: KEY.into(),
            remember: false,
        })
        .await
        .unwrap_err();
    assert!(
        e.message.contains(kms) && e.message.contains("no key opens"),
        "{e:?}"
    );
    for e in [
        api.checkpoint_detail(detail_request(&db, "kms", false))
            .await
            .unwrap_err(),
        api.fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "kms".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: api
                .checkpoint_detail(detail_request(&db, "kms", true))
                .await
                .unwrap()
                .checkpoint_id,
            edits: Vec::new(),
        })
        .await
        .unwrap_err(),
    ] {
        assert_eq!(e.code, ErrorCode::Encrypted);
        assert!(
            e.message.contains(kms) && !e.message.contains("LANGGRAPH_AES_KEY"),
            "{e:?}"
        );
    }
    let shown = api
        .checkpoint_detail(detail_request(&db, "kms", true))
        .await
        .unwrap();
    assert_eq!(
        shown.sealing.map(|s| s.ciphers),
        Some(vec!["kms".to_owned()])
    );

    // One des row among AES ones: the key unlocks the AES rows; the des head stays named.
    let (api, db) = sealed(dir.path(), "sealed-mixed.sqlite").await;
    assert_eq!(
        db.encryption.as_ref().map(|e| e.ciphers.clone()),
        Some(vec!["aes".into(), "des".into()])
    );
    let unlocked = api
        .unlock_database(UnlockRequest {
            db: db.db.clone(),
            key: KEY.into(),
            remember: false,
        })
        .await
        .expect("the AES key unlocks the AES rows");
    assert!(unlocked.encryption.is_some_and(|e| e.key_problem.is_none()));
    let e = api
        .checkpoint_detail(detail_request(&db, "aes", false))
        .await
        .unwrap_err();
    assert!(
        e.message
            .contains("sealed with `des`, a cipher Flashback cannot open"),
        "{e:?}"
    );
}
