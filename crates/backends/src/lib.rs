//! hinfer's inference engines behind the [`hinfer_core::Backend`] trait.
//!
//! - [`OrtBackend`]: ONNX Runtime (cargo feature `ort`), the fast path; its shared
//!   library is found at run time (see [`ort_library`]).
//! - [`TractBackend`]: tract (cargo feature `tract`), pure Rust, the embedded
//!   default when ONNX Runtime is absent and a second opinion in tests.
//!
//! A backend whose feature is off still exists as a type whose constructor answers
//! [`hinfer_core::Error::NotCompiled`]; callers never `#[cfg]` around it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use hinfer_core::{Backend, BackendKind, Error, Result};

#[cfg(not(all(feature = "ort", feature = "tract")))]
mod disabled;
#[cfg(feature = "ort")]
mod ort_backend;
pub mod ort_library;
#[cfg(feature = "tract")]
mod tract_backend;

#[cfg(not(feature = "ort"))]
pub use disabled::OrtBackend;
#[cfg(not(feature = "tract"))]
pub use disabled::TractBackend;
#[cfg(feature = "ort")]
pub use ort_backend::OrtBackend;
#[cfg(feature = "tract")]
pub use tract_backend::TractBackend;

/// What the user asked for: one backend, or the best one available.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// ONNX Runtime if its library loads, else tract.
    #[default]
    Auto,
    /// Exactly this backend; fail if it is unavailable.
    Only(BackendKind),
}

impl FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        if s.eq_ignore_ascii_case("auto") {
            Ok(BackendChoice::Auto)
        } else {
            s.parse().map(BackendChoice::Only)
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendChoice::Auto => f.write_str("auto"),
            BackendChoice::Only(k) => write!(f, "{k}"),
        }
    }
}

/// Creates the backend of `kind`, or says why it cannot be had here.
pub fn create(kind: BackendKind) -> Result<Arc<dyn Backend>> {
    Ok(match kind {
        BackendKind::Ort => Arc::new(OrtBackend::new()?),
        BackendKind::Tract => Arc::new(TractBackend::new()?),
    })
}

/// Resolves a [`BackendChoice`]: `Auto` tries ONNX Runtime, then tract, and if
/// neither works reports both reasons.
pub fn select(choice: BackendChoice) -> Result<Arc<dyn Backend>> {
    match choice {
        BackendChoice::Only(kind) => create(kind),
        BackendChoice::Auto => create(BackendKind::Ort).or_else(|ort_err| {
            tracing::warn!("onnxruntime unavailable ({ort_err}); using tract");
            create(BackendKind::Tract)
                .map_err(|tract_err| Error::Config(format!("no backend is available: {ort_err}; {tract_err}")))
        }),
    }
}

/// The backends that can be created in this process, each with its description.
pub fn available() -> Vec<(BackendKind, Result<Arc<dyn Backend>>)> {
    BackendKind::ALL.into_iter().map(|k| (k, create(k))).collect()
}
