//! The index advisor: the indexes that make Flashback's scanning reads fast on LangGraph's
//! schema, which LangGraph's own schema lacks — the newest-first page of the thread list, a
//! time range and the metadata filter (`flashback threads --where`) — whether the database has
//! them, what the planner says they would save, and creating or dropping them.
//!
//! ```text
//!  the catalogue (here)     every index Flashback proposes, named `flashback_*` (so a drop
//!                           never touches another index), with the reads it serves
//!  sqlite.rs                sqlite_master, EXPLAIN QUERY PLAN, page counts; CREATE / DROP
//!                           in one BEGIN IMMEDIATE transaction
//!  postgres.rs              pg_index (valid / INVALID), EXPLAIN (FORMAT JSON), reltuples;
//!                           CREATE / DROP INDEX CONCURRENTLY (never blocks the savers)
//! ```
//!
//! Advice only reads the catalog and the planner's estimates (never a scan). Nothing is
//! created unless asked: [`apply`] with a plan the caller has previewed. The readers use the
//! indexes when they are there (`sqlite/threads.rs`, `postgres/threads.rs`: the newest threads
//! found by walking [`RECENT`]; the metadata filter's expression is [`sqlite_metadata_expr`])
//! and stay correct without them.

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

use crate::model::{Backend, SchemaInfo};
use crate::StoreError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Every index Flashback creates starts with this.
pub const PREFIX: &str = "flashback_";

/// The newest-first index: `checkpoints (checkpoint_id, thread_id DESC, checkpoint_ns)`. The
/// newest threads are its entries walked backwards (ids descending, ties by thread id
/// ascending, the thread list's order), and a time range is a range of it; it covers both.
pub const RECENT: &str = "flashback_checkpoints_recent";

/// The Postgres metadata index: GIN `jsonb_path_ops` over `metadata`, serving `metadata @> …`.
pub const METADATA_GIN: &str = "flashback_checkpoints_metadata";

/// The metadata keys SQLite gets an expression index for, when the newest checkpoints carry
/// them: the ones an Agent Server and the dev server add, by which a person looks for a thread.
pub const METADATA_KEYS: [&str; 4] = ["user_id", "assistant_id", "graph_id", "run_id"];

/// Threads on the first page of the thread list the advice estimates for (the app's page).
pub const PAGE: usize = 200;

/// Below this many checkpoints a scan takes milliseconds: the advice says "not needed".
pub const SMALL: u64 = 20_000;

/// The guarded `json_extract` of one metadata key on SQLite, exactly as the filter queries it
/// (`sqlite/query.rs`) and as its index is built: NULL where the metadata is not JSON, so a
/// damaged row matches nothing and never fails the query or the index build.
pub fn sqlite_metadata_expr(key: &str) -> String {
    format!(
        "CASE WHEN json_valid(CAST(metadata AS TEXT)) THEN json_extract(CAST(metadata AS TEXT), '$.{key}') END"
    )
}

/// The SQLite index name for a metadata key (`user_id` → `flashback_checkpoints_meta_user_id`).
pub fn sqlite_metadata_index(key: &str) -> String {
    let safe: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{PREFIX}checkpoints_meta_{safe}")
}

/// Whether an index is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum IndexState {
    /// Built and used by the planner.
    Present,
    /// Not there.
    Missing,
    /// Postgres: left `INVALID` by a failed or cancelled `CREATE INDEX CONCURRENTLY`; never
    /// used, still maintained on every write. Creating it again drops and rebuilds it.
    Invalid,
}

/// What the planner says of the read an index serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlanEstimate {
    /// The read, in words (`the 200 most recently active threads`).
    pub read: String,
    /// Its plan today, one line (SQLite: `SCAN checkpoints …` / `SEARCH …`; Postgres: the
    /// plan's nodes, outermost first).
    pub plan: String,
    /// Whether today's plan reads every row of `checkpoints` (a scan, or an aggregate over
    /// the whole primary key).
    pub scans: bool,
    /// Whether today's plan uses this index.
    pub uses_index: bool,
    /// Rows the read goes through today (estimated).
    pub rows_now: u64,
    /// Rows it would go through with the index (estimated; `None` when the planner gives no
    /// figure, as SQLite without statistics for a metadata value).
    pub rows_with_index: Option<u64>,
    /// Postgres: the plan's total cost today (the planner's units).
    pub cost_now: Option<f64>,
}

/// One index Flashback proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct IndexAdvice {
    /// Its name (always `flashback_…`).
    pub name: String,
    /// The table it indexes.
    pub table: String,
    /// The statement that creates it.
    pub definition: String,
    /// The reads it makes fast (`newest-first page`, `time range`, `metadata filter: user_id`).
    pub speeds: Vec<String>,
    /// Whether it is there.
    pub state: IndexState,
    /// Its size when present, bytes.
    pub size_bytes: Option<u64>,
    /// What it would take to build (estimated), bytes.
    pub estimated_bytes: u64,
    /// How long building it would take (estimated), seconds.
    pub estimated_seconds: f64,
    /// The planner's view of the read it serves.
    pub estimate: Option<PlanEstimate>,
    /// Worth creating: missing (or invalid) on a database big enough for the scan to show.
    pub recommended: bool,
}

/// The advice for a database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct IndexReport {
    /// Whether the source has SQL indexes at all (a `langgraph dev` folder, an Agent Server
    /// and the three-table store do not take these).
    pub applicable: bool,
    /// One line: what to do (or why nothing).
    pub summary: String,
    /// Checkpoint rows (estimated: SQLite's largest rowid, Postgres's `reltuples`).
    pub checkpoints: u64,
    /// The `checkpoints` table's size, bytes.
    pub table_bytes: u64,
    /// The indexes Flashback proposes.
    pub indexes: Vec<IndexAdvice>,
    /// Other `flashback_*` indexes on the table (an older definition): dropped by `--drop all`.
    pub others: Vec<String>,
}

impl IndexReport {
    /// The answer for a source without SQL indexes.
    pub fn not_applicable(why: &str) -> IndexReport {
        IndexReport {
            applicable: false,
            summary: format!("not applicable: {why}"),
            checkpoints: 0,
            table_bytes: 0,
            indexes: Vec::new(),
            others: Vec::new(),
        }
    }

    /// The names that are recommended (missing or invalid, and worth it).
    pub fn recommended(&self) -> Vec<String> {
        self.indexes
            .iter()
            .filter(|i| i.recommended)
            .map(|i| i.name.clone())
            .collect()
    }
}

/// Create or drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IndexAction {
    /// Create the indexes that are not there (an invalid one is dropped and rebuilt).
    Create,
    /// Drop the indexes that are there.
    Drop,
}

/// What an index action runs (its preview) or ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct IndexPlan {
    /// The action.
    pub action: IndexAction,
    /// The indexes it touches (the ones already as asked are left out).
    pub names: Vec<String>,
    /// The statements, in order.
    pub statements: Vec<String>,
    /// What the new indexes take (estimated), bytes; 0 for a drop.
    pub estimated_bytes: u64,
    /// How long it takes (estimated), seconds.
    pub estimated_seconds: f64,
    /// How it runs alongside the program writing the database, one line.
    pub note: String,
}

/// Whether the location has LangGraph's schema in SQL; `Err` is the one line saying why not.
fn applicable(schema: &SchemaInfo) -> Result<(), String> {
    match schema.backend {
        Backend::DevServer => return Err("a `langgraph dev` folder has no SQL indexes".into()),
        Backend::AgentServer => {
            return Err("an Agent Server's API does not show how it stores its threads".into())
        }
        Backend::Sqlite | Backend::Postgres => {}
    }
    if schema.layout().is_three_table() {
        return Err("the three-table store indexes its own tables".into());
    }
    if schema.shallow() {
        return Err("the shallow saver keeps one checkpoint per thread".into());
    }
    if !schema.holds.checkpoints() {
        return Err("this database holds no checkpoints".into());
    }
    Ok(())
}

/// The advice for the database at `location` (as opened: `schema` is what was detected).
/// Reads the catalog and the planner's estimates only.
pub async fn advise(location: &str, schema: &SchemaInfo) -> Result<IndexReport, StoreError> {
    if let Err(why) = applicable(schema) {
        return Ok(IndexReport::not_applicable(&why));
    }
    match schema.backend {
        #[cfg(feature = "postgres")]
        Backend::Postgres => postgres::advise(location).await,
        _ => {
            let location = location.to_owned();
            blocking(move || sqlite::advise(&location)).await
        }
    }
}

/// Which indexes `names` means (`all`: every proposed one that is not there to create — the
/// advice says whether they are worth it —, every `flashback_*` one there to drop) and the
/// statements that do it; nothing is run.
pub async fn plan(
    location: &str,
    schema: &SchemaInfo,
    action: IndexAction,
    names: &[String],
) -> Result<IndexPlan, StoreError> {
    let report = advise(location, schema).await?;
    if !report.applicable {
        return Err(StoreError::InvalidInput(format!(
            "indexes: {}",
            report.summary
        )));
    }
    let postgres = schema.backend == Backend::Postgres;
    choose(&report, action, names, postgres)
}

/// Run a plan made by [`plan`] (the caller has shown it): Postgres `CREATE INDEX
/// CONCURRENTLY` / `DROP INDEX CONCURRENTLY` one by one outside a transaction; SQLite every
/// statement in one `BEGIN IMMEDIATE` transaction.
pub async fn apply(
    location: &str,
    schema: &SchemaInfo,
    plan: &IndexPlan,
    progress: Arc<dyn Progress>,
) -> Result<(), StoreError> {
    if let Err(why) = applicable(schema) {
        return Err(StoreError::InvalidInput(format!(
            "indexes: not applicable: {why}"
        )));
    }
    for s in &plan.statements {
        if !s.contains(PREFIX) {
            return Err(StoreError::InvalidInput(format!(
                "refusing to run {s:?}: Flashback only creates and drops its own indexes"
            )));
        }
    }
    match schema.backend {
        #[cfg(feature = "postgres")]
        Backend::Postgres => postgres::apply(location, plan, progress.as_ref()).await,
        _ => {
            let (location, plan) = (location.to_owned(), plan.clone());
            blocking(move || sqlite::apply(&location, &plan, progress.as_ref())).await
        }
    }
}

/// Where an index build says which statement it runs (`done` of `total`) and learns that it
/// should stop: the storage report's [`Progress`].
pub use crate::report::Progress;

/// No progress shown, never stopped (a build run in one call).
pub struct Quiet;

impl Progress for Quiet {
    fn step(&self, _: u64, _: u64, _: &str) {}
    fn cancelled(&self) -> bool {
        false
    }
}

/// The error of a build stopped on request (what was done is undone: the SQLite transaction
/// rolled back, the Postgres index being built dropped).
pub(crate) fn cancelled(undone: &str) -> StoreError {
    StoreError::Query(cancelled_text(undone))
}

/// [`cancelled`]'s text.
pub(crate) fn cancelled_text(undone: &str) -> String {
    format!("{CANCELLED}{undone}")
}

/// How a cancelled build's error starts.
pub const CANCELLED: &str = "the index build was cancelled";

/// What statement `s` of `plan` does, for progress: `creating flashback_…`.
pub(crate) fn step_label(plan: &IndexPlan, s: &str) -> String {
    let verb = if s.starts_with("DROP") {
        "dropping"
    } else {
        "creating"
    };
    match plan.names.iter().find(|n| s.contains(n.as_str())) {
        Some(n) => format!("{verb} {n}"),
        None => verb.to_owned(),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Query(format!("index task failed: {e}")))?
}

/// The plan for `names` on what the advice found.
fn choose(
    report: &IndexReport,
    action: IndexAction,
    names: &[String],
    postgres: bool,
) -> Result<IndexPlan, StoreError> {
    let all = names.iter().any(|n| n == "all");
    for n in names.iter().filter(|n| n.as_str() != "all") {
        let known = report.indexes.iter().any(|i| &i.name == n) || report.others.contains(n);
        if !known {
            let choices: Vec<&str> = report.indexes.iter().map(|i| i.name.as_str()).collect();
            return Err(StoreError::InvalidInput(format!(
                "no index {n:?} is proposed here (choose from: {}, or all)",
                choices.join(", ")
            )));
        }
    }
    let picked = |name: &str| all || names.iter().any(|n| n == name);
    let (mut chosen, mut statements) = (Vec::new(), Vec::new());
    let (mut bytes, mut seconds) = (0u64, 0f64);
    let concurrently = if postgres { " CONCURRENTLY" } else { "" };
    for i in &report.indexes {
        if !picked(&i.name) {
            continue;
        }
        let there = i.state != IndexState::Missing;
        match action {
            IndexAction::Create if i.state == IndexState::Present => {}
            IndexAction::Create => {
                if i.state == IndexState::Invalid {
                    statements.push(format!("DROP INDEX{concurrently} IF EXISTS {}", i.name));
                }
                statements.push(i.definition.clone());
                bytes += i.estimated_bytes;
                seconds += i.estimated_seconds;
                chosen.push(i.name.clone());
            }
            IndexAction::Drop if there => {
                statements.push(format!("DROP INDEX{concurrently} IF EXISTS {}", i.name));
                seconds += 0.1;
                chosen.push(i.name.clone());
            }
            IndexAction::Drop => {}
        }
    }
    if action == IndexAction::Drop {
        for o in report.others.iter().filter(|o| picked(o)) {
            statements.push(format!("DROP INDEX{concurrently} IF EXISTS {o}"));
            chosen.push(o.clone());
        }
    }
    let note = match (postgres, action) {
        (true, IndexAction::Create) => {
            "CONCURRENTLY, one index at a time: the savers keep \
            reading and writing while it builds"
        }
        (true, IndexAction::Drop) => "CONCURRENTLY: the savers keep reading and writing",
        (false, IndexAction::Create) => {
            "one transaction (BEGIN IMMEDIATE): other writers \
            wait for it, readers do not"
        }
        (false, IndexAction::Drop) => {
            "one transaction (BEGIN IMMEDIATE); the file keeps its \
            size until a VACUUM"
        }
    };
    Ok(IndexPlan {
        action,
        names: chosen,
        statements,
        estimated_bytes: bytes,
        estimated_seconds: seconds,
        note: note.into(),
    })
}

/// The advice a source measured: its proposed indexes, the other `flashback_*` indexes it found
/// on the table (`there`, by name) listed as `others`, and the summary line.
fn report<V>(
    checkpoints: u64,
    table_bytes: u64,
    indexes: Vec<IndexAdvice>,
    there: &std::collections::BTreeMap<String, V>,
) -> IndexReport {
    let others = there
        .keys()
        .filter(|n| !indexes.iter().any(|i| &i.name == *n))
        .cloned()
        .collect();
    let mut report = IndexReport {
        applicable: true,
        summary: String::new(),
        checkpoints,
        table_bytes,
        indexes,
        others,
    };
    report.summary = summary(&report);
    report
}

/// The summary line of an advice.
fn summary(report: &IndexReport) -> String {
    let missing: Vec<&str> = report
        .indexes
        .iter()
        .filter(|i| i.state != IndexState::Present)
        .map(|i| i.name.as_str())
        .collect();
    let invalid = report
        .indexes
        .iter()
        .any(|i| i.state == IndexState::Invalid);
    let rec = report.recommended();
    if missing.is_empty() {
        "every index Flashback proposes is there".into()
    } else if report.checkpoints < SMALL && !invalid {
        format!(
            "not needed: {} checkpoints are read in milliseconds without indexes",
            report.checkpoints
        )
    } else if rec.is_empty() {
        format!("{} missing, none worth creating here", missing.len())
    } else {
        format!(
            "{} checkpoints: create {} to make the thread list's first page and the metadata \
             filter fast",
            report.checkpoints,
            rec.join(", ")
        )
    }
}

/// Rows a build goes through per second (estimated, on a slow disk).
const BUILD_ROWS_PER_SEC: f64 = 400_000.0;

fn build_seconds(rows: u64) -> f64 {
    ((rows as f64 / BUILD_ROWS_PER_SEC) * 10.0).ceil() / 10.0
}

#[cfg(test)]
mod tests;
