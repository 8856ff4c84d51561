//! A Postgres server that stops answering after the handshake (a hung server, a stalled
//! network, a proxy) never makes Flashback wait without end: connecting honours libpq's
//! `connect_timeout`, every statement and read has the location's limit (`statement_timeout`
//! in libpq's `options`), and a stall ends in one line naming the server and what was being
//! read. Through flashback-testkit's stalling proxy in front of the test server, on the
//! database written by the real `PostgresSaver` (`tests/fixtures/postgres.sql`).

use flashback_storage::maintenance::SaverMaintenance as _;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, StoreError};
use flashback_testkit::stall::{Stall, StallProxy};
use flashback_testkit::{postgres_fixture_or_skip, TestPg};
use std::time::{Duration, Instant};

/// The fixture's thread, and a checkpoint of it.
const THREAD: &str = "reducers";
const CHECKPOINT: &str = "1f1e641f-0225-6e26-8000-780199fed32f";

/// The proxy's URL with one-second limits: connecting (and waiting for a pooled connection,
/// which pings it) and each statement (libpq's `connect_timeout` and `options`).
fn one_second(proxy: &StallProxy, pg: &TestPg) -> String {
    format!(
        "{}&connect_timeout=1&options=-c%20statement_timeout%3D1s",
        proxy.url(pg.url())
    )
}

/// Run `f`, returning its error and how long it took.
async fn timed<T: std::fmt::Debug>(
    f: impl std::future::Future<Output = Result<T, StoreError>>,
) -> (StoreError, Duration) {
    let started = Instant::now();
    let e = f.await.expect_err("the read should have timed out");
    (e, started.elapsed())
}

/// The fixture, a forwarding proxy in front of it, and a store opened through the proxy with
/// one-second limits.
async fn through_proxy() -> Option<(TestPg, StallProxy, PostgresStore)> {
    let pg = postgres_fixture_or_skip().await?;
    let proxy = StallProxy::start_for(pg.url(), Stall::Never).expect("proxy");
    let store = PostgresStore::connect(&one_second(&proxy, &pg))
        .await
        .expect("connect through the proxy");
    Some((pg, proxy, store))
}

fn about_one_second(took: Duration, what: &str) {
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{what} took {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_end_in_one_line_when_the_server_stalls() {
    let Some((pg, proxy, store)) = through_proxy().await else {
        return;
    };
    let threads = store
        .list_threads()
        .await
        .expect("threads before the stall");
    assert!(threads.iter().any(|t| t.thread_id == THREAD));
    let server = format!("Postgres at 127.0.0.1:{}/{}", proxy.port(), pg.database());

    proxy.stall_now();
    let (e, took) = timed(store.list_threads()).await;
    about_one_second(took, "the thread list");
    assert_eq!(e.code(), "timeout");
    assert_eq!(
        e.to_string(),
        format!("{server} did not answer within 1 s while reading the thread list")
    );
    let (e, took) = timed(store.get_tuple(THREAD, "", Some(CHECKPOINT))).await;
    about_one_second(took, "a checkpoint");
    assert_eq!(
        e.to_string(),
        format!(
            "{server} did not answer within 1 s while reading checkpoint {CHECKPOINT} of thread \
             {THREAD}"
        )
    );
    let (e, _) = timed(store.thread_writes(THREAD)).await;
    assert!(
        e.to_string().ends_with(&format!(
            "while reading the pending writes of thread {THREAD}"
        )),
        "{e}"
    );

    // Once the server answers again, the same store reads correctly: the connections left
    // mid-statement were not handed out again as they were.
    proxy.resume();
    let direct = PostgresStore::connect(pg.url()).await.expect("direct");
    let want = direct
        .get_tuple(THREAD, "", Some(CHECKPOINT))
        .await
        .unwrap();
    for _ in 0..6 {
        assert_eq!(
            store.get_tuple(THREAD, "", Some(CHECKPOINT)).await.unwrap(),
            want
        );
        assert_eq!(store.list_threads().await.unwrap(), threads);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_ends_in_one_line_when_the_server_stalls_after_the_handshake() {
    let Some(pg) = postgres_fixture_or_skip().await else {
        return;
    };
    // The handshake ends with the server's first ReadyForQuery; nothing after it arrives.
    let proxy = StallProxy::start_for(pg.url(), Stall::AfterReady(1)).expect("proxy");
    let (e, took) = timed(PostgresStore::connect(&one_second(&proxy, &pg))).await;
    about_one_second(took, "opening");
    assert_eq!(
        e.to_string(),
        format!(
            "Postgres at 127.0.0.1:{}/{} did not answer within 1 s while reading which tables \
             the database holds",
            proxy.port(),
            pg.database()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_timeout_is_honoured_against_a_server_that_never_answers() {
    let proxy = StallProxy::start("127.0.0.1:9", Stall::Fully).expect("proxy");
    let url = format!(
        "postgres://flashback@127.0.0.1:{}/app?connect_timeout=1",
        proxy.port()
    );
    let (e, took) = timed(PostgresStore::connect(&url)).await;
    about_one_second(took, "connecting");
    assert_eq!(
        e.to_string(),
        format!(
            "Postgres at 127.0.0.1:{}/app did not answer within 1 s while connecting",
            proxy.port()
        )
    );
    // A connect_timeout that is not a number is refused before connecting.
    let bad = format!("{url}0s");
    let e = PostgresStore::connect(&bad).await.unwrap_err();
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    assert!(e.to_string().contains("connect_timeout \"10s\""), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cut_off_before_commit_leaves_nothing_written() {
    let Some((pg, proxy, store)) = through_proxy().await else {
        return;
    };
    // Every INSERT of the copy reaches the server; its COMMIT never does.
    proxy.stall_when_client_sends(b"COMMIT");
    let (e, took) = timed(store.copy_thread(THREAD, "copied")).await;
    about_one_second(took, "the copy");
    assert!(
        e.to_string()
            .ends_with(&format!("while copying thread {THREAD} to copied")),
        "{e}"
    );
    assert!(proxy.stalled(), "the COMMIT was not held");
    let direct = PostgresStore::connect(pg.url()).await.expect("direct");
    let copied = || async {
        let threads = direct.list_threads().await.unwrap();
        threads.iter().any(|t| t.thread_id == "copied")
    };
    assert!(!copied().await, "a copy without COMMIT is visible");
    // The proxy gone, the server ends the session and rolls the transaction back.
    drop(proxy);
    assert!(!copied().await, "the copy was committed after all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_over_the_limit_is_cancelled_by_the_server_too() {
    let Some(pg) = postgres_fixture_or_skip().await else {
        return;
    };
    let url = format!(
        "{}{}options=-c%20statement_timeout%3D1s&application_name=fb_stall_lock",
        pg.url(),
        if pg.url().contains('?') { "&" } else { "?" }
    );
    let store = PostgresStore::connect(&url).await.expect("connect");
    // Another session holds a lock the thread list waits for: the server is slow, not
    // stalled, and cancels the statement itself.
    let mut locker = pg.connect().await.expect("locker");
    sqlx::raw_sql("BEGIN; LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
        .execute(&mut locker)
        .await
        .expect("lock");
    let (e, took) = timed(store.list_threads()).await;
    about_one_second(took, "the locked thread list");
    assert!(e.is_timeout(), "{e}");
    assert!(e.to_string().contains("did not answer within 1 s"), "{e}");
    // Whichever noticed first, the server is not left waiting for the lock.
    let mut watcher = pg.connect().await.expect("watcher");
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name = 'fb_stall_lock' AND wait_event_type = 'Lock'",
        )
        .fetch_one(&mut watcher)
        .await
        .expect("pg_stat_activity");
        if waiting == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the statement still waits on the server"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut locker)
        .await
        .expect("unlock");
    assert!(!store.list_threads().await.unwrap().is_empty());
}
