//! The three-table store (`docs/three-table.md`): Flashback's own checkpoint schema, with
//! channel values stored whole or as deltas of the version before them.
//!
//! [`sqlite::ThreeTableStore`] reads a SQLite file holding it (read-only, nothing created
//! beside the file); [`sqlite::ThreeTableSaver`] writes it ([`crate::CheckpointSaver`] and
//! [`crate::maintenance::SaverMaintenance`]). On Postgres, [`postgres::ThreeTablePg`] does
//! both (reads in read-only transactions). [`crate::open`] picks them when the detected
//! layout is [`crate::SchemaKind::ThreeTable`] (its tables, and `checkpoints` with a
//! `checkpoint_ns_hash` column).

mod assemble;
pub use flashback_codec::delta;
#[cfg(feature = "postgres")]
pub(crate) mod info;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod repair;
pub mod rows;
pub mod sqlite;
mod values;

/// How `put` stores channel values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Blobs {
    /// Method A: every new channel version stored whole.
    Whole,
    /// Method B (the default): a new version stored as a delta of the parent checkpoint's
    /// version of the channel when one reproduces it byte for byte.
    #[default]
    Incremental,
}

impl std::str::FromStr for Blobs {
    type Err = crate::StoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "whole" | "a" | "A" => Ok(Blobs::Whole),
            "incremental" | "b" | "B" => Ok(Blobs::Incremental),
            other => Err(crate::StoreError::InvalidInput(format!(
                "blobs {other:?}: expected `whole` (method A) or `incremental` (method B)"
            ))),
        }
    }
}

/// Options of a three-table saver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreeTableOptions {
    /// Method A or B.
    pub blobs: Blobs,
}

impl ThreeTableOptions {
    /// From a command line's `--schema langgraph|three-table` and `--blobs
    /// incremental|whole`: `Some` for the three-table store, `None` for LangGraph's schema.
    pub fn parse(schema: &str, blobs: &str) -> Result<Option<Self>, crate::StoreError> {
        match schema {
            "three-table" => Ok(Some(ThreeTableOptions {
                blobs: blobs.parse()?,
            })),
            "langgraph" => Ok(None),
            other => Err(crate::StoreError::InvalidInput(format!(
                "schema {other:?}: expected `langgraph` or `three-table`"
            ))),
        }
    }
}
