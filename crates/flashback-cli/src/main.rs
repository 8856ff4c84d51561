//! `flashback`: read LangGraph checkpoint databases from the command line.
//!
//! Every command takes `DB`: a path to a `.sqlite` file, a `postgres://` URL, or a `langgraph
//! dev` project folder (or its `.langgraph_api/`). With `--json` the result is JSON on stdout;
//! otherwise a human-readable table. On failure the exit status is
//! non-zero and one line on stderr says what went wrong.

mod bridge;
mod doors;
mod human;
mod mcp;
mod out;
mod serve;
mod store;
mod watch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Time-travel debugger for LangGraph checkpoint databases.
#[derive(Parser, Debug)]
#[command(name = "flashback", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every thread with its checkpoint count, latest checkpoint and status; or find
    /// threads by their checkpoints' metadata, time and status (`--where`, `--since`,
    /// `--until`, `--status`: newest match first, paged with `--after`).
    Threads(doors::threads::ThreadsArgs),
    /// The metadata keys the newest checkpoints carry, with their common values: what
    /// `threads --where` can match (sampled).
    MetadataKeys {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What threads' whole histories say beyond their latest checkpoints: the tasks that
    /// raised, then recovered on a retry.
    Activity {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// Thread ids (default: every thread).
        threads: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A thread's checkpoints, newest first.
    History {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Namespace (default: the root graph, "").
        #[arg(long, conflicts_with = "all_ns")]
        ns: Option<String>,
        /// Every namespace (subgraphs included), interleaved as Python's `list()` returns them.
        #[arg(long)]
        all_ns: bool,
        /// At most N checkpoints.
        #[arg(long)]
        limit: Option<u32>,
        /// Only checkpoints older than this id.
        #[arg(long)]
        before: Option<String>,
        /// Metadata filter KEY=JSON (repeatable), e.g. `--filter source='"loop"'` or `--filter step=3`.
        #[arg(long, value_name = "KEY=JSON")]
        filter: Vec<String>,
        /// Full checkpoint ids, namespaces and timestamps (the table is otherwise fitted to 100
        /// columns, with short ids and relative times).
        #[arg(long)]
        wide: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The decoded state of one checkpoint (default: the latest) with its pending writes and
    /// next tasks.
    State {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Checkpoint id (default: the latest in the namespace).
        #[arg(long)]
        checkpoint: Option<String>,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// Show SecretStr values in plain text.
        #[arg(long)]
        reveal_secrets: bool,
        /// Decode every value, however large (values over the decode budget, 16 MB each, are
        /// otherwise shown as "too large: N MB"; see FLASHBACK_MAX_VALUE_MB).
        #[arg(long)]
        full: bool,
        /// The saver's raw view: DeltaChannels as stored (snapshots wrapped, nothing between
        /// them) instead of rebuilt as the graph sees them.
        #[arg(long)]
        raw: bool,
        /// Rebuild DeltaChannel CHANNEL with this reducer: append, add_messages, merge or
        /// last (default: inferred from the values). Repeatable.
        #[arg(long, value_name = "CHANNEL=REDUCER")]
        reducer: Vec<String>,
        /// Also list the internal channels (LangGraph's control channels, an agent's
        /// bookkeeping such as `jump_to` or call counts), folded by default.
        #[arg(long)]
        internal: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        page: doors::page::PageArgs,
    },
    /// Fork a checkpoint: write a copy of it (optionally with edited values) as the thread's
    /// newest checkpoint, so that the program resumes from there
    /// (`graph.invoke(None, {"configurable": {"thread_id": T}})`; LangGraph.js:
    /// `graph.invoke(null, …)`), written in the database's own format (LangGraph's or LangGraph.js's).
    Fork {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// The checkpoint to fork from.
        #[arg(long)]
        checkpoint: String,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// Replace a channel's value (repeatable): CHANNEL=JSON, the JSON view of the new value
        /// (see `flashback state --json`; objects keep their Python type). Makes an edit fork
        /// (`source: "update"`, the edited channels' versions bumped as Python bumps them).
        #[arg(long = "set", value_name = "CHANNEL=JSON")]
        set: Vec<String>,
        /// An Agent Server (`http://…`) only: the node the update is made as
        /// (`update_state(…, as_node=…)`; default: the server's choice).
        #[arg(long = "as-node", value_name = "NODE")]
        as_node: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert threads into another database in the other schema: LangGraph's (SQLite or
    /// Postgres saver) or Flashback's three-table store. DST is created when missing; each
    /// thread is one transaction on it. `--dry-run` reads everything and says what the values
    /// take as LangGraph stores them and in the three-table store.
    Convert {
        /// The source: a `.sqlite` file, a `postgres://` URL or a `langgraph dev` project folder.
        db: String,
        /// The destination: a `.sqlite` file (created when missing) or a `postgres://` URL.
        target: String,
        /// `three-table` or `langgraph`.
        #[arg(long, value_parser = ["three-table", "langgraph"])]
        to: String,
        /// Three-table: store every channel version whole (method A) instead of as deltas.
        #[arg(long)]
        whole_blobs: bool,
        /// Only these threads (repeatable; default: every thread).
        #[arg(long = "thread", value_name = "THREAD")]
        threads: Vec<String>,
        /// Write nothing; say what would be converted and how big it would be.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export an audit bundle: every checkpoint of a branch (or the whole tree) with decoded
    /// values, writes and metadata, a SHA-256 per checkpoint and a hash chain along parents.
    /// Secrets are always masked.
    Export {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Export the branch ending at this checkpoint (default: the whole tree).
        #[arg(long)]
        checkpoint: Option<String>,
        /// `json` or `html` (default: from the output file's extension, else json).
        #[arg(long, value_parser = ["json", "html"])]
        format: Option<String>,
        /// Mask values under keys matching PATTERN (case-insensitive glob, `*` and `?`;
        /// repeatable), e.g. `--redact '*token*'`.
        #[arg(long, value_name = "PATTERN")]
        redact: Vec<String>,
        /// On an encrypted database, export decrypted values (needs LANGGRAPH_AES_KEY);
        /// otherwise encrypted values are exported as their ciphertext's size and SHA-256.
        #[arg(long)]
        decrypt: bool,
        /// Output file.
        #[arg(short = 'o', long = "output")]
        output: std::path::PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check an exported bundle (JSON or HTML): every checkpoint hash, the hash chain and the
    /// bundle hash. Exits non-zero and lists what was tampered with.
    Verify {
        /// The exported file.
        file: std::path::PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the database as a LangGraph checkpointer: JSON-lines requests on stdin, one
    /// response line each on stdout (the protocol is described in `bridge.rs`).
    Bridge {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// Create the SQLite file if needed and run `setup()` (Postgres: run `setup()`).
        #[arg(long)]
        create: bool,
        /// The schema `--create` makes: `langgraph` (LangGraph's own tables, the default) or
        /// `three-table` (Flashback's store, `docs/three-table.md`; SQLite only). An existing
        /// database is opened as the schema it holds.
        #[arg(long, default_value = "langgraph")]
        schema: String,
        /// Three-table store: how `put` stores channel values, `incremental` (method B, the
        /// default) or `whole` (method A).
        #[arg(long, default_value = "incremental")]
        blobs: String,
    },
    /// Merge across branches: a new checkpoint on branch A (child of `--into`) taking channels
    /// from branch B (`--from`). `--dry-run` shows the fork point / A / B view and writes nothing.
    Merge {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Tip of branch A (the merge becomes its child).
        #[arg(long)]
        into: String,
        /// Tip of branch B (values are taken from here).
        #[arg(long)]
        from: String,
        /// CHANNEL or CHANNEL=take (B's value) or CHANNEL=append (A's list plus B's additions
        /// since the fork point); repeatable.
        #[arg(
            long = "channel",
            value_name = "CHANNEL[=take|append]",
            required = true
        )]
        channels: Vec<String>,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// Show the 3-way view and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild each channel from the pending writes along a branch with LangGraph's reducers
    /// (last value, list append, add_messages, dict merge) and report where the stored state
    /// disagrees. With `--repair` (three-table store): re-create the thread's missing or
    /// corrupt blob rows from the writes that produced them, in one transaction; shows what
    /// would be written unless `--yes`.
    Rebuild {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Tip of the branch (default: the head).
        #[arg(long, conflicts_with = "repair")]
        checkpoint: Option<String>,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "", conflicts_with = "repair")]
        ns: String,
        /// Re-create damaged blob rows (every namespace of the thread) from the writes.
        #[arg(long)]
        repair: bool,
        /// Really write the repaired rows (without it, nothing is written and what would be
        /// is shown).
        #[arg(long, requires = "repair")]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-run from a checkpoint: copy-fork it, run RUNNER (a shell command) with
    /// FLASHBACK_DB, FLASHBACK_THREAD_ID, FLASHBACK_CHECKPOINT_ID and FLASHBACK_CONFIG in its
    /// environment, and report every checkpoint it writes as it lands.
    Rerun {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// The checkpoint to re-run from.
        #[arg(long)]
        checkpoint: String,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// The program that resumes the graph, e.g. `python my_agent.py` (not for an Agent
        /// Server: it runs its own graph, from the checkpoint, and streams the run's events).
        #[arg(long, default_value = "")]
        runner: String,
        /// Stop the runner after this many seconds.
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..))]
        timeout: u32,
        /// Resume the waiting interrupt with this JSON value: the runner gets it in
        /// `FLASHBACK_RESUME` and passes it on as `Command(resume=…)`.
        #[arg(long)]
        resume: Option<String>,
        /// Print JSON lines: each checkpoint as the app's job event
        /// (`{"type": "checkpoint", …}`), then `{"type": "finished", "result": FORK}`.
        #[arg(long)]
        json: bool,
    },
    /// Search inside values: the threads (newest first) whose latest state holds TEXT, any
    /// case, in a key or a string or number value; one line per match with its path
    /// (`messages[2].content`) and the text around it. Secrets stay masked; values locked
    /// (encrypted, no key) or over the decode budget are not searched.
    Search {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The text to find.
        text: String,
        /// Stop after N matching threads.
        #[arg(long, value_name = "N", default_value_t = 200,
              value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
        /// Print JSON lines: each matching thread as the app's job event
        /// (`{"type": "search_hit", …}`), then `{"type": "finished", "result": SUMMARY}`.
        #[arg(long)]
        json: bool,
    },
    /// Where the bytes are: totals and the largest threads, namespaces, channels and nodes
    /// (documents, metadata, blobs and writes counted as stored), the largest checkpoints and
    /// values, channels stored whole again at every step, orphaned rows, and the file's free
    /// pages (SQLite) or the tables' sizes (Postgres). With THREAD: that thread, with each
    /// checkpoint's size. Read in one snapshot; nothing is written (docs/storage.md).
    Storage {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// One thread (all its namespaces).
        thread: Option<String>,
        /// Rows per list.
        #[arg(long, value_name = "N", default_value_t = 20,
              value_parser = clap::value_parser!(u32).range(1..=10_000))]
        top: u32,
        /// Print the app's JSON (`StorageReport`).
        #[arg(long)]
        json: bool,
    },
    /// The index advisor: which indexes would make the first page, a time range and the metadata
    /// filter fast, whether they are there, the planner's estimated gain (catalog reads only).
    /// `--create`/`--drop NAME|all` preview; `--yes` runs it (Postgres `CONCURRENTLY`, SQLite one
    /// transaction) and times the reads before and after. Only `flashback_*` indexes are touched.
    Index(doors::index::IndexArgs),
    /// Delete a thread: every checkpoint, write and blob of it, all namespaces (one transaction).
    Delete {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Really delete (without it, nothing is written and what would go is shown).
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a branch: a checkpoint (a fork, say a failed re-run's) and every checkpoint
    /// after it, with their writes (one transaction). Shows what would go unless `--yes`.
    DeleteBranch {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// The branch's first checkpoint.
        checkpoint: String,
        /// The checkpoint's namespace.
        #[arg(long, default_value = "")]
        ns: String,
        /// Really delete (without it, nothing is written and what would go is shown).
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Prune threads: keep only each namespace's latest checkpoints (`keep_latest`) or delete
    /// them (`delete`), as LangGraph's `prune` does — the threads named, or across the
    /// database those whose latest checkpoint is older than `--older-than` and/or whose status
    /// is one of `--status` (all conditions hold). Shows what would go unless `--yes`.
    Prune {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// Thread ids (with --older-than/--status: only these, if they also match).
        threads: Vec<String>,
        /// Only threads whose latest checkpoint is older than AGE: a number and a unit (s, m,
        /// h, d, w), e.g. 90m, 12h, 30d, 2w.
        #[arg(long, value_name = "AGE")]
        older_than: Option<String>,
        /// Only threads with this status (repeatable): finished, failed, interrupted, pending.
        #[arg(long, value_name = "STATUS", value_parser = ["finished", "failed", "interrupted", "pending"])]
        status: Vec<String>,
        /// With keep_latest: keep the N latest checkpoints of each namespace along its head's
        /// lineage (default 1).
        #[arg(long, value_name = "N")]
        keep_last: Option<u32>,
        /// `keep_latest` or `delete`.
        #[arg(long, default_value = "keep_latest", value_parser = ["keep_latest", "delete"])]
        strategy: String,
        /// After pruning, give the space back: SQLite `VACUUM` (it stops every writer while it
        /// runs: the dry run says for how long; refused while another program has the file
        /// open), Postgres `VACUUM ANALYZE`.
        #[arg(long)]
        vacuum: bool,
        /// Run SQLite's VACUUM even while another program has the file open.
        #[arg(long, requires = "vacuum")]
        force_vacuum: bool,
        /// Really prune (without it, a dry run).
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy a thread (all namespaces, writes, blobs) to a new thread id, in the same database
    /// or into another one (`--to`, SQLite ↔ Postgres).
    Copy {
        /// The source database.
        db: String,
        /// The source thread id.
        source: String,
        /// The new thread id (must not exist yet).
        target: String,
        /// Another database to copy into (must hold a LangGraph schema).
        #[arg(long)]
        to: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the Flashback UI (the desktop app's screens) and its commands over HTTP on
    /// 127.0.0.1, for a browser; the URL printed at start carries a random access token.
    Serve {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL (or use --demo).
        db: Option<String>,
        /// Serve the built-in demo database (a private copy in Flashback's data directory).
        #[arg(long)]
        demo: bool,
        /// Port (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Let the browser re-run from a checkpoint, which runs a command on this machine
        /// (off by default: whoever has the URL could run anything).
        #[arg(long)]
        allow_run: bool,
        /// Let exports be written into DIR (and nowhere else) on this machine; by default the
        /// server writes no files and the browser downloads each export.
        #[arg(long, value_name = "DIR")]
        export_dir: Option<std::path::PathBuf>,
    },
    /// A Model Context Protocol server for one database (stdio; `--http PORT` for streamable
    /// HTTP on 127.0.0.1), for a coding assistant: the read commands as tools (`threads`,
    /// `history`, `state`, `diff`, `watch`, `search`, …), threads and checkpoints as resources,
    /// and a prompt on why a thread failed or stopped (docs/mcp.md).
    Mcp {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// Serve streamable HTTP at http://127.0.0.1:PORT/mcp (a bearer token is printed, or
        /// taken from FLASHBACK_MCP_TOKEN) instead of stdio.
        #[arg(long, value_name = "PORT")]
        http: Option<u16>,
        /// Offer the writes (fork, merge, delete, delete_branch, prune, copy, repair,
        /// store_put, store_delete), each with `dry_run` defaulting to true.
        #[arg(long)]
        allow_writes: bool,
        /// Also offer `rerun`, which runs a command on this machine (needs --allow-writes).
        #[arg(long, requires = "allow_writes")]
        allow_run: bool,
    },
    /// Compare two checkpoints of a thread: changed channels first, list items added,
    /// removed and changed, messages matched by id.
    Diff {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// The older checkpoint.
        a: String,
        /// The newer checkpoint.
        b: String,
        /// Namespace of both (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A branch as ordered steps, root first: the tasks due at each checkpoint, the writes
    /// they made and the channels that changed.
    Replay {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Tip of the branch (default: the namespace's head).
        #[arg(long)]
        tip: Option<String>,
        /// Namespace (default: the root graph, "").
        #[arg(long, default_value = "")]
        ns: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// LangGraph's memory Store (long-term memory): list, get, search, put and delete items
    /// by namespace (`users/u-1`) and key.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Watch a key: every checkpoint where the value at PATH changed (along every branch: the
    /// head's line from the root, then branch by branch), with the node whose write produced it.
    Watch(watch::WatchArgs),
    /// The thread's checkpoint DAG as branch lanes (text).
    Graph {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Print the layout as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The thread's topology from what ran: each node with how often it ran, failed or
    /// waited, the transitions between them (`A → B ×n`), sub-agents indented under the node
    /// that ran them.
    Topology {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://HOST:PORT` URL.
        db: String,
        /// The thread id.
        thread: String,
        /// Other threads of the same graph to add up (at most 99).
        more: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

// Decoding allocates many small values; mimalloc is markedly faster than glibc malloc here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match doors::run(cli.command).await {
        Ok(doors::Outcome::Done(text)) => {
            out::stdout(&text);
            ExitCode::SUCCESS
        }
        Ok(doors::Outcome::Failed(text, e)) => {
            out::stdout(&text);
            out::stderr_line(&format!("flashback: {e}"));
            ExitCode::from(e.code.exit_code())
        }
        Ok(doors::Outcome::Tampered(report)) => {
            out::stdout(&report);
            out::stderr_line("flashback: the bundle failed verification");
            ExitCode::from(5)
        }
        Err(e) => {
            out::stderr_line(&format!("flashback: {e}"));
            ExitCode::from(e.code.exit_code())
        }
    }
}
