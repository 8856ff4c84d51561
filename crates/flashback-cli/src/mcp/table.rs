//! The command table (`flashback_api::for_each_command!`) as the MCP door needs it, generated:
//! for every command, its request's JSON Schema (from the request type's `JsonSchema`) and a
//! typed call that returns the response both as the JSON every door returns and as the typed
//! value (so the CLI's human renderers can print it).

use flashback_api::{Api, ApiError, ErrorCode};
use serde_json::Value as Json;
use std::any::Any;
use std::marker::PhantomData;

/// A command's answer: the JSON the app receives, and the typed response.
pub struct Answer {
    /// Exactly what `Api::dispatch` (and so `flashback … --json`) returns.
    pub json: Json,
    /// The response itself, for the human renderers.
    pub typed: Box<dyn Any + Send>,
    /// Text already written for it (a job's or a preview's), when the renderers have none.
    pub text: Option<String>,
}

/// The schema of a request type, when it has one (`JsonSchema` is derived on the requests the
/// tools take; the app-only commands' requests need none).
pub struct Probe<T>(PhantomData<T>);

/// Chosen for `&Probe<T>` when `T: JsonSchema` (method resolution tries it before
/// [`NoSchema`], which needs one more auto-reference).
pub trait HasSchema {
    /// The JSON Schema, as a JSON object.
    fn schema(&self) -> Option<Json>;
}

impl<T: schemars::JsonSchema> HasSchema for &Probe<T> {
    fn schema(&self) -> Option<Json> {
        Some(schemars::schema_for!(T).to_value())
    }
}

/// The fallback: a request type without a schema.
pub trait NoSchema {
    /// None.
    fn schema(&self) -> Option<Json>;
}

impl<T> NoSchema for Probe<T> {
    fn schema(&self) -> Option<Json> {
        None
    }
}

/// The request, or which argument does not fit and why (`a.checkpoint_id: invalid type…`).
fn parse<T: serde::de::DeserializeOwned>(req: Json) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(req).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ApiError::invalid(format!("bad arguments: {inner}"))
        } else {
            ApiError::invalid(format!("bad arguments: {path}: {inner}"))
        }
    })
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Json, ApiError> {
    serde_json::to_value(v)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot serialise: {e}")))
}

macro_rules! mcp_table {
    ($( $(#[$doc:meta])* $name:ident ( $($req:ty)? ) -> $resp:ty; )*) => {
        /// The JSON Schema of `command`'s request (with its `db` member), if it has one.
        pub fn request_schema(command: &str) -> Option<Json> {
            match command {
                $(
                    stringify!($name) => {
                        #[allow(unused_imports)]
                        use self::{HasSchema as _, NoSchema as _};
                        None::<Json> $( .or((&&Probe::<$req>(PhantomData)).schema()) )?
                    }
                )*
                _ => None,
            }
        }

        /// Call `command` with its request as JSON (the `db` handle included).
        pub async fn call(api: &Api, command: &str, req: Json) -> Result<Answer, ApiError> {
            let _ = &req;
            match command {
                $(
                    stringify!($name) => {
                        let out: $resp = api.$name($( parse::<$req>(req)? )?).await?;
                        Ok(Answer { json: to_json(&out)?, typed: Box::new(out), text: None })
                    }
                )*
                other => Err(ApiError::not_found(format!("unknown command {other:?}"))),
            }
        }

        /// Check `req` against `command`'s request type without calling it.
        pub fn check(command: &str, req: &Json) -> Result<(), ApiError> {
            let _ = req;
            match command {
                $(
                    stringify!($name) => {
                        $( parse::<$req>(req.clone())?; )?
                        Ok(())
                    }
                )*
                other => Err(ApiError::not_found(format!("unknown command {other:?}"))),
            }
        }

        /// Every command of the table.
        #[cfg(test)]
        pub const COMMANDS: &[&str] = &[$(stringify!($name)),*];
    };
}

flashback_api::for_each_command!(mcp_table);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::TOOLS;

    #[test]
    fn every_tool_is_a_command_with_a_schema_naming_db() {
        for t in TOOLS {
            assert!(COMMANDS.contains(&t.command), "{} calls no command", t.name);
            let schema = request_schema(t.command).unwrap_or(Json::Null);
            assert!(
                schema.pointer("/properties/db").is_some(),
                "{}: no schema with a db member: {schema}",
                t.name
            );
        }
    }

    #[test]
    fn app_only_requests_have_no_schema() {
        assert!(request_schema("open_database").is_none());
        assert!(request_schema("app_info").is_none());
    }
}
