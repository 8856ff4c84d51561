//! What every door shares: opening a location for one command, rendering its response (a
//! human table or `--json`), and how the command ends.

use flashback_api::{Api, ApiError, DbInfo, OpenRequest, SetSettingRequest};
use serde::Serialize;

/// What a command printed, and how it ends.
pub enum Outcome {
    /// Success: print this on stdout.
    Done(String),
    /// `verify` found tampering: print the report on stdout and exit 5.
    Tampered(String),
    /// A step failed after earlier ones committed: print what happened on stdout (the report,
    /// or with `--json` the response), the failure on stderr, and exit with its code.
    Failed(String, ApiError),
}

pub(crate) fn done(text: String) -> Result<Outcome, ApiError> {
    Ok(Outcome::Done(text))
}

/// Pretty JSON with a final newline: what `--json` prints.
pub fn json_text<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// Either rendering of a response.
pub(crate) fn render<T: Serialize>(json: bool, v: &T, human: impl FnOnce(&T) -> String) -> String {
    if json {
        json_text(v)
    } else {
        human(v)
    }
}

/// Open `location` read-only (nothing is remembered) and return the API and the handle.
pub(crate) async fn open(location: &str) -> Result<(Api, String), ApiError> {
    let (api, info) = open_info(location).await?;
    Ok((api, info.db))
}

/// [`open`], returning what the database holds.
pub(crate) async fn open_info(location: &str) -> Result<(Api, DbInfo), ApiError> {
    let api = Api::ephemeral()?;
    // The decode budget per value, in MB (0: none), as the app's `max_value_mb` setting.
    if let Ok(mb) = std::env::var("FLASHBACK_MAX_VALUE_MB") {
        api.set_setting(SetSettingRequest {
            key: "max_value_mb".into(),
            value: Some(mb.trim().to_owned()),
        })
        .await
        .map_err(|_| {
            ApiError::invalid(format!(
                "FLASHBACK_MAX_VALUE_MB={mb:?}: expected a number of megabytes (0 for no limit)"
            ))
        })?;
    }
    let info = api
        .open_database(OpenRequest {
            location: location.to_owned(),
            password: None,
            remember: false,
            save_password: false,
        })
        .await?;
    // A server's folder: what a reader must know (a running server, unsaved threads) goes to
    // stderr, so `--json` output stays one document.
    if let Some(server) = &info.server {
        for note in &server.notes {
            eprintln!("note: {note}");
        }
    }
    Ok((api, info))
}
