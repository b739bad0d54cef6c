//! Shapes whose dimensions may be fixed or dynamic.

use std::fmt;

/// One dimension of a model's input or output.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A dimension of known size.
    Fixed(usize),
    /// A dimension chosen per request; the symbol is the model's name for it
    /// (ONNX `dim_param`, e.g. `"N"` or `"batch"`), if it has one.
    Dynamic(Option<String>),
}

impl Dim {
    /// The fixed size, if any.
    pub fn fixed(&self) -> Option<usize> {
        match self {
            Dim::Fixed(n) => Some(*n),
            Dim::Dynamic(_) => None,
        }
    }

    /// KServe's spelling: the size, or `-1` for a dynamic dimension.
    pub fn to_i64(&self) -> i64 {
        self.fixed().map_or(-1, |n| n as i64)
    }
}

/// The declared shape of a tensor: a list of [`Dim`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Shape(pub Vec<Dim>);

impl Shape {
    /// A shape of fixed dimensions only.
    pub fn fixed(dims: &[usize]) -> Shape {
        Shape(dims.iter().map(|&d| Dim::Fixed(d)).collect())
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The dimensions.
    pub fn dims(&self) -> &[Dim] {
        &self.0
    }

    /// True when `concrete` has the same rank and agrees on every fixed dimension.
    pub fn accepts(&self, concrete: &[usize]) -> bool {
        self.0.len() == concrete.len()
            && self
                .0
                .iter()
                .zip(concrete)
                .all(|(d, &c)| d.fixed().is_none_or(|f| f == c))
    }

    /// True when the first dimension is dynamic, i.e. the model takes a batch.
    pub fn has_dynamic_batch(&self) -> bool {
        matches!(self.0.first(), Some(Dim::Dynamic(_)))
    }

    /// The KServe form: sizes with `-1` for dynamic dimensions.
    pub fn to_kserve(&self) -> Vec<i64> {
        self.0.iter().map(Dim::to_i64).collect()
    }
}

impl fmt::Display for Shape {
    /// Writes `[N,1,8,8]`, using the symbol of a dynamic dimension or `?`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match d {
                Dim::Fixed(n) => write!(f, "{n}")?,
                Dim::Dynamic(Some(s)) if !s.is_empty() => f.write_str(s)?,
                Dim::Dynamic(_) => f.write_str("?")?,
            }
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_checks_rank_and_fixed_dims() {
        let s = Shape(vec![Dim::Dynamic(Some("N".into())), Dim::Fixed(3), Dim::Dynamic(None)]);
        assert!(s.accepts(&[4, 3, 100]));
        assert!(!s.accepts(&[4, 2, 100]));
        assert!(!s.accepts(&[4, 3]));
        assert_eq!(s.to_string(), "[N,3,?]");
        assert_eq!(s.to_kserve(), vec![-1, 3, -1]);
        assert!(s.has_dynamic_batch());
    }
}
