//! Settings: what the UI keeps between runs (theme, runner commands, UI state).

use crate::error::{ApiError, ApiResult};
use crate::types::SetSettingRequest;
use crate::Api;

impl Api {
    /// Save a setting: `theme` (`system`, `light`, `dark`) or `runner:<location>`.
    pub async fn set_setting(&self, req: SetSettingRequest) -> ApiResult<()> {
        let ok = match req.key.as_str() {
            "theme" => req
                .value
                .as_deref()
                .is_none_or(|v| matches!(v, "system" | "light" | "dark")),
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
}
