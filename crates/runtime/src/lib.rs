//! Worker threads that own backend sessions.
//!
//! - [`ThreadBudget`] splits the machine's cores between workers so that, unless
//!   asked, no more threads are busy than there are cores.
//! - [`WorkerPool`] prepares a model once, gives each worker thread its own
//!   [`hinfer_core::ModelRunner`], warms every worker up at each configured batch
//!   size before reporting [`Health::Ready`], and runs jobs from a bounded queue.
//!
//! The pool is synchronous (std threads and channels); a job's reply is a
//! callback, so async callers can complete a oneshot channel from it.

mod budget;
mod error;
mod pool;
mod warmup;

pub use budget::ThreadBudget;
pub use error::{Error, Result};
pub use pool::{Health, PoolConfig, PoolStats, WorkerPool};
pub use warmup::{synthetic_inputs, WarmupPlan};
