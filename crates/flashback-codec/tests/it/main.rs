//! The integration tests of flashback-codec: one test binary (it links the crate graph once), one
//! module per behaviour.

mod bad_strings;
mod json_view;
mod numpy;
mod pickle_view;
mod revive;
mod unview_fixture;
mod view_cases;
