//! Reading and writing the float data of ONNX initializers.

use crate::proto::{tensor_proto::DataType, TensorProto};

/// The values of an FP32 initializer stored in the file (raw or typed), or `None`
/// for other types and external data.
pub fn f32_values(t: &TensorProto) -> Option<Vec<f32>> {
    if t.data_type != Some(DataType::Float as i32) || !t.external_data.is_empty() {
        return None;
    }
    let count: usize = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .product::<Option<usize>>()?;
    let values: Vec<f32> = match &t.raw_data {
        Some(raw) => raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        None => t.float_data.clone(),
    };
    (values.len() == count).then_some(values)
}

/// An FP32 initializer with raw little-endian data.
pub fn f32_tensor(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.to_string()),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ..TensorProto::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_typed_data_read_alike() {
        let raw = f32_tensor("w", &[2], &[1.5, -2.0]);
        assert_eq!(f32_values(&raw), Some(vec![1.5, -2.0]));
        let typed = TensorProto {
            float_data: vec![1.5, -2.0],
            raw_data: None,
            ..raw.clone()
        };
        assert_eq!(f32_values(&typed), Some(vec![1.5, -2.0]));
        let wrong = TensorProto { dims: vec![3], ..raw };
        assert_eq!(f32_values(&wrong), None);
    }
}
