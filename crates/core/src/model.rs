//! What a model takes and gives: named, typed, shaped tensors.

use std::fmt;

use crate::{DType, Error, NamedTensor, Result, Shape};

/// One input or output of a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// Name in the model graph.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Declared shape; dynamic dimensions accept any size.
    pub shape: Shape,
}

impl fmt::Display for TensorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.name, self.dtype, self.shape)
    }
}

/// A model's interface: its inputs and outputs in graph order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ModelMetadata {
    /// Graph inputs that must be fed (initializers excluded).
    pub inputs: Vec<TensorSpec>,
    /// Graph outputs.
    pub outputs: Vec<TensorSpec>,
}

impl ModelMetadata {
    /// The input called `name`.
    pub fn input(&self, name: &str) -> Option<&TensorSpec> {
        self.inputs.iter().find(|s| s.name == name)
    }

    /// The output called `name`.
    pub fn output(&self, name: &str) -> Option<&TensorSpec> {
        self.outputs.iter().find(|s| s.name == name)
    }

    /// Checks that `inputs` feed every model input exactly once, with the declared
    /// dtype and a shape the declared shape accepts.
    ///
    /// Backends call this before running so that a bad request is answered with a
    /// message naming the input, never with an engine's internal error.
    pub fn validate_inputs(&self, inputs: &[NamedTensor]) -> Result<()> {
        for (i, given) in inputs.iter().enumerate() {
            if inputs[..i].iter().any(|g| g.name == given.name) {
                return Err(Error::DuplicateInput {
                    name: given.name.clone(),
                });
            }
            let Some(spec) = self.input(&given.name) else {
                return Err(Error::UnknownInput {
                    name: given.name.clone(),
                    known: self.input_list(),
                });
            };
            if spec.dtype != given.tensor.dtype() {
                return Err(Error::DTypeMismatch {
                    name: given.name.clone(),
                    expected: spec.dtype,
                    actual: given.tensor.dtype(),
                });
            }
            if !spec.shape.accepts(given.tensor.shape()) {
                return Err(Error::ShapeMismatch {
                    name: given.name.clone(),
                    expected: spec.shape.to_string(),
                    actual: given.tensor.shape().to_vec(),
                });
            }
        }
        if let Some(missing) = self.inputs.iter().find(|s| !inputs.iter().any(|g| g.name == s.name)) {
            return Err(Error::MissingInput {
                name: missing.name.clone(),
                spec: missing.to_string(),
            });
        }
        Ok(())
    }

    fn input_list(&self) -> String {
        self.inputs
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dim, Tensor};

    fn meta() -> ModelMetadata {
        ModelMetadata {
            inputs: vec![TensorSpec {
                name: "x".into(),
                dtype: DType::F32,
                shape: Shape(vec![Dim::Dynamic(Some("N".into())), Dim::Fixed(4)]),
            }],
            outputs: vec![],
        }
    }

    fn x(shape: Vec<usize>) -> NamedTensor {
        let n = shape.iter().product();
        NamedTensor::new("x", Tensor::from_vec(shape, vec![0f32; n]).unwrap())
    }

    #[test]
    fn accepts_any_batch() {
        meta().validate_inputs(&[x(vec![7, 4])]).unwrap();
    }

    #[test]
    fn names_each_problem() {
        let m = meta();
        let e = m.validate_inputs(&[x(vec![2, 5])]).unwrap_err().to_string();
        assert!(e.contains("`x`") && e.contains("[N,4]"), "{e}");
        let e = m.validate_inputs(&[]).unwrap_err().to_string();
        assert!(e.contains("missing input `x`"), "{e}");
        let y = NamedTensor::new("y", Tensor::zeros(DType::F32, vec![1, 4]));
        let e = m.validate_inputs(&[y]).unwrap_err().to_string();
        assert!(e.contains("unknown input `y`") && e.contains("`x`"), "{e}");
        let wrong = NamedTensor::new("x", Tensor::zeros(DType::I64, vec![1, 4]));
        let e = m.validate_inputs(&[wrong]).unwrap_err().to_string();
        assert!(e.contains("FP32") && e.contains("INT64"), "{e}");
        let e = m
            .validate_inputs(&[x(vec![1, 4]), x(vec![1, 4])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than once"), "{e}");
    }
}
