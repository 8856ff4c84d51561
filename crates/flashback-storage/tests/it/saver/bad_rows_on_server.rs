//! Hostile rows in a Postgres checkpoint database: each damages only itself.
//!
//! Postgres keeps ids in NOT NULL text columns (valid UTF-8 for a UTF-8 client: a SQL_ASCII
//! database's stray bytes are refused by the server itself) and documents in JSONB, so what
//! can go wrong is a checkpoint document that is valid JSON but not an object, and a blob
//! holding a string that is not UTF-8. Before, either failed its whole thread (and, through the
//! latest checkpoints, the thread list's statuses).
//!
//! One fresh database per test, from flashback-testkit. Skipped when no PostgreSQL is
//! available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_codec::{msgpack, Decoded, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery};
use serde_json::json;

/// A msgpack list `["ok", <str whose bytes are "b\xffd">]`.
fn list_with_bad_string() -> Vec<u8> {
    let mut b = mp(&list(&["ok", "bad"]));
    let at = b.len() - 2;
    b[at] = 0xff;
    b
}

#[tokio::test]
async fn bad_documents_and_strings_damage_only_themselves() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let (c1, c2, c3) = (cid(1), cid(2), cid(3));
    // c3's document is valid JSON, but a list.
    exec(
        &mut conn,
        &format!(
            "UPDATE checkpoints SET checkpoint = '[1, 2]'::jsonb WHERE checkpoint_id = '{c3}'"
        ),
    )
    .await;
    // c2 gains a channel whose blob holds a string that is not UTF-8.
    put_blob(
        &mut conn,
        T1,
        "",
        "notes",
        &ver(7),
        "msgpack",
        Some(list_with_bad_string()),
    )
    .await;
    exec(
        &mut conn,
        &format!(
            "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{{channel_versions,notes}}', '\"{}\"') \
             WHERE checkpoint_id = '{c2}' AND checkpoint_ns = ''",
            ver(7)
        ),
    )
    .await;
    // Another thread whose only checkpoint is a JSON string.
    put_cp(
        &mut conn,
        "t2",
        "",
        &cid(9),
        None,
        json!("just a string"),
        json!({"step": 0}),
    )
    .await;

    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    let threads = store.list_threads().await.expect("threads");
    let keys: Vec<(&str, &str, Option<&str>)> = [T1, "t2"]
        .iter()
        .map(|id| {
            let t = threads.iter().find(|t| t.thread_id == *id).expect("listed");
            (*id, "", t.latest_checkpoint_id.as_deref())
        })
        .collect();
    let latest = store
        .get_tuples(&keys)
        .await
        .expect("every latest checkpoint");
    for t in latest.iter().flatten() {
        let problem = t.header.problem.as_deref().unwrap_or("");
        assert_eq!(
            problem,
            "the checkpoint document cannot be read: checkpoint JSON is not an object"
        );
        assert!(t.checkpoint.channel_values.is_empty());
    }
    assert_eq!(latest.iter().flatten().count(), 2);
    assert_eq!(latest[1].as_ref().expect("t2").header.metadata["step"], 0);

    let tuples = store
        .list_tuples(&ListQuery {
            checkpoint_ns: Some(String::new()),
            ..ListQuery::thread(T1)
        })
        .await
        .expect("T1 loads");
    assert_eq!(ids(&tuples), vec![c3.clone(), c2.clone(), c1.clone()]);
    assert!(tuples[0].header.problem.is_some());
    assert_eq!(tuples[0].header.parent_checkpoint_id, Some(c2.clone()));
    assert!(tuples[1..].iter().all(|t| t.header.problem.is_none()));
    let notes = value(&tuples[1], "notes").expect("notes");
    let Decoded::Msgpack(Value::Array(items)) = notes.as_ref() else {
        panic!("{notes:?}");
    };
    assert_eq!(items[0], s("ok"));
    assert!(matches!(&items[1], Value::RawExt(r) if msgpack::is_invalid_str(r)));
    assert_eq!(
        **value(&tuples[1], "count").expect("count"),
        msg(Value::Int(2))
    );

    // The header listing marks the same checkpoint in the same words.
    let headers = store
        .list_headers(&ListQuery {
            checkpoint_ns: Some(String::new()),
            ..ListQuery::thread(T1)
        })
        .await
        .expect("headers");
    for (h, t) in headers.iter().zip(&tuples) {
        assert_eq!(h.problem, t.header.problem, "{}", h.checkpoint_id);
    }
}
