//! The synchronous backend contract.
//!
//! A [`Backend`] turns a model file into a [`PreparedModel`]: immutable, `Send +
//! Sync`, shared by `Arc`, holding the optimised graph and its [`ModelMetadata`].
//! Each worker thread then calls [`PreparedModel::spawn`] to get its own
//! [`ModelRunner`], the mutable per-worker state that runs batches. The trait
//! knows nothing of async runtimes or HTTP; the runtime crate puts threads and
//! queues around it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use crate::{Error, ModelMetadata, NamedTensor, Result};

/// Which engine executes a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// ONNX Runtime, loaded from its shared library.
    Ort,
    /// tract, the pure-Rust ONNX engine.
    Tract,
}

impl BackendKind {
    /// Every backend kind.
    pub const ALL: [BackendKind; 2] = [BackendKind::Ort, BackendKind::Tract];

    /// Short lowercase name (`ort`, `tract`), as used on the command line and in labels.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Ort => "ort",
            BackendKind::Tract => "tract",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "ort" | "onnxruntime" => Ok(BackendKind::Ort),
            "tract" => Ok(BackendKind::Tract),
            other => Err(Error::Config(format!(
                "unknown backend `{other}` (expected ort or tract)"
            ))),
        }
    }
}

/// How a backend should build a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionOptions {
    /// Threads one run may use (ONNX Runtime intra-op threads, tract's matmul pool).
    pub intra_threads: usize,
    /// Apply the engine's graph optimisations (on by default).
    pub optimize: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            intra_threads: 1,
            optimize: true,
        }
    }
}

/// A model to load: its bytes, and the file they came from when there is one
/// (needed for ONNX external data, which lives beside the model file).
#[derive(Clone)]
pub struct ModelSource {
    /// A human-readable name for messages (the file path or an embedded name).
    pub label: String,
    /// The serialised ONNX model.
    pub bytes: Arc<[u8]>,
    /// The file the bytes were read from.
    pub path: Option<PathBuf>,
}

impl ModelSource {
    /// Reads a model file; a missing or unreadable file is an error naming it.
    pub fn from_file(path: &Path) -> Result<ModelSource> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        if bytes.is_empty() {
            return Err(Error::InvalidModel {
                model: path.display().to_string(),
                reason: "the file is empty".into(),
            });
        }
        Ok(ModelSource {
            label: path.display().to_string(),
            bytes: bytes.into(),
            path: Some(path.to_path_buf()),
        })
    }

    /// Wraps model bytes that live in memory (an embedded model, say).
    pub fn from_bytes(label: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> ModelSource {
        ModelSource {
            label: label.into(),
            bytes: bytes.into(),
            path: None,
        }
    }
}

impl fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelSource")
            .field("label", &self.label)
            .field("bytes", &self.bytes.len())
            .field("path", &self.path)
            .finish()
    }
}

/// An inference engine able to prepare models.
pub trait Backend: Send + Sync {
    /// Which engine this is.
    fn kind(&self) -> BackendKind;

    /// One line saying what this backend is (version, library file, threads).
    fn describe(&self) -> String;

    /// Parses, checks and optimises a model. Errors name the model and the reason.
    fn prepare(&self, model: &ModelSource, options: &SessionOptions) -> Result<Arc<dyn PreparedModel>>;
}

/// A loaded model, shared between the workers that run it.
pub trait PreparedModel: Send + Sync {
    /// The model's inputs and outputs.
    fn metadata(&self) -> &ModelMetadata;

    /// Creates the per-worker state that runs the model.
    fn spawn(&self) -> Result<Box<dyn ModelRunner>>;
}

/// Per-worker execution state of a [`PreparedModel`].
pub trait ModelRunner: Send {
    /// Runs one batch. Inputs are validated against the metadata first; outputs
    /// come back in the model's output order.
    fn run(&mut self, inputs: &[NamedTensor]) -> Result<Vec<NamedTensor>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_kind_parses() {
        assert_eq!("ORT".parse::<BackendKind>().unwrap(), BackendKind::Ort);
        assert_eq!("onnxruntime".parse::<BackendKind>().unwrap(), BackendKind::Ort);
        assert!("tvm".parse::<BackendKind>().unwrap_err().to_string().contains("tvm"));
    }

    #[test]
    fn missing_and_empty_files_are_named() {
        let e = ModelSource::from_file(Path::new("/nonexistent/m.onnx"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/m.onnx"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("empty.onnx");
        std::fs::write(&p, b"").unwrap();
        let e = ModelSource::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }
}
