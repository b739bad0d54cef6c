//! The error type shared by the core types and the [`crate::Backend`] trait.

use std::path::PathBuf;

use crate::DType;

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong below the serving layers.
///
/// Messages name the offending input, file or backend so that a user can fix the
/// problem without reading code. [`Error::label`] gives a stable short string for
/// metrics and for mapping to protocol status codes.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Element count does not match the shape.
    #[error("shape {shape:?} holds {expected} elements but {actual} were given")]
    DataLength {
        shape: Vec<usize>,
        expected: usize,
        actual: usize,
    },

    /// A tensor has the wrong element type.
    #[error("input `{name}`: expected dtype {expected}, got {actual}")]
    DTypeMismatch {
        name: String,
        expected: DType,
        actual: DType,
    },

    /// A tensor's shape is not accepted by the model.
    #[error("input `{name}`: shape {actual:?} does not match the model's {expected}")]
    ShapeMismatch {
        name: String,
        expected: String,
        actual: Vec<usize>,
    },

    /// An input name the model does not have.
    #[error("unknown input `{name}`; the model's inputs are: {known}")]
    UnknownInput { name: String, known: String },

    /// A model input that was not supplied.
    #[error("missing input `{name}` ({spec})")]
    MissingInput { name: String, spec: String },

    /// The same input given twice.
    #[error("input `{name}` was given more than once")]
    DuplicateInput { name: String },

    /// A dtype name that is not recognised.
    #[error("unknown dtype `{0}`")]
    UnknownDType(String),

    /// A `.npy` file that cannot be read or written.
    #[error("{path}: {reason}")]
    Npy { path: PathBuf, reason: String },

    /// A file that cannot be read or written.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    /// A model file that cannot be parsed or is not valid.
    #[error("model {model}: {reason}")]
    InvalidModel { model: String, reason: String },

    /// A backend that was left out of this build.
    #[error("the {backend} backend is not compiled into this binary (rebuild with cargo feature `{feature}`)")]
    NotCompiled {
        backend: &'static str,
        feature: &'static str,
    },

    /// A backend that is compiled in but cannot work here (e.g. no shared library).
    #[error("the {backend} backend is unavailable: {reason}")]
    BackendUnavailable { backend: &'static str, reason: String },

    /// A backend failed to load or run a model.
    #[error("{backend}: {message}")]
    Backend { backend: &'static str, message: String },

    /// Something the backend or hinfer does not support yet.
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// A bad configuration value.
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl Error {
    /// A stable short label, used as metric label and to pick a protocol status code.
    ///
    /// `invalid_input` errors are the caller's fault (HTTP 400); `unavailable`
    /// means the server cannot serve this now (503); everything else is internal.
    pub fn label(&self) -> &'static str {
        match self {
            Error::DataLength { .. }
            | Error::DTypeMismatch { .. }
            | Error::ShapeMismatch { .. }
            | Error::UnknownInput { .. }
            | Error::MissingInput { .. }
            | Error::DuplicateInput { .. }
            | Error::UnknownDType(_)
            | Error::Npy { .. } => "invalid_input",
            Error::Io { .. } | Error::InvalidModel { .. } => "invalid_model",
            Error::NotCompiled { .. } | Error::BackendUnavailable { .. } => "unavailable",
            Error::Unsupported(_) => "unsupported",
            Error::Config(_) => "invalid_config",
            Error::Backend { .. } => "backend",
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
