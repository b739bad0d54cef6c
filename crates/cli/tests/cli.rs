//! End-to-end tests of the `hinfer` binary: the README's main job, and every kind
//! of bad input answered with a clear message and a failing exit code, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn hinfer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hinfer"))
        .args(args)
        .output()
        .expect("the hinfer binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs hinfer expecting failure; returns stderr, checking that nothing panicked.
fn fails(args: &[&str]) -> String {
    let out = hinfer(args);
    let (stdout, stderr) = text(&out);
    assert!(
        !out.status.success(),
        "expected failure for {args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "hinfer panicked: {stderr}");
    stderr
}

#[test]
fn runs_the_bundled_model_on_each_backend() {
    for backend in ["auto", "ort", "tract"] {
        let out = hinfer(&["run", "--backend", backend]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{backend}: {stderr}");
        assert!(
            stdout.contains("accuracy on the bundled test images: 64/64"),
            "{backend}: {stdout}"
        );
    }
}

#[test]
fn inspect_reports_structure_and_json() {
    let out = hinfer(&["inspect", testdata("digits_cnn.onnx").to_str().unwrap()]);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    for needle in ["BatchNormalization", "[N,1,8,8]", "parameters   3914", "ai.onnx v13"] {
        assert!(stdout.contains(needle), "missing {needle}: {stdout}");
    }
    let out = hinfer(&["inspect", "--json", testdata("digits_mlp.onnx").to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON");
    assert_eq!(json["inputs"][0]["name"], "input");
    assert_eq!(json["op_histogram"]["Gemm"], 2);
}

#[test]
fn run_checks_outputs_and_writes_npy() {
    let dir = tempfile::tempdir().unwrap();
    let model = testdata("digits_mlp.onnx");
    let input = format!("input={}", testdata("digits_mlp_input.npy").display());
    let expect = format!("logits={}", testdata("digits_mlp_logits.npy").display());
    let out = hinfer(&[
        "run",
        model.to_str().unwrap(),
        "-i",
        &input,
        "--expect",
        &expect,
        "--out",
        dir.path().to_str().unwrap(),
        "--bench",
        "5",
        "--warmup",
        "1",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("output logits matches"), "{stdout}");
    assert!(stdout.contains("bench: 5 runs"), "{stdout}");
    let written = hinfer_core::npy::read(&dir.path().join("logits.npy")).unwrap();
    assert_eq!(written.shape(), &[64, 10]);

    // A wrong expectation fails the command.
    let wrong = format!("logits={}", testdata("digits_cnn_logits.npy").display());
    let stderr = fails(&["run", model.to_str().unwrap(), "-i", &input, "--expect", &wrong]);
    assert!(stderr.contains("does not match"), "{stderr}");
}

#[test]
fn bench_json_is_machine_readable() {
    let out = hinfer(&["run", "--backend", "tract", "--bench", "3", "--warmup", "0", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(report["backend"], "tract");
    assert_eq!(report["iterations"], 3);
    assert_eq!(report["batch"], 64);
    assert!(report["p50_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn random_inputs_fill_dynamic_shapes() {
    let out = hinfer(&[
        "run",
        testdata("digits_cnn.onnx").to_str().unwrap(),
        "--random",
        "--batch",
        "3",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("output logits") && stdout.contains("[3, 10]"),
        "{stdout}"
    );
}

#[test]
fn bad_inputs_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let model = testdata("digits_cnn.onnx");
    let model = model.to_str().unwrap();

    let stderr = fails(&["run", "/no/such/model.onnx"]);
    assert!(
        stderr.contains("/no/such/model.onnx") && stderr.contains("No such file"),
        "{stderr}"
    );

    let bytes = std::fs::read(testdata("digits_cnn.onnx")).unwrap();
    let truncated = dir.path().join("truncated.onnx");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let corrupted = dir.path().join("corrupted.onnx");
    let mut flipped = bytes.clone();
    for b in flipped.iter_mut().take(64) {
        *b ^= 0x5A;
    }
    std::fs::write(&corrupted, &flipped).unwrap();
    for broken in [&truncated, &corrupted] {
        let path = broken.to_str().unwrap();
        for backend in ["ort", "tract"] {
            let stderr = fails(&["run", path, "--backend", backend, "--random"]);
            assert!(stderr.contains(path), "{backend}: {stderr}");
        }
        let stderr = fails(&["inspect", path]);
        assert!(stderr.contains("not a valid ONNX model"), "{stderr}");
    }

    let wrong_shape = format!("input={}", testdata("digits_mlp_input.npy").display());
    let stderr = fails(&["run", model, "-i", &wrong_shape]);
    assert!(
        stderr.contains("input `input`") && stderr.contains("[N,1,8,8]"),
        "{stderr}"
    );

    let wrong_dtype = format!("input={}", testdata("digits_labels.npy").display());
    let stderr = fails(&["run", model, "-i", &wrong_dtype]);
    assert!(stderr.contains("expected dtype FP32, got INT64"), "{stderr}");

    let unknown = format!("pixels={}", testdata("digit_cnn_one.npy").display());
    let stderr = fails(&["run", model, "-i", &unknown]);
    assert!(stderr.contains("unknown input `pixels`"), "{stderr}");

    let not_npy = dir.path().join("not.npy");
    std::fs::write(&not_npy, b"hello").unwrap();
    let stderr = fails(&["run", model, "-i", &format!("input={}", not_npy.display())]);
    assert!(stderr.contains("not a .npy file"), "{stderr}");

    let stderr = fails(&["run", model]);
    assert!(
        stderr.contains("missing input `input`") && stderr.contains("--random"),
        "{stderr}"
    );
}

#[test]
fn missing_onnxruntime_is_explained() {
    let out = Command::new(env!("CARGO_BIN_EXE_hinfer"))
        .args(["run", "--backend", "ort"])
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("libonnxruntime.so was not found") && stderr.contains("/nonexistent"),
        "{stderr}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_hinfer"))
        .args(["run", "--backend", "ort"])
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV")
        .env("HINFER_PYTHON", "/bin/false")
        .env("LD_LIBRARY_PATH", "")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("Searched:") && stderr.contains("pip install onnxruntime"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // With auto, hinfer falls back to tract and still answers.
    let out = Command::new(env!("CARGO_BIN_EXE_hinfer"))
        .args(["run"])
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("using tract") && stdout.contains("64/64"), "{stderr}");
}

#[test]
fn optimize_writes_a_measured_repository() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let model = testdata("digits_cnn.onnx");
    let eval = format!("input={}", testdata("digits_cnn_input.npy").display());
    let labels = testdata("digits_labels.npy");
    let same = format!("copy={}", model.display());
    let result = hinfer(&[
        "optimize",
        model.to_str().unwrap(),
        "-o",
        out,
        "--eval-input",
        &eval,
        "--labels",
        labels.to_str().unwrap(),
        "--variant",
        &same,
        "--iterations",
        "3",
    ]);
    let (stdout, stderr) = text(&result);
    assert!(result.status.success(), "{stderr}");
    assert!(stdout.contains("folded BatchNormalization"), "{stdout}");
    let folder = dir.path().join("digits_cnn");
    let manifest = hinfer_toolchain::optimize::read_manifest(&folder.join("hinfer.toml")).unwrap();
    let names: Vec<&str> = manifest.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["fp32", "fp16", "copy"]);
    let fp16 = manifest.variants[1].accuracy.as_ref().unwrap();
    assert!(
        fp16.top1_agreement.unwrap() >= 63.0 / 64.0 && fp16.max_abs_error < 0.05,
        "{fp16:?}"
    );
    assert!(manifest.variants[1].size_bytes < manifest.variants[0].size_bytes);
    let fp32 = manifest.variants[0].accuracy.as_ref().unwrap();
    assert_eq!(fp32.top1_agreement, Some(1.0));
    assert_eq!(fp32.label_accuracy, Some(1.0));
    assert!(fp32.max_abs_error < 1e-4 && fp32.samples == 64);
    assert!(folder.join("variants/fp32.onnx").is_file() && folder.join("variants/copy.onnx").is_file());
    let profile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("profile.json")).unwrap()).unwrap();
    assert_eq!(
        profile["variants"][0]["latency"].as_array().unwrap().len(),
        4,
        "batch 1 and 8 on ort and tract"
    );

    // A variant with another interface is refused by name.
    let mlp = format!("mlp={}", testdata("digits_mlp.onnx").display());
    let stderr = fails(&[
        "optimize",
        model.to_str().unwrap(),
        "-o",
        out,
        "--eval-input",
        &eval,
        "--variant",
        &mlp,
    ]);
    assert!(
        stderr.contains("variant `mlp`") && stderr.contains("input `input`"),
        "{stderr}"
    );
    // No evaluation data is refused unless synthetic data is asked for.
    let stderr = fails(&["optimize", model.to_str().unwrap(), "-o", out]);
    assert!(stderr.contains("--eval-input"), "{stderr}");
}
