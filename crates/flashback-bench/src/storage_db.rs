//! `flashback-bench storage-db FILE GB [--threads N]`: a new LangGraph SQLite checkpoint file of
//! about GB gigabytes, as a chat app's agent graph (`__start__` → `agent` ⇄ `tools`) writes it
//! with langgraph-checkpoint-sqlite 3.1.2, for timing `flashback storage` at scale
//! (`bench/storage.sh`). Written through Flashback's own LangGraph SQLite saver
//! (byte-compatible with Python's), many checkpoints per `put_batch` transaction.
//!
//! Every thread is one long chat: a system prompt shared by all threads, then turns of a human
//! message (one in ~20 carrying a 50–300 KB base64 PNG data URL), sometimes tool rounds (an
//! AI message with tool calls, then ToolMessages) and an AI answer. Each checkpoint stores the
//! whole `messages` list (so documents grow through the thread), the `branch:to:*` trigger
//! channels, versions and `versions_seen` as LangGraph keeps them, metadata
//! `{source, step, parents}`, and the next task's pending writes (`messages` and its branch).
//! Thread lengths vary (20–300 checkpoints, mostly short; with `--threads N`, N threads sharing
//! the size).
//! Everything is seeded: the same arguments give the same file.

use crate::chat::{self, Rng, ToolCall};
use flashback_codec::reserved::{INPUT, START};
use flashback_codec::{msgpack, Decoded, Value};
use flashback_storage::pyfmt::{py_float_repr, uuid6_from_parts};
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{Checkpoint, CheckpointSaver, PutRequest, Version, Versions, WriteBatch};
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;
use std::time::Instant;

/// 2025-01-01T00:00:00Z in microseconds.
const EPOCH_US: u64 = 1_735_689_600_000_000;
/// Microseconds between the Gregorian epoch (uuid timestamps, in 100 ns) and the Unix epoch.
const GREGORIAN_100NS: u64 = 0x01B2_1DD2_1381_4000;
/// Checkpoints are written in transactions of about this many (estimated) bytes.
const BATCH_BYTES: usize = 64 << 20;

/// One task's writes against a checkpoint: `(task_id, task_path, writes)`.
type Task = (String, String, Vec<(String, Decoded)>);

/// One checkpoint to store, with what its `put` and `put_writes` need.
struct Step {
    checkpoint: Checkpoint,
    parent: Option<String>,
    metadata: Map<String, Json>,
    tasks: Vec<Task>,
    /// About the bytes its rows take (for batching and stopping).
    bytes: usize,
}

/// One thread being generated.
struct Thread {
    id: String,
    rng: Rng,
    /// The `messages` channel, and the encoded length of each message.
    messages: Vec<Value>,
    message_bytes: usize,
    versions: Versions,
    seen: Vec<(String, Versions)>,
    counter: u64,
    step: i64,
    parent: Option<String>,
    clock_us: u64,
    checkpoints: usize,
    humans: usize,
    images: usize,
}

impl Thread {
    fn new(seed: u64, clock_us: u64) -> Thread {
        let mut rng = Rng::new(seed);
        Thread {
            id: rng.uuid4(),
            rng,
            messages: Vec::new(),
            message_bytes: 0,
            versions: Vec::new(),
            seen: vec![(INPUT.into(), Vec::new())],
            counter: 0,
            step: -2,
            parent: None,
            clock_us,
            checkpoints: 0,
            humans: 0,
            images: 0,
        }
    }

    fn version(&self, channel: &str) -> Option<Version> {
        self.versions
            .iter()
            .find(|(c, _)| c == channel)
            .map(|(_, v)| v.clone())
    }

    /// `get_next_version` for every channel of `channels` (one new version per step).
    fn bump(&mut self, channels: &[&str]) {
        self.counter += 1;
        let v = Version::Str(format!(
            "{:032}.{:0>16}",
            self.counter,
            py_float_repr(self.rng.float())
        ));
        for c in channels {
            match self.versions.iter_mut().find(|(k, _)| k == c) {
                Some(slot) => slot.1 = v.clone(),
                None => self.versions.push(((*c).into(), v.clone())),
            }
        }
    }

    /// `node` has seen the current version of `trigger`.
    fn see(&mut self, node: &str, trigger: &str) {
        let v = self.version(trigger).unwrap_or(Version::Int(0));
        let seen = vec![(trigger.to_owned(), v)];
        match self.seen.iter_mut().find(|(n, _)| n == node) {
            Some(slot) => slot.1 = seen,
            None => self.seen.push((node.into(), seen)),
        }
    }

    fn push_messages(&mut self, new: &[Value]) {
        for m in new {
            self.message_bytes += msgpack::encode(m).len();
            self.messages.push(m.clone());
        }
    }

    fn messages_value(&self) -> Arc<Decoded> {
        Arc::new(Decoded::Msgpack(Value::Array(self.messages.clone())))
    }

    /// A checkpoint of the current state; `extra` are the channel values besides `messages`.
    fn checkpoint(
        &mut self,
        source: &str,
        extra: Vec<(String, Arc<Decoded>)>,
        updated: &[&str],
        tasks: Vec<Task>,
    ) -> Step {
        self.step += 1;
        self.checkpoints += 1;
        self.clock_us += 20_000 + self.rng.next_u64() % 8_000_000;
        let id = uuid6_from_parts(
            self.clock_us * 10 + GREGORIAN_100NS,
            self.step,
            self.rng.next_u64(),
        );
        let mut channel_values = Vec::new();
        if !self.messages.is_empty() {
            channel_values.push(("messages".to_owned(), self.messages_value()));
        }
        channel_values.extend(extra);
        let mut updated: Vec<String> = updated.iter().map(|c| (*c).to_owned()).collect();
        updated.sort();
        let checkpoint = Checkpoint {
            v: 4,
            id: id.clone(),
            ts: chat::iso(self.clock_us),
            channel_values,
            channel_versions: self.versions.clone(),
            versions_seen: self.seen.clone(),
            updated_channels: Some(updated),
            pending_sends: None,
        };
        let metadata = match json!({"source": source, "step": self.step, "parents": {}}) {
            Json::Object(m) => m,
            _ => Map::new(),
        };
        let write_bytes: usize = tasks
            .iter()
            .flat_map(|(_, _, ws)| ws)
            .map(|(_, v)| match v {
                Decoded::Msgpack(v) => msgpack::encode(v).len(),
                _ => 0,
            })
            .sum();
        Step {
            checkpoint,
            parent: self.parent.replace(id),
            metadata,
            tasks,
            bytes: self.message_bytes + write_bytes + 1500,
        }
    }

    fn task(&mut self, node: &str, writes: Vec<(String, Decoded)>) -> Task {
        let id = self.rng.uuid4();
        (id, format!("~__pregel_pull, {node}"), writes)
    }

    fn human(&mut self) -> Value {
        self.humans += 1;
        let n = self.rng_range(40, 600);
        let words = chat::text(&mut self.rng, n);
        let image = if self.rng.one_in(20) {
            self.images += 1;
            let bytes = self.rng_range(50_000, 300_000);
            Some(chat::png_data_url(&mut self.rng, bytes))
        } else {
            None
        };
        let id = self.rng.uuid4();
        chat::human(&id, words, image)
    }

    fn rng_range(&mut self, lo: usize, hi: usize) -> usize {
        self.rng.range(lo, hi)
    }

    fn ai(&mut self, calls: &[ToolCall]) -> Value {
        let content = if calls.is_empty() {
            let n = self.rng_range(150, 3000);
            chat::text(&mut self.rng, n)
        } else {
            String::new()
        };
        let id = format!("run--{}-0", self.rng.uuid4());
        let tokens = (
            self.message_bytes / 4 + 900,
            content.len() / 4 + 20 * calls.len(),
        );
        chat::ai(&id, content, calls, tokens)
    }

    fn tool_calls(&mut self) -> Vec<ToolCall> {
        let n = if self.rng.one_in(4) { 2 } else { 1 };
        (0..n)
            .map(|_| {
                let (name, args) = match self.rng.next_u64() % 3 {
                    0 => (
                        "search_ledger",
                        json!({"query": chat::text(&mut self.rng, 40)}),
                    ),
                    1 => (
                        "run_sql",
                        json!({"sql": "SELECT region, sum(amount) FROM invoices GROUP BY region",
                               "limit": self.rng_range(10, 500)}),
                    ),
                    _ => ("fetch_report", json!({"report_id": self.rng.uuid4()})),
                };
                (name, args, self.rng.call_id())
            })
            .collect()
    }

    /// One turn: the input checkpoint, the one after `__start__`, then `agent` (⇄ `tools`).
    fn turn(&mut self, system: &Value, out: &mut Vec<Step>) {
        let mut input = Vec::new();
        if self.messages.is_empty() {
            input.push(system.clone());
        }
        input.push(self.human());
        let input_list = Decoded::Msgpack(Value::Array(input.clone()));
        let start_value = Value::Map(vec![(
            Value::Str("messages".into()),
            Value::Array(input.clone()),
        )]);
        self.bump(&[START]);
        let start = self.task(
            START,
            vec![
                ("messages".into(), input_list),
                ("branch:to:agent".into(), Decoded::Null),
            ],
        );
        let step = self.checkpoint(
            "input",
            vec![(START.into(), Arc::new(Decoded::Msgpack(start_value)))],
            &[START],
            vec![start],
        );
        out.push(step);

        // After __start__: the agent runs next (its message is its pending write).
        self.see(START, START);
        self.push_messages(&input);
        self.bump(&[START, "messages", "branch:to:agent"]);
        let rounds = match self.rng.next_u64() % 20 {
            0..=13 => 0,
            14..=18 => 1,
            _ => 2,
        };
        let mut calls = if rounds > 0 {
            self.tool_calls()
        } else {
            Vec::new()
        };
        let mut reply = self.ai(&calls);
        let agent = self.agent_task(&reply, !calls.is_empty());
        let step = self.checkpoint(
            "loop",
            vec![("branch:to:agent".into(), Arc::new(Decoded::Null))],
            &["branch:to:agent", "messages"],
            vec![agent],
        );
        out.push(step);

        for round in 0..rounds {
            // After the agent asked for tools: the tools node runs next.
            self.see("agent", "branch:to:agent");
            self.push_messages(std::slice::from_ref(&reply));
            self.bump(&["messages", "branch:to:agent", "branch:to:tools"]);
            let results: Vec<Value> = calls
                .iter()
                .map(|(name, _, call_id)| {
                    let id = self.rng.uuid4();
                    let n = self.rng_range(100, 4000);
                    let content = chat::text(&mut self.rng, n);
                    chat::tool(&id, name, call_id, content)
                })
                .collect();
            let tools = self.task(
                "tools",
                vec![
                    (
                        "messages".into(),
                        Decoded::Msgpack(Value::Array(results.clone())),
                    ),
                    ("branch:to:agent".into(), Decoded::Null),
                ],
            );
            let step = self.checkpoint(
                "loop",
                vec![("branch:to:tools".into(), Arc::new(Decoded::Null))],
                &["branch:to:tools", "messages"],
                vec![tools],
            );
            out.push(step);

            // After the tools: the agent again (more tools, or the answer).
            self.see("tools", "branch:to:tools");
            self.push_messages(&results);
            self.bump(&["messages", "branch:to:tools", "branch:to:agent"]);
            calls = if round + 1 < rounds {
                self.tool_calls()
            } else {
                Vec::new()
            };
            reply = self.ai(&calls);
            let agent = self.agent_task(&reply, !calls.is_empty());
            let step = self.checkpoint(
                "loop",
                vec![("branch:to:agent".into(), Arc::new(Decoded::Null))],
                &["branch:to:agent", "messages"],
                vec![agent],
            );
            out.push(step);
        }

        // The answer: the run ends here (no next task, no pending writes).
        self.see("agent", "branch:to:agent");
        self.push_messages(std::slice::from_ref(&reply));
        self.bump(&["messages", "branch:to:agent"]);
        let step = self.checkpoint("loop", Vec::new(), &["messages"], Vec::new());
        out.push(step);
        // The user reads and types the next message.
        self.clock_us += 10_000_000 + self.rng.next_u64() % 600_000_000;
    }

    fn agent_task(&mut self, reply: &Value, calls: bool) -> Task {
        let mut writes = vec![(
            "messages".into(),
            Decoded::Msgpack(Value::Array(vec![reply.clone()])),
        )];
        if calls {
            writes.push(("branch:to:tools".into(), Decoded::Null));
        }
        self.task("agent", writes)
    }
}

/// Store `steps` in one transaction.
async fn flush(saver: &SqliteSaver, thread: &str, steps: &mut Vec<Step>) -> Result<usize, String> {
    let puts: Vec<PutRequest<'_>> = steps
        .iter()
        .map(|s| PutRequest {
            thread_id: thread,
            checkpoint_ns: "",
            parent_checkpoint_id: s.parent.as_deref(),
            checkpoint: &s.checkpoint,
            metadata: &s.metadata,
            new_versions: &s.checkpoint.channel_versions,
        })
        .collect();
    let writes: Vec<WriteBatch<'_>> = steps
        .iter()
        .flat_map(|s| {
            s.tasks
                .iter()
                .map(|(task_id, task_path, writes)| WriteBatch {
                    thread_id: thread,
                    checkpoint_ns: "",
                    checkpoint_id: &s.checkpoint.id,
                    task_id,
                    task_path,
                    writes,
                })
        })
        .collect();
    let n = writes.iter().map(|w| w.writes.len()).sum();
    saver
        .put_batch(&puts, &writes)
        .await
        .map_err(|e| e.to_string())?;
    steps.clear();
    Ok(n)
}

/// The main file's size (the saver's commits are checkpointed into it as they go).
fn file_bytes(file: &str) -> u64 {
    std::fs::metadata(file).map_or(0, |m| m.len())
}

/// Write the file; prints progress to stderr and one JSON line at the end.
pub async fn run(
    file: &str,
    gb: f64,
    threads: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    if std::path::Path::new(file).exists() {
        return Err(format!("{file} exists: give a new file").into());
    }
    if gb.is_nan() || gb <= 0.0 || threads == Some(0) {
        return Err("GB must be positive and --threads at least 1".into());
    }
    let target = (gb * 1e9) as u64;
    let saver = SqliteSaver::create(file).await?;
    let system = chat::system(
        "9f0c3b1e-2f4a-4c1d-9a5e-7b6d8c2e1f00",
        &chat::system_prompt(),
    );
    let start = Instant::now();
    let mut last_report = Instant::now();
    let (mut n_threads, mut checkpoints, mut writes, mut images) = (0usize, 0usize, 0usize, 0usize);
    let mut lengths = Rng::new(0xF1A5_4BAC);
    let mut written = file_bytes(file);
    'threads: while written < target && threads.is_none_or(|n| n_threads < n) {
        let mut t = Thread::new(
            0xC4A7_0000 + n_threads as u64,
            EPOCH_US + n_threads as u64 * 1_800_000_000,
        );
        // With --threads N every thread gets about its share of the bytes; otherwise a length
        // of 20–300 checkpoints, most threads short and a few long (20 + 280·u³: mean 90).
        let share = threads.map(|n| (target - written) / (n - n_threads) as u64);
        let length = 20 + (280.0 * lengths.float().powi(3)).round() as usize;
        let mut steps: Vec<Step> = Vec::new();
        let mut thread_bytes = 0u64;
        loop {
            t.turn(&system, &mut steps);
            let pending = steps.iter().map(|s| s.bytes as u64).sum::<u64>();
            let done = match share {
                Some(share) => thread_bytes + pending >= share,
                None => t.checkpoints >= length,
            };
            let full = written + pending >= target;
            if done || full || pending as usize >= BATCH_BYTES {
                writes += flush(&saver, &t.id, &mut steps).await?;
                written = file_bytes(file);
                thread_bytes += pending;
            }
            if last_report.elapsed().as_secs_f64() >= 5.0 {
                last_report = Instant::now();
                let s = start.elapsed().as_secs_f64();
                eprintln!(
                    "storage-db: {:.2} / {gb} GB, {} threads, {} checkpoints, {:.0} s ({:.0} MB/s)",
                    written as f64 / 1e9,
                    n_threads + 1,
                    checkpoints + t.checkpoints,
                    s,
                    written as f64 / 1e6 / s
                );
            }
            if done || full {
                n_threads += 1;
                checkpoints += t.checkpoints;
                images += t.images;
                if full {
                    break 'threads;
                }
                break;
            }
        }
    }
    drop(saver);
    let bytes = file_bytes(file);
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "storage-db: wrote {file}: {:.3} GB ({bytes} bytes), {n_threads} threads, {checkpoints} \
         checkpoints, {writes} writes, {images} images in {seconds:.0} s",
        bytes as f64 / 1e9
    );
    println!(
        "{}",
        json!({
            "file": file, "bytes": bytes, "threads": n_threads, "checkpoints": checkpoints,
            "writes": writes, "images": images, "seconds": seconds,
        })
    );
    Ok(())
}
