//! `hinfer bench`: closed-loop load against a KServe v2 server (hinfer or Triton).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use hinfer_bench::{build_request, closed_loop, LoadConfig};
use hinfer_core::npy;

use crate::inputs::Assignment;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Server address, host:port.
    #[arg(long, default_value = "127.0.0.1:8000")]
    url: String,
    /// Model name.
    #[arg(long)]
    model: String,
    /// Model version (default: the server's latest).
    #[arg(long)]
    version: Option<String>,
    /// Request data as NAME=FILE.npy; requests take --rows rows of it in turn.
    #[arg(long, value_name = "NAME=FILE")]
    input: Assignment,
    /// Rows (batch size) per request.
    #[arg(long, default_value_t = 1)]
    rows: usize,
    /// Concurrent clients; a comma-separated list runs each in turn.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    concurrency: Vec<usize>,
    /// Measured seconds per concurrency level.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Unmeasured seconds before each level.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Send JSON tensors instead of binary ones.
    #[arg(long)]
    json_data: bool,
    /// Print one JSON report per level.
    #[arg(long)]
    json: bool,
}

/// Runs the load at each concurrency level and prints the reports.
pub fn execute(args: BenchArgs) -> Result<()> {
    let Some(name) = args.input.name.clone() else {
        bail!("--input needs NAME=FILE.npy")
    };
    let data = npy::read(&PathBuf::from(&args.input.value))?;
    let total = data.shape().first().copied().unwrap_or(0);
    if args.rows == 0 || total < args.rows {
        bail!(
            "--rows {} does not fit the {total} rows of {}",
            args.rows,
            args.input.value
        );
    }
    let mut bodies = vec![];
    for start in (0..=total - args.rows).step_by(args.rows) {
        let part = data
            .split_batch(&[start, args.rows, total - start - args.rows])?
            .swap_remove(1);
        bodies.push(build_request(&name, &part, !args.json_data));
    }
    let path = match &args.version {
        Some(v) => format!("/v2/models/{}/versions/{v}/infer", args.model),
        None => format!("/v2/models/{}/infer", args.model),
    };
    for &concurrency in &args.concurrency {
        let config = LoadConfig {
            addr: args.url.clone(),
            path: path.clone(),
            concurrency,
            duration: Duration::from_secs_f64(args.duration),
            warmup: Duration::from_secs_f64(args.warmup),
        };
        let report = closed_loop(&config, &bodies)?;
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!(
                "concurrency {:>3}: {:>9.1} req/s, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, {} requests, {} errors",
                report.concurrency,
                report.throughput_rps,
                report.p50_ms,
                report.p90_ms,
                report.p99_ms,
                report.requests,
                report.errors
            );
        }
    }
    Ok(())
}
