//! Worker threads that own backend sessions.
//!
//! - [`ThreadBudget`] splits the machine's cores between workers so that, unless
//!   asked, no more threads are busy than there are cores.
//! - [`WorkerPool`] prepares a model once, gives each worker thread its own
//!   [`hinfer_core::ModelRunner`], warms every worker up at each configured batch
//!   size before reporting [`Health::Ready`], and runs jobs from a bounded queue.
//! - [`repository::discover`] finds what `hinfer serve PATH` should load: a bare
//!   `.onnx` file, a folder of them, or a Triton-style model repository whose
//!   `config.pbtxt` files [`pbtxt::parse_model_config`] reads.
//!
//! The pool is synchronous (std threads and channels); a job's reply is a
//! callback, so async callers can complete a oneshot channel from it.

mod budget;
mod error;
mod pool;
mod warmup;

pub mod pbtxt;
pub mod repository;

pub use budget::{CpuGate, CpuPermit, ThreadBudget};
pub use error::{Error, Result};
pub use pbtxt::{parse_model_config, ModelConfigFile, PbtxtError};
pub use pool::{Health, PoolConfig, PoolStats, WorkerPool};
pub use repository::{discover, ModelVersion, RepositoryError, RepositoryModel};
pub use warmup::{synthetic_inputs, WarmupPlan};
