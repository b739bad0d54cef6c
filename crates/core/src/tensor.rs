//! Dense tensors of any [`DType`], owned and row-major.

use half::{bf16, f16};

use crate::{DType, Error, Result};

/// The elements of a tensor, one variant per [`DType`], row-major.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bytes(Vec<Vec<u8>>),
}

/// Applies `$body` to the vector inside any [`TensorData`] variant.
macro_rules! for_each_variant {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            TensorData::Bool($v) => $body,
            TensorData::U8($v) => $body,
            TensorData::U16($v) => $body,
            TensorData::U32($v) => $body,
            TensorData::U64($v) => $body,
            TensorData::I8($v) => $body,
            TensorData::I16($v) => $body,
            TensorData::I32($v) => $body,
            TensorData::I64($v) => $body,
            TensorData::F16($v) => $body,
            TensorData::BF16($v) => $body,
            TensorData::F32($v) => $body,
            TensorData::F64($v) => $body,
            TensorData::Bytes($v) => $body,
        }
    };
}

impl TensorData {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            TensorData::Bool(_) => DType::Bool,
            TensorData::U8(_) => DType::U8,
            TensorData::U16(_) => DType::U16,
            TensorData::U32(_) => DType::U32,
            TensorData::U64(_) => DType::U64,
            TensorData::I8(_) => DType::I8,
            TensorData::I16(_) => DType::I16,
            TensorData::I32(_) => DType::I32,
            TensorData::I64(_) => DType::I64,
            TensorData::F16(_) => DType::F16,
            TensorData::BF16(_) => DType::BF16,
            TensorData::F32(_) => DType::F32,
            TensorData::F64(_) => DType::F64,
            TensorData::Bytes(_) => DType::Bytes,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        for_each_variant!(self, v => v.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len` zero elements (empty strings for bytes, `false` for bool).
    pub fn zeros(dtype: DType, len: usize) -> TensorData {
        match dtype {
            DType::Bool => TensorData::Bool(vec![false; len]),
            DType::U8 => TensorData::U8(vec![0; len]),
            DType::U16 => TensorData::U16(vec![0; len]),
            DType::U32 => TensorData::U32(vec![0; len]),
            DType::U64 => TensorData::U64(vec![0; len]),
            DType::I8 => TensorData::I8(vec![0; len]),
            DType::I16 => TensorData::I16(vec![0; len]),
            DType::I32 => TensorData::I32(vec![0; len]),
            DType::I64 => TensorData::I64(vec![0; len]),
            DType::F16 => TensorData::F16(vec![f16::ZERO; len]),
            DType::BF16 => TensorData::BF16(vec![bf16::ZERO; len]),
            DType::F32 => TensorData::F32(vec![0.0; len]),
            DType::F64 => TensorData::F64(vec![0.0; len]),
            DType::Bytes => TensorData::Bytes(vec![Vec::new(); len]),
        }
    }

    /// Every element widened to `f64` (bool as 0/1); `None` for bytes.
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        fn widen<T: Copy>(v: &[T], f: impl Fn(T) -> f64) -> Option<Vec<f64>> {
            Some(v.iter().map(|&x| f(x)).collect())
        }
        match self {
            TensorData::Bool(v) => widen(v, |x| f64::from(u8::from(x))),
            TensorData::U8(v) => widen(v, f64::from),
            TensorData::U16(v) => widen(v, f64::from),
            TensorData::U32(v) => widen(v, f64::from),
            TensorData::U64(v) => widen(v, |x| x as f64),
            TensorData::I8(v) => widen(v, f64::from),
            TensorData::I16(v) => widen(v, f64::from),
            TensorData::I32(v) => widen(v, f64::from),
            TensorData::I64(v) => widen(v, |x| x as f64),
            TensorData::F16(v) => widen(v, f64::from),
            TensorData::BF16(v) => widen(v, f64::from),
            TensorData::F32(v) => widen(v, f64::from),
            TensorData::F64(v) => widen(v, |x| x),
            TensorData::Bytes(_) => None,
        }
    }
}

/// Rust element types that map one-to-one onto a [`DType`].
pub trait Element: Sized + Clone + 'static {
    /// The matching dtype.
    const DTYPE: DType;
    /// Borrows the elements if `data` holds this type.
    fn slice(data: &TensorData) -> Option<&[Self]>;
    /// Wraps a vector of this type.
    fn wrap(values: Vec<Self>) -> TensorData;
}

macro_rules! impl_element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn slice(data: &TensorData) -> Option<&[Self]> {
                match data {
                    TensorData::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(values: Vec<Self>) -> TensorData {
                TensorData::$variant(values)
            }
        }
    )*};
}

impl_element!(
    bool => Bool, u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    f16 => F16, bf16 => BF16, f32 => F32, f64 => F64, Vec<u8> => Bytes,
);

/// An owned, row-major tensor: a concrete shape and its elements.
///
/// Invariant: the number of elements equals the product of the shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    shape: Vec<usize>,
    data: TensorData,
}

impl Tensor {
    /// Builds a tensor, checking that `data` holds exactly `shape.product()` elements.
    pub fn new(shape: Vec<usize>, data: TensorData) -> Result<Tensor> {
        let expected = element_count(&shape);
        if expected != data.len() {
            return Err(Error::DataLength {
                shape,
                expected,
                actual: data.len(),
            });
        }
        Ok(Tensor { shape, data })
    }

    /// Builds a tensor from a typed vector.
    pub fn from_vec<T: Element>(shape: Vec<usize>, values: Vec<T>) -> Result<Tensor> {
        Tensor::new(shape, T::wrap(values))
    }

    /// A tensor of zeros.
    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Tensor {
        let len = element_count(&shape);
        Tensor {
            shape,
            data: TensorData::zeros(dtype, len),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The concrete shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements.
    pub fn data(&self) -> &TensorData {
        &self.data
    }

    /// Takes the shape and the elements apart.
    pub fn into_parts(self) -> (Vec<usize>, TensorData) {
        (self.shape, self.data)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Bytes held by the elements (string payloads for [`DType::Bytes`]).
    pub fn byte_size(&self) -> usize {
        match &self.data {
            TensorData::Bytes(v) => v.iter().map(Vec::len).sum(),
            other => other.len() * other.dtype().size_of().unwrap_or(0),
        }
    }

    /// Borrows the elements as `T`, or says which dtype the tensor really has.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        T::slice(&self.data).ok_or(Error::DTypeMismatch {
            name: String::new(),
            expected: T::DTYPE,
            actual: self.dtype(),
        })
    }

    /// A one-line description: dtype, shape, and min/max/mean of numeric data.
    pub fn summary(&self) -> String {
        let head = format!("{} {:?}", self.dtype(), self.shape);
        let Some(values) = self.data.to_f64_vec() else {
            return format!("{head} ({} strings)", self.len());
        };
        if values.is_empty() {
            return format!("{head} (empty)");
        }
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let non_finite = values.len() - finite.len();
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = finite.iter().sum::<f64>() / finite.len().max(1) as f64;
        let mut s = format!("{head} min {min:.6} max {max:.6} mean {mean:.6}");
        if non_finite > 0 {
            s.push_str(&format!(" ({non_finite} non-finite)"));
        }
        s
    }
}

/// A tensor with the name of the model input or output it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTensor {
    /// Input or output name, as in the model.
    pub name: String,
    /// The value.
    pub tensor: Tensor,
}

impl NamedTensor {
    /// Pairs a name with a tensor.
    pub fn new(name: impl Into<String>, tensor: Tensor) -> NamedTensor {
        NamedTensor {
            name: name.into(),
            tensor,
        }
    }
}

/// BYTES elements as UTF-8 strings, for engines whose string tensors hold text.
pub fn utf8_strings(items: &[Vec<u8>]) -> Result<Vec<String>> {
    items
        .iter()
        .enumerate()
        .map(|(i, b)| {
            String::from_utf8(b.clone()).map_err(|_| {
                Error::Unsupported(format!(
                    "BYTES element {i} is not valid UTF-8 (this engine takes text strings)"
                ))
            })
        })
        .collect()
}

/// Product of the dimensions (1 for a scalar).
pub fn element_count(shape: &[usize]) -> usize {
    shape.iter().product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_element_count() {
        assert!(Tensor::from_vec(vec![2, 3], vec![0f32; 6]).is_ok());
        let err = Tensor::from_vec(vec![2, 3], vec![0f32; 5]).unwrap_err();
        assert!(err.to_string().contains("6"), "{err}");
    }

    #[test]
    fn typed_access_names_the_real_dtype() {
        let t = Tensor::from_vec(vec![2], vec![1i64, 2]).unwrap();
        assert_eq!(t.as_slice::<i64>().unwrap(), &[1, 2]);
        let err = t.as_slice::<f32>().unwrap_err().to_string();
        assert!(err.contains("FP32") && err.contains("INT64"), "{err}");
    }

    #[test]
    fn summary_reports_stats_and_non_finite() {
        let t = Tensor::from_vec(vec![3], vec![1f32, 3.0, f32::NAN]).unwrap();
        let s = t.summary();
        assert!(
            s.contains("min 1.0") && s.contains("max 3.0") && s.contains("1 non-finite"),
            "{s}"
        );
    }

    #[test]
    fn zeros_and_byte_size() {
        let t = Tensor::zeros(DType::F16, vec![2, 4]);
        assert_eq!(t.byte_size(), 16);
        assert_eq!(Tensor::zeros(DType::Bytes, vec![3]).len(), 3);
    }
}

/// Stacking requests into a batch and splitting a batch's outputs back.
impl Tensor {
    /// Concatenates tensors along the first (batch) dimension.
    ///
    /// All parts must share dtype and the dimensions after the first.
    pub fn concat_batch(parts: &[&Tensor]) -> Result<Tensor> {
        let Some(first) = parts.first() else {
            return Err(Error::Unsupported("cannot concatenate zero tensors".into()));
        };
        if first.shape.is_empty() {
            return Err(Error::Unsupported("cannot batch scalars".into()));
        }
        let mut rows = 0;
        for p in parts {
            if p.dtype() != first.dtype() || p.shape.len() != first.shape.len() || p.shape[1..] != first.shape[1..] {
                return Err(Error::ShapeMismatch {
                    name: String::new(),
                    expected: format!("{} [?,{:?}]", first.dtype(), &first.shape[1..]),
                    actual: p.shape.clone(),
                });
            }
            rows += p.shape[0];
        }
        let mut shape = first.shape.clone();
        shape[0] = rows;
        macro_rules! join {
            ($variant:ident) => {{
                let mut out = Vec::with_capacity(element_count(&shape));
                for p in parts {
                    if let TensorData::$variant(v) = &p.data {
                        out.extend_from_slice(v);
                    }
                }
                TensorData::$variant(out)
            }};
        }
        let data = match first.data {
            TensorData::Bool(_) => join!(Bool),
            TensorData::U8(_) => join!(U8),
            TensorData::U16(_) => join!(U16),
            TensorData::U32(_) => join!(U32),
            TensorData::U64(_) => join!(U64),
            TensorData::I8(_) => join!(I8),
            TensorData::I16(_) => join!(I16),
            TensorData::I32(_) => join!(I32),
            TensorData::I64(_) => join!(I64),
            TensorData::F16(_) => join!(F16),
            TensorData::BF16(_) => join!(BF16),
            TensorData::F32(_) => join!(F32),
            TensorData::F64(_) => join!(F64),
            TensorData::Bytes(_) => join!(Bytes),
        };
        Tensor::new(shape, data)
    }

    /// Splits along the first dimension into parts of `rows[i]` rows each.
    pub fn split_batch(&self, rows: &[usize]) -> Result<Vec<Tensor>> {
        let total: usize = rows.iter().sum();
        if self.shape.first() != Some(&total) {
            return Err(Error::ShapeMismatch {
                name: String::new(),
                expected: format!("[{total},...]"),
                actual: self.shape.clone(),
            });
        }
        let per_row = element_count(&self.shape[1..]);
        let mut start = 0;
        let mut out = Vec::with_capacity(rows.len());
        for &r in rows {
            let range = start * per_row..(start + r) * per_row;
            let data = for_each_variant!(&self.data, v => v[range].to_vec().into_data());
            let mut shape = self.shape.clone();
            shape[0] = r;
            out.push(Tensor { shape, data });
            start += r;
        }
        Ok(out)
    }
}

/// Rewraps a typed vector (helper for [`for_each_variant!`] results).
trait IntoData {
    fn into_data(self) -> TensorData;
}

impl<T: Element> IntoData for Vec<T> {
    fn into_data(self) -> TensorData {
        T::wrap(self)
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    #[test]
    fn concat_then_split_is_identity() {
        let a = Tensor::from_vec(vec![1, 2], vec![1i64, 2]).unwrap();
        let b = Tensor::from_vec(vec![2, 2], vec![3i64, 4, 5, 6]).unwrap();
        let joined = Tensor::concat_batch(&[&a, &b]).unwrap();
        assert_eq!(joined.shape(), &[3, 2]);
        assert_eq!(joined.as_slice::<i64>().unwrap(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(joined.split_batch(&[1, 2]).unwrap(), vec![a, b]);
    }

    #[test]
    fn mismatched_parts_are_refused() {
        let a = Tensor::zeros(DType::F32, vec![1, 2]);
        let b = Tensor::zeros(DType::F32, vec![1, 3]);
        assert!(Tensor::concat_batch(&[&a, &b]).is_err());
        let c = Tensor::zeros(DType::I32, vec![1, 2]);
        assert!(Tensor::concat_batch(&[&a, &c]).is_err());
        assert!(a.split_batch(&[2]).is_err());
    }
}
