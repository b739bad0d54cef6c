//! Closed-loop load: N clients, each sending its next request as soon as the
//! previous one is answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hinfer_core::latency::LatencyStats;
use hinfer_core::Tensor;
use serde::Serialize;
use serde_json::json;

use crate::client::HttpClient;

/// A ready-to-send request body.
#[derive(Clone, Debug)]
pub struct RequestBody {
    pub bytes: Vec<u8>,
    /// The JSON header length when the body carries binary tensors.
    pub header_length: Option<usize>,
}

/// Builds a KServe v2 infer request for one input tensor: FP32 data as binary
/// tensors (Triton's extension, as tritonclient and perf_analyzer send by default)
/// when `binary` is set, everything else as JSON.
pub fn build_request(input_name: &str, tensor: &Tensor, binary: bool) -> RequestBody {
    let shape = tensor.shape();
    let datatype = tensor.dtype().name();
    match (binary, tensor.as_slice::<f32>()) {
        (true, Ok(values)) => {
            let mut data = Vec::with_capacity(values.len() * 4);
            values.iter().for_each(|v| data.extend_from_slice(&v.to_le_bytes()));
            let header = json!({
                "inputs": [{ "name": input_name, "shape": shape, "datatype": datatype,
                              "parameters": { "binary_data_size": data.len() } }],
                "parameters": { "binary_data_output": true },
            });
            let mut bytes = serde_json::to_vec(&header).expect("JSON");
            let header_length = bytes.len();
            bytes.extend_from_slice(&data);
            RequestBody {
                bytes,
                header_length: Some(header_length),
            }
        }
        _ => {
            let values = tensor.data().to_f64_vec().unwrap_or_default();
            let body =
                json!({ "inputs": [{ "name": input_name, "shape": shape, "datatype": datatype, "data": values }] });
            RequestBody {
                bytes: serde_json::to_vec(&body).expect("JSON"),
                header_length: None,
            }
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// `host:port`.
    pub addr: String,
    /// The model's infer path, e.g. `/v2/models/digits_cnn/infer`.
    pub path: String,
    /// Concurrent clients.
    pub concurrency: usize,
    /// Measured duration (after `warmup`).
    pub duration: Duration,
    /// Unmeasured time first.
    pub warmup: Duration,
}

/// What happened.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub concurrency: usize,
    pub requests: usize,
    pub errors: usize,
    pub seconds: f64,
    pub throughput_rps: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
}

/// Runs the load and summarises the latencies of successful requests.
pub fn closed_loop(config: &LoadConfig, bodies: &[RequestBody]) -> Result<LoadReport, crate::HttpError> {
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = vec![];
    for worker in 0..config.concurrency.max(1) {
        let mut client = HttpClient::connect(&config.addr)?;
        let (measuring, stop) = (measuring.clone(), stop.clone());
        let bodies: Vec<RequestBody> = bodies.to_vec();
        let path = config.path.clone();
        handles.push(std::thread::spawn(move || {
            let mut latencies = Vec::new();
            let mut errors = 0usize;
            let mut i = worker;
            while !stop.load(Ordering::Relaxed) {
                let body = &bodies[i % bodies.len()];
                i += 1;
                let headers: Vec<(&str, String)> = match body.header_length {
                    Some(n) => vec![("Inference-Header-Content-Length", n.to_string())],
                    None => vec![("Content-Type", "application/json".into())],
                };
                let started = Instant::now();
                let outcome = client.post(&path, &headers, &body.bytes);
                let elapsed = started.elapsed();
                if measuring.load(Ordering::Relaxed) {
                    match outcome {
                        Ok((200, _)) => latencies.push(elapsed.as_secs_f64() * 1e3),
                        _ => errors += 1,
                    }
                }
            }
            (latencies, errors)
        }));
    }
    std::thread::sleep(config.warmup);
    measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(config.duration);
    measuring.store(false, Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut latencies = vec![];
    let mut errors = 0;
    for h in handles {
        let (l, e) = h.join().unwrap_or_default();
        latencies.extend(l);
        errors += e;
    }
    let stats = LatencyStats::from_samples(&latencies);
    Ok(LoadReport {
        concurrency: config.concurrency,
        requests: stats.iterations,
        errors,
        seconds,
        throughput_rps: stats.iterations as f64 / seconds,
        mean_ms: stats.mean_ms,
        p50_ms: stats.p50_ms,
        p90_ms: stats.p90_ms,
        p99_ms: stats.p99_ms,
    })
}
