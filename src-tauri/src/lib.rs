//! Flashback desktop shell (wiring only).
//!
//! The GUI issue turns this package into the Tauri 2 app; the core crates it wires
//! (`flashback-storage`, `flashback-engine`) never depend on Tauri.

/// The name shown in the window title.
pub const APP_NAME: &str = "Flashback";
