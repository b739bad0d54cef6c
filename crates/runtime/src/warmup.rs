//! Warm-up: running a model once per configured batch size before it is ready,
//! so the first real request does not pay for lazy allocation and kernel choice.

use std::collections::HashMap;

use hinfer_core::{Dim, ModelMetadata, NamedTensor, Tensor};

/// What to run before a model reports ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarmupPlan {
    /// Batch sizes to run (each once per worker). Empty disables warm-up.
    pub batch_sizes: Vec<usize>,
    /// Size used for dynamic dimensions other than the batch.
    pub default_dim: usize,
    /// Sizes for named dynamic dimensions (`"W"`, or `"input:3"` for an unnamed axis).
    pub dims: HashMap<String, usize>,
}

impl Default for WarmupPlan {
    fn default() -> Self {
        WarmupPlan {
            batch_sizes: vec![1],
            default_dim: 32,
            dims: HashMap::new(),
        }
    }
}

/// Zero-filled inputs for `metadata` at batch size `batch`.
///
/// A leading dynamic dimension is the batch; other dynamic dimensions take their
/// size from `plan.dims` (by symbol, or `name:axis`), else `plan.default_dim`.
pub fn synthetic_inputs(metadata: &ModelMetadata, batch: usize, plan: &WarmupPlan) -> Vec<NamedTensor> {
    metadata
        .inputs
        .iter()
        .map(|spec| {
            let shape = spec
                .shape
                .dims()
                .iter()
                .enumerate()
                .map(|(axis, dim)| match dim {
                    Dim::Fixed(n) => *n,
                    Dim::Dynamic(_) if axis == 0 => batch,
                    Dim::Dynamic(symbol) => symbol
                        .as_ref()
                        .and_then(|s| plan.dims.get(s))
                        .or_else(|| plan.dims.get(&format!("{}:{axis}", spec.name)))
                        .copied()
                        .unwrap_or(plan.default_dim),
                })
                .collect();
            NamedTensor::new(spec.name.clone(), Tensor::zeros(spec.dtype, shape))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hinfer_core::{DType, Shape, TensorSpec};

    #[test]
    fn fills_batch_and_named_dims() {
        let meta = ModelMetadata {
            inputs: vec![TensorSpec {
                name: "x".into(),
                dtype: DType::F32,
                shape: Shape(vec![
                    Dim::Dynamic(Some("N".into())),
                    Dim::Fixed(3),
                    Dim::Dynamic(Some("H".into())),
                    Dim::Dynamic(None),
                ]),
            }],
            outputs: vec![],
        };
        let mut plan = WarmupPlan::default();
        plan.dims.insert("H".into(), 48);
        plan.dims.insert("x:3".into(), 320);
        let inputs = synthetic_inputs(&meta, 4, &plan);
        assert_eq!(inputs[0].tensor.shape(), &[4, 3, 48, 320]);
        plan.dims.clear();
        assert_eq!(synthetic_inputs(&meta, 2, &plan)[0].tensor.shape(), &[2, 3, 32, 32]);
    }
}
