//! hinfer's model toolchain: reading, inspecting and (later) transforming ONNX models.
//!
//! This crate is synchronous and knows nothing of serving. It holds the ONNX
//! protobuf schema ([`proto`], faithful: re-encoding reproduces the file), the
//! model inspection used by `hinfer inspect` ([`inspect`]), and graph passes
//! ([`passes`]) that propose patches checked by [`graph::check`].

pub mod calibrate;
mod error;
pub mod eval;
pub mod graph;
pub mod inspect;
pub mod optimize;
pub mod passes;
pub mod profile;
pub mod proto;
pub mod tensor_data;
pub mod transforms;

pub use error::{Error, Result};
pub use inspect::{load_model, ModelSummary};
