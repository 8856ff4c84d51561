//! Load a thread's full decoded history (every checkpoint with its channel values and pending
//! writes), over N runs. Used by `bench/compare.sh` against Python's `saver.list()`.

use flashback_codec::DecodeBudget;
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{CheckpointTuple, ListQuery, Read};
use std::io::{self, Write};
use std::time::Instant;

/// `flashback-bench DB THREAD [RUNS] [--out FILE]`: prints one JSON line, seconds as
/// `[min, median, max]` over RUNS.
///
/// Each run times the headers alone, the full decoded history, and the full history again
/// *with the JSON view* as an output pays it: every checkpoint's values and writes serialized
/// straight to JSON lines, in parallel, streamed to a byte-counting sink (or to FILE).
/// `peak_rss_mb` is the process' high-water mark (VmHWM) after all runs; it counts the pages of
/// an mmapped SQLite file (`rss_file_mb_at_end`).
pub async fn run(
    db: &str,
    thread: &str,
    runs: usize,
    out: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    // Decode everything, as Python does: the benchmark compares full reads.
    let store = flashback_storage::open(db, Read::within(DecodeBudget::UNLIMITED)).await?;
    let query = ListQuery::thread(thread);
    let (mut decode, mut with_view, mut headers_only) = (Vec::new(), Vec::new(), Vec::new());
    let (mut count, mut json_bytes) = (0, 0);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let headers = store.list_headers(&query).await?;
        headers_only.push(start.elapsed().as_secs_f64());
        std::hint::black_box(headers);
        let start = Instant::now();
        let tuples = store.list_tuples(&query).await?;
        decode.push(start.elapsed().as_secs_f64());
        count = tuples.len();
        drop(tuples);
        let start = Instant::now();
        let tuples = store.list_tuples(&query).await?;
        json_bytes = match out {
            None => render(&tuples, io::sink())?,
            Some(path) => render(&tuples, io::BufWriter::new(std::fs::File::create(path)?))?,
        };
        with_view.push(start.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        serde_json::json!({
            "backend": format!("{:?}", store.schema().backend).to_lowercase(),
            "checkpoints": count,
            "seconds": spread(&mut decode),
            "seconds_with_json_view": spread(&mut with_view),
            "seconds_headers_only": spread(&mut headers_only),
            "json_view_bytes": json_bytes,
            "peak_rss_mb": status_mb("VmHWM"),
            // Of the resident set at the end, the file pages (SQLite's mmap of the database).
            "rss_file_mb_at_end": status_mb("RssFile"),
            "runs": runs.max(1),
        })
    );
    Ok(())
}

/// Stream the tuples' JSON lines to `w`; the bytes written.
fn render<W: Write + Send>(tuples: &[CheckpointTuple], w: W) -> io::Result<u64> {
    let mut w = crate::jsonl::Counting::new(w);
    crate::jsonl::write_all(tuples, &mut w)?;
    Ok(w.bytes)
}

/// A size from `/proc/self/status` (`VmHWM`: the peak resident set), in MiB.
fn status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb / 1024.0).round())
}

/// `flashback-bench delta DB THREAD [RUNS]`: the full history with DeltaChannels rebuilt
/// (every checkpoint's values as `get_state_history` gives them), and also rendered to the
/// JSON view, RUNS times; then a step as the app takes it (one checkpoint read and rebuilt) at
/// 50 checkpoints spread along the thread. Prints one JSON line, seconds as [min, median, max].
pub async fn delta(db: &str, thread: &str, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    use flashback_engine::delta::{materialize, materialize_all, DeltaOptions};
    let store = flashback_storage::open(db, Read::within(DecodeBudget::UNLIMITED)).await?;
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
