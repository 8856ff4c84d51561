//! Helpers shared by the storage integration tests. Each test file is its own crate and uses
//! only some of them, hence `dead_code` is allowed here.
//!
//! * [`store`]: hand-built databases for the `postgres_store_*` tests (the read side).
//! * [`saver`]: checkpoints to put and table readers for the `postgres_saver_*` tests (the
//!   write side).
//! * [`three`]: the three-table store's tests on both backends.

#![allow(dead_code)]

pub mod saver;
pub mod store;
pub mod three;
