//! Per-model request metrics, rendered as Prometheus text (`/metrics`, names
//! modelled on Triton's `nv_inference_*` with the prefix `hinfer_`) and as
//! Triton's statistics JSON (`/v2/models/{m}/stats`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hinfer_router::{QueueStats, Timings};
use serde_json::{json, Value};

/// Histogram bucket upper bounds, in microseconds.
pub const BUCKETS_US: [f64; 16] = [
    50.0,
    100.0,
    250.0,
    500.0,
    1_000.0,
    2_500.0,
    5_000.0,
    10_000.0,
    25_000.0,
    50_000.0,
    100_000.0,
    250_000.0,
    500_000.0,
    1_000_000.0,
    2_500_000.0,
    5_000_000.0,
];

/// A fixed-bucket latency histogram (lock-free).
#[derive(Debug, Default)]
pub struct Histogram {
    counts: [AtomicU64; BUCKETS_US.len()],
    count: AtomicU64,
    sum_ns: AtomicU64,
}

impl Histogram {
    /// Records one duration.
    pub fn observe(&self, d: Duration) {
        let us = d.as_secs_f64() * 1e6;
        if let Some(i) = BUCKETS_US.iter().position(|&b| us <= b) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Sum of observations in nanoseconds.
    pub fn sum_ns(&self) -> u64 {
        self.sum_ns.load(Ordering::Relaxed)
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        for (bound, c) in BUCKETS_US.iter().zip(&self.counts) {
            cumulative += c.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", self.count());
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum_ns() as f64 / 1e3);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count());
    }
}

/// Metrics of one served model version.
#[derive(Debug)]
pub struct ModelMetrics {
    model: String,
    version: String,
    backend: String,
    success: AtomicU64,
    failures: Mutex<BTreeMap<&'static str, (u64, u64)>>,
    last_inference_ms: AtomicU64,
    request: Histogram,
    queue: Histogram,
    compute_input: Histogram,
    compute_infer: Histogram,
    compute_output: Histogram,
}

impl ModelMetrics {
    /// Empty metrics for a model version served by `backend`.
    pub fn new(model: &str, version: &str, backend: &str) -> ModelMetrics {
        ModelMetrics {
            model: model.into(),
            version: version.into(),
            backend: backend.into(),
            success: AtomicU64::new(0),
            failures: Mutex::new(BTreeMap::new()),
            last_inference_ms: AtomicU64::new(0),
            request: Histogram::default(),
            queue: Histogram::default(),
            compute_input: Histogram::default(),
            compute_infer: Histogram::default(),
            compute_output: Histogram::default(),
        }
    }

    /// Records a successful request.
    pub fn success(&self, total: Duration, timings: &Timings) {
        self.success.fetch_add(1, Ordering::Relaxed);
        self.request.observe(total);
        self.queue.observe(timings.queue);
        self.compute_input.observe(timings.compute_input);
        self.compute_infer.observe(timings.compute_infer);
        self.compute_output.observe(timings.compute_output);
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.last_inference_ms.store(now_ms, Ordering::Relaxed);
    }

    /// Records a failed request with its bounded reason label.
    pub fn failure(&self, reason: &'static str, total: Duration) {
        if let Ok(mut f) = self.failures.lock() {
            let entry = f.entry(reason).or_default();
            entry.0 += 1;
            entry.1 += total.as_nanos() as u64;
        }
    }

    fn labels(&self) -> String {
        format!(
            "model=\"{}\",version=\"{}\",backend=\"{}\"",
            escape(&self.model),
            escape(&self.version),
            self.backend
        )
    }

    /// Triton's `model_stats` entry for this model version.
    pub fn triton_stats(&self, queue: &QueueStats) -> Value {
        let (fail_count, fail_ns) = self
            .failures
            .lock()
            .map(|f| f.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)))
            .unwrap_or((0, 0));
        let pair = |h: &Histogram| json!({ "count": h.count(), "ns": h.sum_ns() });
        let batch_stats: Vec<Value> = queue
            .by_batch_size
            .lock()
            .map(|by| {
                by.iter()
                    .map(|(size, s)| {
                        json!({
                            "batch_size": size,
                            "compute_input": { "count": s.count, "ns": s.compute_input.as_nanos() as u64 },
                            "compute_infer": { "count": s.count, "ns": s.compute_infer.as_nanos() as u64 },
                            "compute_output": { "count": s.count, "ns": s.compute_output.as_nanos() as u64 },
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        json!({
            "name": self.model,
            "version": self.version,
            "last_inference": self.last_inference_ms.load(Ordering::Relaxed),
            "inference_count": queue.inferences.load(Ordering::Relaxed),
            "execution_count": queue.executions.load(Ordering::Relaxed),
            "inference_stats": {
                "success": pair(&self.request),
                "fail": { "count": fail_count, "ns": fail_ns },
                "queue": pair(&self.queue),
                "compute_input": pair(&self.compute_input),
                "compute_infer": pair(&self.compute_infer),
                "compute_output": pair(&self.compute_output),
                "cache_hit": { "count": 0, "ns": 0 },
                "cache_miss": { "count": 0, "ns": 0 },
            },
            "batch_stats": batch_stats,
            "memory_usage": [],
        })
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Renders every model's metrics as Prometheus text exposition format.
pub fn render_prometheus(models: &[(&ModelMetrics, &QueueStats)]) -> String {
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, body: &dyn Fn(&mut String)| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        body(&mut out);
    };
    family(
        "hinfer_inference_request_success",
        "counter",
        "Successful inference requests",
        &|o| {
            for (m, _) in models {
                let _ = writeln!(
                    o,
                    "hinfer_inference_request_success{{{}}} {}",
                    m.labels(),
                    m.success.load(Ordering::Relaxed)
                );
            }
        },
    );
    family(
        "hinfer_inference_request_failure",
        "counter",
        "Failed inference requests, by reason",
        &|o| {
            for (m, _) in models {
                if let Ok(f) = m.failures.lock() {
                    for (reason, (count, _)) in f.iter() {
                        let _ = writeln!(
                            o,
                            "hinfer_inference_request_failure{{{},reason=\"{reason}\"}} {count}",
                            m.labels()
                        );
                    }
                }
            }
        },
    );
    family(
        "hinfer_inference_count",
        "counter",
        "Inferences performed (a batch of N counts N)",
        &|o| {
            for (m, q) in models {
                let _ = writeln!(
                    o,
                    "hinfer_inference_count{{{}}} {}",
                    m.labels(),
                    q.inferences.load(Ordering::Relaxed)
                );
            }
        },
    );
    family(
        "hinfer_inference_exec_count",
        "counter",
        "Model executions (batches) performed",
        &|o| {
            for (m, q) in models {
                let _ = writeln!(
                    o,
                    "hinfer_inference_exec_count{{{}}} {}",
                    m.labels(),
                    q.executions.load(Ordering::Relaxed)
                );
            }
        },
    );
    family(
        "hinfer_inference_pending_request_count",
        "gauge",
        "Requests queued or running",
        &|o| {
            for (m, q) in models {
                let _ = writeln!(
                    o,
                    "hinfer_inference_pending_request_count{{{}}} {}",
                    m.labels(),
                    q.pending.load(Ordering::Relaxed)
                );
            }
        },
    );
    type Pick = fn(&ModelMetrics) -> &Histogram;
    let histograms: [(&str, &str, Pick); 5] = [
        (
            "hinfer_inference_request_duration_us",
            "End-to-end request duration",
            |m| &m.request,
        ),
        ("hinfer_inference_queue_duration_us", "Time waiting in the queue", |m| {
            &m.queue
        }),
        (
            "hinfer_inference_compute_input_duration_us",
            "Time assembling batch inputs",
            |m| &m.compute_input,
        ),
        (
            "hinfer_inference_compute_infer_duration_us",
            "Time running the model",
            |m| &m.compute_infer,
        ),
        (
            "hinfer_inference_compute_output_duration_us",
            "Time splitting batch outputs",
            |m| &m.compute_output,
        ),
    ];
    for (name, help, pick) in histograms {
        family(name, "histogram", help, &|o| {
            for (m, _) in models {
                pick(m).render(o, name, &m.labels());
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let m = ModelMetrics::new("cnn", "1", "ort");
        let q = QueueStats::default();
        m.success(
            Duration::from_micros(300),
            &Timings {
                queue: Duration::from_micros(80),
                ..Timings::default()
            },
        );
        m.success(Duration::from_micros(3_000), &Timings::default());
        m.failure("invalid_input", Duration::from_micros(10));
        let text = render_prometheus(&[(&m, &q)]);
        assert!(
            text.contains("hinfer_inference_request_success{model=\"cnn\",version=\"1\",backend=\"ort\"} 2"),
            "{text}"
        );
        assert!(text.contains("reason=\"invalid_input\"} 1"), "{text}");
        assert!(text.contains(
            "hinfer_inference_request_duration_us_bucket{model=\"cnn\",version=\"1\",backend=\"ort\",le=\"500\"} 1"
        ));
        assert!(text.contains(
            "hinfer_inference_request_duration_us_bucket{model=\"cnn\",version=\"1\",backend=\"ort\",le=\"5000\"} 2"
        ));
        assert!(
            text.contains("hinfer_inference_request_duration_us_sum{model=\"cnn\",version=\"1\",backend=\"ort\"} 3300")
        );
        let stats = m.triton_stats(&q);
        assert_eq!(stats["inference_stats"]["success"]["count"], 2);
        assert_eq!(stats["inference_stats"]["queue"]["count"], 2);
        assert_eq!(stats["inference_stats"]["fail"]["count"], 1);
    }
}
