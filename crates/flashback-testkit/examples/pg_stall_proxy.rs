//! A TCP proxy in front of a Postgres server that forwards the handshake, then stalls
//! (flashback-testkit's `stall::StallProxy`), to try Flashback's time limits by hand:
//!
//! ```text
//! scripts/pg-stall-proxy [--listen PORT] [--upstream HOST:PORT] [--stall RULE]
//!   RULE: after-ready=1 (default: stall right after the handshake), after-ms=300,
//!         fully (accept TCP, never answer), never (forward; type `s` + Enter to stall
//!         every connection, `r` + Enter to resume)
//! ```
//!
//! Point a URL at it with `sslmode=disable` (so that it can count the server's messages):
//! `flashback threads 'postgres://postgres@127.0.0.1:6543/app?sslmode=disable&connect_timeout=3&options=-c%20statement_timeout%3D3s'`.

use flashback_testkit::stall::{Stall, StallProxy};
use std::io::BufRead as _;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pg-stall-proxy: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let (mut port, mut upstream, mut rule) =
        (6543u16, "127.0.0.1:5432".to_owned(), Stall::AfterReady(1));
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--listen" => port = value()?.parse().map_err(|e| format!("--listen: {e}"))?,
            "--upstream" => upstream = value()?,
            "--stall" => rule = value()?.parse()?,
            "-h" | "--help" => {
                println!("pg-stall-proxy [--listen PORT] [--upstream HOST:PORT] [--stall never|fully|after-ready=N|after-ms=N]");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    let proxy =
        StallProxy::listen(port, &upstream, rule).map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    println!(
        "pg-stall-proxy: 127.0.0.1:{} -> {upstream}, stall {rule:?}; `s` + Enter stalls every connection, `r` resumes, Ctrl-C ends",
        proxy.port()
    );
    for line in std::io::stdin().lock().lines() {
        match line.map_err(|e| e.to_string())?.trim() {
            "s" => proxy.stall_now(),
            "r" => proxy.resume(),
            _ => {}
        }
        println!(
            "{} connections so far; {}",
            proxy.accepted(),
            if proxy.stalled() {
                "stalled"
            } else {
                "forwarding"
            }
        );
    }
    // Without (or after) a terminal: serve until killed.
    loop {
        std::thread::park();
    }
}
