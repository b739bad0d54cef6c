//! Admission, queues and dynamic batching in front of hinfer's worker pools.
//!
//! - [`batcher`]: Triton's dynamic-batching semantics as a plain state machine
//!   ([`BatcherState`]), tested without channels or sleeps.
//! - [`ModelQueue`]: the handle callers use; a thin tokio task owns the state,
//!   forms batches only when a worker is free (so batches grow under load), runs
//!   them on a [`hinfer_runtime::WorkerPool`] and answers each request.

pub mod batcher;
mod error;
mod queue;

pub use batcher::{BatchConfig, BatcherState, Entry, Next, QueueFull};
pub use error::{Error, Result};
pub use queue::{BatchSizeStats, InferRequest, InferResponse, ModelQueue, QueueStats, Timings};
