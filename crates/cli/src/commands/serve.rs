//! `hinfer serve`: a KServe v2 / Triton-compatible HTTP server.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{ArgAction, Args};
use hinfer_backends::BackendChoice;
use hinfer_core::ModelSource;
use hinfer_runtime::repository;
use hinfer_runtime::ThreadBudget;
use hinfer_server::{AppState, Listen, ModelDefaults, ModelToLoad};

use crate::embedded;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A .onnx file, a Triton-style model repository (<model>/<version>/model.onnx, optional
    /// <model>/config.pbtxt), or a `hinfer optimize` output (hinfer.toml: each variant served as a
    /// version named after it); without it, the bundled digits CNN as model `digits_cnn`.
    path: Option<PathBuf>,
    /// Address to bind (use 0.0.0.0 to accept connections from other machines).
    #[arg(long, env = "HINFER_HOST", default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port of the HTTP API; 0 picks a free one (printed at start).
    #[arg(long, env = "HINFER_PORT", default_value_t = 8000)]
    port: u16,
    /// Also serve /metrics on this port.
    #[arg(long, env = "HINFER_METRICS_PORT")]
    metrics_port: Option<u16>,
    /// Engine: ort, tract, or auto (ONNX Runtime if it loads, else tract).
    #[arg(long, env = "HINFER_BACKEND", default_value = "auto")]
    backend: BackendChoice,
    /// CPU threads hinfer may keep busy at once (default: all cores).
    #[arg(long, env = "HINFER_CPU_BUDGET")]
    cpu_budget: Option<usize>,
    /// Intra-op threads per worker (default: the budget shared evenly between all workers).
    #[arg(long, env = "HINFER_THREADS")]
    threads: Option<usize>,
    /// Worker instances per model (Triton's instance_group count) where config.pbtxt is silent.
    #[arg(long, env = "HINFER_INSTANCES", default_value_t = 1)]
    instances: usize,
    /// Largest batch per request and per dynamic batch, for models with a dynamic first
    /// dimension and no config.pbtxt.
    #[arg(long, env = "HINFER_MAX_BATCH_SIZE", default_value_t = 8)]
    max_batch_size: usize,
    /// Combine concurrent requests into batches (models without config.pbtxt).
    #[arg(long, env = "HINFER_DYNAMIC_BATCHING", default_value_t = true, action = ArgAction::Set)]
    dynamic_batching: bool,
    /// How long a request may wait for a batch to fill, in microseconds. With 0 (Triton's
    /// default), batches form from the requests that arrived while the workers were busy.
    #[arg(long, env = "HINFER_MAX_QUEUE_DELAY_US", default_value_t = 0)]
    max_queue_delay_us: u64,
    /// Batch sizes sent as soon as they form (comma-separated).
    #[arg(long, env = "HINFER_PREFERRED_BATCH_SIZE", value_delimiter = ',')]
    preferred_batch_size: Vec<usize>,
    /// Requests that may wait per model; more are refused at once with 503.
    #[arg(long, env = "HINFER_MAX_QUEUE_SIZE")]
    max_queue_size: Option<usize>,
    /// Queue timeout in microseconds for requests that give none (requests may shorten it).
    #[arg(long, env = "HINFER_DEFAULT_TIMEOUT_US")]
    default_timeout_us: Option<u64>,
    /// Priority levels (request parameter `priority`: 1 highest, 0 default = lowest).
    #[arg(long, env = "HINFER_PRIORITY_LEVELS", default_value_t = 1)]
    priority_levels: u32,
    /// Largest request body accepted, in bytes (larger: 413).
    #[arg(long, env = "HINFER_MAX_BODY_BYTES", default_value_t = 64 << 20)]
    max_body_bytes: usize,
    /// Require `Authorization: Bearer <token>` on every route but /v2/health/*.
    #[arg(long, env = "HINFER_AUTH_TOKEN", hide_env_values = true)]
    auth_token: Option<String>,
}

/// Loads the models and serves until SIGTERM or Ctrl-C.
pub fn execute(args: ServeArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(serve(args))
}

fn models_to_load(path: &Option<PathBuf>) -> Result<Vec<ModelToLoad>> {
    let Some(path) = path else {
        return Ok(vec![ModelToLoad {
            name: "digits_cnn".into(),
            version: "1".into(),
            source: embedded::model(),
            config: None,
            is_default: true,
        }]);
    };
    if let Some(models) = manifest_models(path)? {
        return Ok(models);
    }
    let mut models = vec![];
    for found in repository::discover(path)? {
        if let Some(config) = &found.config {
            if !config.ignored.is_empty() {
                tracing::warn!(model = %found.name, "config.pbtxt fields hinfer does not honour: {}", config.ignored.join(", "));
            }
        }
        for version in &found.versions {
            models.push(ModelToLoad {
                name: found.name.clone(),
                version: version.version.clone(),
                source: ModelSource::from_file(&version.path)?,
                config: found.config.clone(),
                is_default: false,
            });
        }
    }
    Ok(models)
}

/// Models of a `hinfer optimize` output: `PATH/hinfer.toml`, or `PATH/*/hinfer.toml`.
/// Each variant is served as a version named after it (`/v2/models/m/versions/fp16`);
/// the first variant (fp32) answers requests that name no version.
fn manifest_models(path: &std::path::Path) -> Result<Option<Vec<ModelToLoad>>> {
    let manifests: Vec<PathBuf> = if path.join("hinfer.toml").is_file() {
        vec![path.join("hinfer.toml")]
    } else if path.is_dir() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path().join("hinfer.toml")))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found
    } else {
        vec![]
    };
    if manifests.is_empty() {
        return Ok(None);
    }
    let mut models = vec![];
    for manifest_path in manifests {
        let manifest = hinfer_toolchain::optimize::read_manifest(&manifest_path)?;
        let folder = manifest_path.parent().unwrap_or(path);
        for (i, variant) in manifest.variants.iter().enumerate() {
            models.push(ModelToLoad {
                name: manifest.model.name.clone(),
                version: variant.name.clone(),
                source: ModelSource::from_file(&folder.join(&variant.file))?,
                config: None,
                is_default: i == 0,
            });
        }
    }
    Ok(Some(models))
}

async fn serve(args: ServeArgs) -> Result<()> {
    let backend = hinfer_backends::select(args.backend)?;
    eprintln!("backend: {}", backend.describe());
    let budget = args
        .cpu_budget
        .map_or_else(ThreadBudget::detect, |cores| ThreadBudget { cores: cores.max(1) });
    let defaults = ModelDefaults {
        max_batch_size: args.max_batch_size,
        dynamic_batching: args.dynamic_batching,
        max_queue_delay: Duration::from_micros(args.max_queue_delay_us),
        preferred_batch_sizes: args.preferred_batch_size.clone(),
        max_queue_size: args.max_queue_size,
        default_timeout: args.default_timeout_us.filter(|&t| t > 0).map(Duration::from_micros),
        priority_levels: args.priority_levels.max(1),
        instances: args.instances.max(1),
        threads: args.threads,
        budget,
    };
    let to_load = models_to_load(&args.path)?;
    let served = hinfer_server::load_models(to_load, &backend, &defaults)?;
    for m in &served {
        eprintln!(
            "model {} version {}: max_batch_size {}, dynamic batching {}, {} worker(s)",
            m.name, m.version, m.max_batch_size, m.dynamic_batching, m.instances
        );
    }
    let state = Arc::new(AppState::new(served, args.auth_token.clone(), args.max_body_bytes));
    let listen = Listen {
        addr: SocketAddr::new(args.host, args.port),
        metrics_addr: args.metrics_port.map(|p| SocketAddr::new(args.host, p)),
    };
    hinfer_server::serve(state, listen, |addr, metrics| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "hinfer listening on http://{addr}");
        if let Some(m) = metrics {
            let _ = writeln!(out, "hinfer metrics on http://{m}/metrics");
        }
        let _ = out.flush();
    })
    .await
    .context("serving")?;
    eprintln!("hinfer stopped");
    Ok(())
}
