//! The integration tests of flashback-engine: one test binary (it links the crate graph once), one
//! module per behaviour; the helpers they share are in `common`.

mod common;
mod dag;
mod delta;
mod diff;
mod edit_fork;
mod export {
    mod bundle;
    mod deep_values;
    mod verify;
}
mod layout {
    mod branches;
    mod lines;
    mod snapshots;
}
mod merge;
mod python_fixture;
mod replay;
mod tasks {
    mod python;
    mod synthetic;
}
