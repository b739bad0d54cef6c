//! Tensor elements as raw little-endian bytes: the layout of Triton's binary
//! tensor extension and of `.npy` payloads.
//!
//! Fixed-size types are their little-endian bytes back to back (BOOL one byte
//! each); BYTES elements are each a 4-byte little-endian length then the bytes.

use half::{bf16, f16};

use crate::{DType, TensorData};

/// Appends the raw little-endian form of `data` to `out`.
pub fn write_le(data: &TensorData, out: &mut Vec<u8>) {
    macro_rules! le {
        ($v:expr) => {
            $v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        };
    }
    match data {
        TensorData::Bool(v) => out.extend(v.iter().map(|&b| u8::from(b))),
        TensorData::U8(v) => out.extend_from_slice(v),
        TensorData::I8(v) => out.extend(v.iter().map(|&b| b as u8)),
        TensorData::U16(v) => le!(v),
        TensorData::I16(v) => le!(v),
        TensorData::F16(v) => le!(v),
        TensorData::BF16(v) => le!(v),
        TensorData::U32(v) => le!(v),
        TensorData::I32(v) => le!(v),
        TensorData::F32(v) => le!(v),
        TensorData::U64(v) => le!(v),
        TensorData::I64(v) => le!(v),
        TensorData::F64(v) => le!(v),
        TensorData::Bytes(v) => v.iter().for_each(|b| {
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }),
    }
}

/// Reads `count` elements of `dtype` from their raw little-endian form; the error
/// says how the byte count disagrees.
pub fn read_le(dtype: DType, bytes: &[u8], count: usize) -> Result<TensorData, String> {
    let Some(size) = dtype.size_of() else {
        return read_bytes(bytes, count);
    };
    if bytes.len() != count * size {
        return Err(format!(
            "{count} {dtype} elements need {} bytes, got {}",
            count * size,
            bytes.len()
        ));
    }
    macro_rules! le {
        ($t:ty, $n:expr) => {
            bytes
                .chunks_exact($n)
                .map(|c| <$t>::from_le_bytes(c.try_into().expect("exact chunk")))
                .collect()
        };
    }
    Ok(match dtype {
        DType::Bool => TensorData::Bool(bytes.iter().map(|&b| b != 0).collect()),
        DType::U8 => TensorData::U8(bytes.to_vec()),
        DType::I8 => TensorData::I8(bytes.iter().map(|&b| b as i8).collect()),
        DType::U16 => TensorData::U16(le!(u16, 2)),
        DType::I16 => TensorData::I16(le!(i16, 2)),
        DType::F16 => TensorData::F16(
            bytes
                .chunks_exact(2)
                .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::BF16 => TensorData::BF16(
            bytes
                .chunks_exact(2)
                .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::U32 => TensorData::U32(le!(u32, 4)),
        DType::I32 => TensorData::I32(le!(i32, 4)),
        DType::F32 => TensorData::F32(le!(f32, 4)),
        DType::U64 => TensorData::U64(le!(u64, 8)),
        DType::I64 => TensorData::I64(le!(i64, 8)),
        DType::F64 => TensorData::F64(le!(f64, 8)),
        DType::Bytes => unreachable!("variable-size dtype handled above"),
    })
}

fn read_bytes(mut rest: &[u8], count: usize) -> Result<TensorData, String> {
    let mut items = Vec::with_capacity(count.min(rest.len() / 4 + 1));
    while !rest.is_empty() {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .map(|(l, t)| (u32::from_le_bytes(*l) as usize, t))
            .ok_or("a BYTES element length is truncated")?;
        if tail.len() < len {
            return Err("a BYTES element runs past the data".into());
        }
        items.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    if items.len() != count {
        return Err(format!("expected {count} BYTES elements, found {}", items.len()));
    }
    Ok(TensorData::Bytes(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips() {
        let samples = [
            TensorData::Bool(vec![true, false]),
            TensorData::I8(vec![-1, 2]),
            TensorData::U16(vec![1, 65535]),
            TensorData::F16(vec![f16::from_f32(1.5), f16::NAN]),
            TensorData::BF16(vec![bf16::from_f32(-2.0), bf16::ONE]),
            TensorData::F32(vec![0.1, f32::INFINITY]),
            TensorData::I64(vec![-7, i64::MAX]),
            TensorData::Bytes(vec![b"ab".to_vec(), vec![]]),
        ];
        for data in samples {
            let mut bytes = vec![];
            write_le(&data, &mut bytes);
            let back = read_le(data.dtype(), &bytes, data.len()).unwrap();
            // NaN != NaN, so compare the bytes again.
            let mut again = vec![];
            write_le(&back, &mut again);
            assert_eq!(bytes, again, "{:?}", data.dtype());
        }
    }

    #[test]
    fn wrong_sizes_are_explained() {
        assert!(read_le(DType::F32, &[0; 7], 2).unwrap_err().contains("8 bytes"));
        assert!(read_le(DType::Bytes, &[5, 0, 0, 0, 1], 1)
            .unwrap_err()
            .contains("runs past"));
        assert!(read_le(DType::Bytes, &[0, 0, 0, 0], 2)
            .unwrap_err()
            .contains("expected 2"));
    }
}
