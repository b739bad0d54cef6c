//! Latency of a model on a backend, per batch size.

use std::time::Instant;

use hinfer_core::latency::LatencyStats;
use hinfer_core::{Backend, Dim, ModelSource, NamedTensor, SessionOptions, Tensor};
use serde::Serialize;

/// Latency of one (variant, backend, batch size).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyProfile {
    pub backend: String,
    pub batch_size: usize,
    pub iterations: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
}

/// Times `model` on `backend` at each batch size, using `rows` (one input set
/// of batch 1 or more) repeated or cut to the batch size.
///
/// Each size gets `warmup` untimed runs then `iterations` timed ones.
pub fn profile(
    backend: &dyn Backend,
    model: &ModelSource,
    options: &SessionOptions,
    rows: &[NamedTensor],
    batch_sizes: &[usize],
    warmup: usize,
    iterations: usize,
) -> hinfer_core::Result<Vec<LatencyProfile>> {
    let prepared = backend.prepare(model, options)?;
    let batched = prepared
        .metadata()
        .inputs
        .iter()
        .all(|s| matches!(s.shape.dims().first(), Some(Dim::Dynamic(_))));
    let mut runner = prepared.spawn()?;
    let mut out = vec![];
    for &batch in batch_sizes {
        if !batched && batch != 1 {
            continue;
        }
        let inputs = if batched {
            resize_batch(rows, batch)?
        } else {
            rows.to_vec()
        };
        for _ in 0..warmup {
            runner.run(&inputs)?;
        }
        let samples: Vec<f64> = (0..iterations.max(1))
            .map(|_| {
                let t = Instant::now();
                runner.run(&inputs).map(|_| t.elapsed().as_secs_f64() * 1e3)
            })
            .collect::<hinfer_core::Result<_>>()?;
        let stats = LatencyStats::from_samples(&samples);
        out.push(LatencyProfile {
            backend: backend.kind().to_string(),
            batch_size: batch,
            iterations: stats.iterations,
            p50_ms: stats.p50_ms,
            p99_ms: stats.p99_ms,
            mean_ms: stats.mean_ms,
        });
    }
    Ok(out)
}

/// Inputs with exactly `batch` rows, repeating or cutting the given rows.
fn resize_batch(rows: &[NamedTensor], batch: usize) -> hinfer_core::Result<Vec<NamedTensor>> {
    rows.iter()
        .map(|t| {
            let have = t.tensor.shape().first().copied().unwrap_or(1).max(1);
            let singles = t.tensor.split_batch(&vec![1; have])?;
            let picked: Vec<&Tensor> = (0..batch).map(|i| &singles[i % have]).collect();
            Ok(NamedTensor::new(t.name.clone(), Tensor::concat_batch(&picked)?))
        })
        .collect()
}
