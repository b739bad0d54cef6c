//! The KServe v2 / Open Inference Protocol inference request and response, with
//! Triton's binary tensor extension.
//!
//! Tensor data arrive as JSON (`data`, nested or flat, row-major) or as raw
//! little-endian bytes after the JSON header (`parameters.binary_data_size`;
//! BYTES elements are a 4-byte little-endian length then the bytes). JSON cannot
//! carry NaN or infinities: hinfer accepts the strings `"NaN"`, `"Infinity"`,
//! `"-Infinity"` (and `"inf"`, `"-inf"`) for float inputs and writes non-finite
//! float outputs the same way; binary tensors carry them natively.

use hinfer_core::half::{bf16, f16};
use hinfer_core::{DType, Dim, ModelMetadata, NamedTensor, Tensor, TensorData};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// A parsed `POST .../infer` body (the JSON part).
#[derive(Debug, Deserialize)]
pub struct InferRequestJson {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub parameters: Map<String, Value>,
    pub inputs: Vec<InputJson>,
    #[serde(default)]
    pub outputs: Option<Vec<OutputRequestJson>>,
}

/// One input tensor of a request.
#[derive(Debug, Deserialize)]
pub struct InputJson {
    pub name: String,
    pub shape: Vec<i64>,
    pub datatype: String,
    #[serde(default)]
    pub parameters: Map<String, Value>,
    #[serde(default)]
    pub data: Option<Value>,
}

/// An output the client asks for.
#[derive(Debug, Deserialize)]
pub struct OutputRequestJson {
    pub name: String,
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// Request-level hints, read from `parameters`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RequestHints {
    /// Triton's `priority`: 0 default, 1 highest.
    pub priority: u32,
    /// Triton's `timeout` in microseconds (0 or absent: none).
    pub timeout_us: Option<u64>,
    /// `binary_data_output`: every output as binary unless an output says otherwise.
    pub binary_output: bool,
}

impl RequestHints {
    /// Reads and type-checks the hints hinfer understands; other parameters are ignored.
    pub fn from_parameters(parameters: &Map<String, Value>) -> Result<RequestHints, ApiError> {
        let uint = |key: &str| -> Result<Option<u64>, ApiError> {
            match parameters.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                    ApiError::invalid(format!("parameter `{key}` must be a non-negative integer, got {v}"))
                }),
            }
        };
        let binary_output = match parameters.get("binary_data_output") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(ApiError::invalid(format!(
                    "parameter `binary_data_output` must be a boolean, got {v}"
                )))
            }
        };
        let priority = uint("priority")?.unwrap_or(0);
        Ok(RequestHints {
            priority: u32::try_from(priority).map_err(|_| ApiError::invalid("parameter `priority` is too large"))?,
            timeout_us: uint("timeout")?.filter(|&t| t > 0),
            binary_output,
        })
    }
}

/// Checks one input's declared name, datatype and shape against the model and
/// returns the model's dtype and the concrete shape.
fn check_input(
    input: &InputJson,
    metadata: &ModelMetadata,
    max_batch_size: usize,
) -> Result<(DType, Vec<usize>), ApiError> {
    let Some(spec) = metadata.input(&input.name) else {
        let known: Vec<&str> = metadata.inputs.iter().map(|s| s.name.as_str()).collect();
        return Err(ApiError::invalid(format!(
            "unknown input `{}`; the model's inputs are: {}",
            input.name,
            known.join(", ")
        )));
    };
    let dtype: DType = input
        .datatype
        .parse()
        .map_err(|_| ApiError::invalid(format!("input `{}`: unknown datatype `{}`", input.name, input.datatype)))?;
    if dtype != spec.dtype {
        return Err(ApiError::invalid(format!(
            "input `{}`: datatype {} does not match the model's {}",
            input.name, input.datatype, spec.dtype
        )));
    }
    let shape: Vec<usize> = input
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ApiError::invalid(format!(
                "input `{}`: shape {:?} has a negative dimension",
                input.name, input.shape
            ))
        })?;
    if !spec.shape.accepts(&shape) {
        return Err(ApiError::invalid(format!(
            "input `{}`: shape {:?} does not match the model's {}",
            input.name, input.shape, spec.shape
        )));
    }
    if max_batch_size > 0 && matches!(spec.shape.dims().first(), Some(Dim::Dynamic(_))) && shape[0] > max_batch_size {
        return Err(ApiError::invalid(format!(
            "input `{}`: batch size {} exceeds the model's max_batch_size {max_batch_size}",
            input.name, shape[0]
        )));
    }
    Ok((dtype, shape))
}

/// Turns the request's inputs (JSON data or binary slices of `binary`) into
/// tensors, checking every name, datatype, shape and element count.
pub fn decode_inputs(
    request: &InferRequestJson,
    binary: &[u8],
    metadata: &ModelMetadata,
    max_batch_size: usize,
) -> Result<Vec<NamedTensor>, ApiError> {
    let mut offset = 0usize;
    let mut tensors = Vec::with_capacity(request.inputs.len());
    for input in &request.inputs {
        if tensors.iter().any(|t: &NamedTensor| t.name == input.name) {
            return Err(ApiError::invalid(format!(
                "input `{}` is given more than once",
                input.name
            )));
        }
        let (dtype, shape) = check_input(input, metadata, max_batch_size)?;
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(|| {
            ApiError::invalid(format!(
                "input `{}`: shape {:?} holds more elements than can be addressed",
                input.name, input.shape
            ))
        })?;
        let data = match (input.parameters.get("binary_data_size"), &input.data) {
            (Some(size), None) => {
                let size = size.as_u64().ok_or_else(|| {
                    ApiError::invalid(format!(
                        "input `{}`: binary_data_size must be a non-negative integer",
                        input.name
                    ))
                })? as usize;
                let end = offset.checked_add(size).filter(|&e| e <= binary.len()).ok_or_else(|| {
                    ApiError::invalid(format!(
                        "input `{}`: binary_data_size {size} runs past the {} bytes of binary data",
                        input.name,
                        binary.len()
                    ))
                })?;
                let bytes = &binary[offset..end];
                offset = end;
                decode_binary(&input.name, dtype, count, bytes)?
            }
            (None, Some(value)) => decode_json(&input.name, dtype, count, value)?,
            (Some(_), Some(_)) => {
                return Err(ApiError::invalid(format!(
                    "input `{}` has both `data` and binary_data_size",
                    input.name
                )))
            }
            (None, None) => return Err(ApiError::invalid(format!("input `{}` has no `data`", input.name))),
        };
        let tensor = Tensor::new(shape, data).map_err(|e| ApiError::invalid(format!("input `{}`: {e}", input.name)))?;
        tensors.push(NamedTensor::new(input.name.clone(), tensor));
    }
    if offset != binary.len() {
        return Err(ApiError::invalid(format!(
            "{} bytes of binary data follow the JSON header but the inputs use {offset}",
            binary.len()
        )));
    }
    if let Some(missing) = metadata
        .inputs
        .iter()
        .find(|s| !tensors.iter().any(|t| t.name == s.name))
    {
        return Err(ApiError::invalid(format!(
            "missing input `{}` ({})",
            missing.name, missing
        )));
    }
    Ok(tensors)
}

/// Flattens nested JSON arrays into their leaves, row-major.
fn flatten<'v>(value: &'v Value, out: &mut Vec<&'v Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| flatten(v, out)),
        leaf => out.push(leaf),
    }
}

fn decode_json(name: &str, dtype: DType, count: usize, value: &Value) -> Result<TensorData, ApiError> {
    // The shape is untrusted: size by what the body holds, never by the shape alone.
    let mut leaves = Vec::new();
    flatten(value, &mut leaves);
    if leaves.len() != count {
        return Err(ApiError::invalid(format!(
            "input `{name}`: its shape holds {count} elements but `data` has {}",
            leaves.len()
        )));
    }
    let bad =
        |i: usize, what: &str| ApiError::invalid(format!("input `{name}`: element {i} is not {what}: {}", leaves[i]));
    macro_rules! ints {
        ($t:ty, $variant:ident) => {{
            let mut v = Vec::with_capacity(count);
            for (i, x) in leaves.iter().enumerate() {
                let n = x
                    .as_i64()
                    .and_then(|n| <$t>::try_from(n).ok())
                    .or_else(|| x.as_u64().and_then(|n| <$t>::try_from(n).ok()));
                v.push(n.ok_or_else(|| bad(i, concat!("a ", stringify!($t))))?);
            }
            TensorData::$variant(v)
        }};
    }
    let float = |i: usize, x: &Value| -> Result<f64, ApiError> {
        match x {
            Value::Number(n) => n.as_f64().ok_or_else(|| bad(i, "a number")),
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "nan" => Ok(f64::NAN),
                "inf" | "infinity" | "+inf" | "+infinity" => Ok(f64::INFINITY),
                "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
                _ => Err(bad(i, "a number")),
            },
            _ => Err(bad(i, "a number")),
        }
    };
    Ok(match dtype {
        DType::Bool => TensorData::Bool(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| match x {
                    Value::Bool(b) => Ok(*b),
                    Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
                    Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
                    _ => Err(bad(i, "a boolean")),
                })
                .collect::<Result<_, _>>()?,
        ),
        DType::U8 => ints!(u8, U8),
        DType::U16 => ints!(u16, U16),
        DType::U32 => ints!(u32, U32),
        DType::U64 => ints!(u64, U64),
        DType::I8 => ints!(i8, I8),
        DType::I16 => ints!(i16, I16),
        DType::I32 => ints!(i32, I32),
        DType::I64 => ints!(i64, I64),
        DType::F16 => TensorData::F16(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| float(i, x).map(f16::from_f64))
                .collect::<Result<_, _>>()?,
        ),
        DType::BF16 => TensorData::BF16(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| float(i, x).map(bf16::from_f64))
                .collect::<Result<_, _>>()?,
        ),
        DType::F32 => TensorData::F32(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| float(i, x).map(|f| f as f32))
                .collect::<Result<_, _>>()?,
        ),
        DType::F64 => TensorData::F64(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| float(i, x))
                .collect::<Result<_, _>>()?,
        ),
        DType::Bytes => TensorData::Bytes(
            leaves
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str()
                        .map(|s| s.as_bytes().to_vec())
                        .ok_or_else(|| bad(i, "a string"))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn decode_binary(name: &str, dtype: DType, count: usize, bytes: &[u8]) -> Result<TensorData, ApiError> {
    hinfer_core::raw::read_le(dtype, bytes, count)
        .map_err(|e| ApiError::invalid(format!("input `{name}`: binary data does not fit its shape: {e}")))
}

/// Raw little-endian bytes of a tensor, as Triton's binary extension sends them.
pub fn encode_binary(data: &TensorData, out: &mut Vec<u8>) {
    hinfer_core::raw::write_le(data, out)
}

/// Serialises tensor data as a flat JSON array (floats shortest round-trip;
/// non-finite floats as strings; BYTES as UTF-8 strings, lossily).
pub struct JsonData<'a>(pub &'a TensorData);

impl Serialize for JsonData<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn finite_or_name<S: SerializeSeq>(
            seq: &mut S,
            x: f64,
            write: impl FnOnce(&mut S) -> Result<(), S::Error>,
        ) -> Result<(), S::Error> {
            if x.is_finite() {
                write(seq)
            } else if x.is_nan() {
                seq.serialize_element("NaN")
            } else if x > 0.0 {
                seq.serialize_element("Infinity")
            } else {
                seq.serialize_element("-Infinity")
            }
        }
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        macro_rules! each {
            ($v:expr) => {
                for x in $v {
                    seq.serialize_element(x)?;
                }
            };
        }
        match self.0 {
            TensorData::Bool(v) => each!(v),
            TensorData::U8(v) => each!(v),
            TensorData::U16(v) => each!(v),
            TensorData::U32(v) => each!(v),
            TensorData::U64(v) => each!(v),
            TensorData::I8(v) => each!(v),
            TensorData::I16(v) => each!(v),
            TensorData::I32(v) => each!(v),
            TensorData::I64(v) => each!(v),
            TensorData::F16(v) => {
                for x in v {
                    let x = f32::from(*x);
                    finite_or_name(&mut seq, f64::from(x), |s| s.serialize_element(&x))?;
                }
            }
            TensorData::BF16(v) => {
                for x in v {
                    let x = f32::from(*x);
                    finite_or_name(&mut seq, f64::from(x), |s| s.serialize_element(&x))?;
                }
            }
            TensorData::F32(v) => {
                for x in v {
                    finite_or_name(&mut seq, f64::from(*x), |s| s.serialize_element(x))?;
                }
            }
            TensorData::F64(v) => {
                for x in v {
                    finite_or_name(&mut seq, *x, |s| s.serialize_element(x))?;
                }
            }
            TensorData::Bytes(v) => {
                for b in v {
                    seq.serialize_element(&String::from_utf8_lossy(b))?;
                }
            }
        }
        seq.end()
    }
}

/// One output in a response.
#[derive(Serialize)]
pub struct OutputJson<'a> {
    pub name: &'a str,
    pub datatype: &'static str,
    pub shape: &'a [usize],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonData<'a>>,
}

/// The response body's JSON part.
#[derive(Serialize)]
pub struct InferResponseJson<'a> {
    pub model_name: &'a str,
    pub model_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub parameters: Map<String, Value>,
    pub outputs: Vec<OutputJson<'a>>,
}

/// Which outputs to return, in which order, and whether each goes as binary.
pub fn select_outputs<'a>(
    request: &InferRequestJson,
    outputs: &'a [NamedTensor],
    hints: &RequestHints,
) -> Result<Vec<(&'a NamedTensor, bool)>, ApiError> {
    let Some(wanted) = &request.outputs else {
        return Ok(outputs.iter().map(|t| (t, hints.binary_output)).collect());
    };
    wanted
        .iter()
        .map(|w| {
            let tensor = outputs.iter().find(|t| t.name == w.name).ok_or_else(|| {
                let known: Vec<&str> = outputs.iter().map(|t| t.name.as_str()).collect();
                ApiError::invalid(format!(
                    "unknown output `{}`; the model's outputs are: {}",
                    w.name,
                    known.join(", ")
                ))
            })?;
            if w.parameters.contains_key("classification") {
                return Err(ApiError::invalid(format!(
                    "output `{}`: the classification extension is not supported",
                    w.name
                )));
            }
            let binary = match w.parameters.get("binary_data") {
                None | Some(Value::Null) => hints.binary_output,
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    return Err(ApiError::invalid(format!(
                        "output `{}`: binary_data must be a boolean, got {v}",
                        w.name
                    )))
                }
            };
            Ok((tensor, binary))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hinfer_core::{Shape, TensorSpec};

    fn meta() -> ModelMetadata {
        ModelMetadata {
            inputs: vec![TensorSpec {
                name: "x".into(),
                dtype: DType::F32,
                shape: Shape(vec![Dim::Dynamic(None), Dim::Fixed(2)]),
            }],
            outputs: vec![],
        }
    }

    fn request(body: &str) -> InferRequestJson {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn nested_and_flat_data_decode_alike() {
        let nested = request(r#"{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,"NaN"]]}]}"#);
        let flat = request(r#"{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[1,2,3,"nan"]}]}"#);
        let a = decode_inputs(&nested, &[], &meta(), 8).unwrap();
        let b = decode_inputs(&flat, &[], &meta(), 8).unwrap();
        assert_eq!(a[0].tensor.as_slice::<f32>().unwrap()[..3], [1.0, 2.0, 3.0]);
        assert!(b[0].tensor.as_slice::<f32>().unwrap()[3].is_nan());
    }

    #[test]
    fn binary_inputs_are_sliced_in_order() {
        let body =
            request(r#"{"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}]}"#);
        let mut bytes = vec![];
        encode_binary(&TensorData::F32(vec![1.5, -2.0]), &mut bytes);
        let t = decode_inputs(&body, &bytes, &meta(), 8).unwrap();
        assert_eq!(t[0].tensor.as_slice::<f32>().unwrap(), &[1.5, -2.0]);
        assert!(decode_inputs(&body, &bytes[..4], &meta(), 8).is_err());
    }

    #[test]
    fn every_mismatch_is_named() {
        let cases = [
            (
                r#"{"inputs":[{"name":"y","shape":[1,2],"datatype":"FP32","data":[1,2]}]}"#,
                "unknown input `y`",
            ),
            (
                r#"{"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}"#,
                "does not match the model's",
            ),
            (
                r#"{"inputs":[{"name":"x","shape":[1,2],"datatype":"INT64","data":[1,2]}]}"#,
                "datatype INT64",
            ),
            (
                r#"{"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1]}]}"#,
                "holds 2 elements",
            ),
            (
                r#"{"inputs":[{"name":"x","shape":[9,2],"datatype":"FP32","data":[]}]}"#,
                "exceeds the model's max_batch_size 8",
            ),
            (
                r#"{"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1,"a"]}]}"#,
                "element 1 is not a number",
            ),
            (r#"{"inputs":[]}"#, "missing input `x`"),
            (
                r#"{"inputs":[{"name":"x","shape":[4294967296,4294967296],"datatype":"FP32","data":[1]}]}"#,
                "does not match",
            ),
        ];
        for (body, needle) in cases {
            let e = decode_inputs(&request(body), &[], &meta(), 8).unwrap_err();
            assert!(e.message.contains(needle), "{body}: {}", e.message);
            assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST);
        }
    }

    #[test]
    fn huge_shapes_are_refused_without_allocating() {
        let wide = ModelMetadata {
            inputs: vec![TensorSpec {
                name: "x".into(),
                dtype: DType::F32,
                shape: Shape(vec![Dim::Dynamic(None), Dim::Dynamic(None), Dim::Dynamic(None)]),
            }],
            outputs: vec![],
        };
        for shape in ["[1,1000000000000,1]", "[4294967296,4294967296,4294967296]"] {
            let body = format!(r#"{{"inputs":[{{"name":"x","shape":{shape},"datatype":"FP32","data":[1,2]}}]}}"#);
            let e = decode_inputs(&request(&body), &[], &wide, 0).unwrap_err();
            assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST, "{}", e.message);
            let binary = format!(
                r#"{{"inputs":[{{"name":"x","shape":{shape},"datatype":"FP32","parameters":{{"binary_data_size":8}}}}]}}"#
            );
            assert!(decode_inputs(&request(&binary), &[0; 8], &wide, 0).is_err());
        }
    }

    #[test]
    fn json_output_writes_shortest_floats_and_names_non_finite() {
        let data = TensorData::F32(vec![0.1, f32::INFINITY, f32::NAN]);
        assert_eq!(
            serde_json::to_string(&JsonData(&data)).unwrap(),
            r#"[0.1,"Infinity","NaN"]"#
        );
    }

    #[test]
    fn hints_are_type_checked() {
        let p: Map<String, Value> =
            serde_json::from_str(r#"{"priority":2,"timeout":1000,"binary_data_output":true}"#).unwrap();
        let h = RequestHints::from_parameters(&p).unwrap();
        assert_eq!((h.priority, h.timeout_us, h.binary_output), (2, Some(1000), true));
        let p: Map<String, Value> = serde_json::from_str(r#"{"priority":-1}"#).unwrap();
        assert!(RequestHints::from_parameters(&p).is_err());
    }
}
