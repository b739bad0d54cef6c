//! `hinfer serve` end to end on real sockets (port 0): the real Triton Python
//! client (`tests/e2e/kserve_e2e.py`) drives a server, an overloaded server and a
//! token-protected one; SIGTERM drains in-flight requests before exit.
//!
//! Needs `python3` with `scripts/requirements.txt` installed (tritonclient).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

/// A running `hinfer serve`, killed on drop.
struct Server {
    child: Child,
    addr: String,
    /// The address of the separate metrics port, when `--metrics-port` was given.
    metrics_addr: Option<String>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hinfer"))
            .args(["serve", "--port", "0", "--backend", "ort"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("hinfer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).expect("hinfer prints its address");
        let addr = line
            .trim()
            .strip_prefix("hinfer listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        let metrics_addr = args.contains(&"--metrics-port").then(|| {
            line.clear();
            reader.read_line(&mut line).expect("hinfer prints its metrics address");
            line.trim()
                .strip_prefix("hinfer metrics on http://")
                .and_then(|a| a.strip_suffix("/metrics"))
                .unwrap_or_else(|| panic!("unexpected second line: {line:?}"))
                .to_string()
        });
        Server {
            child,
            addr,
            metrics_addr,
        }
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A bare HTTP/1.1 request (`Connection: close`); returns the status code and body.
fn request(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a complete response");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn post(addr: &str, path: &str, body: &str) -> (u16, String) {
    request(addr, "POST", path, body)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    request(addr, "GET", path, "")
}

fn one_digit_request() -> String {
    let x = hinfer_core::npy::read(&repo("testdata/digit_cnn_one.npy")).unwrap();
    let data: Vec<String> = x.as_slice::<f32>().unwrap().iter().map(|v| v.to_string()).collect();
    format!(
        r#"{{"inputs":[{{"name":"input","shape":[1,1,8,8],"datatype":"FP32","data":[{}]}}]}}"#,
        data.join(",")
    )
}

#[test]
fn tritonclient_drives_the_server() {
    let main = Server::start(&["--max-body-bytes", "500000"]);
    let overload = Server::start(&[
        "--max-queue-size",
        "2",
        "--max-queue-delay-us",
        "200000",
        "--max-batch-size",
        "64",
    ]);
    let auth = Server::start(&["--auth-token", "s3cret", "--metrics-port", "0"]);
    let out = Command::new(std::env::var("HINFER_PYTHON").unwrap_or_else(|_| "python3".into()))
        .arg(repo("tests/e2e/kserve_e2e.py"))
        .args(["--url", &main.addr, "--testdata", repo("testdata").to_str().unwrap()])
        .args([
            "--overload-url",
            &overload.addr,
            "--auth-url",
            &auth.addr,
            "--auth-token",
            "s3cret",
        ])
        .output()
        .expect("python3 runs (pip install -r scripts/requirements.txt)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the tritonclient checks failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    // The separate metrics port answers without the token and counts the auth server's requests.
    let metrics_addr = auth.metrics_addr.as_deref().expect("a metrics address");
    let (status, text) = get(metrics_addr, "/metrics");
    assert_eq!(status, 200);
    assert!(
        text.contains("hinfer_inference_request_success{model=\"digits_cnn\",version=\"1\",backend=\"ort\"} 1"),
        "{text}"
    );
    assert_eq!(
        get(metrics_addr, "/v2/models/digits_cnn").0,
        404,
        "only /metrics is served there"
    );
    // Refused requests must not have piled up anywhere.
    let rss = overload.rss_kib();
    assert!(rss > 0 && rss < 600 * 1024, "overloaded server uses {rss} KiB");
}

#[test]
fn sigterm_drains_in_flight_requests() {
    // A long queue delay keeps the requests in flight when SIGTERM arrives.
    let mut server = Server::start(&["--max-queue-delay-us", "1000000", "--max-batch-size", "64"]);
    let body = one_digit_request();
    let requests: Vec<_> = (0..4)
        .map(|_| {
            let (addr, body) = (server.addr.clone(), body.clone());
            std::thread::spawn(move || post(&addr, "/v2/models/digits_cnn/infer", &body))
        })
        .collect();
    // Wait until the server holds all four requests, so SIGTERM finds them in flight.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !get(&server.addr, "/metrics")
        .1
        .contains("hinfer_inference_pending_request_count{model=\"digits_cnn\",version=\"1\",backend=\"ort\"} 4")
    {
        assert!(Instant::now() < deadline, "the four requests never became pending");
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    for r in requests {
        let (status, body) = r.join().unwrap();
        assert_eq!(status, 200, "an in-flight request was dropped: {body}");
        assert!(body.contains("\"logits\""), "{body}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "hinfer exited with {status}");
            break;
        }
        assert!(Instant::now() < deadline, "hinfer did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn triton_repository_config_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    for version in ["1", "2"] {
        let folder = dir.path().join("mlp").join(version);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(repo("testdata/digits_mlp.onnx"), folder.join("model.onnx")).unwrap();
    }
    std::fs::write(
        dir.path().join("mlp/config.pbtxt"),
        r#"
        name: "mlp"
        platform: "onnxruntime_onnx"
        max_batch_size: 4
        dynamic_batching { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100 }
        instance_group [ { count: 1, kind: KIND_CPU } ]
        version_policy: { all { } }
        "#,
    )
    .unwrap();
    let server = Server::start(&[dir.path().to_str().unwrap()]);
    let (status, config) = get(&server.addr, "/v2/models/mlp/config");
    assert_eq!(status, 200, "{config}");
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["max_batch_size"], 4);
    assert_eq!(
        config["dynamic_batching"]["preferred_batch_size"],
        serde_json::json!([2, 4])
    );
    assert_eq!(config["dynamic_batching"]["max_queue_delay_microseconds"], 100);
    assert_eq!(config["input"][0]["dims"], serde_json::json!([64]));
    let (status, meta) = get(&server.addr, "/v2/models/mlp");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&meta).unwrap()["versions"],
        serde_json::json!(["1", "2"])
    );

    let x = hinfer_core::npy::read(&repo("testdata/digits_mlp_input.npy")).unwrap();
    let rows = |n: usize| {
        let data: Vec<String> = x.as_slice::<f32>().unwrap()[..n * 64]
            .iter()
            .map(|v| v.to_string())
            .collect();
        format!(
            r#"{{"inputs":[{{"name":"input","shape":[{n},64],"datatype":"FP32","data":[{}]}}]}}"#,
            data.join(",")
        )
    };
    let (status, body) = post(&server.addr, "/v2/models/mlp/versions/1/infer", &rows(4));
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(&server.addr, "/v2/models/mlp/infer", &rows(5));
    assert_eq!(status, 400);
    assert!(body.contains("max_batch_size 4"), "{body}");
}

#[test]
fn serves_every_variant_of_an_optimized_repository() {
    let dir = tempfile::tempdir().unwrap();
    let eval = format!("input={}", repo("testdata/digits_cnn_input.npy").display());
    let built = Command::new(env!("CARGO_BIN_EXE_hinfer"))
        .args([
            "optimize",
            repo("testdata/digits_cnn.onnx").to_str().unwrap(),
            "-o",
            dir.path().to_str().unwrap(),
        ])
        .args(["--eval-input", &eval, "--iterations", "1", "--backend", "ort"])
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let server = Server::start(&[dir.path().to_str().unwrap()]);
    let (status, meta) = get(&server.addr, "/v2/models/digits_cnn");
    assert_eq!(status, 200, "{meta}");
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["versions"], serde_json::json!(["fp16", "fp32"]));
    let body = one_digit_request();
    for path in [
        "/v2/models/digits_cnn/infer",
        "/v2/models/digits_cnn/versions/fp16/infer",
    ] {
        let (status, reply) = post(&server.addr, path, &body);
        assert_eq!(status, 200, "{path}: {reply}");
        let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
        let logits: Vec<f64> = reply["outputs"][0]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let argmax = logits.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
        assert_eq!(argmax, 5, "{path}: the first test digit is a 5");
        let version = if path.contains("fp16") { "fp16" } else { "fp32" };
        assert_eq!(reply["model_version"], version, "requests without a version go to fp32");
    }
}
