//! PostgresStore against hand-built databases: pending writes (sorted as Python sorts them) and
//! the pending sends of pre-v4 checkpoints (from the parent's writes, or from the namespace's
//! writes in the shallow saver's schema).
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/store.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_codec::{Decoded, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery, Version};
use serde_json::json;

#[tokio::test]
async fn pending_writes_are_sorted_like_python() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let (c1, c2) = (cid(1), cid(2));
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(&c1, 4, Some(json!({})), &[]),
        json!({}),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c2,
        Some(&c1),
        doc(&c2, 4, Some(json!({})), &[]),
        json!({}),
    )
    .await;
    let rows: [(&str, &str, &str, i32, &str); 7] = [
        (c1.as_str(), "task-b", "~__pregel_pull, b", 0, "out"),
        (c1.as_str(), "task-a", "~__pregel_pull, b", 2, "out"),
        (
            c1.as_str(),
            "task-a",
            "~__pregel_pull, b",
            -3,
            "__interrupt__",
        ),
        (
            c1.as_str(),
            "00000000-0000-0000-0000-000000000000",
            "",
            0,
            "__resume__",
        ),
        (c1.as_str(), "task-z", "~__pregel_pull, a", 1, "out"),
        (c1.as_str(), "task-a", "~__pregel_pull, b", 10, "out"),
        (c2.as_str(), "task-c", "", 0, "other"),
    ];
    for (n, (cp, task, path, idx, channel)) in rows.iter().enumerate() {
        let w = W {
            ns: "",
            cid: cp,
            task_id: task,
            task_path: path,
            idx: *idx,
            channel,
            value: Value::Int(n as i64),
        };
        put_write(&mut conn, T1, w, true).await;
    }
    // A null write: `null` tag with an empty blob.
    sqlx::query(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
         VALUES ($1, '', $2, 'task-z', 2, 'none', 'null', ''::bytea, '~__pregel_pull, a')",
    )
    .bind(T1)
    .bind(&c1)
    .execute(&mut conn)
    .await
    .unwrap();

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let expected = vec![
        ("", "00000000-0000-0000-0000-000000000000", 0),
        ("~__pregel_pull, a", "task-z", 1),
        ("~__pregel_pull, a", "task-z", 2),
        ("~__pregel_pull, b", "task-a", -3),
        ("~__pregel_pull, b", "task-a", 2),
        ("~__pregel_pull, b", "task-a", 10),
        ("~__pregel_pull, b", "task-b", 0),
    ];
    for t in [
        store.get_tuple(T1, "", Some(&c1)).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(1),
    ] {
        let got: Vec<(&str, &str, i64)> = t
            .pending_writes
            .iter()
            .map(|w| (w.task_path.as_str(), w.task_id.as_str(), w.idx))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(t.pending_writes[0].channel, "__resume__");
        assert_eq!(t.pending_writes[0].value, msg(Value::Int(3)));
        assert_eq!(t.pending_writes[2].value, Decoded::Null);
        assert_eq!(t.pending_writes[2].type_tag, "null");
        assert_eq!(t.pending_writes[1].type_tag, "msgpack");
    }
    let t2 = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    assert_eq!(t2.pending_writes.len(), 1);
    assert_eq!(t2.pending_writes[0].channel, "other");
}

#[tokio::test]
async fn pre_v4_checkpoints_get_pending_sends_from_the_parent() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let (p, c, c4, lone, q) = (cid(1), cid(2), cid(3), cid(4), cid(5));
    put_cp(
        &mut conn,
        T1,
        "",
        &p,
        None,
        doc(&p, 1, Some(json!({})), &[("a", ver(1))]),
        json!({}),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c,
        Some(&p),
        doc(
            &c,
            1,
            Some(json!({"a": 1})),
            &[("a", ver(2)), ("b", ver(7)), ("c", ver(3))],
        ),
        json!({}),
    )
    .await;
    // A v4 child of the same parent: Sends live in the channel, nothing is migrated.
    put_cp(
        &mut conn,
        T1,
        "",
        &c4,
        Some(&p),
        doc(&c4, 4, Some(json!({})), &[("a", ver(2))]),
        json!({}),
    )
    .await;
    // A pre-v4 child of a parent without Sends.
    put_cp(
        &mut conn,
        T1,
        "",
        &q,
        Some(&lone),
        doc(&q, 2, Some(json!({})), &[("a", ver(2))]),
        json!({}),
    )
    .await;
    // A pre-v4 child with sends but no channel versions at all.
    let bare = cid(6);
    put_cp(
        &mut conn,
        T1,
        "",
        &bare,
        Some(&p),
        doc(&bare, 2, Some(json!({})), &[]),
        json!({}),
    )
    .await;

    let sends = [
        ("", "t2", "~__pregel_pull, x", 0, 2),
        ("", "t1", "~__pregel_pull, x", 1, 1),
        ("", "t1", "~__pregel_pull, x", 0, 0),
        // Same checkpoint id in another namespace: Python's SELECT_PENDING_SENDS_SQL has no
        // namespace filter, so it is included (sorted by task_path first).
        ("child:9", "t0", "~__pregel_pull, w", 0, 9),
    ];
    for (ns, task, path, idx, arg) in sends {
        let w = W {
            ns,
            cid: &p,
            task_id: task,
            task_path: path,
            idx,
            channel: "__pregel_tasks",
            value: send("worker", arg),
        };
        put_write(&mut conn, T1, w, true).await;
    }
    // Not a Send channel: ignored.
    let w = W {
        ns: "",
        cid: &p,
        task_id: "t1",
        task_path: "~__pregel_pull, x",
        idx: 5,
        channel: "a",
        value: Value::Int(0),
    };
    put_write(&mut conn, T1, w, true).await;

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let expected = msg(Value::Array(vec![
        send("worker", 9),
        send("worker", 0),
        send("worker", 1),
        send("worker", 2),
    ]));
    let all = store.list_tuples(&ListQuery::thread(T1)).await.unwrap();
    let by_id = |id: &str| {
        all.iter()
            .find(|t| t.header.checkpoint_id == id)
            .unwrap()
            .clone()
    };
    for t in [
        store.get_tuple(T1, "", Some(&c)).await.unwrap().unwrap(),
        by_id(&c),
    ] {
        assert_eq!(**value(&t, "__pregel_tasks").unwrap(), expected);
        // channel_versions["__pregel_tasks"] = max of the versions.
        assert_eq!(
            t.checkpoint.version("__pregel_tasks"),
            Some(&Version::Str(ver(7)))
        );
        assert_eq!(
            t.checkpoint.channel_versions.last().unwrap().0,
            "__pregel_tasks"
        );
        assert_eq!(**value(&t, "a").unwrap(), msg(Value::Int(1)));
        // The writes of c itself are unaffected.
        assert!(t.pending_writes.is_empty());
    }
    let t4 = by_id(&c4);
    assert!(value(&t4, "__pregel_tasks").is_none());
    assert!(t4.checkpoint.version("__pregel_tasks").is_none());
    let tq = by_id(&q);
    assert!(value(&tq, "__pregel_tasks").is_none());
    let tb = by_id(&bare);
    assert_eq!(**value(&tb, "__pregel_tasks").unwrap(), expected);
    assert_eq!(
        tb.checkpoint.version("__pregel_tasks"),
        Some(&Version::Str(
            "00000000000000000000000000000001.00000000000000.0".into()
        ))
    );
    // The parent (no parent itself) has its own writes, no migrated sends.
    let tp = by_id(&p);
    assert!(value(&tp, "__pregel_tasks").is_none());
    assert_eq!(tp.pending_writes.len(), 4);
}

#[tokio::test]
async fn shallow_pre_v4_checkpoint_lists_the_namespace_sends() {
    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let mut conn = pg.connect().await.unwrap();
    setup_shallow(&mut conn).await;
    let (old, cur) = (cid(1), cid(2));
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint, metadata) VALUES ($1, '', $2, '{}')",
    )
    .bind(T1)
    .bind(doc(&cur, 2, None, &[]))
    .execute(&mut conn)
    .await
    .unwrap();
    // ShallowPostgresSaver loads every __pregel_tasks write of the namespace.
    for (cp, task, idx, arg) in [(&old, "b", 0, 2), (&cur, "a", 1, 1), (&cur, "a", 0, 0)] {
        sqlx::query(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
             VALUES ($1, '', $2, $3, $4, '__pregel_tasks', 'msgpack', $5, '')",
        )
        .bind(T1)
        .bind(cp)
        .bind(task)
        .bind(idx)
        .bind(mp(&send("w", arg)))
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    let sends: Vec<Decoded> = t
        .checkpoint
        .pending_sends
        .clone()
        .unwrap()
        .iter()
        .map(|s| (**s).clone())
        .collect();
    assert_eq!(
        sends,
        vec![msg(send("w", 0)), msg(send("w", 1)), msg(send("w", 2))]
    );
    assert_eq!(t.pending_writes.len(), 2);
    assert!(value(&t, "__pregel_tasks").is_none());
}
