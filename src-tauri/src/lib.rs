//! # Flashback desktop app (wiring only)
//!
//! The Tauri shell around `flashback-api`: it parses the command line, builds the [`Api`]
//! (desktop mode, keyring-backed passwords, the platform data directory), registers the
//! commands declared once in [`ipc::specta_builder`], and opens the window. No logic lives
//! here; `flashback serve` exposes the same commands over HTTP.

pub mod commands;
pub mod ipc;

use flashback_api::{Api, ApiConfig, HostMode, Initial, Policy};

/// What the command line asks for: `[DB]` or `--demo` (nothing: reopen the last database).
pub fn initial_from_args(args: &[String]) -> Result<Initial, String> {
    match args {
        [] => Ok(Initial::Last),
        [flag] if flag == "--demo" => Ok(Initial::Demo),
        [flag] if flag == "--help" || flag == "-h" => Err(
            "usage: flashback-app [DB | --demo]\n  DB: a .sqlite file or a postgres:// URL (default: the last database opened)".into(),
        ),
        [db] if !db.starts_with('-') => Ok(Initial::Location(db.clone())),
        _ => Err("usage: flashback-app [DB | --demo]".into()),
    }
}

/// The backend for the desktop app.
pub fn desktop_api(initial: Initial) -> Result<Api, flashback_api::ApiError> {
    Api::new(ApiConfig {
        host: HostMode::Desktop,
        data_dir: flashback_api::default_data_dir(),
        initial,
        secrets: Box::new(flashback_api::secrets::OsKeyring::new()),
        // The desktop app acts for the user who started it: re-run and exports anywhere.
        policy: Policy::full(),
    })
}

/// Run the app; returns the process exit code.
pub fn run(args: Vec<String>) -> i32 {
    let initial = match initial_from_args(&args) {
        Ok(i) => i,
        Err(usage) => {
            eprintln!("{usage}");
            return 2;
        }
    };
    let api = match desktop_api(initial) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("flashback-app: {e}");
            return 1;
        }
    };
    let builder = ipc::specta_builder::<tauri::Wry>();
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .manage(api)
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            Ok(())
        })
        .run(tauri::generate_context!());
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("flashback-app: {e}");
            1
        }
    }
}
