//! The integration tests of flashback-cli: one test binary (it links the crate graph once), one
//! module per behaviour; the helpers they share are in `common`.

mod bad_input_writes;
mod common;
mod devserver_writes;
mod doors;
mod exit_codes;
mod find_threads;
mod index;
mod memory_budget;
mod memory_store;
mod output_files;
mod reads;
mod retention;
mod sealed;
mod search;
mod serve {
    mod auth;
    mod careless_clients;
    mod load;
    mod output_files;
    mod requests;
}
mod sqlite_access;
mod stall;
mod state_page;
mod storage;
mod surroundings;
mod three_table;
mod writes;
