//! Model transforms that make variants (precision changes and the like).

pub mod fp16;
pub mod int8;

pub use fp16::{to_fp16, Fp16Options, Fp16Report};
pub use int8::{activations_to_calibrate, quantize_qdq, Int8Options, Int8Report};
