//! Calibration on the digits CNN: ranges of graph inputs, intermediate tensors
//! and outputs match what the data and the reference outputs say.

use std::path::{Path, PathBuf};

use hinfer_core::{npy, BackendKind, NamedTensor};
use hinfer_toolchain::calibrate::{calibrate, CalibrationMethod};
use hinfer_toolchain::inspect;
use hinfer_toolchain::passes::{default_passes, optimize};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

#[test]
fn ranges_match_the_data_and_the_reference_outputs() {
    let mut model = inspect::load_model(&fixture("digits_cnn.onnx")).unwrap();
    optimize(&mut model, &default_passes(), 10).unwrap();
    let graph = model.graph.as_ref().unwrap();
    // Every input and output of the quantizable ops.
    let mut tensors: Vec<String> = graph
        .node
        .iter()
        .filter(|n| matches!(n.op_type.as_deref(), Some("Conv" | "Gemm")))
        .flat_map(|n| [n.input[0].clone(), n.output[0].clone()])
        .collect();
    tensors.dedup();
    let x = npy::read(&fixture("digits_cnn_input.npy")).unwrap();
    let batches: Vec<Vec<NamedTensor>> = x
        .split_batch(&[16; 4])
        .unwrap()
        .into_iter()
        .map(|t| vec![NamedTensor::new("input", t)])
        .collect();
    let backend = hinfer_backends::create(BackendKind::Ort).unwrap();
    let ranges = calibrate(&model, &tensors, &batches, backend.as_ref(), CalibrationMethod::MinMax).unwrap();
    assert_eq!(ranges.len(), tensors.len());
    let input = ranges["input"];
    let data = x.as_slice::<f32>().unwrap();
    assert_eq!(input.min, data.iter().copied().fold(f32::INFINITY, f32::min));
    assert_eq!(input.max, data.iter().copied().fold(f32::NEG_INFINITY, f32::max));
    let logits = npy::read(&fixture("digits_cnn_logits.npy")).unwrap();
    let l = logits.as_slice::<f32>().unwrap();
    let out = ranges["logits"];
    assert!(
        (out.max - l.iter().copied().fold(f32::NEG_INFINITY, f32::max)).abs() < 1e-3,
        "{out:?}"
    );
    assert!(
        (out.min - l.iter().copied().fold(f32::INFINITY, f32::min)).abs() < 1e-3,
        "{out:?}"
    );
    for method in [CalibrationMethod::Percentile(99.99), CalibrationMethod::Entropy] {
        let r = calibrate(&model, &tensors, &batches, backend.as_ref(), method).unwrap();
        for (name, range) in &r {
            let full = ranges[name];
            assert!(
                range.max <= full.max.abs().max(full.min.abs()) + 1e-3 && range.max > 0.0,
                "{method:?} {name}: {range:?}"
            );
        }
    }
    assert!(
        calibrate(&model, &tensors, &[], backend.as_ref(), CalibrationMethod::MinMax).is_err(),
        "empty data"
    );
}
