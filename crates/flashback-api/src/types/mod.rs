//! Requests and responses of the commands (exported to TypeScript through specta).
//!
//! Field names are snake_case on every door (the app, `serve`, the CLI's `--json`). Decoded
//! values travel as the JSON view of `docs/json-view.md`. Counts are `u32`; ids are strings.

mod index;
mod job;
mod page;
mod read;
mod sealed;
mod session;
mod store;
mod topology;
mod write;

pub use index::*;
pub use job::*;
pub use page::*;
pub use read::*;
pub use sealed::*;
pub use session::*;
pub use store::*;
pub use topology::*;
pub use write::*;

use serde_json::Value as Json;

/// Clamp a count for the wire.
pub(crate) fn count(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

/// `metadata.step` as an `i32` (the wire's step type).
pub(crate) fn step_of(metadata: &Json) -> Option<i32> {
    flashback_storage::metadata_step(metadata).and_then(|s| i32::try_from(s).ok())
}

/// `metadata.source`.
pub(crate) fn source_of(metadata: &Json) -> Option<String> {
    flashback_storage::metadata_source(metadata).map(str::to_owned)
}
