//! One bad row never takes a database down: through every read command, on SQLite and on
//! Postgres, a damaged checkpoint is shown in place with its reason and the rest of its thread
//! (and every other thread) stays usable; writes refuse to start from it.
//!
//! The fixture (SQLite copy, or the Postgres dump on the test server) is damaged in place: the
//! `chat-tools` thread's latest checkpoint, and one checkpoint in the middle of a `forked`
//! branch. SQLite also gets a thread id stored as a BLOB and a string that is not UTF-8 inside
//! `rich-types`' latest state. Before, the thread list (every status), `forked`'s graph,
//! history, replay, rebuild, merge preview and export all failed.

use crate::common;
use common::*;
use flashback_api::*;
use rusqlite::Connection;

/// The checkpoints the tests damage and look at, by their place in the fixture (the two
/// fixtures hold the same threads, under different ids).
struct Marks {
    /// `chat-tools`' latest checkpoint (damaged).
    chat_latest: String,
    /// The 4th oldest `forked` checkpoint: mid-branch (damaged).
    bad: String,
    /// Its parent and its child on the same branch.
    parent: String,
    child: String,
    /// `forked`'s head, on another branch.
    forked_latest: String,
}

/// `SELECT … ORDER BY checkpoint_id` of the root checkpoints of a thread.
const ROOT_IDS: &str = "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id";

impl Marks {
    fn from_ids(chat: Vec<String>, forked: Vec<String>) -> Marks {
        Marks {
            chat_latest: chat.last().expect("chat-tools").clone(),
            parent: forked[2].clone(),
            bad: forked[3].clone(),
            child: forked[4].clone(),
            forked_latest: forked.last().expect("forked").clone(),
        }
    }

    fn of_sqlite(conn: &Connection) -> Marks {
        let ids = |thread: &str| -> Vec<String> {
            let mut stmt = conn.prepare(&ROOT_IDS.replace("$1", "?")).expect("prepare");
            stmt.query_map([thread], |r| r.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("ids")
        };
        Marks::from_ids(ids("chat-tools"), ids("forked"))
    }

    async fn of_postgres(conn: &mut sqlx::PgConnection) -> Marks {
        let mut ids = Vec::new();
        for thread in ["chat-tools", "forked"] {
            let rows: Vec<(String,)> = sqlx::query_as(ROOT_IDS)
                .bind(thread)
                .fetch_all(&mut *conn)
                .await
                .expect("ids");
            ids.push(rows.into_iter().map(|(id,)| id).collect::<Vec<_>>());
        }
        let forked = ids.pop().expect("forked");
        Marks::from_ids(ids.pop().expect("chat"), forked)
    }
}

/// The first string of at least 4 bytes inside a value (depth first).
fn first_string(v: &flashback_codec::Value) -> Option<String> {
    use flashback_codec::Value;
    match v {
        Value::Str(s) if s.len() >= 4 => Some(s.to_string()),
        Value::Array(items) => items.iter().find_map(first_string),
        Value::Map(entries) => entries.iter().find_map(|(_, v)| first_string(v)),
        Value::Object(o) => first_string(&o.payload),
        _ => None,
    }
}

/// Everything that reads, against a database damaged as described above.
async fn reads_stay_local(api: &Api, db: &DbInfo, m: &Marks) {
    let (bad, child) = (m.bad.clone(), m.child.clone());
    // The thread list: every thread, the damaged one marked, the others' statuses intact.
    let req = ThreadsRequest {
        db: db.db.clone(),
        limit: None,
        ..Default::default()
    };
    let threads = api.list_threads(req).await.expect("the thread list");
    let chat = threads
        .iter()
        .find(|t| t.thread_id == "chat-tools")
        .expect("chat-tools is listed");
    assert!(chat.status.is_none());
    let problem = chat.problem.as_deref().unwrap_or_default();
    assert!(
        problem.starts_with(
            "its latest checkpoint cannot be read: the checkpoint document cannot be read"
        ),
        "{problem}"
    );
    assert_eq!(chat.latest_checkpoint_id, Some(m.chat_latest.clone()));
    for ok in [
        "forked",
        "long",
        "interrupt-waiting",
        "parallel-failure",
        "subgraph",
    ] {
        let t = threads.iter().find(|t| t.thread_id == ok).expect(ok);
        assert!(t.status.is_some() && t.problem.is_none(), "{ok}: {t:?}");
    }

    // State of the damaged checkpoint: the reason in place, metadata kept, no values.
    let d = detail(api, db, "forked", "", &bad).await;
    assert!(d
        .problem
        .as_deref()
        .is_some_and(|p| p.starts_with("the checkpoint document cannot be read")));
    assert!(d.values.is_empty());
    assert_eq!(d.parent_checkpoint_id, Some(m.parent.clone()));
    assert!(d.step.is_some(), "metadata is still read");
    // A page of it says why there is none, in one line (not "no channel").
    let page = StatePageRequest {
        checkpoint_id: Some(bad.clone()),
        ..super::state_page::ask(db, "forked", "messages")
    };
    let e = api
        .state_page(page)
        .await
        .expect_err("a damaged checkpoint");
    assert_eq!(e.code, ErrorCode::Corrupt, "{e:?}");
    assert!(
        e.message
            .starts_with("this checkpoint cannot be read: the checkpoint document"),
        "{}",
        e.message
    );
    // Its neighbours are whole.
    let next = detail(api, db, "forked", "", &child).await;
    assert!(next.problem.is_none() && !next.values.is_empty());

    // The DAG keeps every checkpoint and its links, and names the damaged one.
    let g = graph(api, db, "forked").await;
    assert_eq!(g.rows.len(), 14);
    assert_eq!(g.unreadable.len(), 1);
    assert_eq!(g.unreadable[0].checkpoint_id, bad);
    assert!(g.warnings.is_empty(), "no orphan: {:?}", g.warnings);

    // History marks it.
    let history = api
        .thread_history(HistoryRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: None,
            limit: None,
            before: None,
            filter: Default::default(),
        })
        .await
        .expect("history");
    assert_eq!(history.len(), 14);
    assert_eq!(history.iter().filter(|h| h.problem.is_some()).count(), 1);

    // Replay through it: the step is there with its reason, the others as before.
    let tip = m.child.clone();
    let steps = api
        .replay_steps(ReplayRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            tip: Some(tip.clone()),
        })
        .await
        .expect("replay");
    assert_eq!(steps.len(), 5);
    let marked: Vec<&str> = steps
        .iter()
        .filter(|s| s.problem.is_some())
        .map(|s| s.checkpoint_id.as_str())
        .collect();
    assert_eq!(marked, [bad.as_str()]);
    assert!(
        !steps[1].changed_channels.is_empty(),
        "sound steps still diff"
    );

    // Rebuild: steps next to it are not checked (and say so), the others are.
    let report = api
        .rebuild_report(RebuildRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            tip: Some(tip.clone()),
        })
        .await
        .expect("rebuild");
    assert!(
        report.iter().any(|r| !r.unreadable.is_empty()),
        "{report:?}"
    );
    assert!(report.iter().any(|r| r.consistent_steps > 0), "{report:?}");

    // Merge preview with the damaged checkpoint as A: its side shows the reason in place.
    let other_tip = m.forked_latest.clone();
    let three = api
        .merge_preview(MergePreviewRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: bad.clone(),
            from: other_tip.clone(),
            channels: vec![],
        })
        .await
        .expect("merge preview");
    assert!(!three.is_empty());
    for w in &three {
        let a = w.a.as_ref().expect("a placeholder");
        assert!(
            a["$error"]
                .as_str()
                .is_some_and(|e| e.contains("cannot be read")),
            "{a}"
        );
        assert!(w.b.is_some() || w.control, "B's values are shown: {w:?}");
    }

    // Export the whole tree: every checkpoint, the damaged one marked, the bundle verifies.
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: None,
            decrypt: false,
        })
        .await
        .expect("start export");
    let done = finish(api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert_eq!(result.checkpoints, 14);
    let content = result.content.expect("content");
    let bundle: serde_json::Value = serde_json::from_str(&content).expect("json");
    let entries = bundle["checkpoints"].as_array().expect("entries");
    let marked: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e.get("problem").is_some())
        .collect();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0]["checkpoint_id"], bad.as_str());
    let verified = api
        .verify_export(VerifyRequest {
            path: None,
            content: Some(content),
        })
        .await
        .expect("verify");
    assert!(verified.ok, "{:?}", verified.problems);
}

/// Writes never start from what could not be read.
async fn writes_refuse_it(api: &Api, db: &DbInfo, m: &Marks) {
    let bad = m.bad.clone();
    let err = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: bad.clone(),
            edits: vec![],
        })
        .await
        .expect_err("a fork of it is refused");
    assert_eq!(err.code, ErrorCode::Corrupt, "{err:?}");
    assert!(err.message.contains("cannot be read"), "{}", err.message);
    // A diff against it would show everything as removed: refused with the reason too.
    let err = api
        .diff_checkpoints(DiffRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            a: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: m.parent.clone(),
            },
            b: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: bad.clone(),
            },
        })
        .await
        .expect_err("a diff with it is refused");
    assert_eq!(err.code, ErrorCode::Corrupt, "{err:?}");
    let err = api
        .merge_branches(MergeRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: m.forked_latest.clone(),
            from: bad,
            channels: vec![MergeChannel {
                channel: "messages".into(),
                mode: MergeMode::TakeB,
            }],
        })
        .await
        .expect_err("a merge from it is refused");
    assert_eq!(err.code, ErrorCode::Corrupt, "{err:?}");
}

#[tokio::test]
async fn sqlite_damage_stays_local() {
    let f = opened_fixture().await;
    let conn = Connection::open(&f.path).expect("open copy");
    let m = Marks::of_sqlite(&conn);
    conn.execute(
        "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 60) WHERE thread_id = 'chat-tools' AND checkpoint_id = ?",
        [&m.chat_latest],
    )
    .expect("truncate");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = x'92c1' WHERE thread_id = 'forked' AND checkpoint_id = ?",
        [&m.bad],
    )
    .expect("garble");
    conn.execute(
        "INSERT INTO checkpoints SELECT CAST('blob-thread' AS BLOB), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
         FROM checkpoints WHERE thread_id = 'reducers'",
        [],
    )
    .expect("blob thread");
    // A string inside rich-types' latest state stops being UTF-8.
    let rich: String = conn
        .query_row(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'rich-types'",
            [],
            |r| r.get(0),
        )
        .expect("rich-types");
    let mut doc: Vec<u8> = conn
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = 'rich-types' AND checkpoint_id = ?",
            [&rich],
            |r| r.get(0),
        )
        .expect("doc");
    let tree = flashback_codec::msgpack::decode(&doc).expect("decodes");
    let broken = first_string(tree.get("channel_values").expect("values")).expect("a string");
    let at = doc
        .windows(broken.len())
        .position(|w| w == broken.as_bytes())
        .expect("found");
    doc[at] = 0xff;
    conn.execute(
        "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'rich-types' AND checkpoint_id = ?",
        rusqlite::params![doc, rich],
    )
    .expect("break a string");
    drop(conn);

    reads_stay_local(&f.api, &f.db, &m).await;

    // The BLOB thread is listed, escaped, with its reason.
    let threads = f
        .api
        .list_threads(ThreadsRequest {
            limit: None,
            db: f.db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    let blob = threads
        .iter()
        .find(|t| t.thread_id.starts_with("⟨BLOB"))
        .expect("the BLOB thread");
    assert!(blob
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("thread_id is a BLOB")));
    // rich-types: its latest state reads, the broken string as an `$error` in place.
    let rich_state = detail(&f.api, &f.db, "rich-types", "", &rich).await;
    assert!(rich_state.problem.is_none());
    let text = serde_json::to_string(&rich_state.values).expect("json");
    assert_eq!(text.matches("not valid UTF-8").count(), 1, "{text}");
    assert!(rich_state.values.len() > 3);

    let before = fingerprint(&f.path);
    writes_refuse_it(&f.api, &f.db, &m).await;
    assert_eq!(fingerprint(&f.path), before, "nothing was written");
}

#[tokio::test]
async fn postgres_damage_stays_local() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let mut conn = pg.connect().await.expect("connect");
    let m = Marks::of_postgres(&mut conn).await;
    for (thread, id, doc) in [
        ("chat-tools", &m.chat_latest, "'\"a string\"'"),
        ("forked", &m.bad, "'[1, 2]'"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE checkpoints SET checkpoint = {doc}::jsonb WHERE thread_id = $1 AND checkpoint_id = $2"
        )))
        .bind(thread)
        .bind(id)
        .execute(&mut conn)
        .await
        .expect("damage");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    reads_stay_local(&api, &db, &m).await;
    writes_refuse_it(&api, &db, &m).await;
}
