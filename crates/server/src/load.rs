//! Loading models for serving: worker pools, queues and metrics per model version.

use std::sync::Arc;
use std::time::Duration;

use hinfer_core::{Backend, Dim, ModelSource};
use hinfer_router::{BatchConfig, ModelQueue};
use hinfer_runtime::pbtxt::ModelConfigFile;
use hinfer_runtime::{CpuGate, PoolConfig, ThreadBudget, WarmupPlan, WorkerPool};

use crate::metrics::ModelMetrics;
use crate::state::ServedModel;

/// Server-wide defaults, used where a model has no `config.pbtxt` (or it is silent).
#[derive(Clone, Debug)]
pub struct ModelDefaults {
    /// Largest batch per request and per dynamic batch, for models with a dynamic first dimension.
    pub max_batch_size: usize,
    /// Combine requests into batches.
    pub dynamic_batching: bool,
    /// How long a request may wait for a batch to fill.
    pub max_queue_delay: Duration,
    /// Batch sizes sent without waiting.
    pub preferred_batch_sizes: Vec<usize>,
    /// Requests that may wait per model before new ones are refused (503).
    pub max_queue_size: Option<usize>,
    /// Queue timeout for requests that give none.
    pub default_timeout: Option<Duration>,
    /// Priority levels.
    pub priority_levels: u32,
    /// Worker instances per model version.
    pub instances: usize,
    /// Intra-op threads per worker (default: the budget shared evenly).
    pub threads: Option<usize>,
    /// CPU threads hinfer may keep busy at once.
    pub budget: ThreadBudget,
}

impl Default for ModelDefaults {
    fn default() -> Self {
        ModelDefaults {
            max_batch_size: 8,
            dynamic_batching: true,
            max_queue_delay: Duration::from_micros(500),
            preferred_batch_sizes: vec![],
            max_queue_size: None,
            default_timeout: None,
            priority_levels: 1,
            instances: 1,
            threads: None,
            budget: ThreadBudget::detect(),
        }
    }
}

/// One model version to load.
pub struct ModelToLoad {
    pub name: String,
    pub version: String,
    pub source: ModelSource,
    /// Its Triton `config.pbtxt`, if any.
    pub config: Option<ModelConfigFile>,
    /// Serve this version when a request names none (else the highest version).
    pub is_default: bool,
}

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("model {model} version {version}: {source}")]
    Runtime {
        model: String,
        version: String,
        source: Box<hinfer_runtime::Error>,
    },
    #[error("model {model}: {reason}")]
    Config { model: String, reason: String },
}

/// Loads every model (warm-up included) and starts its queue. Must run inside a
/// tokio runtime. Threads: the budget is shared evenly between all workers of all
/// models, and a machine-wide [`CpuGate`] keeps busy threads within the budget.
pub fn load_models(
    models: Vec<ModelToLoad>,
    backend: &Arc<dyn Backend>,
    defaults: &ModelDefaults,
) -> Result<Vec<ServedModel>, LoadError> {
    let instances = |m: &ModelToLoad| {
        m.config
            .as_ref()
            .and_then(|c| c.instance_count)
            .unwrap_or(defaults.instances)
            .max(1)
    };
    let total_workers: usize = models.iter().map(instances).sum();
    let threads = defaults
        .threads
        .unwrap_or_else(|| (defaults.budget.cores / total_workers.max(1)).max(1));
    let gate = Arc::new(CpuGate::new(defaults.budget.cores));
    let mut served = Vec::with_capacity(models.len());
    for m in models {
        let workers = instances(&m);
        let batch = batch_settings(&m, defaults);
        let warmup_batches = if batch.max_batch_size > 1 {
            vec![1, batch.max_batch_size]
        } else {
            vec![1]
        };
        let pool_config = PoolConfig {
            workers,
            threads_per_worker: Some(threads),
            // Oversubscription is prevented by the gate, not by refusing to load.
            allow_oversubscribe: true,
            budget: defaults.budget,
            queue_capacity: workers * 2,
            optimize: true,
            warmup: WarmupPlan {
                batch_sizes: warmup_batches,
                ..WarmupPlan::default()
            },
            cpu_gate: Some(gate.clone()),
        };
        let runtime_err = |source: hinfer_runtime::Error| LoadError::Runtime {
            model: m.name.clone(),
            version: m.version.clone(),
            source: Box::new(source),
        };
        let pool = Arc::new(WorkerPool::start(backend.as_ref(), &m.source, &pool_config).map_err(runtime_err)?);
        let metadata = pool.metadata().clone();
        let batches = metadata
            .inputs
            .iter()
            .all(|s| matches!(s.shape.dims().first(), Some(Dim::Dynamic(_))));
        let max_batch_size = match (batch.max_batch_size, batches) {
            (n, true) => n,
            (0, false) => 0,
            (n, false) if m.config.as_ref().and_then(|c| c.max_batch_size).is_some() => {
                return Err(LoadError::Config {
                    model: m.name.clone(),
                    reason: format!(
                        "config.pbtxt sets max_batch_size {n} but the model's inputs have no dynamic first dimension"
                    ),
                })
            }
            (_, false) => 0,
        };
        let dynamic = batch.dynamic && max_batch_size > 1;
        let batch_config = BatchConfig {
            max_batch_size: if dynamic { max_batch_size } else { 1 },
            max_queue_delay: batch.max_queue_delay,
            preferred_batch_sizes: batch.preferred,
            priority_levels: batch.priority_levels.max(1),
            default_priority_level: batch.default_priority_level.max(1),
            max_queue_size: batch.max_queue_size,
            default_timeout: batch.default_timeout,
        };
        let queue = ModelQueue::start(&m.name, pool.clone(), batch_config.clone());
        tracing::info!(model = %m.name, version = %m.version, max_batch_size, dynamic, workers, threads, "serving");
        served.push(ServedModel {
            is_default: m.is_default,
            metrics: ModelMetrics::new(&m.name, &m.version, backend.kind().name()),
            name: m.name,
            version: m.version,
            backend: backend.kind(),
            metadata,
            max_batch_size,
            dynamic_batching: dynamic,
            batch_config,
            instances: workers,
            queue,
            pool,
        });
    }
    Ok(served)
}

/// A model's batching settings: its config.pbtxt where it speaks, else the defaults.
struct BatchSettings {
    max_batch_size: usize,
    dynamic: bool,
    max_queue_delay: Duration,
    preferred: Vec<usize>,
    priority_levels: u32,
    default_priority_level: u32,
    max_queue_size: Option<usize>,
    default_timeout: Option<Duration>,
}

fn batch_settings(m: &ModelToLoad, d: &ModelDefaults) -> BatchSettings {
    let defaults = BatchSettings {
        max_batch_size: d.max_batch_size,
        dynamic: d.dynamic_batching,
        max_queue_delay: d.max_queue_delay,
        preferred: d.preferred_batch_sizes.clone(),
        priority_levels: d.priority_levels,
        default_priority_level: d.priority_levels,
        max_queue_size: d.max_queue_size,
        default_timeout: d.default_timeout,
    };
    let Some(config) = &m.config else { return defaults };
    // With a config.pbtxt, Triton's rules: batching only with a dynamic_batching block.
    let max_batch_size = config.max_batch_size.unwrap_or(0);
    match &config.dynamic_batching {
        None => BatchSettings {
            max_batch_size,
            dynamic: false,
            ..defaults
        },
        Some(db) => {
            let policy = db.default_queue_policy.as_ref();
            BatchSettings {
                max_batch_size,
                dynamic: true,
                max_queue_delay: Duration::from_micros(db.max_queue_delay_microseconds),
                preferred: db.preferred_batch_size.clone(),
                priority_levels: db.priority_levels.max(1),
                default_priority_level: if db.default_priority_level == 0 {
                    db.priority_levels.max(1)
                } else {
                    db.default_priority_level
                },
                max_queue_size: policy
                    .map(|p| p.max_queue_size as usize)
                    .filter(|&n| n > 0)
                    .or(defaults.max_queue_size),
                default_timeout: policy
                    .map(|p| Duration::from_micros(p.default_timeout_microseconds))
                    .filter(|t| !t.is_zero())
                    .or(defaults.default_timeout),
            }
        }
    }
}
