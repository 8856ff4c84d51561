//! Manual timing of a full thread history load (ignored by default):
//!
//! ```text
//! FLASHBACK_BENCH_PG_URL=postgresql://…/db FLASHBACK_BENCH_THREAD=bench \
//!   cargo test --release -p flashback-storage --test postgres_bench -- --ignored --nocapture
//! ```

use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery};
use std::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "manual benchmark: needs FLASHBACK_BENCH_PG_URL"]
async fn time_full_history_load() {
    let Ok(url) = std::env::var("FLASHBACK_BENCH_PG_URL") else {
        eprintln!("FLASHBACK_BENCH_PG_URL is not set");
        return;
    };
    let thread = std::env::var("FLASHBACK_BENCH_THREAD").unwrap_or_else(|_| "bench".into());
    let store = PostgresStore::connect(&url).await.unwrap();
    for round in 0..10 {
        let started = Instant::now();
        let tuples = store.list_tuples(&ListQuery::thread(&thread)).await.unwrap();
        let writes: usize = tuples.iter().map(|t| t.pending_writes.len()).sum();
        eprintln!(
            "round {round}: {} checkpoints, {writes} writes in {:.1} ms",
            tuples.len(),
            started.elapsed().as_secs_f64() * 1000.0
        );
        let started = Instant::now();
        drop(tuples);
        eprintln!("  dropped in {:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
    }
    let started = Instant::now();
    let headers = store.list_headers(&ListQuery::thread(&thread)).await.unwrap();
    eprintln!("headers: {} in {:.1} ms", headers.len(), started.elapsed().as_secs_f64() * 1000.0);
    let started = Instant::now();
    let threads = store.list_threads().await.unwrap();
    eprintln!("threads: {} in {:.1} ms", threads.len(), started.elapsed().as_secs_f64() * 1000.0);
}
