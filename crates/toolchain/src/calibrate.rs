//! Activation ranges for static quantization, measured by running the float
//! model on calibration data.
//!
//! The tensors to observe are added as extra graph outputs; the model runs on
//! each calibration batch; each tensor's values feed a [`RangeObserver`]. Methods:
//! - `MinMax`: the observed minimum and maximum;
//! - `Percentile(p)`: the symmetric range holding p % of |values| (clips outliers);
//! - `Entropy`: the |value| threshold whose 128-level quantized histogram is
//!   closest (KL divergence) to the float one, as TensorRT's calibrator.
//!
//! Percentile and Entropy use a 2048-bin histogram of |value| over [0, max |value|],
//! filled in a second pass once the first pass has found the maximum.

use std::collections::BTreeMap;

use hinfer_core::{Backend, ModelSource, NamedTensor, SessionOptions};

use crate::proto::tensor_proto::DataType;
use crate::proto::{encode_model, type_proto, ModelProto, TypeProto, ValueInfoProto};
use crate::{Error, Result};

/// How a range is chosen from the observed values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CalibrationMethod {
    MinMax,
    /// Keep this percentage of |values| (e.g. 99.99).
    Percentile(f64),
    Entropy,
}

/// The range chosen for one tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorRange {
    pub min: f32,
    pub max: f32,
}

const BINS: usize = 2048;

/// Values seen for one tensor.
#[derive(Clone, Debug)]
pub struct RangeObserver {
    min: f32,
    max: f32,
    histogram: Vec<u64>,
}

impl Default for RangeObserver {
    fn default() -> Self {
        RangeObserver {
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            histogram: vec![],
        }
    }
}

impl RangeObserver {
    /// First pass: minimum and maximum.
    pub fn observe_extremes(&mut self, values: &[f32]) {
        for &v in values.iter().filter(|v| v.is_finite()) {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
    }

    fn abs_max(&self) -> f32 {
        self.min.abs().max(self.max.abs())
    }

    /// Second pass: the histogram of |values| over [0, abs max].
    pub fn observe_histogram(&mut self, values: &[f32]) {
        if self.histogram.is_empty() {
            self.histogram = vec![0; BINS];
        }
        let top = self.abs_max();
        if top <= 0.0 {
            return;
        }
        for &v in values.iter().filter(|v| v.is_finite()) {
            let bin = ((v.abs() / top) * BINS as f32) as usize;
            self.histogram[bin.min(BINS - 1)] += 1;
        }
    }

    /// The chosen range; for Percentile and Entropy it is symmetric around 0 but
    /// keeps a one-sided tensor (all values ≥ 0, e.g. after Relu) one-sided.
    pub fn range(&self, method: CalibrationMethod) -> TensorRange {
        if !self.min.is_finite() || !self.max.is_finite() {
            return TensorRange { min: 0.0, max: 0.0 };
        }
        let threshold = match method {
            CalibrationMethod::MinMax => {
                return TensorRange {
                    min: self.min,
                    max: self.max,
                }
            }
            CalibrationMethod::Percentile(p) => self.percentile_threshold(p),
            CalibrationMethod::Entropy => self.entropy_threshold(),
        };
        let min = if self.min >= 0.0 {
            self.min.max(0.0).min(threshold)
        } else {
            -threshold
        };
        TensorRange {
            min,
            max: if self.max <= 0.0 { 0.0 } else { threshold },
        }
    }

    fn bin_width(&self) -> f32 {
        self.abs_max() / BINS as f32
    }

    fn percentile_threshold(&self, percent: f64) -> f32 {
        let total: u64 = self.histogram.iter().sum();
        if total == 0 {
            return self.abs_max();
        }
        let wanted = (total as f64 * percent / 100.0).ceil() as u64;
        let mut seen = 0;
        for (i, &c) in self.histogram.iter().enumerate() {
            seen += c;
            if seen >= wanted {
                return (i + 1) as f32 * self.bin_width();
            }
        }
        self.abs_max()
    }

    fn entropy_threshold(&self) -> f32 {
        const LEVELS: usize = 128;
        let hist: Vec<f64> = self.histogram.iter().map(|&c| c as f64).collect();
        if hist.iter().sum::<f64>() == 0.0 {
            return self.abs_max();
        }
        let mut best = (f64::INFINITY, BINS);
        for end in (LEVELS..=BINS).step_by(16) {
            // Reference: the first `end` bins, with the clipped tail added to the last bin.
            let mut p: Vec<f64> = hist[..end].to_vec();
            p[end - 1] += hist[end..].iter().sum::<f64>();
            // Candidate: those bins merged into LEVELS levels, spread back over non-empty bins.
            let mut q = vec![0.0; end];
            for level in 0..LEVELS {
                let (start, stop) = (
                    level * end / LEVELS,
                    ((level + 1) * end / LEVELS).max(level * end / LEVELS + 1),
                );
                let mass: f64 = hist[start..stop].iter().sum();
                let nonzero = hist[start..stop].iter().filter(|&&c| c > 0.0).count();
                if nonzero > 0 {
                    for i in start..stop {
                        if hist[i] > 0.0 {
                            q[i] = mass / nonzero as f64;
                        }
                    }
                }
            }
            let kl = kl_divergence(&p, &q);
            if kl < best.0 {
                best = (kl, end);
            }
        }
        best.1 as f32 * self.bin_width()
    }
}

fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    let (sp, sq): (f64, f64) = (p.iter().sum(), q.iter().sum());
    if sp == 0.0 || sq == 0.0 {
        return f64::INFINITY;
    }
    p.iter()
        .zip(q)
        .filter(|(&a, _)| a > 0.0)
        .map(|(&a, &b)| {
            let (a, b) = (a / sp, (b / sq).max(1e-12));
            a * (a / b).ln()
        })
        .sum()
}

/// A copy of `model` whose graph also outputs `tensors` (as float32).
pub fn with_observed_outputs(model: &ModelProto, tensors: &[String]) -> ModelProto {
    let mut observed = model.clone();
    if let Some(graph) = observed.graph.as_mut() {
        let existing: Vec<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
        for name in tensors.iter().filter(|t| !existing.contains(t)) {
            graph.output.push(ValueInfoProto {
                name: Some(name.clone()),
                r#type: Some(TypeProto {
                    value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                        elem_type: Some(DataType::Float as i32),
                        shape: None,
                    })),
                    denotation: None,
                }),
                ..Default::default()
            });
        }
    }
    observed
}

/// Ranges of `tensors` over `batches` of calibration inputs.
///
/// Every batch must feed every model input. An empty batch list is an error.
pub fn calibrate(
    model: &ModelProto,
    tensors: &[String],
    batches: &[Vec<NamedTensor>],
    backend: &dyn Backend,
    method: CalibrationMethod,
) -> Result<BTreeMap<String, TensorRange>> {
    if batches.is_empty() {
        return Err(Error::Invalid {
            model: "calibration".into(),
            reason: "no calibration data was given".into(),
        });
    }
    let observed = with_observed_outputs(model, tensors);
    let source = ModelSource::from_bytes("calibration", encode_model(&observed));
    let prepared = backend.prepare(&source, &SessionOptions::default())?;
    let mut runner = prepared.spawn()?;
    let mut observers: BTreeMap<String, RangeObserver> =
        tensors.iter().map(|t| (t.clone(), RangeObserver::default())).collect();
    let passes = if method == CalibrationMethod::MinMax { 1 } else { 2 };
    for pass in 0..passes {
        for batch in batches {
            for output in runner.run(batch)? {
                let Some(observer) = observers.get_mut(&output.name) else {
                    continue;
                };
                let Ok(values) = output.tensor.as_slice::<f32>() else {
                    continue;
                };
                if pass == 0 {
                    observer.observe_extremes(values);
                } else {
                    observer.observe_histogram(values);
                }
            }
        }
    }
    Ok(observers.into_iter().map(|(name, o)| (name, o.range(method))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(values: &[f32]) -> RangeObserver {
        let mut o = RangeObserver::default();
        o.observe_extremes(values);
        o.observe_histogram(values);
        o
    }

    #[test]
    fn minmax_and_percentile_clip_outliers() {
        let mut values: Vec<f32> = (0..10_000).map(|i| (i % 100) as f32 / 100.0).collect();
        values.push(50.0);
        let o = observed(&values);
        assert_eq!(o.range(CalibrationMethod::MinMax), TensorRange { min: 0.0, max: 50.0 });
        let p = o.range(CalibrationMethod::Percentile(99.9));
        assert!(p.max < 1.1 && p.max >= 0.95 && p.min == 0.0, "{p:?}");
    }

    #[test]
    fn entropy_ignores_a_long_sparse_tail() {
        let mut values: Vec<f32> = (0..20_000).map(|i| ((i % 1000) as f32 / 1000.0) - 0.5).collect();
        values.extend([40.0, -35.0]);
        let e = observed(&values).range(CalibrationMethod::Entropy);
        assert!(e.max < 10.0 && e.max > 0.4 && e.min == -e.max, "{e:?}");
    }
}
