//! The vocabulary every hinfer crate speaks: [`DType`], [`Shape`], [`Tensor`],
//! [`ModelMetadata`], the synchronous [`Backend`] trait and the [`Error`] type.
//!
//! This crate is synchronous and dependency-light: no async runtime, no HTTP, no
//! metrics exporter. Everything above it (backends, runtime, server) builds on these
//! types.

pub use half;

pub mod backend;
pub mod compare;
pub mod dtype;
pub mod error;
pub mod latency;
pub mod manifest;
pub mod model;
pub mod npy;
pub mod raw;
pub mod shape;
pub mod tensor;

pub use backend::{Backend, BackendKind, ModelRunner, ModelSource, PreparedModel, SessionOptions};
pub use compare::{assert_close, Tolerance};
pub use dtype::DType;
pub use error::{Error, Result};
pub use model::{ModelMetadata, TensorSpec};
pub use shape::{Dim, Shape};
pub use tensor::{NamedTensor, Tensor, TensorData};
