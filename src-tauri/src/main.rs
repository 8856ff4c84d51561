//! The Flashback desktop app: `flashback-app [DB | --demo]`.
// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    std::process::exit(flashback_app::run(std::env::args().skip(1).collect()));
}
