//! The integration tests of flashback-api: one test binary (it links the crate graph once), one
//! module per behaviour; the helpers they share are in `common`.

mod common;
mod budget {
    mod behaviours;
    mod js;
    mod python;
}
mod door {
    mod bad_inputs;
    mod postgres;
    mod serve_policy;
    mod stall;
}
mod agentserver;
mod encrypted;
mod jobs {
    mod export_and_rerun;
    mod index_build;
    mod panics;
}
mod js {
    mod edge_values;
    mod features;
    mod forks;
    mod reads;
}
mod memory_store;
mod reads {
    mod bad_rows;
    mod commands;
    mod delta_reducers;
    mod find;
    pub(crate) mod state_page;
    mod status_reads;
    mod stored_values;
    mod topology;
    mod value_search;
    mod watch_key;
}
mod retention {
    mod postgres_and_three_table;
    mod sqlite;
}
mod sessions;
mod storage_report {
    mod js;
    mod payloads;
    mod postgres;
    mod sqlite;
}
mod writes {
    mod atomically;
    mod commands;
    mod convert;
    mod repair_blobs;
}
