//! Helpers shared by the storage integration tests.
//!
//! * [`store`]: hand-built Postgres databases for the saver's read-side tests (`saver/schema.rs`,
//!   `channel_values.rs`, `pending_writes.rs`, `listing.rs`, `connect/access.rs`).
//! * [`saver`]: checkpoints to put and table readers for the Postgres saver's write side
//!   (`saver/put.rs`, `setup.rs`, `reput_fixture.rs`).
//! * [`three`]: the three-table store's tests on both backends.

#![allow(dead_code)]

pub mod saver;
pub mod store;
pub mod three;
