//! Every TCP connection to Postgres has Nagle's algorithm off (`TCP_NODELAY`), as libpq and
//! sqlx 0.8 do. sqlx 0.9.0 dropped it (vendor/README.md): over TLS each query then waited for
//! the server's delayed ACK, ~40 ms a round trip. Checked on the sockets themselves: this
//! process's descriptors are duplicated with `pidfd_getfd` (Linux ≥ 5.6) and asked.

#![cfg(target_os = "linux")]

use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointSaver, CheckpointStore};
use rustix::fd::OwnedFd;
use rustix::process::{getpid, pidfd_getfd, pidfd_open, PidfdFlags, PidfdGetfdFlags};

/// This process's TCP sockets connected to `port`, with their `TCP_NODELAY` setting.
fn sockets_to(port: u16) -> Vec<(i32, bool)> {
    let pidfd = pidfd_open(getpid(), PidfdFlags::empty()).expect("pidfd_open");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd") {
        let entry = entry.expect("fd entry");
        let is_socket = std::fs::read_link(entry.path())
            .map(|l| l.to_string_lossy().starts_with("socket:"))
            .unwrap_or(false);
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if !is_socket {
            continue;
        }
        let Ok(dup): Result<OwnedFd, _> = pidfd_getfd(&pidfd, fd, PidfdGetfdFlags::empty()) else {
            continue;
        };
        let peer = rustix::net::getpeername(&dup).ok().flatten();
        let peer_port = peer.and_then(|a| std::net::SocketAddr::try_from(a).ok());
        if peer_port.map(|a| a.port()) == Some(port) {
            if let Ok(nodelay) = rustix::net::sockopt::tcp_nodelay(&dup) {
                out.push((fd, nodelay));
            }
        }
    }
    out
}

#[tokio::test]
async fn connections_to_postgres_disable_nagle() {
    let pg = flashback_testkit::pg_or_skip!();
    let port = url_port(pg.url());
    // Queries over the pool: creating LangGraph's tables, then reading them.
    let store = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect");
    store.setup().await.expect("setup");
    store.list_threads().await.expect("a query on the pool");
    let sockets = sockets_to(port);
    assert!(!sockets.is_empty(), "no TCP socket to port {port} found");
    for (fd, nodelay) in sockets {
        assert!(nodelay, "fd {fd}: TCP_NODELAY is off");
    }
}

/// The port of the test server's URL (5432 when none is given).
fn url_port(url: &str) -> u16 {
    let url = flashback_storage::pgurl::PgUrl::parse(url).expect("the test URL");
    url.host()
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or(5432)
}
