//! Load generation against KServe v2 endpoints (hinfer, or Triton itself).
//!
//! [`closed_loop`] keeps `concurrency` clients busy for a duration, each on its
//! own keep-alive connection, sending Triton binary-tensor (or JSON) requests
//! built once up front, and reports throughput and latency percentiles.

mod client;
mod load;

pub use client::{HttpClient, HttpError};
pub use load::{build_request, closed_loop, LoadConfig, LoadReport, RequestBody};
