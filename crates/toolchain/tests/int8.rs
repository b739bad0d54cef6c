//! The int8 (QDQ) variant: calibrated on data, it keeps the digits CNN's answers.

use std::path::{Path, PathBuf};

use hinfer_core::{npy, BackendKind, ModelSource, NamedTensor, SessionOptions};
use hinfer_toolchain::calibrate::{calibrate, CalibrationMethod};
use hinfer_toolchain::passes::{default_passes, optimize};
use hinfer_toolchain::proto::{encode_model, ModelProto};
use hinfer_toolchain::transforms::{activations_to_calibrate, quantize_qdq, Int8Options};
use hinfer_toolchain::{eval, inspect};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn run(model: &ModelProto, kind: BackendKind, inputs: &[NamedTensor]) -> Vec<NamedTensor> {
    let backend = hinfer_backends::create(kind).unwrap();
    let prepared = backend
        .prepare(
            &ModelSource::from_bytes("int8", encode_model(model)),
            &SessionOptions::default(),
        )
        .unwrap();
    prepared.spawn().unwrap().run(inputs).unwrap()
}

#[test]
fn digits_cnn_in_int8_keeps_its_answers() {
    let mut fp32 = inspect::load_model(&fixture("digits_cnn.onnx")).unwrap();
    optimize(&mut fp32, &default_passes(), 10).unwrap();
    let x = npy::read(&fixture("digits_cnn_input.npy")).unwrap();
    let batches: Vec<Vec<NamedTensor>> = x
        .split_batch(&[16; 4])
        .unwrap()
        .into_iter()
        .map(|t| vec![NamedTensor::new("input", t)])
        .collect();
    let ort = hinfer_backends::create(BackendKind::Ort).unwrap();
    let options = Int8Options::default();
    let tensors = activations_to_calibrate(fp32.graph.as_ref().unwrap(), &options);
    let ranges = calibrate(&fp32, &tensors, &batches, ort.as_ref(), CalibrationMethod::MinMax).unwrap();
    let mut int8 = fp32.clone();
    let report = quantize_qdq(&mut int8, &ranges, &options).unwrap();
    assert_eq!(report.quantized_weights, 3, "{report:?}");
    assert_eq!(
        report.folded_activations, 2,
        "both Relus fold into the quantization of the Conv outputs"
    );
    let inputs = vec![NamedTensor::new("input", x)];
    let labels = npy::read(&fixture("digits_labels.npy")).unwrap();
    for kind in [BackendKind::Ort, BackendKind::Tract] {
        let reference = run(&fp32, kind, &inputs);
        let out = run(&int8, kind, &inputs);
        let a = eval::compare(
            &reference[0].tensor,
            &out[0].tensor,
            Some(labels.as_slice::<i64>().unwrap()),
        )
        .unwrap();
        eprintln!("{kind}: {a:?}");
        assert!(
            a.top1_agreement.unwrap() >= 0.95 && a.label_accuracy.unwrap() >= 0.95,
            "{kind}: {a:?}"
        );
    }
    std::fs::write(
        std::env::temp_dir().join("hinfer-digits-int8.onnx"),
        encode_model(&int8),
    )
    .unwrap();
}
