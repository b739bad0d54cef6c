//! Errors of the runtime.

/// What can go wrong starting or using a worker pool.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error from the backend or the core types (bad input, bad model, ...).
    #[error(transparent)]
    Core(#[from] hinfer_core::Error),

    /// The configuration asks for more busy threads than there are cores.
    #[error(
        "{workers} workers × {threads} threads = {} busy threads exceeds the {cores} cores available; \
         lower --threads/--workers or allow oversubscription",
        workers * threads
    )]
    Oversubscribed {
        workers: usize,
        threads: usize,
        cores: usize,
    },

    /// The job queue is full; the caller should retry later.
    #[error("the queue is full ({capacity} jobs waiting)")]
    Overloaded { capacity: usize },

    /// Warm-up failed, so the model never became ready.
    #[error("model {model} failed warm-up at batch {batch}: {source}")]
    WarmupFailed {
        model: String,
        batch: usize,
        source: hinfer_core::Error,
    },

    /// The pool is stopping or a worker died.
    #[error("the worker pool is shut down")]
    ShutDown,

    /// A worker panicked while running a job; the worker was restarted.
    #[error("a worker panicked while running the model: {0}")]
    WorkerPanicked(String),
}

impl Error {
    /// A stable short label (metrics, status mapping); see [`hinfer_core::Error::label`].
    pub fn label(&self) -> &'static str {
        match self {
            Error::Core(e) => e.label(),
            Error::Oversubscribed { .. } => "invalid_config",
            Error::Overloaded { .. } => "overloaded",
            Error::WarmupFailed { .. } | Error::ShutDown => "unavailable",
            Error::WorkerPanicked(_) => "backend",
        }
    }
}

/// Result with the runtime [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
