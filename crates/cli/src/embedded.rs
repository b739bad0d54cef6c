//! The model bundled into the binary, so that `hinfer run` and `hinfer inspect`
//! work with no arguments: the digits CNN from `testdata/` (see
//! `scripts/make_fixtures.py`) with its 64 held-out test images and labels.

use hinfer_core::{npy, ModelSource, Tensor};

/// Name shown for the bundled model.
pub const NAME: &str = "embedded:digits_cnn";

const MODEL: &[u8] = include_bytes!("../../../testdata/digits_cnn.onnx");
const INPUT: &[u8] = include_bytes!("../../../testdata/digits_cnn_input.npy");
const LABELS: &[u8] = include_bytes!("../../../testdata/digits_labels.npy");

/// The bundled model.
pub fn model() -> ModelSource {
    ModelSource::from_bytes(NAME, MODEL)
}

/// Raw bytes of the bundled model.
pub fn model_bytes() -> &'static [u8] {
    MODEL
}

/// The 64 test images, `[64,1,8,8]` fp32, fed to input `input`.
pub fn input() -> Tensor {
    npy::decode(INPUT).expect("the embedded input is a valid .npy")
}

/// The digit (0-9) of each test image.
pub fn labels() -> Vec<i64> {
    npy::decode(LABELS)
        .expect("the embedded labels are a valid .npy")
        .as_slice::<i64>()
        .expect("int64 labels")
        .to_vec()
}
