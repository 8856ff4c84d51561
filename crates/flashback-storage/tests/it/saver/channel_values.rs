//! PostgresStore against hand-built databases: channel values. Inline values and blobs (shared
//! by version, numeric versions joined by their exact text), old rows without inline values,
//! and a corrupt blob that decodes to an error while the rest stays intact.
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/store.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_codec::{Decoded, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery, Version};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn inline_and_blob_values_share_reused_blobs() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2, c3) = (cid(1), cid(2), cid(3));

    let all = store
        .list_tuples(&ListQuery {
            thread_id: Some(T1.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&all), vec![c3.clone(), c2.clone(), c1.clone()]);
    let (t3, t2, t1) = (&all[0], &all[1], &all[2]);

    // c1: inline primitives, blobs, first writer wins, DeltaSnapshot marker replaced by its blob.
    assert_eq!(**value(t1, "count").unwrap(), msg(Value::Int(1)));
    assert_eq!(**value(t1, "messages").unwrap(), msg(list(&["hi"])));
    assert_eq!(
        **value(t1, "snap").unwrap(),
        msg(Value::DeltaSnapshot(Box::new(list(&["a", "b"]))))
    );
    assert_eq!(**value(t1, "flag").unwrap(), msg(Value::Bool(true)));
    assert_eq!(**value(t1, "note").unwrap(), Decoded::Null);
    assert_eq!(t1.header.parent_checkpoint_id, None);
    assert_eq!(t1.header.metadata["run"]["user"], "ann");
    assert_eq!(t1.checkpoint.id, c1);
    assert_eq!(t1.checkpoint.v, 4);
    assert_eq!(
        t1.checkpoint.version("messages"),
        Some(&Version::Str(ver(1)))
    );
    assert_eq!(t1.header.ts, t1.checkpoint.ts);
    // Inline values first (JSONB key order), then blob-only channels.
    let names: Vec<&str> = t1
        .checkpoint
        .channel_values
        .iter()
        .map(|(c, _)| c.as_str())
        .collect();
    // (checked against PostgresSaver: flag, note, snap, count, messages)
    assert_eq!(names, vec!["flag", "note", "snap", "count", "messages"]);

    // c2 reuses c1's messages blob: the same decoded value, shared.
    assert_eq!(**value(t2, "count").unwrap(), msg(Value::Int(2)));
    assert!(Arc::ptr_eq(
        value(t1, "messages").unwrap(),
        value(t2, "messages").unwrap()
    ));
    assert_eq!(t2.header.parent_checkpoint_id.as_deref(), Some(c1.as_str()));
    assert!(value(t2, "snap").is_none());

    assert_eq!(
        **value(t3, "messages").unwrap(),
        msg(list(&["hi", "there"]))
    );
    assert_eq!(**value(t3, "count").unwrap(), msg(Value::Int(3)));

    // get_tuple gives the same tuples.
    assert_eq!(
        store.get_tuple(T1, "", None).await.unwrap().as_ref(),
        Some(t3)
    );
    assert_eq!(
        store.get_tuple(T1, "", Some(&c1)).await.unwrap().as_ref(),
        Some(t1)
    );
    assert!(store
        .get_tuple(T1, "", Some("missing"))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .get_tuple("no-thread", "", None)
        .await
        .unwrap()
        .is_none());

    // The subgraph namespace has its own blob for the same (channel, version).
    let s1 = store.get_tuple(T1, "child:1", None).await.unwrap().unwrap();
    assert_eq!(**value(&s1, "messages").unwrap(), msg(list(&["in child"])));
}

#[tokio::test]
async fn old_rows_without_inline_values_skip_empty_blobs() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    // Before July 2025 every value went to a blob, the JSON had no channel_values, and
    // channels without a value got ("empty", NULL) rows.
    let c1 = cid(1);
    put_blob(
        &mut conn,
        T1,
        "",
        "count",
        &ver(1),
        "msgpack",
        Some(mp(&Value::Int(41))),
    )
    .await;
    put_blob(&mut conn, T1, "", "branch:to:agent", &ver(1), "empty", None).await;
    put_blob(
        &mut conn,
        T1,
        "",
        "maybe",
        &ver(1),
        "null",
        Some(Vec::new()),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "legacy",
        &ver(1),
        "json",
        Some(br#"{"a": [1, 2]}"#.to_vec()),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(
            &c1,
            3,
            None,
            &[
                ("count", ver(1)),
                ("branch:to:agent", ver(1)),
                ("maybe", ver(1)),
                ("legacy", ver(1)),
            ],
        ),
        json!({"source": "loop", "step": 0, "writes": null}),
    )
    .await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    assert_eq!(**value(&t, "count").unwrap(), msg(Value::Int(41)));
    assert!(value(&t, "branch:to:agent").is_none());
    assert_eq!(**value(&t, "maybe").unwrap(), Decoded::Null);
    assert!(
        matches!(&**value(&t, "legacy").unwrap(), Decoded::Msgpack(v) if v.get("a") == Some(&Value::Array(vec![Value::Int(1), Value::Int(2)])))
    );
    assert_eq!(t.checkpoint.channel_values.len(), 3);
    // The version stays even though the value is skipped.
    assert!(t.checkpoint.version("branch:to:agent").is_some());
    // v3 without a parent: no pending sends.
    assert!(value(&t, "__pregel_tasks").is_none());
}

#[tokio::test]
async fn corrupt_blob_decodes_to_error_and_the_rest_is_intact() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let c1 = cid(1);
    put_blob(
        &mut conn,
        T1,
        "",
        "bad",
        &ver(1),
        "msgpack",
        Some(vec![0xc1, 0xff, 0x00]),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "weird",
        &ver(1),
        "no-such-tag",
        Some(vec![1, 2, 3]),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "good",
        &ver(1),
        "msgpack",
        Some(mp(&list(&["ok"]))),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(
            &c1,
            4,
            Some(json!({"n": 1})),
            &[
                ("bad", ver(1)),
                ("weird", ver(1)),
                ("good", ver(1)),
                ("n", ver(1)),
            ],
        ),
        json!({"step": 0}),
    )
    .await;
    sqlx::query(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
         VALUES ($1, '', $2, 't', 0, 'x', 'msgpack', '\\xc1'::bytea)",
    )
    .bind(T1)
    .bind(&c1)
    .execute(&mut conn)
    .await
    .unwrap();
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    for t in [
        store.get_tuple(T1, "", None).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(0),
    ] {
        match &**value(&t, "bad").unwrap() {
            Decoded::Error { tag, raw, .. } => {
                assert_eq!(tag, "msgpack");
                assert_eq!(raw, &vec![0xc1, 0xff, 0x00]);
            }
            other => panic!("expected an error value, got {other:?}"),
        }
        assert!(
            matches!(&**value(&t, "weird").unwrap(), Decoded::Error { tag, .. } if tag == "no-such-tag")
        );
        assert_eq!(**value(&t, "good").unwrap(), msg(list(&["ok"])));
        assert_eq!(**value(&t, "n").unwrap(), msg(Value::Int(1)));
        assert!(matches!(t.pending_writes[0].value, Decoded::Error { .. }));
    }
}

#[tokio::test]
async fn numeric_versions_join_blobs_by_their_exact_text() {
    // The conformance suite uses integer versions; other writers may use floats. Python joins
    // blobs on `version = jsonb_each_text(channel_versions).value`, i.e. Postgres' rendering
    // of the JSONB number ("1.50" keeps its scale, 1e-05 becomes "0.00001").
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let c1 = cid(1);
    let text = format!(
        r#"{{"v": 4, "id": "{c1}", "ts": "2026-01-01T00:00:00+00:00", "channel_values": {{}},
            "channel_versions": {{"i": 2, "f": 1.50, "e": 1e-05, "big": 18446744073709551615, "n": null}},
            "versions_seen": {{}}, "updated_channels": null}}"#
    );
    // Inserted as text so that Postgres parses the numbers itself.
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) \
         VALUES ($1, '', $2, $3::jsonb, '{}')",
    )
    .bind(T1)
    .bind(&c1)
    .bind(text)
    .execute(&mut conn)
    .await
    .unwrap();
    for (channel, version) in [
        ("i", "2"),
        ("f", "1.50"),
        ("f", "1.5"),
        ("e", "0.00001"),
        ("e", "1e-05"),
        ("big", "18446744073709551615"),
        ("n", "null"),
    ] {
        let value = list(&[&format!("{channel}@{version}")]);
        put_blob(
            &mut conn,
            T1,
            "",
            channel,
            version,
            "msgpack",
            Some(mp(&value)),
        )
        .await;
    }
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    for t in [
        store.get_tuple(T1, "", None).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(0),
    ] {
        assert_eq!(**value(&t, "i").unwrap(), msg(list(&["i@2"])));
        assert_eq!(**value(&t, "f").unwrap(), msg(list(&["f@1.50"])));
        assert_eq!(**value(&t, "e").unwrap(), msg(list(&["e@0.00001"])));
        assert_eq!(
            **value(&t, "big").unwrap(),
            msg(list(&["big@18446744073709551615"]))
        );
        assert!(value(&t, "n").is_none());
        assert_eq!(t.checkpoint.version("i"), Some(&Version::Int(2)));
    }
}
