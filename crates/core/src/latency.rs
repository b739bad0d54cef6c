//! Latency statistics shared by every benchmark (`hinfer run --bench`,
//! `hinfer bench`, profiling in `hinfer optimize`): one definition of a percentile.

use serde::Serialize;

/// Summary of a list of latencies, in milliseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencyStats {
    pub iterations: usize,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl LatencyStats {
    /// Computes the statistics (nearest-rank percentiles); all zero for no samples.
    pub fn from_samples(samples_ms: &[f64]) -> LatencyStats {
        let mut sorted = samples_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return LatencyStats {
                iterations: 0,
                mean_ms: 0.0,
                min_ms: 0.0,
                p50_ms: 0.0,
                p90_ms: 0.0,
                p99_ms: 0.0,
                max_ms: 0.0,
            };
        }
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        LatencyStats {
            iterations: sorted.len(),
            mean_ms: sorted.iter().sum::<f64>() / sorted.len() as f64,
            min_ms: sorted[0],
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p99_ms: at(0.99),
            max_ms: sorted[sorted.len() - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_hundred() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = LatencyStats::from_samples(&samples);
        assert_eq!((s.min_ms, s.max_ms), (1.0, 100.0));
        assert_eq!(s.p50_ms, 51.0);
        assert_eq!(s.p99_ms, 99.0);
        assert!((s.mean_ms - 50.5).abs() < 1e-9);
    }
}
