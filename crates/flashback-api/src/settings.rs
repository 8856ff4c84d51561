//! Settings: what the UI keeps between runs (theme, runner commands, UI state).

use crate::error::{ApiError, ApiResult};
use crate::types::SetSettingRequest;
use crate::Api;
use flashback_codec::DecodeBudget;
use std::collections::BTreeMap;

/// The setting that holds the decode budget per value, in MB.
pub const MAX_VALUE_MB: &str = "max_value_mb";
/// Its default: values up to 16 MB are decoded.
pub const DEFAULT_MAX_VALUE_MB: u64 = 16;
/// The setting that holds where the desktop app was left (the UI's route).
pub const PLACE: &str = "place";
/// The prefix of the setting that remembers, per database location, the reducer chosen for
/// each DeltaChannel: `reducers:<location>` = `{"channel": "append" | "add_messages" |
/// "merge" | "last"}`.
pub const REDUCERS_PREFIX: &str = "reducers:";

/// A `reducers:<location>` value: a JSON object of known reducer names.
pub(crate) fn parse_reducers(value: &str) -> Result<BTreeMap<String, String>, String> {
    let map: BTreeMap<String, String> = serde_json::from_str(value)
        .map_err(|_| "expected a JSON object {\"channel\": \"reducer\"}".to_owned())?;
    for (channel, name) in &map {
        name.parse::<flashback_engine::merge::Reducer>()
            .map_err(|e| format!("channel {channel:?}: {e}"))?;
    }
    Ok(map)
}

impl Api {
    /// The decode budget databases are opened with: setting `max_value_mb` (MB per value, `0`
    /// for no limit; default 16), and 16 times that per read.
    pub(crate) fn decode_budget(&self) -> ApiResult<DecodeBudget> {
        let mb = match self.appdb.setting(MAX_VALUE_MB)? {
            Some(v) => v.parse::<u64>().unwrap_or(DEFAULT_MAX_VALUE_MB),
            None => DEFAULT_MAX_VALUE_MB,
        };
        Ok(DecodeBudget {
            max_value_bytes: mb << 20,
            max_request_bytes: (mb << 20).saturating_mul(16),
        })
    }

    /// Save a setting: `theme` (`system`, `light`, `dark`), `max_value_mb` (the decode budget
    /// per value, in MB; `0` for none; applies to databases opened afterwards),
    /// `runner:<location>`, `reducers:<location>` (see [`REDUCERS_PREFIX`]), `place` (the route
    /// the desktop app reopens at) or `ui:<key>`.
    pub async fn set_setting(&self, req: SetSettingRequest) -> ApiResult<()> {
        let ok = match req.key.as_str() {
            "theme" => req
                .value
                .as_deref()
                .is_none_or(|v| matches!(v, "system" | "light" | "dark")),
            // Where the desktop app was left: the UI's route (`#/thread/ID?db=…`), which names
            // a database by its public location only.
            PLACE => req
                .value
                .as_deref()
                .is_none_or(|v| v.starts_with("#/") && v.len() <= 4096),
            MAX_VALUE_MB => req
                .value
                .as_deref()
                .is_none_or(|v| v.parse::<u64>().is_ok_and(|n| n <= 1 << 20)),
            k if k.starts_with(REDUCERS_PREFIX) => match req.value.as_deref() {
                None => true,
                Some(v) => {
                    parse_reducers(v).map_err(|e| ApiError::invalid(format!("{k}: {e}")))?;
                    true
                }
            },
            k => k.starts_with("runner:") || k.starts_with("ui:"),
        };
        if !ok {
            return Err(ApiError::invalid(format!(
                "unknown setting {:?} = {:?}",
                req.key, req.value
            )));
        }
        self.appdb.set_setting(&req.key, req.value.as_deref())
    }

    /// The reducers remembered for the database at `location`, overridden by `given`.
    pub(crate) fn reducers_for(
        &self,
        location: &str,
        given: &BTreeMap<String, String>,
    ) -> ApiResult<BTreeMap<String, String>> {
        let mut out = match self
            .appdb
            .setting(&format!("{REDUCERS_PREFIX}{location}"))?
        {
            Some(v) => parse_reducers(&v).unwrap_or_default(),
            None => BTreeMap::new(),
        };
        out.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(out)
    }
}
