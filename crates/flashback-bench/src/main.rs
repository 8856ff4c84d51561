//! Benchmark driver.
//!
//! * `flashback-bench DB THREAD [RUNS] [--out FILE]`: load a thread's full decoded history,
//!   alone and streamed to JSON lines (to FILE, or counted), RUNS times, with the peak RSS
//!   (`bench/compare.sh`, beside Python's savers).
//! * `flashback-bench delta DB THREAD [RUNS]`: the full history with DeltaChannels rebuilt,
//!   and single steps as the app takes them (`bench/delta.sh`, beside `get_state_history`).
//! * `flashback-bench layout SHAPE N`: build and lay out a generated thread in process, with
//!   the size of its JSON and text renderings and the peak RSS (`bench/layout.sh`).
//! * `flashback-bench put SRC THREAD DST SCHEMA`: time writing a thread read from SRC into a
//!   fresh DST through Flashback's saver for SCHEMA (`langgraph`, `three-table-a`,
//!   `three-table-b`), one `put` and its `put_writes` per checkpoint (`bench/three_table.sh`).
//! * `flashback-bench storage-db FILE GB [--threads N]`: write a new LangGraph SQLite file of
//!   about GB gigabytes of generated chat threads (base64 images, tool calls, growing message
//!   lists), for timing `flashback storage` at scale (`bench/storage.sh`).
//! * `flashback-bench graph-db FILE SHAPE N`: write that thread (`t`) to a new SQLite file, for
//!   timing `flashback graph` and `serve` end to end.
//!
//! SHAPE is `siblings` (one checkpoint forked N times) or `forked` (an N-checkpoint line with a
//! two-checkpoint fork every 50).

mod chat;
mod jsonl;
mod layout;
mod load;
mod put;
mod storage_db;

// Decoding allocates many small values; mimalloc is markedly faster than glibc malloc here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: flashback-bench DB THREAD [RUNS] [--out FILE]
       flashback-bench layout siblings|forked N
       flashback-bench graph-db FILE siblings|forked N
       flashback-bench delta DB THREAD [RUNS]
       flashback-bench put SRC THREAD DST langgraph|three-table-a|three-table-b
       flashback-bench storage-db FILE GB [--threads N]";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let count = |s: &str| s.parse::<usize>().unwrap_or_else(|_| usage());
    let size = |s: &str| s.parse::<f64>().unwrap_or_else(|_| usage());
    match args.as_slice() {
        ["layout", shape, n] => layout::bench(
            layout::Shape::parse(shape).unwrap_or_else(|| usage()),
            count(n),
        ),
        ["graph-db", file, shape, n] => {
            let shape = layout::Shape::parse(shape).unwrap_or_else(|| usage());
            layout::write_db(file, shape, count(n)).await
        }
        ["storage-db", file, gb] => storage_db::run(file, size(gb), None).await,
        ["storage-db", file, gb, "--threads", n] => {
            storage_db::run(file, size(gb), Some(count(n))).await
        }
        ["put", src, thread, dst, schema] => put::run(src, thread, dst, schema).await,
        ["delta", db, thread] => load::delta(db, thread, 5).await,
        ["delta", db, thread, runs] => load::delta(db, thread, count(runs)).await,
        [db, thread] => load::run(db, thread, 5, None).await,
        [db, thread, runs] => load::run(db, thread, count(runs), None).await,
        [db, thread, runs, "--out", file] => load::run(db, thread, count(runs), Some(file)).await,
        _ => usage(),
    }
}
