//! What the server serves: models, their versions, and the shared settings.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hinfer_core::{BackendKind, ModelMetadata};
use hinfer_router::{BatchConfig, ModelQueue};
use hinfer_runtime::{Health, WorkerPool};

use crate::error::ApiError;
use crate::metrics::ModelMetrics;

/// One loaded version of a model.
pub struct ServedModel {
    /// Model name.
    pub name: String,
    /// Version label (`"1"`, ...).
    pub version: String,
    /// The engine it runs on.
    pub backend: BackendKind,
    /// Inputs and outputs.
    pub metadata: ModelMetadata,
    /// Largest batch a request may carry (0: the model does not batch).
    pub max_batch_size: usize,
    /// Whether requests are combined into batches (Triton's `dynamic_batching`).
    pub dynamic_batching: bool,
    /// The batching configuration of its queue.
    pub batch_config: BatchConfig,
    /// Worker instances.
    pub instances: usize,
    /// The queue requests go through.
    pub queue: ModelQueue,
    /// The workers.
    pub pool: Arc<WorkerPool>,
    /// Request metrics.
    pub metrics: ModelMetrics,
    /// Answers requests that name no version.
    pub is_default: bool,
}

impl ServedModel {
    /// True when the model's workers are warmed up and serving.
    pub fn ready(&self) -> bool {
        self.pool.health() == Health::Ready
    }
}

/// All versions of one model; requests without a version go to the default one
/// (a manifest's first variant), else the latest.
#[derive(Default)]
pub struct ModelVersions {
    /// By version label, ordered numerically where labels are numbers.
    pub versions: BTreeMap<VersionKey, Arc<ServedModel>>,
}

/// Orders version labels numerically, then as text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VersionKey(pub u64, pub String);

impl VersionKey {
    /// The key of a label.
    pub fn of(label: &str) -> VersionKey {
        VersionKey(label.parse().unwrap_or(0), label.to_string())
    }
}

/// Shared state of the HTTP application.
pub struct AppState {
    /// Served models by name.
    pub models: BTreeMap<String, ModelVersions>,
    /// Bearer token required on every route but health, if set.
    pub auth_token: Option<String>,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// False once shutdown began: readiness turns false while in-flight requests drain.
    pub accepting: AtomicBool,
}

impl AppState {
    /// State serving `models` (each `ServedModel` keyed by its name and version).
    pub fn new(models: Vec<ServedModel>, auth_token: Option<String>, body_limit: usize) -> AppState {
        let mut by_name: BTreeMap<String, ModelVersions> = BTreeMap::new();
        for m in models {
            by_name
                .entry(m.name.clone())
                .or_default()
                .versions
                .insert(VersionKey::of(&m.version), Arc::new(m));
        }
        AppState {
            models: by_name,
            auth_token,
            body_limit,
            accepting: AtomicBool::new(true),
        }
    }

    /// The model version a path names: the given version, or the latest.
    pub fn find(&self, model: &str, version: Option<&str>) -> Result<&Arc<ServedModel>, ApiError> {
        let versions = self.models.get(model).ok_or_else(|| {
            let known: Vec<&str> = self.models.keys().map(String::as_str).collect();
            ApiError::not_found(format!("unknown model `{model}`; served models: {}", known.join(", ")))
        })?;
        let found = match version.filter(|v| !v.is_empty()) {
            Some(v) => versions.versions.get(&VersionKey::of(v)),
            None => versions
                .versions
                .values()
                .find(|m| m.is_default)
                .or_else(|| versions.versions.values().next_back()),
        };
        found.ok_or_else(|| {
            let known: Vec<&str> = versions.versions.keys().map(|k| k.1.as_str()).collect();
            ApiError::not_found(format!(
                "model `{model}` has no version `{}`; served versions: {}",
                version.unwrap_or(""),
                known.join(", ")
            ))
        })
    }

    /// Every served model version.
    pub fn all(&self) -> impl Iterator<Item = &Arc<ServedModel>> {
        self.models.values().flat_map(|v| v.versions.values())
    }

    /// True when accepting requests and every model is ready.
    pub fn ready(&self) -> bool {
        self.accepting.load(Ordering::Relaxed) && self.all().all(|m| m.ready())
    }
}
