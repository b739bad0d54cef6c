//! `hinfer optimize`: from one ONNX model to a model repository folder holding
//! its variants, each evaluated against the original and profiled.
//!
//! Variants made today: `fp32` (the default graph passes), `fp16` (float16
//! weights and compute, float32 interface) and user-supplied ones (a distilled
//! model, say) after an interface check. The repository layout and
//! `hinfer.toml` are described in `docs/MANIFEST.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hinfer_core::manifest::{BatchingSection, IoEntry, Manifest, ModelSection, VariantEntry};
use hinfer_core::{Backend, ModelMetadata, ModelSource, NamedTensor, SessionOptions, TensorSpec};
use serde::Serialize;

use crate::calibrate::{calibrate, CalibrationMethod};
use crate::passes::{default_passes, optimize, PassReport};
use crate::profile::{profile, LatencyProfile};
use crate::proto::encode_model;
use crate::transforms::{activations_to_calibrate, quantize_qdq, to_fp16, Fp16Options, Int8Options};
use crate::{eval, inspect, Error, Result};

/// What to build.
pub struct OptimizeRequest {
    /// The source model.
    pub model: PathBuf,
    /// The model's name in the repository.
    pub name: String,
    /// The repository folder; the model goes to `<out>/<name>/`.
    pub out: PathBuf,
    /// Evaluation inputs (every model input, a batch of rows).
    pub eval_inputs: Vec<NamedTensor>,
    /// One class per evaluation row, for label accuracy.
    pub labels: Option<Vec<i64>>,
    /// User variants: (name, file).
    pub user_variants: Vec<(String, PathBuf)>,
    /// Backends to profile on; the first also evaluates.
    pub backends: Vec<Arc<dyn Backend>>,
    /// Batch sizes to profile.
    pub batch_sizes: Vec<usize>,
    /// Timed runs per (variant, backend, batch size).
    pub iterations: usize,
    /// Intra-op threads while profiling.
    pub threads: usize,
    /// `max_batch_size` written to the manifest.
    pub max_batch_size: usize,
    /// Also make the fp16 variant (with these options).
    pub fp16: Option<Fp16Options>,
    /// Also make the int8 variant, calibrated on these batches with this method.
    pub int8: Option<(Vec<Vec<NamedTensor>>, CalibrationMethod)>,
}

/// `profile.json`: latencies per variant.
#[derive(Clone, Debug, Serialize)]
pub struct ProfileFile {
    pub model: String,
    pub variants: Vec<VariantProfile>,
}

/// One variant's latencies on every backend and batch size.
#[derive(Clone, Debug, Serialize)]
pub struct VariantProfile {
    pub variant: String,
    pub latency: Vec<LatencyProfile>,
}

/// What `optimize_model` produced.
pub struct OptimizeOutcome {
    /// The folder written (`<out>/<name>`).
    pub folder: PathBuf,
    pub manifest: Manifest,
    pub profile: ProfileFile,
    /// What the graph passes did.
    pub passes: Vec<PassReport>,
    /// Variants no backend could run: (name, reasons).
    pub skipped: Vec<(String, String)>,
}

/// Builds the variants, evaluates and profiles them, and writes the repository folder.
pub fn optimize_model(request: &OptimizeRequest) -> Result<OptimizeOutcome> {
    let backend = request.backends.first().ok_or_else(|| Error::Invalid {
        model: request.model.display().to_string(),
        reason: "no backend to evaluate with".into(),
    })?;
    let original = inspect::load_model(&request.model)?;
    let mut fp32 = original.clone();
    let passes = optimize(&mut fp32, &default_passes(), 10)?;

    let folder = request.out.join(&request.name);
    let variants_dir = folder.join("variants");
    std::fs::create_dir_all(&variants_dir).map_err(|source| Error::Read {
        path: variants_dir.clone(),
        source,
    })?;
    let write = |file: &Path, bytes: &[u8]| {
        std::fs::write(file, bytes).map_err(|source| Error::Read {
            path: file.to_path_buf(),
            source,
        })
    };

    let options = SessionOptions {
        intra_threads: request.threads.max(1),
        optimize: true,
    };
    let source = ModelSource::from_file(&request.model)?;
    let reference_model = backend.prepare(&source, &options)?;
    let metadata = reference_model.metadata().clone();
    let reference = reference_model.spawn()?.run(&request.eval_inputs)?;

    let mut candidates: Vec<(String, String, String, PathBuf)> = vec![];
    let fp32_path = variants_dir.join("fp32.onnx");
    write(&fp32_path, &encode_model(&fp32))?;
    let pass_names: Vec<&str> = passes.iter().map(|p| p.pass).collect();
    candidates.push((
        "fp32".into(),
        "fp32".into(),
        format!("graph passes: {}", dedup(&pass_names)),
        fp32_path,
    ));
    if let Some(fp16_options) = &request.fp16 {
        let mut half = fp32.clone();
        let report = to_fp16(&mut half, fp16_options)?;
        let path = variants_dir.join("fp16.onnx");
        write(&path, &encode_model(&half))?;
        let origin = format!(
            "fp32 + float16 weights and compute: {} nodes converted, {} kept in float32{}, {} casts",
            report.converted_nodes,
            report.blocked_nodes.len(),
            if report.blocked_nodes.is_empty() {
                String::new()
            } else {
                format!(" ({})", report.blocked_nodes.join(", "))
            },
            report.inserted_casts
        );
        candidates.push(("fp16".into(), "fp16".into(), origin, path));
    }
    if let Some((batches, method)) = &request.int8 {
        let options = Int8Options::default();
        let graph = fp32.graph.as_ref().ok_or_else(|| variant_error("int8", "no graph"))?;
        let tensors = activations_to_calibrate(graph, &options);
        let ranges = calibrate(&fp32, &tensors, batches, backend.as_ref(), *method)?;
        let mut int8 = fp32.clone();
        let report = quantize_qdq(&mut int8, &ranges, &options)?;
        // The float weights the quantized ones replaced are now unused.
        optimize(&mut int8, &[Box::new(crate::passes::EliminateDeadCode)], 10)?;
        let path = variants_dir.join("int8.onnx");
        write(&path, &encode_model(&int8))?;
        let origin = format!(
            "fp32 + static int8 QDQ (U8S8, per-channel weights), {method:?} calibration on {} batches: {} nodes, {} weights, {} activations",
            batches.len(),
            report.quantized_nodes,
            report.quantized_weights,
            report.quantized_activations
        );
        candidates.push(("int8".into(), "int8".into(), origin, path));
    }
    for (name, path) in &request.user_variants {
        if candidates.iter().any(|c| &c.0 == name) {
            return Err(variant_error(name, "a variant of that name already exists"));
        }
        let target = variants_dir.join(format!("{name}.onnx"));
        std::fs::copy(path, &target).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        candidates.push((
            name.clone(),
            "user".into(),
            format!("user-supplied ({})", path.display()),
            target,
        ));
    }

    let mut variants = vec![];
    let mut profiles = vec![];
    let mut skipped = vec![];
    for (name, precision, origin, path) in candidates {
        let model = ModelSource::from_file(&path)?;
        // Evaluate on the first backend that runs the variant.
        let mut evaluated = None;
        let mut failures = vec![];
        for b in &request.backends {
            let attempt = b.prepare(&model, &options).and_then(|prepared| {
                check_interface(&name, &metadata, prepared.metadata())
                    .map_err(|e| hinfer_core::Error::Config(e.to_string()))?;
                prepared.spawn()?.run(&request.eval_inputs)
            });
            match attempt {
                Ok(outputs) => {
                    evaluated = Some(outputs);
                    break;
                }
                Err(hinfer_core::Error::Config(reason)) => return Err(variant_error(&name, reason)),
                Err(e) => failures.push(format!("{}: {e}", b.kind())),
            }
        }
        let Some(outputs) = evaluated else {
            tracing::warn!(variant = %name, "no backend runs this variant: {}", failures.join("; "));
            skipped.push((name, failures.join("; ")));
            continue;
        };
        let accuracy = eval::compare(&reference[0].tensor, &outputs[0].tensor, request.labels.as_deref());
        let mut latency = vec![];
        for b in &request.backends {
            match profile(
                b.as_ref(),
                &model,
                &options,
                &request.eval_inputs,
                &request.batch_sizes,
                3,
                request.iterations,
            ) {
                Ok(p) => latency.extend(p),
                Err(e) => tracing::warn!(variant = %name, backend = %b.kind(), "not profiled: {e}"),
            }
        }
        let size_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let file = format!(
            "variants/{}",
            path.file_name().and_then(|f| f.to_str()).unwrap_or_default()
        );
        variants.push(VariantEntry {
            name: name.clone(),
            file,
            precision,
            origin,
            size_bytes,
            accuracy,
        });
        profiles.push(VariantProfile { variant: name, latency });
    }

    let manifest = Manifest {
        format: 1,
        model: ModelSection {
            name: request.name.clone(),
            source: request
                .model
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default()
                .to_string(),
            inputs: metadata.inputs.iter().map(io_entry).collect(),
            outputs: metadata.outputs.iter().map(io_entry).collect(),
        },
        batching: BatchingSection {
            max_batch_size: request.max_batch_size,
            preferred_batch_sizes: vec![],
            max_queue_delay_us: 0,
        },
        variants,
    };
    let profile_file = ProfileFile {
        model: request.name.clone(),
        variants: profiles,
    };
    let toml = toml::to_string_pretty(&manifest).map_err(|e| Error::Invalid {
        model: request.name.clone(),
        reason: format!("cannot write hinfer.toml: {e}"),
    })?;
    write(&folder.join("hinfer.toml"), toml.as_bytes())?;
    let json = serde_json::to_vec_pretty(&profile_file).map_err(|e| Error::Invalid {
        model: request.name.clone(),
        reason: format!("cannot write profile.json: {e}"),
    })?;
    write(&folder.join("profile.json"), &json)?;
    Ok(OptimizeOutcome {
        folder,
        manifest,
        profile: profile_file,
        passes,
        skipped,
    })
}

/// Reads a manifest back.
pub fn read_manifest(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| Error::Invalid {
        model: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn io_entry(spec: &TensorSpec) -> IoEntry {
    IoEntry {
        name: spec.name.clone(),
        datatype: spec.dtype.name().to_string(),
        shape: spec.shape.to_kserve(),
    }
}

fn dedup(names: &[&str]) -> String {
    let mut seen: Vec<&str> = vec![];
    for n in names {
        if !seen.contains(n) {
            seen.push(n);
        }
    }
    if seen.is_empty() {
        "none applied".into()
    } else {
        seen.join(", ")
    }
}

fn variant_error(name: &str, reason: impl Into<String>) -> Error {
    Error::Invalid {
        model: format!("variant `{name}`"),
        reason: reason.into(),
    }
}

/// A variant must take and give what the model does: same names, dtypes and ranks.
fn check_interface(name: &str, model: &ModelMetadata, variant: &ModelMetadata) -> Result<()> {
    for (kind, want, have) in [
        ("input", &model.inputs, &variant.inputs),
        ("output", &model.outputs, &variant.outputs),
    ] {
        for spec in want {
            let Some(other) = have.iter().find(|s| s.name == spec.name) else {
                return Err(variant_error(name, format!("has no {kind} `{}`", spec.name)));
            };
            if other.dtype != spec.dtype || other.shape.rank() != spec.shape.rank() {
                return Err(variant_error(
                    name,
                    format!(
                        "{kind} `{}` is {} {} but the model's is {} {}",
                        spec.name, other.dtype, other.shape, spec.dtype, spec.shape
                    ),
                ));
            }
        }
        if have.len() != want.len() {
            return Err(variant_error(
                name,
                format!("has {} {kind}s, the model {}", have.len(), want.len()),
            ));
        }
    }
    Ok(())
}
