//! The integration tests of flashback-testkit: one test binary (it links the crate graph once), one
//! module per behaviour.

mod cluster;
mod postgres;
