//! Errors of the toolchain.

use std::path::PathBuf;

/// What can go wrong reading or transforming a model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },

    /// The bytes are not a valid ONNX protobuf (truncated, corrupted, not ONNX).
    #[error("{model}: not a valid ONNX model ({reason}); the file may be truncated or corrupted")]
    Decode { model: String, reason: String },

    /// A backend failed to load or run a model (or a variant).
    #[error(transparent)]
    Backend(#[from] hinfer_core::Error),

    /// The protobuf parses but the model is not usable.
    #[error("{model}: {reason}")]
    Invalid { model: String, reason: String },
}

/// Result with the toolchain [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
