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

/// `flashback-bench delta DB THREAD [RUNS]`: the full history with DeltaChannels rebuilt
/// (every checkpoint's values as `get_state_history` gives them), and also rendered to the
/// JSON view, RUNS times; then a step as the app takes it (one checkpoint read and rebuilt) at
/// 50 checkpoints spread along the thread. Prints one JSON line, seconds as [min, median, max].
pub async fn delta(db: &str, thread: &str, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    use flashback_engine::delta::{materialize, materialize_all, DeltaOptions};
    let store =
        flashback_storage::open_with_budget(db, flashback_codec::DecodeBudget::UNLIMITED).await?;
    let query = ListQuery::thread(thread);
    let opts = DeltaOptions::default();
    let mut full = Vec::new();
    let mut rebuilt_only = Vec::new();
    let mut count = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let mut tuples = store.list_tuples(&query).await?;
        let rebuilt = materialize_all(&mut tuples, &opts);
        rebuilt_only.push(start.elapsed().as_secs_f64());
        let mut n = 0usize;
        for t in &tuples {
            for (_, v) in &t.checkpoint.channel_values {
                n += view_decoded(v, ViewOptions::default()).is_some() as usize;
            }
        }
        std::hint::black_box((n, rebuilt));
        full.push(start.elapsed().as_secs_f64());
        count = tuples.len();
    }
    let headers = store.list_headers(&query).await?;
    let mut steps = Vec::new();
    let stride = (headers.len() / 50).max(1);
    for h in headers.iter().step_by(stride) {
        let start = Instant::now();
        let mut t = store
            .get_tuple(thread, &h.checkpoint_ns, Some(&h.checkpoint_id))
            .await?
            .ok_or("checkpoint vanished")?;
        let info = materialize(store.as_ref(), &mut t, &opts).await?;
        for (_, v) in &t.checkpoint.channel_values {
            std::hint::black_box(view_decoded(v, ViewOptions::default()));
        }
        std::hint::black_box(info);
        steps.push(start.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        serde_json::json!({
            "backend": format!("{:?}", store.schema().backend).to_lowercase(),
            "checkpoints": count,
            "seconds": spread(&mut rebuilt_only),
            "seconds_with_json_view": spread(&mut full),
            "step_seconds": spread(&mut steps),
            "runs": runs,
        })
    );
    Ok(())
}

/// `[min, median, max]`.
fn spread(xs: &mut [f64]) -> [f64; 3] {
    xs.sort_by(f64::total_cmp);
    match xs {
        [] => [0.0; 3],
        _ => [xs[0], xs[xs.len() / 2], xs[xs.len() - 1]],
    }
}
