//! The integration tests of flashback-storage: one test binary (it links the crate graph once), one
//! module per behaviour; the helpers they share are in `common`.
//!
//! Two tests keep a binary of their own, because each needs its process to itself:
//! `tcp_nodelay.rs` inspects every TCP socket of the process, and `tls_system_trust.rs` sets
//! `SSL_CERT_FILE` for the whole process before any other thread runs.

mod agentserver;
mod common;
mod devserver;
mod devserver_js;
mod devserver_write;
mod find_threads;
mod indexes;
mod connect {
    mod access;
    mod password;
    mod stall;
    mod tls;
}
mod maintenance {
    mod behaviours;
    mod guarded_prune;
    mod postgres;
    mod rows;
    mod sqlite;
}
mod memory_store {
    mod behaviours;
    mod postgres;
    mod sqlite;
    mod tables;
}
mod saver {
    mod bad_rows_in_file;
    mod bad_rows_on_server;
    mod channel_values;
    mod get_tuples;
    mod listing;
    mod pending_writes;
    mod put;
    mod reput_fixture;
    mod schema;
    mod setup;
    mod undecodable;
    mod wal_reads;
    mod writes_python_rows;
}
mod storage_report;
mod three_table {
    mod behaviours;
    mod postgres;
    mod sqlite;
}
