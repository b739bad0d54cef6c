//! hinfer's HTTP server: the KServe v2 / Open Inference Protocol REST API with
//! Triton's extensions (model configuration, statistics, binary tensor data),
//! health endpoints and Prometheus metrics.
//!
//! HTTP types live only here. Requests are validated against the model before
//! anything reaches the router; every error is JSON `{"error": "..."}` with
//! Triton's status mapping (see [`error::ApiError`]).

pub mod error;
pub mod kserve;
pub mod load;
pub mod metrics;
pub mod routes;
pub mod serve;
pub mod state;

pub use load::{load_models, LoadError, ModelDefaults, ModelToLoad};
pub use routes::{app, metrics_app};
pub use serve::{serve, Listen};
pub use state::{AppState, ServedModel};
