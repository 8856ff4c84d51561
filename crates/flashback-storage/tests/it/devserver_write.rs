//! The dev server's folder written through the saver (`open` with `Write`): `put_writes` as
//! `InMemorySaver.put_writes` (the first writer kept for regular channels, special channels
//! replaced), and a folder is never made (`Create { create: true }`). Forks, deletes and copies
//! through the CLI are in flashback-cli's `devserver_writes.rs`; the real server resuming a fork
//! in `tests/interop/devserver_test.py`.

use flashback_codec::{Decoded, Value};
use flashback_storage::{open, Create, Write};
use std::path::PathBuf;

const CHAT_FORK: &str = "88bc3ad2-bebf-5003-8740-c06da9320f9e";
const WAITING: &str = "1f1eb9a2-c5d4-6d53-8001-9380bd243c59";

fn copy_of_fixture() -> (tempfile::TempDir, String) {
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/devserver-fixtures/py/.langgraph_api");
    let tmp = tempfile::tempdir().expect("tempdir");
    let state = tmp.path().join(".langgraph_api");
    std::fs::create_dir(&state).expect("mkdir");
    for e in std::fs::read_dir(&from).expect("fixture").flatten() {
        std::fs::copy(e.path(), state.join(e.file_name())).expect("copy");
    }
    let dir = tmp.path().to_string_lossy().into_owned();
    (tmp, dir)
}

fn int(i: i64) -> Decoded {
    Decoded::Msgpack(Value::Int(i))
}

#[tokio::test]
async fn put_writes_keeps_the_first_writer_and_replaces_special_channels() {
    let (_tmp, dir) = copy_of_fixture();
    let saver = open(&dir, Write::default())
        .await
        .expect("open for writing");
    let put = |writes: Vec<(String, Decoded)>| {
        let saver = &saver;
        async move {
            saver
                .put_writes(CHAT_FORK, "", WAITING, "task-x", "~p", &writes)
                .await
                .expect("put_writes")
        }
    };
    put(vec![("a".into(), int(1)), ("b".into(), int(2))]).await;
    put(vec![("a".into(), int(9))]).await;
    put(vec![("__error__".into(), int(1))]).await;
    put(vec![("__error__".into(), int(2))]).await;

    let reader = open(&dir, flashback_storage::Read::default())
        .await
        .expect("open");
    let t = reader
        .get_tuple(CHAT_FORK, "", Some(WAITING))
        .await
        .expect("read")
        .expect("the checkpoint");
    let mine: Vec<(String, i64, String)> = t
        .pending_writes
        .iter()
        .filter(|w| w.task_id == "task-x")
        .map(|w| (w.channel.clone(), w.idx, format!("{}", w.value)))
        .collect();
    assert_eq!(
        mine.iter()
            .map(|(c, i, _)| (c.as_str(), *i))
            .collect::<Vec<_>>(),
        [("__error__", -1), ("a", 0), ("b", 1)],
        "{mine:?}"
    );
    let value = |c: &str| mine.iter().find(|m| m.0 == c).map(|m| m.2.clone());
    assert_eq!(
        value("a"),
        Some(format!("{}", int(1))),
        "the first writer stays"
    );
    assert_eq!(
        value("__error__"),
        Some(format!("{}", int(2))),
        "a special channel is replaced"
    );
    // The other tasks' writes of that checkpoint are as the server left them.
    assert!(t.pending_writes.iter().any(|w| w.task_id != "task-x"));
}

#[tokio::test]
async fn a_folder_is_not_made() {
    let (_tmp, dir) = copy_of_fixture();
    let err = open(
        &dir,
        Create {
            create: true,
            three: None,
        },
    )
    .await
    .err()
    .expect("refused");
    assert!(err.to_string().contains("does not make one"), "{err}");
    assert!(open(&dir, Create::default()).await.is_ok());
}
