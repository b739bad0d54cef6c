//! `hinfer optimize`: build a model repository folder of measured variants.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use hinfer_backends::BackendChoice;
use hinfer_core::{npy, Backend, BackendKind};
use hinfer_runtime::ThreadBudget;
use hinfer_toolchain::calibrate::CalibrationMethod;
use hinfer_toolchain::optimize::{optimize_model, OptimizeRequest};
use hinfer_toolchain::transforms::Fp16Options;

use crate::inputs::{self, Assignment};

#[derive(Args, Debug)]
pub struct OptimizeArgs {
    /// The .onnx model.
    model: PathBuf,
    /// The repository folder to write; the model goes to <OUT>/<NAME>/.
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Model name in the repository (default: the file stem).
    #[arg(long)]
    name: Option<String>,
    /// Evaluation data as NAME=FILE.npy (every model input; rows are samples).
    #[arg(long = "eval-input", value_name = "NAME=FILE")]
    eval_inputs: Vec<Assignment>,
    /// One label per evaluation row (.npy of integers), for label accuracy.
    #[arg(long)]
    labels: Option<PathBuf>,
    /// Evaluate on synthetic data instead (outputs are compared, labels impossible).
    #[arg(long)]
    random_eval: bool,
    /// Rows of synthetic evaluation data.
    #[arg(long, default_value_t = 8)]
    random_rows: usize,
    /// A user-supplied variant as NAME=FILE.onnx (a distilled model, say). Repeatable.
    #[arg(long = "variant", value_name = "NAME=FILE")]
    variants: Vec<Assignment>,
    /// Backends to profile on: auto (every one that loads), ort, or tract.
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
    /// Batch sizes to profile (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    batch_sizes: Vec<usize>,
    /// Timed runs per variant, backend and batch size.
    #[arg(long, default_value_t = 30)]
    iterations: usize,
    /// Intra-op threads while profiling (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Skip the fp16 variant.
    #[arg(long)]
    no_fp16: bool,
    /// Op types to keep in float32 in the fp16 variant, besides the default block list.
    #[arg(long = "fp16-block-op", value_delimiter = ',')]
    fp16_block_ops: Vec<String>,
    /// Node names to keep in float32 in the fp16 variant.
    #[arg(long = "fp16-block-node", value_delimiter = ',')]
    fp16_block_nodes: Vec<String>,
    /// Calibration data for the int8 variant as NAME=FILE.npy (rows are samples); without it
    /// no int8 variant is made.
    #[arg(long = "calibration", value_name = "NAME=FILE")]
    calibration: Vec<Assignment>,
    /// Calibration method: minmax, entropy, or percentile:P (e.g. percentile:99.99).
    #[arg(long, default_value = "minmax", value_parser = parse_method)]
    calibration_method: CalibrationMethod,
    /// Rows per calibration batch.
    #[arg(long, default_value_t = 8)]
    calibration_batch: usize,
    /// max_batch_size written to hinfer.toml.
    #[arg(long, default_value_t = 8)]
    max_batch_size: usize,
}

fn parse_method(s: &str) -> Result<CalibrationMethod, String> {
    match s.split_once(':') {
        None if s == "minmax" => Ok(CalibrationMethod::MinMax),
        None if s == "entropy" => Ok(CalibrationMethod::Entropy),
        Some(("percentile", p)) => p
            .parse::<f64>()
            .ok()
            .filter(|p| (50.0..=100.0).contains(p))
            .map(CalibrationMethod::Percentile)
            .ok_or_else(|| format!("percentile:{p}: expected a percentage between 50 and 100")),
        _ => Err(format!(
            "unknown calibration method `{s}` (minmax, entropy, percentile:P)"
        )),
    }
}

/// Splits every calibration input into batches of `rows` rows (the last may be smaller).
fn calibration_batches(
    inputs: Vec<hinfer_core::NamedTensor>,
    rows: usize,
) -> Result<Vec<Vec<hinfer_core::NamedTensor>>> {
    let Some(first) = inputs.first() else { return Ok(vec![]) };
    let total = first.tensor.shape().first().copied().unwrap_or(0);
    if total == 0 {
        bail!("the calibration data holds no rows");
    }
    let sizes: Vec<usize> = (0..total)
        .step_by(rows.max(1))
        .map(|s| rows.max(1).min(total - s))
        .collect();
    let mut batches: Vec<Vec<hinfer_core::NamedTensor>> = sizes.iter().map(|_| vec![]).collect();
    for input in inputs {
        if input.tensor.shape().first() != Some(&total) {
            bail!(
                "calibration input `{}` has a different number of rows than the others",
                input.name
            );
        }
        for (batch, part) in batches.iter_mut().zip(input.tensor.split_batch(&sizes)?) {
            batch.push(hinfer_core::NamedTensor::new(input.name.clone(), part));
        }
    }
    Ok(batches)
}

/// Builds, evaluates, profiles and writes the variants; prints a table.
pub fn execute(args: OptimizeArgs) -> Result<()> {
    let backends: Vec<Arc<dyn Backend>> = match args.backend {
        BackendChoice::Auto => hinfer_backends::available()
            .into_iter()
            .filter_map(|(_, b)| b.ok())
            .collect(),
        BackendChoice::Only(kind) => vec![hinfer_backends::create(kind)?],
    };
    if backends.is_empty() {
        bail!("no backend is available to evaluate and profile with");
    }
    // Evaluate on ONNX Runtime when it is there: it is the reference engine.
    let mut backends = backends;
    backends.sort_by_key(|b| b.kind() != BackendKind::Ort);
    let name = match &args.name {
        Some(n) => n.clone(),
        None => args
            .model
            .file_stem()
            .and_then(|s| s.to_str())
            .context("the model path has no file name")?
            .to_string(),
    };
    let reference = backends[0].prepare(&hinfer_core::ModelSource::from_file(&args.model)?, &Default::default())?;
    let mut eval_inputs = inputs::read_inputs(&args.eval_inputs, reference.metadata())?;
    if eval_inputs.is_empty() && !args.random_eval {
        bail!("give evaluation data with --eval-input NAME=FILE.npy, or ask for --random-eval");
    }
    if args.random_eval {
        inputs::synthesize_missing(reference.metadata(), &mut eval_inputs, &[], args.random_rows)?;
    }
    let labels = match &args.labels {
        Some(path) => {
            let t = npy::read(path)?;
            let values: Vec<i64> = t
                .data()
                .to_f64_vec()
                .context("labels must be numbers")?
                .iter()
                .map(|&v| v as i64)
                .collect();
            Some(values)
        }
        None => None,
    };
    let user_variants = args
        .variants
        .iter()
        .map(|a| match &a.name {
            Some(n) => Ok((n.clone(), PathBuf::from(&a.value))),
            None => bail!("--variant {}: write NAME=FILE.onnx", a.value),
        })
        .collect::<Result<Vec<_>>>()?;
    let calibration = inputs::read_inputs(&args.calibration, reference.metadata())?;
    if !calibration.is_empty() {
        reference
            .metadata()
            .validate_inputs(&calibration)
            .context("--calibration data does not fit the model")?;
    }
    let int8 = if calibration.is_empty() {
        None
    } else {
        Some((
            calibration_batches(calibration, args.calibration_batch)?,
            args.calibration_method,
        ))
    };
    let threads = ThreadBudget::detect().per_worker(1, args.threads, false)?;
    let request = OptimizeRequest {
        model: args.model.clone(),
        name,
        out: args.out.clone(),
        eval_inputs,
        labels,
        user_variants,
        backends,
        batch_sizes: args.batch_sizes.clone(),
        iterations: args.iterations,
        threads,
        max_batch_size: args.max_batch_size,
        fp16: (!args.no_fp16).then(|| Fp16Options {
            block_ops: args.fp16_block_ops.clone(),
            block_nodes: args.fp16_block_nodes.clone(),
        }),
        int8,
    };
    let outcome = optimize_model(&request)?;
    for report in &outcome.passes {
        for note in &report.notes {
            println!("{:<24} {note}", report.pass);
        }
    }
    println!();
    println!(
        "{:<10} {:<9} {:>10} {:>8} {:>12} {:>9} {:>9}",
        "variant", "precision", "size", "top-1", "max abs err", "cosine", "accuracy"
    );
    for v in &outcome.manifest.variants {
        let a = v.accuracy.as_ref();
        let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.2}%", 100.0 * x));
        println!(
            "{:<10} {:<9} {:>10} {:>8} {:>12} {:>9} {:>9}",
            v.name,
            v.precision,
            format!("{:.1} KiB", v.size_bytes as f64 / 1024.0),
            pct(a.and_then(|a| a.top1_agreement)),
            a.map_or("-".into(), |a| format!("{:.2e}", a.max_abs_error)),
            a.map_or("-".into(), |a| format!("{:.6}", a.cosine)),
            pct(a.and_then(|a| a.label_accuracy)),
        );
    }
    println!();
    println!(
        "{:<10} {:<7} {:>6} {:>10} {:>10}",
        "variant", "backend", "batch", "p50 ms", "p99 ms"
    );
    for v in &outcome.profile.variants {
        for l in &v.latency {
            println!(
                "{:<10} {:<7} {:>6} {:>10.3} {:>10.3}",
                v.variant, l.backend, l.batch_size, l.p50_ms, l.p99_ms
            );
        }
    }
    for (name, reason) in &outcome.skipped {
        println!("variant {name} left out: no backend runs it ({reason})");
    }
    println!("\nwrote {}", outcome.folder.display());
    Ok(())
}
