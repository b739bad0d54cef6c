//! Element types of tensors.

use std::fmt;
use std::str::FromStr;

/// The element type of a tensor.
///
/// The set is the KServe v2 / Open Inference Protocol one (BF16 being Triton's
/// extension). [`DType::name`] gives the protocol spelling (`FP32`, `INT64`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
    /// Variable-length byte strings (ONNX `string`, KServe `BYTES`).
    Bytes,
}

impl DType {
    /// Every dtype, in protocol order.
    pub const ALL: [DType; 14] = [
        DType::Bool,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::Bytes,
    ];

    /// The KServe v2 datatype name (`BOOL`, `UINT8`, ..., `FP32`, `BYTES`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "BOOL",
            DType::U8 => "UINT8",
            DType::U16 => "UINT16",
            DType::U32 => "UINT32",
            DType::U64 => "UINT64",
            DType::I8 => "INT8",
            DType::I16 => "INT16",
            DType::I32 => "INT32",
            DType::I64 => "INT64",
            DType::F16 => "FP16",
            DType::BF16 => "BF16",
            DType::F32 => "FP32",
            DType::F64 => "FP64",
            DType::Bytes => "BYTES",
        }
    }

    /// Size of one element in bytes; `None` for variable-length [`DType::Bytes`].
    pub fn size_of(self) -> Option<usize> {
        Some(match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
            DType::Bytes => return None,
        })
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = crate::Error;

    /// Parses a KServe name (`FP32`) or a common alias (`float32`, `f32`, `int64`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let upper = s.to_ascii_uppercase();
        let found = DType::ALL
            .into_iter()
            .find(|d| d.name() == upper)
            .or(match upper.as_str() {
                "FLOAT" | "FLOAT32" | "F32" => Some(DType::F32),
                "DOUBLE" | "FLOAT64" | "F64" => Some(DType::F64),
                "FLOAT16" | "HALF" | "F16" => Some(DType::F16),
                "BFLOAT16" => Some(DType::BF16),
                "I8" => Some(DType::I8),
                "I16" => Some(DType::I16),
                "I32" => Some(DType::I32),
                "I64" => Some(DType::I64),
                "U8" => Some(DType::U8),
                "U16" => Some(DType::U16),
                "U32" => Some(DType::U32),
                "U64" => Some(DType::U64),
                "STRING" => Some(DType::Bytes),
                _ => None,
            });
        found.ok_or_else(|| crate::Error::UnknownDType(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
        }
        assert_eq!("float32".parse::<DType>().unwrap(), DType::F32);
        assert!("complex".parse::<DType>().is_err());
    }
}
