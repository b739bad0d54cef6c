//! Turning `--input`, `--shape` and `--random` into the tensors a model needs.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use hinfer_core::{npy, DType, Dim, ModelMetadata, NamedTensor, Tensor, TensorData};

/// `NAME=VALUE` pairs from the command line; a bare `VALUE` has no name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub name: Option<String>,
    pub value: String,
}

impl std::str::FromStr for Assignment {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('=') {
            Some((name, value)) if !name.is_empty() && !value.is_empty() => Ok(Assignment {
                name: Some(name.to_string()),
                value: value.to_string(),
            }),
            Some(_) => Err(format!("`{s}`: expected NAME=VALUE")),
            None if !s.is_empty() => Ok(Assignment {
                name: None,
                value: s.to_string(),
            }),
            None => Err("empty value".into()),
        }
    }
}

/// The model input an assignment is for: its own name, or the model's only input.
pub fn input_name(a: &Assignment, metadata: &ModelMetadata, flag: &str) -> Result<String> {
    match (&a.name, metadata.inputs.as_slice()) {
        (Some(name), _) => Ok(name.clone()),
        (None, [only]) => Ok(only.name.clone()),
        (None, _) => bail!(
            "{flag} {}: the model has {} inputs, so write NAME=VALUE (inputs: {})",
            a.value,
            metadata.inputs.len(),
            metadata
                .inputs
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Reads each `--input NAME=FILE.npy`.
pub fn read_inputs(assignments: &[Assignment], metadata: &ModelMetadata) -> Result<Vec<NamedTensor>> {
    assignments
        .iter()
        .map(|a| {
            let name = input_name(a, metadata, "--input")?;
            let tensor = npy::read(&PathBuf::from(&a.value)).with_context(|| format!("--input {name}"))?;
            Ok(NamedTensor::new(name, tensor))
        })
        .collect()
}

/// Parses `1x3x48x320` (or `1,3,48,320`).
pub fn parse_shape(text: &str) -> Result<Vec<usize>> {
    text.split(['x', ','])
        .map(|d| {
            d.trim()
                .parse::<usize>()
                .with_context(|| format!("bad shape `{text}`: expected e.g. 1x3x48x320"))
        })
        .collect()
}

/// Deterministic inputs for every model input not already given.
///
/// Shapes come from `--shape NAME=AxBxC`, else from the model with dynamic
/// dimensions set to `batch` (the first) or 1 (others). Floats are uniform in
/// [0, 1), integers 0, booleans false; the same seed gives the same values.
pub fn synthesize_missing(
    metadata: &ModelMetadata,
    given: &mut Vec<NamedTensor>,
    shapes: &[Assignment],
    batch: usize,
) -> Result<()> {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for spec in &metadata.inputs {
        if given.iter().any(|t| t.name == spec.name) {
            continue;
        }
        let explicit = shapes
            .iter()
            .find(|a| input_name(a, metadata, "--shape").ok().as_deref() == Some(&spec.name));
        let shape = match explicit {
            Some(a) => parse_shape(&a.value)?,
            None => spec
                .shape
                .dims()
                .iter()
                .enumerate()
                .map(|(axis, d)| match d {
                    Dim::Fixed(n) => *n,
                    Dim::Dynamic(_) if axis == 0 => batch,
                    Dim::Dynamic(_) => 1,
                })
                .collect(),
        };
        let len = shape.iter().product();
        let data = match spec.dtype {
            DType::F32 => TensorData::F32((0..len).map(|_| rng.unit() as f32).collect()),
            DType::F64 => TensorData::F64((0..len).map(|_| rng.unit()).collect()),
            DType::F16 => TensorData::F16((0..len).map(|_| hinfer_core::half::f16::from_f64(rng.unit())).collect()),
            other => TensorData::zeros(other, len),
        };
        given.push(NamedTensor::new(spec.name.clone(), Tensor::new(shape, data)?));
    }
    Ok(())
}

/// A tiny deterministic generator (xorshift64*), enough for synthetic inputs.
struct XorShift(u64);

impl XorShift {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hinfer_core::{Shape, TensorSpec};

    fn meta() -> ModelMetadata {
        ModelMetadata {
            inputs: vec![
                TensorSpec {
                    name: "x".into(),
                    dtype: DType::F32,
                    shape: Shape(vec![Dim::Dynamic(None), Dim::Fixed(3), Dim::Dynamic(None)]),
                },
                TensorSpec {
                    name: "ids".into(),
                    dtype: DType::I64,
                    shape: Shape(vec![Dim::Dynamic(None)]),
                },
            ],
            outputs: vec![],
        }
    }

    #[test]
    fn assignments_parse() {
        assert_eq!("a=b.npy".parse::<Assignment>().unwrap().name.as_deref(), Some("a"));
        assert_eq!("b.npy".parse::<Assignment>().unwrap().name, None);
        assert!("=b".parse::<Assignment>().is_err());
    }

    #[test]
    fn synthesizes_with_shapes_and_batch() {
        let mut given = vec![];
        let shapes = vec!["x=2x3x7".parse().unwrap()];
        synthesize_missing(&meta(), &mut given, &shapes, 4).unwrap();
        assert_eq!(given[0].tensor.shape(), &[2, 3, 7]);
        assert_eq!(given[1].tensor.shape(), &[4]);
        assert!(given[0]
            .tensor
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn unnamed_assignment_needs_a_single_input() {
        let a: Assignment = "f.npy".parse().unwrap();
        assert!(input_name(&a, &meta(), "--input")
            .unwrap_err()
            .to_string()
            .contains("x, ids"));
        assert!(parse_shape("1x3xq").is_err());
    }
}
