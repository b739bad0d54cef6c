//! Comparing a variant's outputs with the reference model's on evaluation data.

use hinfer_core::manifest::AccuracyEntry;
use hinfer_core::Tensor;

/// Compares `candidate` with `reference` (same output of the same inputs).
///
/// Top-1 agreement is given for outputs of rank ≥ 2 (arg-max over the last
/// axis, per row); label accuracy when `labels` holds one class per row.
/// Returns `None` for non-numeric outputs or mismatched shapes.
pub fn compare(reference: &Tensor, candidate: &Tensor, labels: Option<&[i64]>) -> Option<AccuracyEntry> {
    if reference.shape() != candidate.shape() {
        return None;
    }
    let r = reference.data().to_f64_vec()?;
    let c = candidate.data().to_f64_vec()?;
    let mut max_abs: f64 = 0.0;
    let mut max_rel: f64 = 0.0;
    let (mut dot, mut nr, mut nc) = (0.0, 0.0, 0.0);
    for (&x, &y) in r.iter().zip(&c) {
        let err = (x - y).abs();
        max_abs = max_abs.max(err);
        if x.abs() > 1e-6 {
            max_rel = max_rel.max(err / x.abs());
        }
        dot += x * y;
        nr += x * x;
        nc += y * y;
    }
    let cosine = if nr > 0.0 && nc > 0.0 {
        dot / (nr.sqrt() * nc.sqrt())
    } else {
        f64::from(u8::from(nr == nc))
    };
    let shape = reference.shape();
    let rows = shape.first().copied().unwrap_or(1);
    let classes = *shape.last().unwrap_or(&1);
    let (top1_agreement, label_accuracy) = if shape.len() >= 2 && classes > 0 {
        let ra = argmax_rows(&r, classes);
        let ca = argmax_rows(&c, classes);
        let agree = ra.iter().zip(&ca).filter(|(a, b)| a == b).count() as f64 / ra.len().max(1) as f64;
        let accuracy = labels
            .filter(|l| l.len() == ca.len())
            .map(|l| ca.iter().zip(l).filter(|(p, &t)| **p as i64 == t).count() as f64 / l.len().max(1) as f64);
        (Some(agree), accuracy)
    } else {
        (None, None)
    };
    Some(AccuracyEntry {
        samples: rows,
        top1_agreement,
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        cosine,
        label_accuracy,
    })
}

fn argmax_rows(values: &[f64], classes: usize) -> Vec<usize> {
    values
        .chunks(classes)
        .map(|row| {
            row.iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_agreement_errors_and_labels() {
        let reference = Tensor::from_vec(vec![2, 3], vec![0.1f32, 0.7, 0.2, 0.5, 0.2, 0.3]).unwrap();
        let same = compare(&reference, &reference, Some(&[1, 0])).unwrap();
        assert_eq!(
            (same.top1_agreement, same.max_abs_error, same.label_accuracy),
            (Some(1.0), 0.0, Some(1.0))
        );
        assert!((same.cosine - 1.0).abs() < 1e-12);
        let flipped = Tensor::from_vec(vec![2, 3], vec![0.1f32, 0.7, 0.2, 0.2, 0.5, 0.3]).unwrap();
        let diff = compare(&reference, &flipped, Some(&[1, 0])).unwrap();
        assert_eq!(diff.top1_agreement, Some(0.5));
        assert_eq!(diff.label_accuracy, Some(0.5));
        assert!((diff.max_abs_error - 0.3).abs() < 1e-6);
        let other_shape = Tensor::from_vec(vec![3, 2], vec![0f32; 6]).unwrap();
        assert!(compare(&reference, &other_shape, None).is_none());
    }
}
