//! Hostile rows in a SQLite checkpoint file: each damages only itself.
//!
//! A copy of the fixture (written by the real LangGraph) is corrupted row by row with
//! rusqlite: a truncated latest checkpoint, a checkpoint that is random bytes, one that is
//! NULL, one that is encrypted, a string inside a value that is not UTF-8, thread ids that are
//! a BLOB or not UTF-8, a checkpoint id that is a BLOB (and so the thread's "latest"), a write
//! whose idx is text and whose channel is a BLOB, and a NULL namespace. Before, any one of
//! them failed the thread list (and every thread's state) or its whole thread.

use flashback_codec::{msgpack, Decoded, Value};
use flashback_storage::sqlite::{SqliteSaver, SqliteStore};
use flashback_storage::{CheckpointSaver, CheckpointStore, ListQuery, PutRequest};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

/// The latest root checkpoint of `thread` in the pristine fixture.
fn latest(conn: &Connection, thread: &str) -> String {
    conn.query_row(
        "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
        [thread],
        |r| r.get(0),
    )
    .expect("latest")
}

/// The `n`-th oldest root checkpoint of `thread`.
fn nth(conn: &Connection, thread: &str, n: usize) -> String {
    conn.query_row(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' \
         ORDER BY checkpoint_id LIMIT 1 OFFSET ?",
        rusqlite::params![thread, n as i64],
        |r| r.get(0),
    )
    .expect("nth")
}

/// The first string inside a channel value of the document (depth first).
fn first_string(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) if s.len() >= 4 => Some(s.to_string()),
        Value::Array(items) => items.iter().find_map(first_string),
        Value::Map(entries) => entries.iter().find_map(|(_, v)| first_string(v)),
        Value::Object(o) => first_string(&o.payload),
        _ => None,
    }
}

struct Crafted {
    _dir: tempfile::TempDir,
    path: PathBuf,
    /// chat-tools' latest checkpoint (truncated).
    truncated: String,
    /// A forked checkpoint whose document is random bytes.
    garbage: String,
    /// rich-types' latest checkpoint, with one string that is not UTF-8.
    bad_string: String,
    /// The string that was broken.
    broken: String,
}

fn craft() -> Crafted {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hostile.sqlite");
    std::fs::copy(FIXTURE, &path).expect("copy fixture");
    let conn = Connection::open(&path).expect("open copy");
    let exec = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
        conn.execute(sql, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    let truncated = latest(&conn, "chat-tools");
    exec(
        "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 80) WHERE thread_id = 'chat-tools' AND checkpoint_id = ?",
        &[&truncated],
    );
    let garbage = nth(&conn, "forked", 3);
    exec(
        "UPDATE checkpoints SET checkpoint = x'deadbeef00c1' WHERE thread_id = 'forked' AND checkpoint_id = ?",
        &[&garbage],
    );
    let null_doc = nth(&conn, "forked", 5);
    exec(
        "UPDATE checkpoints SET checkpoint = NULL WHERE thread_id = 'forked' AND checkpoint_id = ?",
        &[&null_doc],
    );
    let encrypted = nth(&conn, "forked", 7);
    exec(
        "UPDATE checkpoints SET type = 'msgpack+aes' WHERE thread_id = 'forked' AND checkpoint_id = ?",
        &[&encrypted],
    );

    // One string inside rich-types' latest state is no longer UTF-8.
    let bad_string = latest(&conn, "rich-types");
    let doc: Vec<u8> = conn
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = 'rich-types' AND checkpoint_id = ?",
            [&bad_string],
            |r| r.get(0),
        )
        .expect("doc");
    let tree = msgpack::decode(&doc).expect("decodes");
    let broken = first_string(tree.get("channel_values").expect("values")).expect("a string");
    let at = doc
        .windows(broken.len())
        .position(|w| w == broken.as_bytes())
        .expect("found");
    let mut bad = doc.clone();
    bad[at] = 0xff;
    exec(
        "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'rich-types' AND checkpoint_id = ?",
        &[&bad, &bad_string],
    );

    // Thread ids that are not text: a BLOB, and text that is not UTF-8.
    let copy = "INSERT INTO checkpoints SELECT {id}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                FROM checkpoints WHERE thread_id = 'reducers'";
    exec(&copy.replace("{id}", "CAST('blob-thread' AS BLOB)"), &[]);
    exec(&copy.replace("{id}", "CAST(x'626164ff' AS TEXT)"), &[]);
    // parallel-failure gains a checkpoint whose id is a BLOB: the greatest id, so its latest.
    exec(
        "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, CAST('zz-blob-id' AS BLOB), checkpoint_id, type, checkpoint, metadata \
         FROM checkpoints WHERE thread_id = 'parallel-failure' AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'parallel-failure')",
        &[],
    );
    // A write whose idx is text and whose channel is a BLOB.
    exec(
        "UPDATE writes SET idx = 'seven', channel = CAST('draft' AS BLOB) WHERE thread_id = 'interrupt-waiting' AND channel = 'draft'",
        &[],
    );
    drop(conn);
    Crafted {
        _dir: dir,
        path,
        truncated,
        garbage,
        bad_string,
        broken,
    }
}

fn problem_of(t: &flashback_storage::CheckpointTuple) -> &str {
    t.header.problem.as_deref().unwrap_or("")
}

#[tokio::test]
async fn the_thread_list_and_every_latest_checkpoint_survive_bad_rows() {
    let c = craft();
    let store = SqliteStore::open(c.path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let threads = store.list_threads().await.expect("the thread list");
    let ids: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    for t in [
        "chat-tools",
        "forked",
        "long",
        "rich-types",
        "subgraph",
        "reducers",
    ] {
        assert!(ids.contains(&t), "{t} listed: {ids:?}");
    }
    let blob = threads
        .iter()
        .find(|t| t.thread_id == "⟨BLOB x'626c6f622d746872656164'⟩")
        .expect("the BLOB thread id, escaped");
    assert!(blob
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("thread_id is a BLOB")));
    assert_eq!(blob.checkpoint_count, 8, "its rows are counted");
    let not_utf8 = threads
        .iter()
        .find(|t| t.thread_id == "⟨invalid UTF-8 \"bad\\xff\"⟩")
        .expect("the non-UTF-8 thread id, escaped");
    assert!(not_utf8
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("not valid UTF-8")));
    let parallel = threads
        .iter()
        .find(|t| t.thread_id == "parallel-failure")
        .expect("parallel-failure");
    assert!(
        parallel
            .problem
            .as_deref()
            .is_some_and(|p| p.starts_with("latest checkpoint: checkpoint_id is a BLOB")),
        "{parallel:?}"
    );
    assert!(threads
        .iter()
        .filter(|t| !t.thread_id.starts_with('⟨') && t.thread_id != "parallel-failure")
        .all(|t| t.problem.is_none()));

    // Every thread's latest root checkpoint, in one go (what the thread list's status needs).
    let keys: Vec<(&str, &str, Option<&str>)> = threads
        .iter()
        .filter_map(|t| {
            Some((
                t.thread_id.as_str(),
                "",
                Some(t.latest_checkpoint_id.as_deref()?),
            ))
        })
        .collect();
    let latest = store.get_tuples(&keys).await.expect("get_tuples");
    let by_thread = |id: &str| {
        keys.iter()
            .zip(&latest)
            .find(|((t, _, _), _)| *t == id)
            .and_then(|(_, l)| l.as_ref())
    };
    let chat = by_thread("chat-tools").expect("chat-tools' latest is listed");
    assert!(problem_of(chat).starts_with("the checkpoint document cannot be read"));
    assert!(chat.checkpoint.channel_values.is_empty());
    assert_eq!(chat.header.checkpoint_id, c.truncated);
    assert!(!chat.header.ts.is_empty(), "the timestamp is still read");
    assert!(chat.header.metadata.get("step").is_some(), "metadata kept");
    let long = by_thread("long").expect("long");
    assert!(long.header.problem.is_none() && !long.checkpoint.channel_values.is_empty());
}

#[tokio::test]
async fn a_bad_checkpoint_damages_only_itself_in_its_thread() {
    let c = craft();
    let store = SqliteStore::open(c.path.to_str().expect("utf-8"))
        .await
        .expect("open");
    // Long enough for the bulk path (writes on a second connection) and the short one.
    for limit in [None, Some(3)] {
        let q = ListQuery {
            limit,
            ..ListQuery::thread("forked")
        };
        let tuples = store.list_tuples(&q).await.expect("forked loads");
        assert_eq!(tuples.len(), limit.map_or(14, |l| l as usize));
        if limit.is_some() {
            continue;
        }
        let bad: Vec<(&str, &str)> = tuples
            .iter()
            .filter_map(|t| {
                Some((
                    t.header.checkpoint_id.as_str(),
                    t.header.problem.as_deref()?,
                ))
            })
            .collect();
        // The encrypted one read without a key is locked, not damaged.
        assert_eq!(bad.len(), 2, "two damaged checkpoints: {bad:?}");
        let locked: Vec<&str> = tuples
            .iter()
            .filter(|t| t.sealing.locked)
            .map(|t| t.header.checkpoint_id.as_str())
            .collect();
        assert_eq!(locked.len(), 1, "one locked checkpoint: {locked:?}");
        let garbage = tuples
            .iter()
            .find(|t| t.header.checkpoint_id == c.garbage)
            .expect("the garbage one is listed");
        assert!(
            problem_of(garbage).contains("invalid msgpack"),
            "{garbage:?}"
        );
        assert!(
            garbage.header.parent_checkpoint_id.is_some(),
            "its parent link is kept"
        );
        assert!(bad.iter().any(|(_, p)| p.contains("SQL NULL")));
        assert!(tuples
            .iter()
            .filter(|t| t.header.problem.is_none() && !t.sealing.locked)
            .all(|t| !t.checkpoint.channel_values.is_empty()));

        // The cheap header listing marks the same checkpoints, in the same words.
        let headers = store
            .list_headers(&ListQuery::thread("forked"))
            .await
            .expect("headers");
        for (t, h) in tuples.iter().zip(&headers) {
            assert_eq!(t.header.checkpoint_id, h.checkpoint_id);
            assert_eq!(t.header.problem, h.problem, "{}", h.checkpoint_id);
        }
    }
}

#[tokio::test]
async fn a_string_that_is_not_utf8_damages_only_itself() {
    let c = craft();
    let store = SqliteStore::open(c.path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let t = store
        .get_tuple("rich-types", "", Some(&c.bad_string))
        .await
        .expect("loads")
        .expect("found");
    assert!(t.header.problem.is_none(), "the document itself is fine");
    let mut invalid = 0;
    fn count(v: &Value, n: &mut usize) {
        match v {
            Value::RawExt(r) if msgpack::is_invalid_str(r) => *n += 1,
            Value::Array(items) => items.iter().for_each(|i| count(i, n)),
            Value::Map(entries) => entries.iter().for_each(|(k, v)| {
                count(k, n);
                count(v, n)
            }),
            Value::Object(o) => count(&o.payload, n),
            _ => {}
        }
    }
    for (_, v) in &t.checkpoint.channel_values {
        if let Decoded::Msgpack(v) = v.as_ref() {
            count(v, &mut invalid);
        }
    }
    assert_eq!(invalid, 1, "exactly the broken string ({:?})", c.broken);
    assert!(
        t.checkpoint.channel_values.len() > 3,
        "every channel is there"
    );

    // Written back, it would not be what was read: a fork of it is refused, nothing written.
    let saver = SqliteSaver::open(c.path.to_str().expect("utf-8"))
        .await
        .expect("saver");
    let mut cp = t.checkpoint.clone();
    cp.id = "1f1e641f-0000-6000-8000-000000000000".into();
    let before = std::fs::read(&c.path).expect("read");
    let err = saver
        .put(PutRequest {
            thread_id: "rich-types",
            checkpoint_ns: "",
            parent_checkpoint_id: Some(&c.bad_string),
            checkpoint: &cp,
            metadata: &serde_json::Map::new(),
            new_versions: &cp.channel_versions,
        })
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    assert_eq!(std::fs::read(&c.path).expect("read"), before, "unchanged");
}

#[tokio::test]
async fn bad_key_columns_are_escaped_and_noted() {
    let c = craft();
    let store = SqliteStore::open(c.path.to_str().expect("utf-8"))
        .await
        .expect("open");
    // All threads at once (no thread filter): the BLOB-keyed rows come back escaped.
    let all = store
        .list_headers(&ListQuery::default())
        .await
        .expect("every header");
    let blob_rows: Vec<_> = all
        .iter()
        .filter(|h| h.thread_id.starts_with("⟨BLOB"))
        .collect();
    assert_eq!(blob_rows.len(), 8);
    assert!(blob_rows.iter().all(|h| h
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("thread_id is a BLOB"))));

    // parallel-failure: its BLOB-id checkpoint is listed, escaped, the others intact.
    let tuples = store
        .list_tuples(&ListQuery::thread("parallel-failure"))
        .await
        .expect("loads");
    assert_eq!(tuples.len(), 3);
    let odd = &tuples[0];
    assert_eq!(odd.header.checkpoint_id, "⟨BLOB x'7a7a2d626c6f622d6964'⟩");
    assert!(odd
        .header
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("checkpoint_id is a BLOB")));
    assert!(
        !odd.checkpoint.channel_values.is_empty(),
        "its document still reads"
    );
    assert!(tuples[1..].iter().all(|t| t.header.problem.is_none()));

    // interrupt-waiting: the write with a text idx and a BLOB channel is shown in place.
    let tuples = store
        .list_tuples(&ListQuery::thread("interrupt-waiting"))
        .await
        .expect("loads");
    let writes: Vec<_> = tuples.iter().flat_map(|t| &t.pending_writes).collect();
    let odd = writes
        .iter()
        .find(|w| w.channel.starts_with("⟨BLOB"))
        .expect("the odd write");
    let Decoded::Error { message, .. } = &odd.value else {
        panic!("{odd:?}");
    };
    assert!(message.contains("idx is \"seven\""), "{message}");
    assert_eq!(writes.len(), 5, "every write is there");
}

#[tokio::test]
async fn a_null_namespace_is_escaped_too() {
    // LangGraph declares the keys NOT NULL; a table made by another tool may not.
    let dir = tempfile::tempdir().expect("tempdir");
    let path: PathBuf = dir.path().join("loose.sqlite");
    std::fs::copy(FIXTURE, &path).expect("copy");
    let conn = Connection::open(&path).expect("open");
    conn.execute_batch(
        "CREATE TABLE loose (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, \
           parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB); \
         INSERT INTO loose SELECT * FROM checkpoints; \
         UPDATE loose SET checkpoint_ns = NULL WHERE thread_id = 'subgraph' AND checkpoint_ns <> ''; \
         DROP TABLE checkpoints; ALTER TABLE loose RENAME TO checkpoints;",
    )
    .expect("loosen");
    drop(conn);
    let store = SqliteStore::open(path_str(&path)).await.expect("open");
    let threads = store.list_threads().await.expect("threads");
    let sub = threads
        .iter()
        .find(|t| t.thread_id == "subgraph")
        .expect("subgraph");
    assert!(sub.namespaces.contains(&"⟨NULL⟩".to_string()), "{sub:?}");
    assert!(sub
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("checkpoint_ns is NULL")));
    assert_eq!(sub.checkpoint_count, 13);
    let tuples = store
        .list_tuples(&ListQuery::thread("subgraph"))
        .await
        .expect("loads");
    assert_eq!(tuples.len(), 13);
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
