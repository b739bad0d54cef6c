//! tract, the pure-Rust ONNX engine.
//!
//! Unknown input dimensions (an unnamed dynamic width, say) become tract symbols
//! so that the model can be optimised once and run at any size. Each model gets
//! its own matmul thread pool sized by [`SessionOptions::intra_threads`]; each
//! worker gets its own tract state (`spawn`), the plan itself is shared.

use std::sync::Arc;

use hinfer_core::{
    Backend, BackendKind, DType, Dim, Error, ModelMetadata, ModelRunner, ModelSource, NamedTensor,
    PreparedModel, Result, SessionOptions, Shape, Tensor, TensorData, TensorSpec,
};
use tract_linalg::multithread::Executor;
use tract_onnx::prelude::{
    tvec, DatumType, Framework, InferenceFact, InferenceModelExt, RunOptions, TDim, TValue, TVec,
    TypedSimplePlan, TypedSimpleState,
};
use tract_onnx::tract_hir::infer::Factoid;

const NAME: &str = "tract";

/// The tract backend.
pub struct TractBackend(());

impl TractBackend {
    /// tract needs nothing from the system; this never fails.
    pub fn new() -> Result<TractBackend> {
        Ok(TractBackend(()))
    }
}

impl Backend for TractBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tract
    }

    fn describe(&self) -> String {
        "tract 0.23 (pure Rust)".into()
    }

    fn prepare(
        &self,
        model: &ModelSource,
        options: &SessionOptions,
    ) -> Result<Arc<dyn PreparedModel>> {
        let invalid = |stage: &str, e: tract_onnx::prelude::TractError| Error::InvalidModel {
            model: model.label.clone(),
            reason: format!("tract could not {stage}: {e:#}"),
        };
        let onnx = tract_onnx::onnx().with_ignore_value_info(true);
        let mut inference = match &model.path {
            Some(path) => onnx.model_for_path(path),
            None => onnx.model_for_read(&mut &model.bytes[..]),
        }
        .map_err(|e| invalid("load the model", e))?;

        let input_names =
            outlet_names(&inference, true).map_err(|e| invalid("read the inputs", e))?;
        let output_names =
            outlet_names(&inference, false).map_err(|e| invalid("read the outputs", e))?;
        for ix in 0..input_names.len() {
            let fact = inference
                .input_fact(ix)
                .map_err(|e| invalid("read an input", e))?
                .clone();
            let dt = fact
                .datum_type
                .concretize()
                .ok_or_else(|| Error::InvalidModel {
                    model: model.label.clone(),
                    reason: format!("input `{}` has no element type", input_names[ix]),
                })?;
            let rank = fact
                .shape
                .rank()
                .concretize()
                .ok_or_else(|| Error::InvalidModel {
                    model: model.label.clone(),
                    reason: format!("input `{}` has no known rank", input_names[ix]),
                })?;
            let dims: Vec<TDim> = fact
                .shape
                .dims()
                .take(rank as usize)
                .enumerate()
                .map(|(axis, d)| {
                    d.concretize().unwrap_or_else(|| {
                        inference
                            .symbols
                            .sym(&format!("{}_{axis}", input_names[ix]))
                            .into()
                    })
                })
                .collect();
            inference
                .set_input_fact(ix, InferenceFact::dt_shape(dt, dims))
                .map_err(|e| invalid("set an input fact", e))?;
        }
        let typed = if options.optimize {
            inference.into_optimized()
        } else {
            inference.into_typed()
        }
        .map_err(|e| invalid("optimise the model", e))?;

        let spec = |name: &str, fact: &tract_onnx::prelude::TypedFact| -> Result<TensorSpec> {
            let dims = fact
                .shape
                .iter()
                .map(|d| match d.as_i64() {
                    Some(n) => Dim::Fixed(n as usize),
                    None => Dim::Dynamic(Some(d.to_string())),
                })
                .collect();
            Ok(TensorSpec {
                name: name.to_string(),
                dtype: dtype_of(fact.datum_type, &model.label)?,
                shape: Shape(dims),
            })
        };
        let metadata = ModelMetadata {
            inputs: input_names
                .iter()
                .enumerate()
                .map(|(ix, name)| {
                    spec(
                        name,
                        typed
                            .input_fact(ix)
                            .map_err(|e| invalid("type an input", e))?,
                    )
                })
                .collect::<Result<_>>()?,
            outputs: output_names
                .iter()
                .enumerate()
                .map(|(ix, name)| {
                    spec(
                        name,
                        typed
                            .output_fact(ix)
                            .map_err(|e| invalid("type an output", e))?,
                    )
                })
                .collect::<Result<_>>()?,
        };

        let threads = options.intra_threads.max(1);
        let executor = if threads > 1 {
            Executor::multithread_with_name(threads, "hinfer-tract")
        } else {
            Executor::SingleThread
        };
        let run_options = RunOptions {
            executor: Some(executor),
            ..RunOptions::default()
        };
        let plan = typed
            .into_runnable_with_options(&run_options)
            .map_err(|e| invalid("plan the model", e))?;
        Ok(Arc::new(TractPrepared {
            plan,
            metadata,
            label: model.label.clone(),
        }))
    }
}

/// Names of the graph's inputs (or outputs), as the ONNX file spells them.
fn outlet_names(
    model: &tract_onnx::prelude::InferenceModel,
    inputs: bool,
) -> tract_onnx::prelude::TractResult<Vec<String>> {
    let outlets = if inputs {
        model.input_outlets()?
    } else {
        model.output_outlets()?
    };
    Ok(outlets
        .iter()
        .map(|&o| {
            model
                .outlet_label(o)
                .unwrap_or(&model.node(o.node).name)
                .to_string()
        })
        .collect())
}

fn dtype_of(dt: DatumType, label: &str) -> Result<DType> {
    Ok(match dt {
        DatumType::Bool => DType::Bool,
        DatumType::U8 => DType::U8,
        DatumType::U16 => DType::U16,
        DatumType::U32 => DType::U32,
        DatumType::U64 => DType::U64,
        DatumType::I8 => DType::I8,
        DatumType::I16 => DType::I16,
        DatumType::I32 => DType::I32,
        DatumType::I64 => DType::I64,
        DatumType::F16 => DType::F16,
        DatumType::F32 => DType::F32,
        DatumType::F64 => DType::F64,
        DatumType::String => DType::Bytes,
        other => {
            return Err(Error::Unsupported(format!(
                "model {label}: tract element type {other:?}"
            )))
        }
    })
}

/// A model optimised and planned by tract.
struct TractPrepared {
    plan: Arc<TypedSimplePlan>,
    metadata: ModelMetadata,
    label: String,
}

impl PreparedModel for TractPrepared {
    fn metadata(&self) -> &ModelMetadata {
        &self.metadata
    }

    fn spawn(&self) -> Result<Box<dyn ModelRunner>> {
        let state = self.plan.spawn().map_err(|e| Error::Backend {
            backend: NAME,
            message: format!("cannot create a state for {}: {e:#}", self.label),
        })?;
        Ok(Box::new(TractRunner {
            state,
            metadata: self.metadata.clone(),
            label: self.label.clone(),
        }))
    }
}

/// One worker's tract state.
struct TractRunner {
    state: TypedSimpleState,
    metadata: ModelMetadata,
    label: String,
}

impl ModelRunner for TractRunner {
    fn run(&mut self, inputs: &[NamedTensor]) -> Result<Vec<NamedTensor>> {
        self.metadata.validate_inputs(inputs)?;
        let mut ordered: TVec<TValue> = tvec![];
        for spec in &self.metadata.inputs {
            let given = inputs
                .iter()
                .find(|t| t.name == spec.name)
                .expect("validated above");
            ordered.push(to_tract(&given.tensor)?.into());
        }
        let outputs = self.state.run(ordered).map_err(|e| Error::Backend {
            backend: NAME,
            message: format!("running {}: {e:#}", self.label),
        })?;
        self.metadata
            .outputs
            .iter()
            .zip(outputs)
            .map(|(spec, value)| {
                Ok(NamedTensor::new(
                    spec.name.clone(),
                    from_tract(&value, &self.label)?,
                ))
            })
            .collect()
    }
}

fn to_tract(t: &Tensor) -> Result<tract_onnx::prelude::Tensor> {
    use tract_onnx::prelude::Tensor as T;
    let shape = t.shape();
    let fail = |e: tract_onnx::prelude::TractError| Error::Backend {
        backend: NAME,
        message: format!("input tensor: {e}"),
    };
    match t.data() {
        TensorData::Bool(v) => T::from_shape(shape, v),
        TensorData::U8(v) => T::from_shape(shape, v),
        TensorData::U16(v) => T::from_shape(shape, v),
        TensorData::U32(v) => T::from_shape(shape, v),
        TensorData::U64(v) => T::from_shape(shape, v),
        TensorData::I8(v) => T::from_shape(shape, v),
        TensorData::I16(v) => T::from_shape(shape, v),
        TensorData::I32(v) => T::from_shape(shape, v),
        TensorData::I64(v) => T::from_shape(shape, v),
        TensorData::F16(v) => T::from_shape(shape, v),
        TensorData::F32(v) => T::from_shape(shape, v),
        TensorData::F64(v) => T::from_shape(shape, v),
        TensorData::BF16(_) => {
            return Err(Error::Unsupported("tract does not run BF16 tensors".into()))
        }
        TensorData::Bytes(v) => {
            let strings = v
                .iter()
                .map(|b| String::from_utf8(b.clone()))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| {
                    Error::Unsupported("tract string inputs must be valid UTF-8".into())
                })?;
            tract_onnx::prelude::tract_ndarray::ArrayD::from_shape_vec(shape, strings)
                .map(T::from)
                .map_err(|e| tract_onnx::prelude::TractError::msg(e.to_string()))
        }
    }
    .map_err(fail)
}

fn from_tract(t: &tract_onnx::prelude::Tensor, label: &str) -> Result<Tensor> {
    let fail = |e: tract_onnx::prelude::TractError| Error::Backend {
        backend: NAME,
        message: format!("reading an output of {label}: {e}"),
    };
    let view = t.try_as_plain_ram().map_err(fail)?;
    macro_rules! copy {
        ($ty:ty, $variant:ident) => {
            TensorData::$variant(view.as_slice::<$ty>().map_err(fail)?.to_vec())
        };
    }
    let data = match dtype_of(t.datum_type(), label)? {
        DType::Bool => copy!(bool, Bool),
        DType::U8 => copy!(u8, U8),
        DType::U16 => copy!(u16, U16),
        DType::U32 => copy!(u32, U32),
        DType::U64 => copy!(u64, U64),
        DType::I8 => copy!(i8, I8),
        DType::I16 => copy!(i16, I16),
        DType::I32 => copy!(i32, I32),
        DType::I64 => copy!(i64, I64),
        DType::F16 => copy!(half::f16, F16),
        DType::F32 => copy!(f32, F32),
        DType::F64 => copy!(f64, F64),
        DType::Bytes => TensorData::Bytes(
            view.as_slice::<String>()
                .map_err(fail)?
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
        ),
        DType::BF16 => unreachable!("dtype_of never yields BF16"),
    };
    Tensor::new(t.shape().to_vec(), data)
}
