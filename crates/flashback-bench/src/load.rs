//! Load a thread's full decoded history (every checkpoint with its channel values and pending
//! writes), best of N runs. Used by `bench/compare.sh` against Python's `saver.list()`.

use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::ListQuery;
use std::time::Instant;

/// `flashback-bench DB THREAD [RUNS]`: prints one JSON line.
pub async fn run(db: &str, thread: &str, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    // Decode everything, as Python does: the benchmark compares full reads.
    let store =
        flashback_storage::open_with_budget(db, flashback_codec::DecodeBudget::UNLIMITED).await?;
    let query = ListQuery::thread(thread);
    let mut best = f64::MAX;
    let mut best_view = f64::MAX;
    let mut best_headers = f64::MAX;
    let mut count = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let headers = store.list_headers(&query).await?;
        best_headers = best_headers.min(start.elapsed().as_secs_f64());
        std::hint::black_box(headers);
        let start = Instant::now();
        let tuples = store.list_tuples(&query).await?;
        best = best.min(start.elapsed().as_secs_f64());
        count = tuples.len();
        // Also time rendering every value to the JSON view (what the CLI and GUI show).
        let start = Instant::now();
        let tuples = store.list_tuples(&query).await?;
        let mut n = 0usize;
        for t in &tuples {
            for (_, v) in &t.checkpoint.channel_values {
                n += view_decoded(v, ViewOptions::default()).is_some() as usize;
            }
            for w in &t.pending_writes {
                n += view_decoded(&w.value, ViewOptions::default()).is_some() as usize;
            }
        }
        std::hint::black_box(n);
        best_view = best_view.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        serde_json::json!({
            "backend": format!("{:?}", store.schema().backend).to_lowercase(),
            "checkpoints": count,
            "seconds_best_of_runs": best,
            "seconds_with_json_view": best_view,
            "seconds_headers_only": best_headers,
            "runs": runs,
        })
    );
    Ok(())
}
