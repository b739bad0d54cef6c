//! hinfer's model toolchain: reading, inspecting and (later) transforming ONNX models.
//!
//! This crate is synchronous and knows nothing of serving. Today it holds the ONNX
//! protobuf schema ([`proto`]) and the model inspection used by `hinfer inspect`
//! ([`inspect`]).

mod error;
pub mod inspect;
pub mod proto;

pub use error::{Error, Result};
pub use inspect::{load_model, ModelSummary};
