//! The Tauri commands: one per entry of `flashback_api::for_each_command!` (the one table of
//! commands), each forwarding to the `Api` method of the same name with one `req` struct, so
//! Tauri IPC and `flashback serve`'s HTTP send the same `{"req": {...}}` arguments. The same
//! table gives [`specta_builder`], which declares them to Tauri and to the TypeScript bindings.

use flashback_api::{for_each_command, Api, ApiError};
use tauri::State;
use tauri_specta::{collect_commands, Builder};

macro_rules! tauri_commands {
    ($( $(#[$doc:meta])* $name:ident ( $($req:ty)? ) -> $resp:ty; )*) => {
        $(
            $(#[$doc])*
            #[tauri::command]
            #[specta::specta]
            pub async fn $name(api: State<'_, Api> $(, req: $req)?) -> Result<$resp, ApiError> {
                api.$name($({ let r: $req = req; r })?).await
            }
        )*

        /// Every command of the app, for Tauri's invoke handler and the bindings.
        pub fn specta_builder<R: tauri::Runtime>() -> Builder<R> {
            Builder::<R>::new()
                .commands(collect_commands![$($name),*])
                // Job results travel as JSON; their shapes are exported for the UI.
                .typ::<flashback_api::ExportResult>()
                .typ::<flashback_api::ForkResult>()
                .typ::<flashback_api::ValueSearchSummary>()
                .typ::<flashback_api::ConvertReport>()
                .typ::<flashback_api::StorageReport>()
                // Counts and steps are u32/i32 or small i64 (task write idx, steps): safe as
                // numbers.
                .dangerously_cast_bigints_to_number()
                // One TypeScript type per Rust type (responses always carry every field).
                .disable_serde_phases()
        }
    };
}

for_each_command!(tauri_commands);
