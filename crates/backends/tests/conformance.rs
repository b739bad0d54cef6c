//! One conformance suite, run against every backend on the committed fixtures.
//!
//! Each case is written once in `cases`; `backend_suite!` instantiates all of
//! them per backend. A backend whose cargo feature is off is reported and skipped;
//! one that is compiled in must work (CI installs ONNX Runtime).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hinfer_core::{
    assert_close, npy, Backend, BackendKind, DType, Error, ModelSource, NamedTensor, SessionOptions, Tensor, Tolerance,
};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn load(name: &str) -> Tensor {
    npy::read(&testdata(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// The backend under test, or `None` when it is not compiled in.
fn backend(kind: BackendKind) -> Option<Arc<dyn Backend>> {
    match hinfer_backends::create(kind) {
        Ok(b) => Some(b),
        Err(e @ Error::NotCompiled { .. }) => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("backend {kind} is compiled in but unavailable: {e}"),
    }
}

fn run_model(b: &dyn Backend, model: &str, inputs: Vec<NamedTensor>, threads: usize) -> Vec<NamedTensor> {
    let source = ModelSource::from_file(&testdata(model)).unwrap();
    let prepared = b
        .prepare(
            &source,
            &SessionOptions {
                intra_threads: threads,
                optimize: true,
            },
        )
        .unwrap();
    prepared.spawn().unwrap().run(&inputs).unwrap()
}

fn first_rows(t: &Tensor, rows: usize) -> Tensor {
    let (shape, data) = t.clone().into_parts();
    let per_row = shape[1..].iter().product::<usize>();
    let mut new_shape = shape.clone();
    new_shape[0] = rows;
    let values: Vec<f32> = match data {
        hinfer_core::TensorData::F32(v) => v[..rows * per_row].to_vec(),
        _ => panic!("expected fp32"),
    };
    Tensor::from_vec(new_shape, values).unwrap()
}

mod cases {
    use super::*;

    pub fn digits_models_match_reference(b: &dyn Backend) {
        for (model, input, reference) in [
            ("digits_cnn.onnx", "digits_cnn_input.npy", "digits_cnn_logits.npy"),
            ("digits_mlp.onnx", "digits_mlp_input.npy", "digits_mlp_logits.npy"),
        ] {
            let x = load(input);
            let expected = load(reference);
            for (rows, threads) in [(64, 1), (1, 1), (8, 2)] {
                let out = run_model(b, model, vec![NamedTensor::new("input", first_rows(&x, rows))], threads);
                assert_eq!(out.len(), 1);
                assert_eq!(out[0].name, "logits");
                assert_close(&out[0].tensor, &first_rows(&expected, rows), Tolerance::Close)
                    .unwrap_or_else(|e| panic!("{model} batch {rows}: {e}"));
            }
        }
    }

    pub fn classifies_digits_like_the_reference(b: &dyn Backend) {
        let labels = load("digits_labels.npy");
        let out = run_model(
            b,
            "digits_cnn.onnx",
            vec![NamedTensor::new("input", load("digits_cnn_input.npy"))],
            1,
        );
        let logits = out[0].tensor.as_slice::<f32>().unwrap();
        let correct = logits
            .chunks(10)
            .zip(labels.as_slice::<i64>().unwrap())
            .filter(|(row, &label)| {
                let argmax = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
                argmax as i64 == label
            })
            .count();
        assert!(correct >= 60, "only {correct}/64 digits right");
    }

    pub fn every_dtype_round_trips(b: &dyn Backend) {
        let inputs = vec![
            NamedTensor::new("a", load("mixed_a.npy")),
            NamedTensor::new("b", load("mixed_b.npy")),
            NamedTensor::new("c", load("mixed_c.npy")),
        ];
        let out = run_model(b, "mixed_dtypes.onnx", inputs, 1);
        let expect = [
            ("a_times_2", "mixed_a_times_2.npy", DType::F16, Tolerance::Exact),
            ("b_plus_1", "mixed_b_plus_1.npy", DType::I64, Tolerance::Exact),
            ("not_c", "mixed_not_c.npy", DType::Bool, Tolerance::Exact),
            ("sum_f32", "mixed_sum_f32.npy", DType::F32, Tolerance::Close),
        ];
        assert_eq!(out.len(), expect.len());
        for (got, (name, file, dtype, tolerance)) in out.iter().zip(expect) {
            assert_eq!(got.name, name);
            assert_eq!(got.tensor.dtype(), dtype);
            assert_close(&got.tensor, &load(file), tolerance).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    pub fn metadata_has_dynamic_batch(b: &dyn Backend) {
        let source = ModelSource::from_file(&testdata("digits_cnn.onnx")).unwrap();
        let prepared = b.prepare(&source, &SessionOptions::default()).unwrap();
        let meta = prepared.metadata();
        assert_eq!(meta.inputs.len(), 1);
        assert_eq!(meta.inputs[0].name, "input");
        assert_eq!(meta.inputs[0].dtype, DType::F32);
        assert_eq!(meta.inputs[0].shape.to_kserve(), vec![-1, 1, 8, 8]);
        assert_eq!(meta.outputs[0].name, "logits");
        assert_eq!(meta.outputs[0].shape.to_kserve(), vec![-1, 10]);
    }

    pub fn bad_inputs_are_named_errors(b: &dyn Backend) {
        let source = ModelSource::from_file(&testdata("digits_cnn.onnx")).unwrap();
        let prepared = b.prepare(&source, &SessionOptions::default()).unwrap();
        let mut runner = prepared.spawn().unwrap();
        let cases: Vec<(Vec<NamedTensor>, &str)> = vec![
            (
                vec![NamedTensor::new("input", Tensor::zeros(DType::F32, vec![1, 1, 8, 7]))],
                "shape",
            ),
            (
                vec![NamedTensor::new("input", Tensor::zeros(DType::F64, vec![1, 1, 8, 8]))],
                "dtype",
            ),
            (
                vec![NamedTensor::new("pixels", Tensor::zeros(DType::F32, vec![1, 1, 8, 8]))],
                "unknown input `pixels`",
            ),
            (vec![], "missing input `input`"),
        ];
        for (inputs, needle) in cases {
            let err = runner.run(&inputs).unwrap_err();
            assert_eq!(err.label(), "invalid_input", "{err}");
            assert!(err.to_string().contains(needle), "{err} should mention {needle}");
        }
        // The runner still works after refusing bad input.
        let ok = runner
            .run(&[NamedTensor::new("input", Tensor::zeros(DType::F32, vec![2, 1, 8, 8]))])
            .unwrap();
        assert_eq!(ok[0].tensor.shape(), &[2, 10]);
    }

    pub fn broken_model_files_are_refused(b: &dyn Backend) {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(testdata("digits_cnn.onnx")).unwrap();
        let truncated = dir.path().join("truncated.onnx");
        std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
        let garbage = dir.path().join("garbage.onnx");
        std::fs::write(&garbage, b"this is not an onnx model at all, just text").unwrap();
        for path in [truncated, garbage] {
            let source = ModelSource::from_file(&path).unwrap();
            let err = b
                .prepare(&source, &SessionOptions::default())
                .err()
                .expect("a broken model must be refused");
            assert_eq!(err.label(), "invalid_model", "{err}");
            assert!(err.to_string().contains(&path.display().to_string()), "{err}");
        }
    }

    pub fn workers_run_concurrently(b: &dyn Backend) {
        let source = ModelSource::from_file(&testdata("digits_mlp.onnx")).unwrap();
        let prepared = b.prepare(&source, &SessionOptions::default()).unwrap();
        let x = load("digits_mlp_input.npy");
        let expected = load("digits_mlp_logits.npy");
        std::thread::scope(|s| {
            for _ in 0..3 {
                let mut runner = prepared.spawn().unwrap();
                let (x, expected) = (&x, &expected);
                s.spawn(move || {
                    for _ in 0..5 {
                        let out = runner.run(&[NamedTensor::new("input", x.clone())]).unwrap();
                        assert_close(&out[0].tensor, expected, Tolerance::Close).unwrap();
                    }
                });
            }
        });
    }

    pub fn in_memory_models_load(b: &dyn Backend) {
        let bytes = std::fs::read(testdata("digits_mlp.onnx")).unwrap();
        let source = ModelSource::from_bytes("embedded mlp", bytes);
        let prepared = b.prepare(&source, &SessionOptions::default()).unwrap();
        let out = prepared
            .spawn()
            .unwrap()
            .run(&[NamedTensor::new("input", load("digit_mlp_one.npy"))])
            .unwrap();
        assert_close(
            &out[0].tensor,
            &first_rows(&load("digits_mlp_logits.npy"), 1),
            Tolerance::Close,
        )
        .unwrap();
    }
}

/// Instantiates every case of `cases` for one backend.
macro_rules! backend_suite {
    ($module:ident, $kind:expr) => {
        mod $module {
            use super::*;
            macro_rules! case {
                ($name:ident) => {
                    #[test]
                    fn $name() {
                        if let Some(b) = backend($kind) {
                            cases::$name(b.as_ref());
                        }
                    }
                };
            }
            case!(digits_models_match_reference);
            case!(classifies_digits_like_the_reference);
            case!(every_dtype_round_trips);
            case!(metadata_has_dynamic_batch);
            case!(bad_inputs_are_named_errors);
            case!(broken_model_files_are_refused);
            case!(workers_run_concurrently);
            case!(in_memory_models_load);
        }
    };
}

backend_suite!(ort, BackendKind::Ort);
backend_suite!(tract, BackendKind::Tract);
