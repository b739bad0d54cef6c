//! The model repository manifest (`hinfer.toml`), written by `hinfer optimize`
//! and read by the serving side. Plain data; the TOML codec lives in the toolchain.
//! The format is documented in `docs/MANIFEST.md`.

use serde::{Deserialize, Serialize};

/// `hinfer.toml`: one model, its interface, batching defaults and variants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version of this file.
    pub format: u32,
    pub model: ModelSection,
    pub batching: BatchingSection,
    /// Every variant, the reference (`fp32`) first.
    #[serde(default, rename = "variant")]
    pub variants: Vec<VariantEntry>,
}

/// The model's name, origin and interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSection {
    pub name: String,
    /// The file the variants were made from.
    pub source: String,
    pub inputs: Vec<IoEntry>,
    pub outputs: Vec<IoEntry>,
}

/// One input or output: KServe datatype and shape (`-1` for dynamic).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoEntry {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
}

/// Serving defaults for every variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchingSection {
    pub max_batch_size: usize,
    #[serde(default)]
    pub preferred_batch_sizes: Vec<usize>,
    #[serde(default)]
    pub max_queue_delay_us: u64,
}

/// One variant of the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantEntry {
    /// Unique name (`fp32`, `fp16`, `int8`, or a user's).
    pub name: String,
    /// Path relative to the manifest (`variants/fp32.onnx`).
    pub file: String,
    /// `fp32`, `fp16`, `int8`, `int8-mixed`, `pruned`, or `user`.
    pub precision: String,
    /// How it was made (`graph passes: ...`, `user-supplied`).
    pub origin: String,
    pub size_bytes: u64,
    /// Agreement with the reference on the evaluation data, if evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracyEntry>,
}

/// How a variant compares with the fp32 reference model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccuracyEntry {
    /// Evaluation samples (rows).
    pub samples: usize,
    /// Share of rows whose arg-max over the last axis equals the reference's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top1_agreement: Option<f64>,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Cosine similarity of the flattened outputs.
    pub cosine: f64,
    /// Share of rows whose arg-max equals the label, when labels were given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_accuracy: Option<f64>,
}
