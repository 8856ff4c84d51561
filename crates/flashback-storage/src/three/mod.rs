//! The three-table store (`docs/three-table.md`): Flashback's own checkpoint schema, with
//! channel values stored whole or as deltas of the version before them.

pub mod delta;
