//! [`UnviewError`]: why a JSON view could not be turned back into a value, with the JSON path
//! of the offending value.

use crate::view::SECRET_MASK;
use thiserror::Error;

/// Why a JSON view could not be turned back into a value. Every variant carries the JSON path
/// of the offending value (empty for the root, unless a root path was given).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnviewError {
    /// The JSON does not have the shape the view rules require.
    #[error("{}: {message}", display_path(path))]
    Invalid {
        /// Where, e.g. `values.messages[2].content`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A secret is shown masked and there is no template secret to keep.
    #[error("{}: a masked secret (\"{SECRET_MASK}\") cannot be stored; give the real value or keep the original", display_path(path))]
    MaskedSecret {
        /// Where.
        path: String,
    },
    /// An `{"$error": …}` object (a value that could not be decoded) that is not the original,
    /// unchanged value, or an opaque value (pickle, encrypted) that cannot be written.
    #[error("{}: {message}", display_path(path))]
    NotWritable {
        /// Where.
        path: String,
        /// What it is.
        message: String,
    },
}

impl UnviewError {
    /// The JSON path of the offending value.
    pub fn path(&self) -> &str {
        match self {
            UnviewError::Invalid { path, .. }
            | UnviewError::MaskedSecret { path }
            | UnviewError::NotWritable { path, .. } => path,
        }
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "$"
    } else {
        path
    }
}
