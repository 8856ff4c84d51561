//! A Postgres server that stops answering after the handshake: the CLI exits 1 in about the
//! location's time limit with one line naming the server and the read, and `flashback serve`
//! answers `open_database` with `{code: "timeout"}` in that time while it keeps answering
//! other requests. Through flashback-testkit's stalling proxy, on the database written by the
//! real `PostgresSaver`; short limits come from the URL (libpq's `connect_timeout` and
//! `options=-c statement_timeout=…`).

use crate::common;
use common::flashback;
use common::server::*;
use flashback_testkit::stall::{Stall, StallProxy};
use flashback_testkit::{postgres_fixture_or_skip, TestPg};
use serde_json::json;
use std::time::{Duration, Instant};

/// The proxy's URL with both limits at `seconds`.
fn limited(proxy: &StallProxy, pg: &TestPg, seconds: u32) -> String {
    format!(
        "{}&connect_timeout={seconds}&options=-c%20statement_timeout%3D{seconds}s",
        proxy.url(pg.url())
    )
}

/// Run the CLI: its exit code, its stderr and how long it took.
fn run(args: &[&str]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let out = flashback(args);
    let took = started.elapsed();
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout on failure: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        took,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_ends_a_stall_in_one_line() {
    let Some(pg) = postgres_fixture_or_skip().await else {
        return;
    };
    // The whole server stalls right after each handshake.
    let proxy = StallProxy::start_for(pg.url(), Stall::AfterReady(1)).expect("proxy");
    let url = limited(&proxy, &pg, 1);
    let server = format!("Postgres at 127.0.0.1:{}/{}", proxy.port(), pg.database());
    for args in [
        vec!["threads", url.as_str()],
        vec!["threads", "--json", url.as_str()],
    ] {
        let (code, stderr, took) = run(&args);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "flashback: {server} did not answer within 1 s while reading which tables the \
                 database holds\n"
            )
        );
        assert!(took < Duration::from_secs(6), "{args:?} took {took:?}");
    }

    // Opened in time, then the server stalls as the thread list is asked for.
    let proxy = StallProxy::start_for(pg.url(), Stall::Never).expect("proxy");
    proxy.stall_when_client_sends(b"array_agg(DISTINCT checkpoint_ns)");
    let (code, stderr, took) = run(&["threads", &limited(&proxy, &pg, 1)]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "flashback: Postgres at 127.0.0.1:{}/{} did not answer within 1 s while reading the \
             thread list\n",
            proxy.port(),
            pg.database()
        )
    );
    assert!(proxy.stalled(), "the thread list was not asked for");
    assert!(took < Duration::from_secs(6), "took {took:?}");

    // connect_timeout against a port that accepts TCP and never answers.
    let silent = StallProxy::start("127.0.0.1:9", Stall::Fully).expect("proxy");
    let url = format!(
        "postgres://flashback@127.0.0.1:{}/app?connect_timeout=1",
        silent.port()
    );
    let (code, stderr, took) = run(&["threads", &url]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "flashback: Postgres at 127.0.0.1:{}/app did not answer within 1 s while connecting\n",
            silent.port()
        )
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_a_stalled_open_in_time_and_keeps_serving() {
    let Some(pg) = postgres_fixture_or_skip().await else {
        return;
    };
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let initial = server.ok("app_info", json!(null))["initial"]["db"]
        .as_str()
        .expect("the fixture's handle")
        .to_owned();
    let proxy = StallProxy::start_for(pg.url(), Stall::AfterReady(1)).expect("proxy");
    let url = limited(&proxy, &pg, 3);
    let server = std::sync::Arc::new(server);
    let opening = {
        let server = std::sync::Arc::clone(&server);
        std::thread::spawn(move || {
            let started = Instant::now();
            let r = server.call("open_database", json!({ "location": url }));
            (r, started.elapsed())
        })
    };
    // While the open waits on the stalled server, other requests are answered at once.
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..3 {
        let started = Instant::now();
        let threads = server.ok("list_threads", json!({ "db": initial }));
        assert_eq!(threads.as_array().map(Vec::len), Some(12));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
    assert!(
        !opening.is_finished(),
        "the open did not wait for the server"
    );
    let (r, took) = opening.join().expect("open_database");
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(8),
        "took {took:?}"
    );
    assert_ne!(r.status, 200);
    let e = r.json();
    assert_eq!(e["code"], "timeout", "{e}");
    assert_eq!(
        e["message"],
        format!(
            "Postgres at 127.0.0.1:{}/{} did not answer within 3 s while reading which tables \
             the database holds",
            proxy.port(),
            pg.database()
        )
    );
    // Once the server answers again, the same location opens.
    drop(proxy);
    let proxy = StallProxy::start_for(pg.url(), Stall::Never).expect("proxy");
    let info = server.ok(
        "open_database",
        json!({ "location": limited(&proxy, &pg, 3) }),
    );
    let threads = server.ok("list_threads", json!({ "db": info["db"] }));
    assert!(threads.as_array().is_some_and(|t| !t.is_empty()));
}
