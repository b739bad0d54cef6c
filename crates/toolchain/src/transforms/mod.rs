//! Model transforms that make variants (precision changes and the like).

pub mod fp16;

pub use fp16::{to_fp16, Fp16Options, Fp16Report};
