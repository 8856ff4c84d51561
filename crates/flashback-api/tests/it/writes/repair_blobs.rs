//! `repair_blobs` (`flashback rebuild --repair`) on the fixture converted to the three-table
//! store: damaged blob rows — missing, undecodable, and the deltas built on them — are rebuilt
//! from the writes and read back as the original; a row no step's writes produced says why and
//! stays as it is; a dry run writes nothing; LangGraph's schema is refused with one line.

use crate::common;
use common::three::{checkpoints, convert, converted_to_pg};
use common::*;
use flashback_api::*;
use rusqlite::params;
use serde_json::Value as Json;

fn version_text(v: &Json) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// `(checkpoint_id, source, channel_versions)` of a thread's root checkpoints, oldest first.
async fn versions(api: &Api, db: &DbInfo, thread: &str) -> Vec<(String, String, Json)> {
    let history = root_history(api, db, thread).await;
    let mut out = Vec::new();
    for h in history.into_iter().rev() {
        let d = detail(api, db, thread, "", &h.checkpoint_id).await;
        out.push((
            h.checkpoint_id,
            h.source.unwrap_or_default(),
            d.channel_versions,
        ));
    }
    out
}

async fn repair(api: &Api, db: &DbInfo, thread: &str, dry_run: bool) -> RepairReport {
    api.repair_blobs(RepairRequest {
        db: db.db.clone(),
        thread_id: thread.into(),
        dry_run,
    })
    .await
    .expect("repair")
}

#[tokio::test]
async fn damaged_rows_are_rebuilt_from_the_writes_and_read_as_before() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;
    let path = dir.path().join("three.sqlite");
    let done = convert(&api, &db.db, &path, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let original: Vec<_> = checkpoints(&api, &db.db).await;
    let three = open(&api, path.to_str().expect("utf-8")).await;

    // Nothing is damaged yet.
    let clean = repair(&api, &three, "chat-tools", true).await;
    assert!(clean.damaged.is_empty() && clean.left == 0, "{clean:?}");

    // Damage chat-tools' messages at the end of its second turn: the head's version deleted,
    // and the agent's tool call two steps before made undecodable, which breaks the ToolNode's
    // version built on it as a delta.
    let chat = versions(&api, &three, "chat-tools").await;
    let mut messages: Vec<String> = chat
        .iter()
        .filter_map(|(_, _, v)| v.get("messages").map(version_text))
        .collect();
    messages.dedup();
    let n = messages.len();
    let (call, head) = (&messages[n - 3], &messages[n - 1]);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let hash = "d41d8cd98f00b204e9800998ecf8427e";
    let row = "thread_id = 'chat-tools' AND checkpoint_ns_hash = ?1 AND channel = 'messages' \
               AND version = ?2";
    let changed = conn
        .execute(
            &format!("UPDATE checkpoint_blobs SET blob_data = x'c1' WHERE {row}"),
            params![hash, call],
        )
        .expect("corrupt");
    assert_eq!(changed, 1);
    let changed = conn
        .execute(
            &format!("DELETE FROM checkpoint_blobs WHERE {row}"),
            params![hash, head],
        )
        .expect("delete");
    assert_eq!(changed, 1);

    // The preview: the three versions, oldest first, each rebuilt with add_messages.
    let dry = repair(&api, &three, "chat-tools", true).await;
    let got: Vec<(&str, &str)> = dry
        .damaged
        .iter()
        .map(|d| (d.version.as_str(), d.problem.as_str()))
        .collect();
    assert_eq!(got.len(), 3, "{dry:#?}");
    assert_eq!(got[0].0, call.as_str());
    // A delta that does not apply; the one built on it breaks with it.
    assert!(got[0].1.contains("does not apply"), "{got:?}");
    assert!(got[1].1.contains(&format!("{call:?}")), "{got:?}");
    assert_eq!(got[2], (head.as_str(), "no blob row"));
    for d in &dry.damaged {
        assert_eq!(d.channel, "messages");
        assert_eq!(d.cannot, None, "{d:?}");
        assert_eq!(d.reducer, Some(Reducer::AddMessages), "{d:?}");
        assert!(d.writes >= 1 && d.preview.is_some(), "{d:?}");
    }
    // Every message's id is in the writes (LangGraph gives ids before it stores them).
    assert!(dry.damaged.iter().all(|d| d.note.is_none()), "{dry:#?}");
    assert!(dry.dry_run && dry.repaired == 0 && dry.left == 0, "{dry:?}");
    assert_eq!(
        repair(&api, &three, "chat-tools", true).await.damaged.len(),
        3,
        "a dry run writes nothing"
    );

    // The repair: one transaction, nothing left, and the thread reads as the original.
    let fixed = repair(&api, &three, "chat-tools", false).await;
    assert_eq!((fixed.repaired, fixed.left), (3, 0), "{fixed:?}");
    let after = checkpoints(&api, &three.db).await;
    let of = |all: &[(String, String, Json)]| -> Vec<(String, String, Json)> {
        all.iter()
            .filter(|(t, _, _)| t == "chat-tools")
            .cloned()
            .collect()
    };
    assert_eq!(of(&after), of(&original), "chat-tools after the repair");
    assert!(repair(&api, &three, "chat-tools", true)
        .await
        .damaged
        .is_empty());

    // The first (whole) version made undecodable: every delta after it breaks with it, but
    // only it is rewritten; the deltas read again through it.
    let changed = conn
        .execute(
            &format!("UPDATE checkpoint_blobs SET blob_data = x'c1' WHERE {row}"),
            params![hash, &messages[0]],
        )
        .expect("corrupt the base");
    assert_eq!(changed, 1);
    let dry = repair(&api, &three, "chat-tools", true).await;
    // (The three rows rewritten whole above do not build on it any more.)
    assert_eq!(dry.damaged.len(), messages.len() - 3, "{dry:#?}");
    assert!(dry.damaged[0].reducer.is_some() && dry.damaged[0].cause.is_none());
    for d in &dry.damaged[1..] {
        assert_eq!(d.cause.as_deref(), Some(messages[0].as_str()), "{d:?}");
        assert_eq!(d.cannot, None, "{d:?}");
    }
    assert_eq!(dry.left, 0, "{dry:?}");
    let fixed = repair(&api, &three, "chat-tools", false).await;
    assert_eq!((fixed.left, fixed.repaired >= 1), (0, true), "{fixed:?}");
    assert_eq!(of(&checkpoints(&api, &three.db).await), of(&original));

    // A version written by update_state has no writes that produced it: said, left alone.
    let forked = versions(&api, &three, "forked").await;
    let (id, _, vs) = forked
        .iter()
        .find(|(_, s, _)| s == "update")
        .expect("an update_state checkpoint");
    let parent = detail(&api, &three, "forked", "", id)
        .await
        .parent_checkpoint_id
        .expect("parent");
    let parent_vs = detail(&api, &three, "forked", "", &parent)
        .await
        .channel_versions;
    let (channel, version) = vs
        .as_object()
        .expect("versions")
        .iter()
        .find(|(c, v)| parent_vs.get(c.as_str()) != Some(v) && !c.starts_with("branch:"))
        .map(|(c, v)| (c.clone(), version_text(v)))
        .expect("a channel the update wrote");
    conn.execute(
        "DELETE FROM checkpoint_blobs WHERE thread_id = 'forked' AND channel = ?1 \
         AND version = ?2",
        params![channel, version],
    )
    .expect("delete");
    let report = repair(&api, &three, "forked", false).await;
    let d = report
        .damaged
        .iter()
        .find(|d| d.channel == channel)
        .expect("reported");
    assert!(
        d.cannot
            .as_deref()
            .is_some_and(|c| c.contains("update_state")),
        "{d:?}"
    );
    assert_eq!(
        report.left as usize,
        report.damaged.len() - report.repaired as usize
    );
    let shown = detail(&api, &three, "forked", "", id).await;
    assert!(
        shown
            .problem
            .as_deref()
            .is_some_and(|p| p.contains(&channel)),
        "still shown damaged in place: {:?}",
        shown.problem
    );

    // LangGraph's schema keeps values in place: refused with one line, nothing written.
    let e = api
        .repair_blobs(RepairRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            dry_run: true,
        })
        .await
        .expect_err("LangGraph's schema");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(
        e.message.contains("three-table") && !e.message.contains('\n'),
        "{}",
        e.message
    );
    // An unknown thread is not found.
    let e = api
        .repair_blobs(RepairRequest {
            db: three.db.clone(),
            thread_id: "nope".into(),
            dry_run: true,
        })
        .await
        .expect_err("unknown thread");
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn a_postgres_three_table_store_is_repaired_the_same_way() {
    let pg = flashback_testkit::pg_or_skip!();
    let f = opened_fixture().await;
    let three = converted_to_pg(&f, pg.url()).await;
    let OpenedFixture { dir: _dir, api, .. } = f;
    let head = versions(&api, &three, "chat-tools").await;
    let (id, _, vs) = head.last().expect("a head");
    let before = detail(&api, &three, "chat-tools", "", id).await.values;
    let version = version_text(&vs["messages"]);
    let pool = pg.pool().await.expect("pool");
    let gone = sqlx::query(
        "DELETE FROM checkpoint_blobs WHERE thread_id = 'chat-tools' AND channel = 'messages' \
         AND version = $1",
    )
    .bind(&version)
    .execute(&pool)
    .await
    .expect("damage")
    .rows_affected();
    assert_eq!(gone, 1);
    assert!(detail(&api, &three, "chat-tools", "", id)
        .await
        .problem
        .is_some());

    let dry = repair(&api, &three, "chat-tools", true).await;
    assert_eq!(dry.damaged.len(), 1, "{dry:#?}");
    assert_eq!(dry.damaged[0].reducer, Some(Reducer::AddMessages));
    let fixed = repair(&api, &three, "chat-tools", false).await;
    assert_eq!((fixed.repaired, fixed.left), (1, 0), "{fixed:?}");
    let after = detail(&api, &three, "chat-tools", "", id).await;
    assert_eq!((after.problem, after.values), (None, before));
}
