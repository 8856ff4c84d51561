//! Unusual and hostile inputs at the API's door: what cannot be a database file is refused
//! before anything opens it (a FIFO would block forever), bundles to verify are bounded, a
//! Postgres URL that names nothing is bad input, and the largest history limit works.

use crate::common;
use common::*;
use flashback_api::*;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Runs `fut` as a task of its own and waits 10 s for it. A call blocked on a FIFO blocks its
/// thread, and a runtime cannot shut down around it: rather than hang, the test binary then
/// exits with this line.
async fn within<T: Send + 'static>(
    what: &str,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    match tokio::time::timeout(Duration::from_secs(10), tokio::spawn(fut)).await {
        Ok(done) => done.expect("the call's task"),
        Err(_) => {
            // Past the test harness's capture, which an exit would swallow.
            let _ = writeln!(std::io::stderr(), "{what} blocked for 10 s (on a FIFO?)");
            std::process::exit(101)
        }
    }
}

fn open_req(location: &str) -> OpenRequest {
    OpenRequest {
        location: location.to_owned(),
        password: None,
        remember: false,
        save_password: false,
    }
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_or_a_directory_is_refused_before_it_is_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = Arc::new(api_in(dir.path(), Initial::None));
    let fifo = dir.path().join("pipe.sqlite");
    mkfifo(&fifo);
    let fifo_str = fifo.to_string_lossy().into_owned();
    let open = |location: String| {
        let api = Arc::clone(&api);
        async move { api.open_database(open_req(&location)).await }
    };
    let e = within("open_database(FIFO)", open(fifo_str.clone()))
        .await
        .expect_err("a FIFO is no database");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e}");
    assert!(e.message.contains("FIFO"), "{e}");
    assert!(e.message.contains("not a regular file"), "{e}");

    let e = within(
        "open_database(dir)",
        open(dir.path().to_string_lossy().into_owned()),
    )
    .await
    .expect_err("a directory without a langgraph dev state folder is no database");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e}");
    assert!(
        e.message
            .contains("is a folder without a .langgraph_api folder: not a langgraph dev project"),
        "{e}"
    );

    let verify = {
        let (api, path) = (Arc::clone(&api), fifo_str.clone());
        async move {
            api.verify_export(VerifyRequest {
                path: Some(path),
                content: None,
            })
            .await
        }
    };
    let e = within("verify_export(FIFO)", verify)
        .await
        .expect_err("a FIFO is no bundle");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e}");
    assert!(e.message.contains("FIFO"), "{e}");

    // The same through dispatch (what `flashback serve` calls) and as the initial database.
    let dispatched = {
        let (api, path) = (Arc::clone(&api), fifo_str.clone());
        async move {
            let args = serde_json::json!({"req": {"location": path, "remember": false}});
            api.dispatch("open_database", &args).await
        }
    };
    let e = within("dispatch", dispatched)
        .await
        .expect_err("FIFO over dispatch");
    assert!(e.message.contains("FIFO"), "{e}");
    let served = api_in(dir.path(), Initial::Location(fifo_str));
    let info = within("app_info", async move { served.app_info().await })
        .await
        .expect("app_info");
    assert!(info.initial.is_none());
    let initial_error = info.initial_error.expect("initial error");
    assert!(initial_error.message.contains("FIFO"), "{initial_error}");
}

#[tokio::test]
async fn bundles_to_verify_are_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    // A sparse file just over the bound: refused from its size, never read.
    let huge = dir.path().join("huge.json");
    let f = std::fs::File::create(&huge).expect("create");
    f.set_len(MAX_BUNDLE_BYTES + 1).expect("set_len");
    let e = api
        .verify_export(VerifyRequest {
            path: Some(huge.to_string_lossy().into_owned()),
            content: None,
        })
        .await
        .expect_err("too big");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("up to 256.0 MB"), "{e}");

    let e = api
        .verify_export(VerifyRequest {
            path: Some(
                dir.path()
                    .join("missing.json")
                    .to_string_lossy()
                    .into_owned(),
            ),
            content: None,
        })
        .await
        .expect_err("missing");
    assert_eq!(e.code, ErrorCode::NotFound);

    // Binary junk is not a bundle, and says so in one line.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, [0xff_u8, 0xfe, 0x00, 0x01]).expect("write");
    let e = api
        .verify_export(VerifyRequest {
            path: Some(junk.to_string_lossy().into_owned()),
            content: None,
        })
        .await
        .expect_err("junk");
    assert!(e.message.contains("not text"), "{e}");
}

#[tokio::test]
async fn a_postgres_url_that_names_nothing_is_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    for url in ["postgres://", "postgresql:///", "postgres://u:%zz@h/db"] {
        let e = api.open_database(open_req(url)).await.expect_err(url);
        assert_eq!(e.code, ErrorCode::InvalidInput, "{url}: {e}");
        assert_eq!(e.message.lines().count(), 1, "{e}");
    }
}

#[tokio::test]
async fn the_largest_history_limit_is_accepted() {
    let OpenedFixture { api, db, .. } = opened_fixture().await;
    let all = api
        .thread_history(HistoryRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_ns: Some(String::new()),
            limit: Some(u32::MAX),
            before: None,
            filter: Default::default(),
        })
        .await
        .expect("u32::MAX");
    assert_eq!(all.len(), 300);
    // Past u32 it is refused as bad arguments, never passed to SQL.
    let e = api
        .dispatch(
            "thread_history",
            &serde_json::json!({"req": {"db": db.db, "thread_id": "long", "limit": 18446744073709551615_u64}}),
        )
        .await
        .expect_err("too large");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e}");
}
