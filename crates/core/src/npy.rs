//! Reading and writing NumPy `.npy` files (format versions 1.0 to 3.0).
//!
//! Supported element types are those numpy stores natively and hinfer knows:
//! bool, (u)int8..64, float16/32/64, little- or big-endian, C order. `bfloat16`
//! and strings are refused with a message, as is Fortran order.

use std::path::Path;

use crate::{raw, DType, Error, Result, Tensor};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Reads a `.npy` file into a tensor.
pub fn read(path: &Path) -> Result<Tensor> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode(&bytes).map_err(|reason| Error::Npy {
        path: path.to_path_buf(),
        reason,
    })
}

/// Writes a tensor as a version 1.0 `.npy` file.
pub fn write(path: &Path, tensor: &Tensor) -> Result<()> {
    let bytes = encode(tensor).map_err(|reason| Error::Npy {
        path: path.to_path_buf(),
        reason,
    })?;
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Parses `.npy` bytes; the error says what is wrong with them.
pub fn decode(bytes: &[u8]) -> Result<Tensor, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (bad magic bytes)".into());
    }
    let (header_len, header_start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            let raw = bytes.get(8..12).ok_or("truncated .npy header")?;
            (u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(header_start..header_start + header_len)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = dict_value(header, "descr").ok_or("the .npy header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    if dict_value(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into());
    }
    let shape = parse_shape(dict_value(header, "shape").ok_or("the .npy header has no 'shape'")?)?;
    let (dtype, big_endian) = parse_descr(descr)?;
    let payload = &bytes[header_start + header_len..];
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("shape {shape:?} holds more elements than can be addressed"))?;
    let size = dtype.size_of().expect("npy dtypes are fixed-size");
    if count.checked_mul(size) != Some(payload.len()) {
        return Err(format!(
            "shape {shape:?} of {} needs {} data bytes but the file holds {}",
            dtype,
            count.saturating_mul(size),
            payload.len()
        ));
    }
    let swapped;
    let payload = if big_endian && size > 1 {
        swapped = to_little_endian(payload, size);
        &swapped[..]
    } else {
        payload
    };
    let data = raw::read_le(dtype, payload, count)?;
    Tensor::new(shape, data).map_err(|e| e.to_string())
}

/// Serialises a tensor as `.npy` (version 1.0, little-endian, C order).
pub fn encode(tensor: &Tensor) -> Result<Vec<u8>, String> {
    let descr = match tensor.dtype() {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I8 => "|i1",
        DType::U16 => "<u2",
        DType::I16 => "<i2",
        DType::F16 => "<f2",
        DType::U32 => "<u4",
        DType::I32 => "<i4",
        DType::F32 => "<f4",
        DType::U64 => "<u8",
        DType::I64 => "<i8",
        DType::F64 => "<f8",
        other => return Err(format!("{other} tensors cannot be written as .npy")),
    };
    let shape = match tensor.shape() {
        [one] => format!("({one},)"),
        dims => format!(
            "({})",
            dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that the data starts on a 64-byte boundary, ending with a newline.
    let total = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(total + tensor.byte_size() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    raw::write_le(tensor.data(), &mut out);
    Ok(out)
}

/// The raw text of `key`'s value in a Python dict literal.
fn dict_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let start = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = header[start + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find(',').unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let inner = text.trim().trim_start_matches('(').trim_end_matches(')');
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| format!("bad .npy shape `{text}`"))
        })
        .collect()
}

fn parse_descr(descr: &str) -> Result<(DType, bool), String> {
    let (order, code) = descr.split_at(1.min(descr.len()));
    let big_endian = order == ">";
    if !matches!(order, "<" | ">" | "|" | "=") {
        return Err(format!("unsupported .npy dtype `{descr}`"));
    }
    let dtype = match code {
        "b1" => DType::Bool,
        "u1" => DType::U8,
        "i1" => DType::I8,
        "u2" => DType::U16,
        "i2" => DType::I16,
        "f2" => DType::F16,
        "u4" => DType::U32,
        "i4" => DType::I32,
        "f4" => DType::F32,
        "u8" => DType::U64,
        "i8" => DType::I64,
        "f8" => DType::F64,
        _ => {
            return Err(format!(
                "unsupported .npy dtype `{descr}` (numeric and bool arrays only)"
            ))
        }
    };
    Ok((dtype, big_endian))
}

/// Swaps each element's bytes of a big-endian payload into little-endian order.
fn to_little_endian(payload: &[u8], size: usize) -> Vec<u8> {
    payload
        .chunks_exact(size)
        .flat_map(|c| c.iter().rev().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_numeric_dtype() {
        for dtype in DType::ALL {
            if matches!(dtype, DType::BF16 | DType::Bytes) {
                continue;
            }
            let t = Tensor::zeros(dtype, vec![2, 3]);
            let back = decode(&encode(&t).unwrap()).unwrap();
            assert_eq!(back, t, "{dtype}");
        }
        let t = Tensor::from_vec(vec![3], vec![1.5f32, -2.0, 7.25]).unwrap();
        assert_eq!(decode(&encode(&t).unwrap()).unwrap(), t);
        let scalar = Tensor::from_vec(vec![], vec![4i64]).unwrap();
        assert_eq!(decode(&encode(&scalar).unwrap()).unwrap(), scalar);
    }

    #[test]
    fn header_is_64_byte_aligned() {
        let bytes = encode(&Tensor::zeros(DType::F32, vec![5])).unwrap();
        assert_eq!((bytes.len() - 20) % 64, 0);
    }

    #[test]
    fn reads_numpy_written_header_and_big_endian() {
        let mut bytes = MAGIC.to_vec();
        let header = "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n";
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&1i32.to_be_bytes());
        bytes.extend_from_slice(&(-2i32).to_be_bytes());
        let t = decode(&bytes).unwrap();
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, -2]);
    }

    #[test]
    fn refuses_bad_files_with_reasons() {
        assert!(decode(b"hello world").unwrap_err().contains("magic"));
        let mut good = encode(&Tensor::zeros(DType::F32, vec![4])).unwrap();
        good.truncate(good.len() - 3);
        assert!(decode(&good).unwrap_err().contains("data bytes"));
        let mut fortran = encode(&Tensor::zeros(DType::F32, vec![2, 2])).unwrap();
        let pos = fortran.windows(5).position(|w| w == b"False").unwrap();
        fortran[pos..pos + 5].copy_from_slice(b"True ");
        assert!(decode(&fortran).unwrap_err().contains("Fortran"));
        let mut huge = MAGIC.to_vec();
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }\n";
        huge.extend_from_slice(&[1, 0]);
        huge.extend_from_slice(&(header.len() as u16).to_le_bytes());
        huge.extend_from_slice(header.as_bytes());
        assert!(decode(&huge).unwrap_err().contains("addressed"));
        for cut in 0..40 {
            let _ = decode(&good[..cut.min(good.len())]);
        }
    }
}
