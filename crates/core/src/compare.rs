//! Comparing tensors within a named tolerance.

use std::fmt;

use crate::Tensor;

/// How close two tensors must be, by name (as tract's `Approximation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit-equal values (integers, booleans, strings, or floats that must not move).
    Exact,
    /// Two engines computing the same fp32 graph: |a-e| <= 1e-4 + 1e-4·|e|.
    Close,
    /// Reduced precision or reordered accumulation: |a-e| <= 1e-3 + 1e-2·|e|.
    Approximate,
    /// Explicit absolute and relative bounds: |a-e| <= atol + rtol·|e|.
    Within { atol: f64, rtol: f64 },
}

impl Tolerance {
    /// The absolute and relative bounds.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Tolerance::Exact => (0.0, 0.0),
            Tolerance::Close => (1e-4, 1e-4),
            Tolerance::Approximate => (1e-3, 1e-2),
            Tolerance::Within { atol, rtol } => (atol, rtol),
        }
    }
}

/// How far apart two tensors are.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// Largest |actual - expected|.
    pub max_abs: f64,
    /// Flat index where it occurs.
    pub at: usize,
    /// Number of elements outside the tolerance.
    pub outside: usize,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max abs error {:.3e} at element {}, {} elements outside tolerance",
            self.max_abs, self.at, self.outside
        )
    }
}

/// Checks that `actual` matches `expected` in dtype, shape and values.
///
/// NaN equals NaN and infinities must match exactly. The error says what differs.
pub fn assert_close(actual: &Tensor, expected: &Tensor, tolerance: Tolerance) -> Result<Difference, String> {
    if actual.dtype() != expected.dtype() {
        return Err(format!(
            "dtype {} differs from expected {}",
            actual.dtype(),
            expected.dtype()
        ));
    }
    if actual.shape() != expected.shape() {
        return Err(format!(
            "shape {:?} differs from expected {:?}",
            actual.shape(),
            expected.shape()
        ));
    }
    let (Some(a), Some(e)) = (actual.data().to_f64_vec(), expected.data().to_f64_vec()) else {
        return if actual == expected {
            Ok(Difference {
                max_abs: 0.0,
                at: 0,
                outside: 0,
            })
        } else {
            Err("string values differ".into())
        };
    };
    let (atol, rtol) = tolerance.bounds();
    let mut diff = Difference {
        max_abs: 0.0,
        at: 0,
        outside: 0,
    };
    for (i, (&x, &y)) in a.iter().zip(&e).enumerate() {
        let same_special = (x.is_nan() && y.is_nan()) || (x.is_infinite() && x == y);
        let err = if same_special { 0.0 } else { (x - y).abs() };
        let err = if err.is_nan() { f64::INFINITY } else { err };
        if err > diff.max_abs {
            diff.max_abs = err;
            diff.at = i;
        }
        let scale = if y.is_finite() { y.abs() } else { 0.0 };
        if err > atol + rtol * scale {
            diff.outside += 1;
        }
    }
    if diff.outside > 0 {
        Err(format!("values differ beyond {tolerance:?}: {diff}"))
    } else {
        Ok(diff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_are_ordered() {
        let e = Tensor::from_vec(vec![2], vec![1.0f32, 100.0]).unwrap();
        let a = Tensor::from_vec(vec![2], vec![1.00005f32, 100.005]).unwrap();
        assert!(assert_close(&a, &e, Tolerance::Exact).is_err());
        assert!(assert_close(&a, &e, Tolerance::Close).is_ok());
        let far = Tensor::from_vec(vec![2], vec![1.1f32, 100.0]).unwrap();
        let err = assert_close(&far, &e, Tolerance::Approximate).unwrap_err();
        assert!(err.contains("element 0"), "{err}");
    }

    #[test]
    fn nan_matches_nan_and_shapes_must_agree() {
        let e = Tensor::from_vec(vec![1], vec![f32::NAN]).unwrap();
        assert!(assert_close(&e, &e, Tolerance::Exact).is_ok());
        let z = Tensor::from_vec(vec![1], vec![0f32]).unwrap();
        assert!(assert_close(&z, &e, Tolerance::Approximate).is_err());
        let other = Tensor::from_vec(vec![1, 1], vec![0f32]).unwrap();
        assert!(assert_close(&other, &z, Tolerance::Exact)
            .unwrap_err()
            .contains("shape"));
    }
}
