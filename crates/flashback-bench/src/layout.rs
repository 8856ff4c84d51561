//! The lane layout of wide and long generated threads (`bench/layout.sh`): how long building
//! the DAG, laying it out and rendering it take, how big the renderings are, and the peak RSS.

use flashback_engine::{layout, render_text, LayoutOptions, ThreadDag};
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointHeader, CheckpointSaver, PutRequest};
use serde_json::{json, Map, Value as Json};
use std::time::Instant;

/// The thread to generate.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A 10-checkpoint line whose 5th checkpoint is forked N times (an eval harness running
    /// one point N times): N one-checkpoint siblings, newer than the line.
    Siblings,
    /// An N-checkpoint line with a two-checkpoint fork every 50 checkpoints, each fork written
    /// right after its fork point.
    Forked,
    /// The same, but every fork written after the whole line (so each fork's lane stays open
    /// down to its fork point: N/50 lanes side by side).
    LateForks,
}

impl Shape {
    pub fn parse(s: &str) -> Option<Shape> {
        match s {
            "siblings" => Some(Shape::Siblings),
            "forked" => Some(Shape::Forked),
            "late-forks" => Some(Shape::LateForks),
            _ => None,
        }
    }
}

/// One generated checkpoint: (id, parent id, step, source).
type Gen = (String, Option<String>, i64, &'static str);

/// A uuid6-like id that sorts by `seq`.
fn id(seq: usize) -> String {
    format!(
        "1f0{:05x}-{:04x}-6000-8000-000000000000",
        seq >> 16,
        seq & 0xffff
    )
}

fn generate(shape: Shape, n: usize) -> Vec<Gen> {
    let mut out: Vec<Gen> = Vec::new();
    let mut seq = 0;
    let mut next = || {
        seq += 1;
        id(seq)
    };
    match shape {
        Shape::Siblings => {
            let mut parent = None;
            let mut line = Vec::new();
            for step in 0..10 {
                let me = next();
                out.push((me.clone(), parent, step, "loop"));
                line.push(me.clone());
                parent = Some(me);
            }
            for _ in 0..n {
                out.push((next(), Some(line[4].clone()), 5, "fork"));
            }
        }
        Shape::Forked | Shape::LateForks => {
            let mut parent: Option<String> = None;
            let mut late = Vec::new();
            for i in 0..n {
                let me = next();
                out.push((me.clone(), parent, i as i64, "loop"));
                if i % 50 == 25 {
                    late.push((me.clone(), i as i64));
                    if matches!(shape, Shape::Forked) {
                        let f1 = next();
                        let f2 = next();
                        out.push((f1.clone(), Some(me.clone()), i as i64 + 1, "fork"));
                        out.push((f2, Some(f1), i as i64 + 2, "loop"));
                    }
                }
                parent = Some(me);
            }
            if matches!(shape, Shape::LateForks) {
                for (from, step) in late {
                    let f1 = next();
                    out.push((f1.clone(), Some(from), step + 1, "fork"));
                    out.push((next(), Some(f1), step + 2, "loop"));
                }
            }
        }
    }
    out
}

fn ts(k: usize) -> String {
    format!(
        "2025-01-01T{:02}:{:02}:{:02}.{:06}+00:00",
        k / 3_600_000_000 % 24,
        k / 60_000_000 % 60,
        k / 1_000_000 % 60,
        k % 1_000_000
    )
}

fn metadata(step: i64, source: &str) -> Map<String, Json> {
    match json!({"source": source, "step": step, "parents": {}}) {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

fn headers(gen: &[Gen]) -> Vec<CheckpointHeader> {
    gen.iter()
        .enumerate()
        .map(|(k, (id, parent, step, source))| CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: id.clone(),
            parent_checkpoint_id: parent.clone(),
            ts: ts(k * 1000),
            metadata: Json::Object(metadata(*step, source)),
            problem: None,
        })
        .collect()
}

/// Peak resident set size of this process so far, in KiB (Linux `VmHWM`).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Build, lay out and render a generated thread; prints one JSON line.
pub fn bench(shape: Shape, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let headers = headers(&generate(shape, n));
    let rss_before = peak_rss_kib();
    let start = Instant::now();
    let dag = ThreadDag::build(&headers)?;
    let dag_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let lay = layout(&dag, &LayoutOptions::nested())?;
    let layout_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let json = serde_json::to_vec(&lay)?;
    let json_s = start.elapsed().as_secs_f64();
    let json_bytes = json.len();
    drop(json);
    let rss_layout = peak_rss_kib();
    let start = Instant::now();
    let text = render_text(&lay.rows, |r| r.id.clone());
    let text_s = start.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({
            "shape": format!("{shape:?}"),
            "n": n,
            "checkpoints": lay.rows.len(),
            "width": lay.width,
            "dag_s": dag_s,
            "layout_s": layout_s,
            "json_s": json_s,
            "json_bytes": json_bytes,
            "text_s": text_s,
            "text_bytes": text.len(),
            "peak_rss_kib_headers": rss_before,
            "peak_rss_kib_to_json": rss_layout,
            "peak_rss_kib_with_text": peak_rss_kib(),
        })
    );
    Ok(())
}

/// Write the generated thread (`t`) to a new SQLite file in one transaction.
pub async fn write_db(
    file: &str,
    shape: Shape,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    if std::path::Path::new(file).exists() {
        return Err(format!("{file} exists: give a new file").into());
    }
    let gen = generate(shape, n);
    let checkpoints: Vec<flashback_storage::Checkpoint> = gen
        .iter()
        .enumerate()
        .map(|(k, (id, ..))| flashback_storage::Checkpoint {
            v: 4,
            id: id.clone(),
            ts: ts(k * 1000),
            channel_values: Vec::new(),
            channel_versions: Vec::new(),
            versions_seen: Vec::new(),
            updated_channels: None,
            pending_sends: None,
        })
        .collect();
    let metadata: Vec<Map<String, Json>> =
        gen.iter().map(|(_, _, s, src)| metadata(*s, src)).collect();
    let puts: Vec<PutRequest<'_>> = gen
        .iter()
        .zip(&checkpoints)
        .zip(&metadata)
        .map(|(((_, parent, ..), cp), metadata)| PutRequest {
            thread_id: "t",
            checkpoint_ns: "",
            parent_checkpoint_id: parent.as_deref(),
            checkpoint: cp,
            metadata,
            new_versions: &cp.channel_versions,
        })
        .collect();
    let saver = SqliteSaver::create(file).await?;
    saver.put_batch(&puts, &[]).await?;
    println!(
        "{}",
        json!({"file": file, "thread": "t", "checkpoints": puts.len()})
    );
    Ok(())
}
