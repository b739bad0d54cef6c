//! `hinfer`: the command-line face of the hinfer inference engine.

use clap::{Parser, Subcommand};

mod commands;
mod embedded;
mod inputs;

/// hinfer — a hybrid inference engine: run ONNX models on ONNX Runtime or tract.
#[derive(Parser, Debug)]
#[command(name = "hinfer", version, about, long_about = None)]
struct Cli {
    /// Log filter (e.g. `info`, `hinfer=debug`); also read from HINFER_LOG.
    #[arg(long, global = true, env = "HINFER_LOG", default_value = "warn")]
    log: String,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Describe an ONNX model: inputs, outputs, opsets, op types, parameters, weight storage.
    Inspect(commands::inspect::InspectArgs),
    /// Run an ONNX model on .npy inputs (or the bundled digits model), optionally benchmark it.
    Run(commands::run::RunArgs),
    /// Build a model repository folder of variants (graph-optimised fp32, fp16, user-supplied), each
    /// evaluated against the original and profiled: hinfer.toml, profile.json, variants/.
    Optimize(commands::optimize::OptimizeArgs),
    /// Serve models over KServe v2 / Triton-compatible HTTP, with dynamic batching and metrics.
    Serve(commands::serve::ServeArgs),
    /// Load-test a KServe v2 server (hinfer or Triton): throughput and latency percentiles.
    Bench(commands::bench::BenchArgs),
    /// List the backends compiled into this binary and whether each can load here.
    Backends,
}

/// Keeps large freed buffers inside the process (glibc only).
///
/// Model outputs of tens of MB are allocated and freed on every run; by default
/// glibc maps and unmaps them each time, so every run pays page faults on fresh
/// memory (measured: ~3 ms of a 90 ms PP-OCRv5 rec batch of 8). Raising the mmap
/// threshold to its maximum (32 MiB) and the trim threshold keeps them on the heap,
/// as ONNX Runtime's own arena keeps its buffers.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_large_buffers() {
    // SAFETY: mallopt only changes allocator tuning; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_large_buffers() {}

fn main() -> std::process::ExitCode {
    keep_large_buffers();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&cli.log).unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let outcome = match cli.command {
        Command::Inspect(args) => commands::inspect::execute(args),
        Command::Run(args) => commands::run::execute(args),
        Command::Optimize(args) => commands::optimize::execute(args),
        Command::Serve(args) => commands::serve::execute(args),
        Command::Bench(args) => commands::bench::execute(args),
        Command::Backends => commands::backends::execute(),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
