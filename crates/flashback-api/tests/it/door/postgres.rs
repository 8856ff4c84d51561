//! The command surface over Postgres: the fixture dump on the test server, and passwords on a
//! throwaway scram-sha-256 cluster (asked for, kept in the keyring, never in a file).

use crate::common;
use common::*;
use flashback_api::*;
use flashback_testkit::cluster::Cluster;

const PASSWORD: &str = "Pg-Secret-4-flashback-api";

#[tokio::test]
async fn browse_fork_and_export_on_postgres() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::Location(pg.url().to_owned()));
    let info = api.app_info().await.expect("info");
    let db = info.initial.expect("opened from the command line");
    assert_eq!(db.kind, DbKind::Postgres);
    assert!(
        db.schema.contains("9") || !db.schema.is_empty(),
        "{}",
        db.schema
    );
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert_eq!(threads.len(), 12);
    let g = api
        .thread_graph(GraphRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            collapsed: vec![],
        })
        .await
        .expect("graph");
    let d = api
        .checkpoint_detail(CheckpointRequest {
            live: None,
            page: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: Some(g.rows[3].id.clone()),
            reveal_secrets: false,
            full: false,
            raw: false,
            reducers: Default::default(),
            allow_locked: false,
        })
        .await
        .expect("detail");
    assert!(!d.values.is_empty());
    let fork = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: g.rows[3].id.clone(),
            edits: vec![],
        })
        .await
        .expect("fork");
    let g2 = api
        .thread_graph(GraphRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            collapsed: vec![],
        })
        .await
        .expect("graph");
    assert_eq!(g2.rows[0].id, fork.checkpoint_id);
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_id: Some(fork.checkpoint_id.clone()),
            format: ExportFormat::Json,
            redact: vec![],
            path: None,
            decrypt: false,
        })
        .await
        .expect("export");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    let report = api
        .verify_export(VerifyRequest {
            path: None,
            content: result.content,
        })
        .await
        .expect("verify");
    assert!(report.ok, "{:?}", report.problems);
    // The recent list holds the URL (this server needs no password).
    let recent = api.recent_connections().await.expect("recent");
    assert_eq!(recent[0].kind, DbKind::Postgres);
}

#[tokio::test]
async fn passwords_are_asked_for_kept_in_the_keyring_and_never_written_to_files() {
    if let Some(reason) = Cluster::unavailable_reason() {
        if flashback_testkit::require_postgres() {
            panic!("PostgreSQL is required, but no throwaway cluster can be started: {reason}");
        }
        eprintln!("skipping passwords_are_asked_for…: {reason}");
        return;
    }
    let mut cluster = tokio::task::spawn_blocking(|| Cluster::start_with_password(PASSWORD))
        .await
        .expect("join")
        .unwrap_or_else(|reason| panic!("password-protected cluster failed: {reason}"));
    let dump = std::fs::read_to_string(fixtures().join("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(&cluster.admin_url(), &dump)
        .await
        .expect("load");
    let no_password = cluster.url_as("postgres", None);

    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let e = api
        .open_database(OpenRequest {
            location: no_password.clone(),
            password: None,
            remember: true,
            save_password: false,
        })
        .await
        .expect_err("a password is needed");
    assert_eq!(e.code, ErrorCode::NeedsPassword, "{e}");
    let e = api
        .open_database(OpenRequest {
            location: no_password.clone(),
            password: Some("wrong-one".into()),
            remember: true,
            save_password: false,
        })
        .await
        .expect_err("a wrong password");
    assert_eq!(e.code, ErrorCode::Auth, "{e}");
    assert!(!e.message.contains("wrong-one"), "{e}");

    let db = api
        .open_database(OpenRequest {
            location: no_password.clone(),
            password: Some(PASSWORD.into()),
            remember: true,
            save_password: true,
        })
        .await
        .expect("the right password");
    assert!(!db.location.contains(PASSWORD));
    let recent = api.recent_connections().await.expect("recent");
    assert_eq!(recent.len(), 1);
    assert!(recent[0].has_saved_password, "in the keyring");
    assert!(!recent[0].location.contains(PASSWORD));
    // Reopen without typing it.
    let again = api
        .open_recent(OpenRecentRequest {
            id: recent[0].id,
            password: None,
            save_password: false,
        })
        .await
        .expect("the keyring answers");
    assert_eq!(again.kind, DbKind::Postgres);
    // A URL with the password in it: stored without it.
    let with_pw = cluster.url_as("postgres", Some(PASSWORD));
    let db2 = open(&api, &with_pw).await;
    assert!(!db2.location.contains(PASSWORD), "{}", db2.location);

    // Nothing in the data directory holds the password.
    for entry in walk(&dir.path().join("data")) {
        let bytes = std::fs::read(&entry).expect("read");
        assert!(
            !bytes
                .windows(PASSWORD.len())
                .any(|w| w == PASSWORD.as_bytes()),
            "{} contains the password",
            entry.display()
        );
    }
    tokio::task::spawn_blocking(move || cluster.stop())
        .await
        .expect("join");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("ls").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
