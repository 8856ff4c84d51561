//! Edit forks: a copy fork with some channels replaced by user-given values.
//!
//! An *edit fork* of checkpoint `X` is what Python's `graph.update_state(config_at_X, …)` stores,
//! with the new channel values given directly instead of produced by a node's writers:
//!
//! * a new checkpoint, parent `X`, `step: X.step + 1`, the newest id (`uuid6(step)`), so the
//!   thread's head moves there and `graph.invoke(None, config)` continues from it;
//! * `X`'s channel values, with each edited channel replaced by the value its JSON view
//!   ([`flashback_codec::view`]) describes — turned back into a typed value with
//!   [`flashback_codec::unview`], using the channel's current value as the template, so a
//!   message stays an `AIMessage` (ext 5) and a dataclass stays a dataclass; a channel the
//!   checkpoint does not have yet is added;
//! * the edited channels get **one** new version, `get_next_version(max(all versions))`, as
//!   Python's `apply_writes` bumps every channel a step updated; other versions and
//!   `versions_seen` are copied unchanged, `updated_channels` is null (as on every
//!   `update_state` checkpoint);
//! * metadata `{"source": "update", "step", "parents", "flashback": {"action": "edit_fork",
//!   "forked_from": X, "edited": [channels]}}`;
//! * no pending writes. On Postgres, blobs are written for the edited channels only
//!   (`new_versions`); the others share the existing blobs.
//!
//! Every edit is validated before anything is written: an unknown checkpoint or a value that
//! does not fit (e.g. a malformed `$type` object, a masked secret with nothing to keep, an
//! undecodable `$error` value) is an error naming the channel and the JSON path, and the
//! database is left untouched.
//!
//! Differences from `update_state`: no node's writers run (no `branch:to:*` channels or Sends
//! are produced, and `versions_seen` is not advanced for any node), and the edited values are
//! not also stored as pending writes on `X`.

use crate::action::Action;
use crate::delta::DeltaOptions;
use crate::error::EngineError;
use crate::fork::{load_rebuilt, set_channels, write_fork, ForkResult};
use flashback_codec::unview::decoded_from_view;
use flashback_storage::{CheckpointSaver, StoreError};
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// The JSON path prefix of a channel's value in error messages: `values.messages`,
/// `values["branch:to:agent"]`.
pub fn channel_path(channel: &str) -> String {
    let mut chars = channel.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        format!("values.{channel}")
    } else {
        format!("values[{}]", Json::String(channel.to_owned()))
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::Store(StoreError::InvalidInput(message))
}

/// Write an edit fork of `checkpoint_id` (one transaction); see the module docs. `edits` are
/// `(channel, JSON view of the new value)` pairs; each channel may appear once.
pub async fn edit_fork(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    edits: &[(String, Json)],
    opts: &DeltaOptions,
) -> Result<ForkResult, EngineError> {
    if edits.is_empty() {
        return Err(invalid(
            "edit fork: no channel to set (use a copy fork to fork without changes)".into(),
        ));
    }
    for (i, (channel, _)) in edits.iter().enumerate() {
        if channel.is_empty() {
            return Err(invalid("edit fork: empty channel name".into()));
        }
        if edits[..i].iter().any(|(c, _)| c == channel) {
            return Err(invalid(format!(
                "edit fork: channel {channel:?} is set more than once"
            )));
        }
    }
    let (source, delta) =
        load_rebuilt(saver, thread_id, checkpoint_ns, checkpoint_id, opts).await?;

    // Validate and convert every edit before writing anything.
    let mut new_values = Vec::with_capacity(edits.len());
    for (channel, json) in edits {
        let template = source.checkpoint.value(channel).map(Arc::as_ref);
        let value =
            decoded_from_view(json, template, &channel_path(channel)).map_err(|source| {
                EngineError::InvalidEdit {
                    channel: channel.clone(),
                    source,
                }
            })?;
        new_values.push((channel.clone(), Arc::new(value)));
    }

    let edited: Vec<&str> = edits.iter().map(|(c, _)| c.as_str()).collect();
    let note = json!({"action": Action::EditFork.as_str(), "forked_from": checkpoint_id, "edited": edited});
    write_fork(
        saver,
        &source,
        &delta,
        "update",
        note,
        |checkpoint, dialect| set_channels(checkpoint, new_values, dialect),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::channel_path;

    #[test]
    fn channel_paths() {
        assert_eq!(channel_path("messages"), "values.messages");
        assert_eq!(
            channel_path("branch:to:agent"),
            "values[\"branch:to:agent\"]"
        );
    }
}
