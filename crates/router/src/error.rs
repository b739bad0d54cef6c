//! Errors of the router.

use std::time::Duration;

/// Why a request was not answered with outputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The queue is at `max_queue_size`; retry later.
    #[error("model {model} is overloaded: its queue is full ({max} requests waiting); retry later")]
    QueueFull { model: String, max: usize },

    /// The request's timeout passed before it started running.
    #[error("request timed out after waiting {} µs in the queue (timeout {} µs)", waited.as_micros(), timeout.as_micros())]
    TimedOut { waited: Duration, timeout: Duration },

    /// The model is stopping.
    #[error("model {model} is shutting down")]
    ShuttingDown { model: String },

    /// The run failed in the worker pool or backend.
    #[error(transparent)]
    Runtime(#[from] hinfer_runtime::Error),

    /// The batch this request was part of failed (the first request of the batch
    /// gets the original error).
    #[error("{message}")]
    BatchFailed { message: String, label: &'static str },

    /// Invalid input caught by the core types.
    #[error(transparent)]
    Core(#[from] hinfer_core::Error),
}

impl Error {
    /// A stable short label: `overloaded`, `timeout`, `unavailable`, or the
    /// underlying error's label.
    pub fn label(&self) -> &'static str {
        match self {
            Error::QueueFull { .. } => "overloaded",
            Error::TimedOut { .. } => "timeout",
            Error::ShuttingDown { .. } => "unavailable",
            Error::Runtime(e) => e.label(),
            Error::BatchFailed { label, .. } => label,
            Error::Core(e) => e.label(),
        }
    }
}

/// Result with the router [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
