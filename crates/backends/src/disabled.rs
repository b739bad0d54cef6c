//! Stand-ins for backends left out of the build: they exist as types, so callers
//! never need `#[cfg]`, and they answer every call with [`Error::NotCompiled`].

#![allow(dead_code)]

use hinfer_core::Error;

/// Declares a backend type whose constructor always answers `NotCompiled`.
macro_rules! not_compiled_backend {
    ($ty:ident, $kind:expr, $backend:literal, $feature:literal) => {
        /// This backend was not compiled into this binary.
        pub struct $ty(());

        impl $ty {
            /// Always fails: the backend's cargo feature is off.
            pub fn new() -> hinfer_core::Result<$ty> {
                Err(Error::NotCompiled {
                    backend: $backend,
                    feature: $feature,
                })
            }
        }

        impl hinfer_core::Backend for $ty {
            fn kind(&self) -> hinfer_core::BackendKind {
                $kind
            }
            fn describe(&self) -> String {
                format!("{} (not compiled in)", $backend)
            }
            fn prepare(
                &self,
                _model: &hinfer_core::ModelSource,
                _options: &hinfer_core::SessionOptions,
            ) -> hinfer_core::Result<std::sync::Arc<dyn hinfer_core::PreparedModel>> {
                Err(Error::NotCompiled {
                    backend: $backend,
                    feature: $feature,
                })
            }
        }
    };
}

#[cfg(not(feature = "ort"))]
not_compiled_backend!(OrtBackend, hinfer_core::BackendKind::Ort, "onnxruntime", "ort");
#[cfg(not(feature = "tract"))]
not_compiled_backend!(TractBackend, hinfer_core::BackendKind::Tract, "tract", "tract");
