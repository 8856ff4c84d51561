//! The index advisor's requests and answers (`index_advice`, `index_apply`); the advice
//! itself is storage's [`flashback_storage::indexes::IndexReport`].

use flashback_storage::indexes::{IndexAction, IndexPlan, IndexReport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use specta::Type;

/// Which indexes would make the thread list, the newest-first page and the metadata filter
/// fast (catalog queries and the planner's estimates only; nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct IndexAdviceRequest {
    /// The database handle.
    pub db: String,
}

/// Create or drop Flashback's indexes (`flashback_*` only), or preview it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct IndexApplyRequest {
    /// The database handle.
    pub db: String,
    /// `create` or `drop`.
    pub action: IndexAction,
    /// Index names from the advice, or `all` (create: the recommended ones; drop: every
    /// `flashback_*` index there).
    pub names: Vec<String>,
    /// Only say what would run (the statements, estimated size and time); nothing is written.
    pub dry_run: bool,
}

/// One read timed on the open database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ReadTiming {
    /// The read, in words.
    pub read: String,
    /// How long it took, milliseconds.
    pub millis: f64,
    /// Threads it returned.
    pub threads: u32,
}

/// What an index action ran (or would run), with the reads timed before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct IndexApplyReport {
    /// Whether this was only a preview.
    pub dry_run: bool,
    /// The statements and their estimates.
    pub plan: IndexPlan,
    /// How long the statements took, seconds (`None` for a preview).
    pub seconds: Option<f64>,
    /// The thread list's first page and a metadata filter, timed before (empty for a
    /// preview).
    pub before: Vec<ReadTiming>,
    /// The same reads after.
    pub after: Vec<ReadTiming>,
    /// The advice after the action (`None` for a preview).
    pub advice: Option<IndexReport>,
}
