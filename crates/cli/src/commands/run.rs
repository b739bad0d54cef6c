//! `hinfer run`: load a model on a backend, feed it inputs, print or save the
//! outputs, compare them with expected ones, and optionally benchmark.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use hinfer_backends::BackendChoice;
use hinfer_core::{assert_close, npy, ModelSource, NamedTensor, SessionOptions, Tolerance};
use hinfer_runtime::ThreadBudget;
use serde::Serialize;

use crate::embedded;
use crate::inputs::{self, Assignment};
use hinfer_core::latency::LatencyStats;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The .onnx file; without it, the bundled digits CNN on its 64 test images.
    model: Option<PathBuf>,
    /// An input as NAME=FILE.npy (NAME may be left out for single-input models). Repeatable.
    #[arg(long = "input", short = 'i', value_name = "NAME=FILE")]
    inputs: Vec<Assignment>,
    /// Fill inputs not given with deterministic synthetic data (floats in [0,1), integers 0).
    #[arg(long)]
    random: bool,
    /// Shape of a synthetic input as NAME=AxBxC (e.g. x=1x3x48x320). Repeatable.
    #[arg(long = "shape", value_name = "NAME=SHAPE")]
    shapes: Vec<Assignment>,
    /// Batch size used for the batch dimension of synthetic inputs without --shape.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Engine: ort (ONNX Runtime), tract, or auto (ONNX Runtime if it loads, else tract).
    #[arg(long, env = "HINFER_BACKEND", default_value = "auto")]
    backend: BackendChoice,
    /// Intra-op threads (default: all cores).
    #[arg(long, env = "HINFER_THREADS")]
    threads: Option<usize>,
    /// Allow --threads above the number of cores.
    #[arg(long)]
    oversubscribe: bool,
    /// Disable the backend's graph optimisations.
    #[arg(long)]
    no_optimize: bool,
    /// Write every output to DIR/<output name>.npy.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Compare an output with NAME=FILE.npy; a mismatch fails the command. Repeatable.
    #[arg(long = "expect", value_name = "NAME=FILE")]
    expect: Vec<Assignment>,
    /// Tolerance for --expect: exact, close (1e-4) or approximate (1e-3 abs, 1e-2 rel).
    #[arg(long, default_value = "close", value_parser = parse_tolerance)]
    tolerance: Tolerance,
    /// Benchmark: time this many runs after the warm-up and report latency.
    #[arg(long, value_name = "ITERATIONS")]
    bench: Option<usize>,
    /// Untimed runs before benchmarking.
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    /// Print the benchmark result as JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_tolerance(s: &str) -> Result<Tolerance, String> {
    match s {
        "exact" => Ok(Tolerance::Exact),
        "close" => Ok(Tolerance::Close),
        "approximate" => Ok(Tolerance::Approximate),
        other => Err(format!("unknown tolerance `{other}` (exact, close, approximate)")),
    }
}

/// What `--bench --json` prints.
#[derive(Serialize)]
struct BenchReport<'a> {
    model: &'a str,
    backend: String,
    threads: usize,
    batch: usize,
    #[serde(flatten)]
    latency: LatencyStats,
}

/// Runs the command.
pub fn execute(args: RunArgs) -> Result<()> {
    let embedded_default = args.model.is_none();
    let source = match &args.model {
        Some(path) => ModelSource::from_file(path)?,
        None => embedded::model(),
    };
    let threads = ThreadBudget::detect().per_worker(1, args.threads, args.oversubscribe)?;
    let backend = hinfer_backends::select(args.backend)?;
    eprintln!("backend: {}", backend.describe());
    let options = SessionOptions {
        intra_threads: threads,
        optimize: !args.no_optimize,
    };
    let started = Instant::now();
    let prepared = backend.prepare(&source, &options)?;
    eprintln!(
        "loaded {} in {:.1} ms ({threads} threads)",
        source.label,
        started.elapsed().as_secs_f64() * 1e3
    );
    let metadata = prepared.metadata();

    let mut feeds = inputs::read_inputs(&args.inputs, metadata)?;
    if embedded_default && feeds.is_empty() {
        feeds.push(NamedTensor::new("input", embedded::input()));
    }
    if args.random {
        inputs::synthesize_missing(metadata, &mut feeds, &args.shapes, args.batch)?;
    }
    let mut runner = prepared.spawn()?;
    let started = Instant::now();
    let outputs = runner
        .run(&feeds)
        .context("running the model (use --random to synthesize missing inputs)")?;
    let elapsed = started.elapsed();

    if !args.json {
        for t in &feeds {
            println!("input  {:<20} {}", t.name, t.tensor.summary());
        }
        for t in &outputs {
            println!("output {:<20} {}", t.name, t.tensor.summary());
        }
        println!("first run: {:.3} ms", elapsed.as_secs_f64() * 1e3);
        if embedded_default && args.inputs.is_empty() {
            report_digit_accuracy(&outputs)?;
        }
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &outputs)?;
    }
    check_expected(&args.expect, &outputs, args.tolerance)?;

    if let Some(iterations) = args.bench {
        if iterations == 0 {
            bail!("--bench needs at least one iteration");
        }
        for _ in 0..args.warmup {
            runner.run(&feeds)?;
        }
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let t0 = Instant::now();
            runner.run(&feeds)?;
            samples.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        let report = BenchReport {
            model: &source.label,
            backend: backend.kind().to_string(),
            threads,
            batch: feeds
                .first()
                .and_then(|t| t.tensor.shape().first().copied())
                .unwrap_or(1),
            latency: LatencyStats::from_samples(&samples),
        };
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            let l = &report.latency;
            println!(
                "bench: {} runs, mean {:.3} ms, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, min {:.3} ms",
                l.iterations, l.mean_ms, l.p50_ms, l.p90_ms, l.p99_ms, l.min_ms
            );
        }
    }
    Ok(())
}

fn report_digit_accuracy(outputs: &[NamedTensor]) -> Result<()> {
    let logits = outputs[0].tensor.as_slice::<f32>()?;
    let labels = embedded::labels();
    let predictions: Vec<usize> = logits
        .chunks(10)
        .map(|row| {
            row.iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i)
        })
        .collect();
    let correct = predictions
        .iter()
        .zip(&labels)
        .filter(|(p, l)| **p as i64 == **l)
        .count();
    let shown: Vec<String> = predictions.iter().take(16).map(|p| p.to_string()).collect();
    println!("predicted digits: {} ...", shown.join(" "));
    println!(
        "accuracy on the bundled test images: {correct}/{} ({:.1}%)",
        labels.len(),
        100.0 * correct as f64 / labels.len() as f64
    );
    Ok(())
}

fn write_outputs(dir: &std::path::Path, outputs: &[NamedTensor]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for t in outputs {
        let file: String = t
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{file}.npy"));
        npy::write(&path, &t.tensor)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn check_expected(expect: &[Assignment], outputs: &[NamedTensor], tolerance: Tolerance) -> Result<()> {
    for a in expect {
        let name = match (&a.name, outputs) {
            (Some(n), _) => n.clone(),
            (None, [only]) => only.name.clone(),
            (None, _) => bail!("--expect {}: the model has several outputs, write NAME=FILE", a.value),
        };
        let Some(actual) = outputs.iter().find(|t| t.name == name) else {
            bail!("--expect: the model has no output `{name}`");
        };
        let expected = npy::read(&PathBuf::from(&a.value))?;
        match assert_close(&actual.tensor, &expected, tolerance) {
            Ok(diff) => println!("output {name} matches {} ({diff})", a.value),
            Err(e) => bail!("output {name} does not match {}: {e}", a.value),
        }
    }
    Ok(())
}
