//! tract, the pure-Rust ONNX engine.
//!
//! Unknown input dimensions (an unnamed dynamic width, say) become tract symbols
//! so that the model is optimised once and runs at any size. Some graphs only
//! type-check once every size is known (shape arithmetic tract cannot do on
//! symbols, as in PP-OCRv5 det and cls); those are planned per concrete input
//! shape on first use, and each runner keeps its recent plans.
//!
//! Each model gets its own matmul thread pool sized by
//! [`SessionOptions::intra_threads`]; each worker gets its own tract state.

use std::collections::HashMap;
use std::sync::Arc;

use hinfer_core::{
    Backend, BackendKind, DType, Dim, Error, ModelMetadata, ModelRunner, ModelSource, NamedTensor, PreparedModel,
    Result, SessionOptions, Shape, Tensor, TensorData, TensorSpec,
};
use tract_linalg::multithread::Executor;
use tract_onnx::prelude::{
    DatumType, Framework, InferenceFact, InferenceModel, InferenceModelExt, RunOptions, TDim, TValue, TVec, TractError,
    TypedFact, TypedModel, TypedSimplePlan, TypedSimpleState,
};
use tract_onnx::tract_hir::infer::Factoid;

const NAME: &str = "tract";

/// Plans kept per runner when a model is planned per input shape.
const MAX_PLANS_PER_RUNNER: usize = 16;

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

    fn prepare(&self, model: &ModelSource, options: &SessionOptions) -> Result<Arc<dyn PreparedModel>> {
        let label = model.label.as_str();
        let invalid = |stage: &str, e: TractError| Error::InvalidModel {
            model: label.to_string(),
            reason: format!("tract could not {stage}: {e:#}"),
        };
        let onnx = tract_onnx::onnx().with_ignore_value_info(true);
        let inference = match &model.path {
            Some(path) => onnx.model_for_path(path),
            None => onnx.model_for_read(&mut &model.bytes[..]),
        }
        .map_err(|e| invalid("load the model", e))?;
        let input_names = outlet_names(&inference, true).map_err(|e| invalid("read the inputs", e))?;
        let output_names = outlet_names(&inference, false).map_err(|e| invalid("read the outputs", e))?;

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

        let symbolic = with_symbolic_inputs(inference.clone(), &input_names, label)?;
        let typed = if options.optimize {
            symbolic.into_optimized()
        } else {
            symbolic.into_typed()
        };
        let (plan, metadata) = match typed {
            Ok(typed) => {
                let metadata = typed_metadata(&typed, &input_names, &output_names, label)?;
                let plan = typed
                    .into_runnable_with_options(&run_options)
                    .map_err(|e| invalid("plan the model", e))?;
                (Plan::Symbolic(plan), metadata)
            }
            Err(e) => {
                tracing::info!(
                    model = label,
                    "tract cannot plan for symbolic sizes ({e}); planning per input shape"
                );
                // Type inference as far as it goes, for the outputs' element types.
                let mut analysed = inference.clone();
                let _ = analysed.analyse(true);
                let metadata = declared_metadata(&analysed, &input_names, &output_names, label)?;
                (
                    Plan::PerShape(Arc::new(PerShape {
                        model: inference,
                        optimize: options.optimize,
                        run_options,
                    })),
                    metadata,
                )
            }
        };
        Ok(Arc::new(TractPrepared {
            plan,
            metadata,
            label: label.to_string(),
        }))
    }
}

/// Replaces every unknown input dimension with a named symbol (`<input>_<axis>`).
fn with_symbolic_inputs(mut model: InferenceModel, input_names: &[String], label: &str) -> Result<InferenceModel> {
    let invalid = |reason: String| Error::InvalidModel {
        model: label.to_string(),
        reason,
    };
    for (ix, name) in input_names.iter().enumerate() {
        let fact = model
            .input_fact(ix)
            .map_err(|e| invalid(format!("tract: {e}")))?
            .clone();
        let dt = fact
            .datum_type
            .concretize()
            .ok_or_else(|| invalid(format!("input `{name}` has no element type")))?;
        let rank = fact
            .shape
            .rank()
            .concretize()
            .ok_or_else(|| invalid(format!("input `{name}` has no known rank")))?;
        let dims: Vec<TDim> = fact
            .shape
            .dims()
            .take(rank as usize)
            .enumerate()
            .map(|(axis, d)| {
                d.concretize()
                    .unwrap_or_else(|| model.symbols.sym(&format!("{name}_{axis}")).into())
            })
            .collect();
        model
            .set_input_fact(ix, InferenceFact::dt_shape(dt, dims))
            .map_err(|e| invalid(format!("tract: {e}")))?;
    }
    Ok(model)
}

/// Names of the graph's inputs (or outputs), as the ONNX file spells them.
fn outlet_names(model: &InferenceModel, inputs: bool) -> tract_onnx::prelude::TractResult<Vec<String>> {
    let outlets = if inputs {
        model.input_outlets()?
    } else {
        model.output_outlets()?
    };
    Ok(outlets
        .iter()
        .map(|&o| model.outlet_label(o).unwrap_or(&model.node(o.node).name).to_string())
        .collect())
}

fn spec_from_typed(name: &str, fact: &TypedFact, label: &str) -> Result<TensorSpec> {
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
        dtype: dtype_of(fact.datum_type, label)?,
        shape: Shape(dims),
    })
}

/// Inputs and outputs of a typed model, with their ONNX names.
fn typed_metadata(typed: &TypedModel, inputs: &[String], outputs: &[String], label: &str) -> Result<ModelMetadata> {
    let fail = |e: TractError| Error::InvalidModel {
        model: label.to_string(),
        reason: format!("tract: {e}"),
    };
    Ok(ModelMetadata {
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(ix, n)| spec_from_typed(n, typed.input_fact(ix).map_err(fail)?, label))
            .collect::<Result<_>>()?,
        outputs: outputs
            .iter()
            .enumerate()
            .map(|(ix, n)| spec_from_typed(n, typed.output_fact(ix).map_err(fail)?, label))
            .collect::<Result<_>>()?,
    })
}

/// Inputs and outputs as the ONNX file declares them (for models planned per shape).
fn declared_metadata(
    model: &InferenceModel,
    inputs: &[String],
    outputs: &[String],
    label: &str,
) -> Result<ModelMetadata> {
    let invalid = |reason: String| Error::InvalidModel {
        model: label.to_string(),
        reason,
    };
    let spec = |name: &str, fact: &InferenceFact| -> Result<TensorSpec> {
        let dt = fact
            .datum_type
            .concretize()
            .ok_or_else(|| invalid(format!("`{name}` has no declared element type")))?;
        let dims = fact
            .shape
            .dims()
            .map(|d| match d.concretize() {
                Some(d) => d
                    .as_i64()
                    .map_or_else(|| Dim::Dynamic(Some(d.to_string())), |n| Dim::Fixed(n as usize)),
                None => Dim::Dynamic(None),
            })
            .collect();
        Ok(TensorSpec {
            name: name.to_string(),
            dtype: dtype_of(dt, label)?,
            shape: Shape(dims),
        })
    };
    let fail = |e: TractError| invalid(format!("tract: {e}"));
    Ok(ModelMetadata {
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(ix, n)| spec(n, model.input_fact(ix).map_err(fail)?))
            .collect::<Result<_>>()?,
        outputs: outputs
            .iter()
            .enumerate()
            .map(|(ix, n)| spec(n, model.output_fact(ix).map_err(fail)?))
            .collect::<Result<_>>()?,
    })
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

/// How a model is planned.
enum Plan {
    /// One plan for every input size.
    Symbolic(Arc<TypedSimplePlan>),
    /// A plan per concrete set of input shapes, made on first use.
    PerShape(Arc<PerShape>),
}

/// What a runner needs to plan a model for concrete input shapes.
struct PerShape {
    model: InferenceModel,
    optimize: bool,
    run_options: RunOptions,
}

impl PerShape {
    fn plan(&self, inputs: &[tract_onnx::prelude::Tensor], label: &str) -> Result<TypedSimpleState> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
        let fail = |e: TractError| Error::Backend {
            backend: NAME,
            message: format!("cannot plan {label} for input shapes {shapes:?}: {e:#}"),
        };
        let mut concrete = self.model.clone();
        for (ix, t) in inputs.iter().enumerate() {
            concrete
                .set_input_fact(ix, InferenceFact::dt_shape(t.datum_type(), t.shape()))
                .map_err(fail)?;
        }
        let typed = if self.optimize {
            concrete.into_optimized()
        } else {
            concrete.into_typed()
        }
        .map_err(fail)?;
        typed
            .into_runnable_with_options(&self.run_options)
            .map_err(fail)?
            .spawn()
            .map_err(fail)
    }
}

/// A model loaded by tract.
struct TractPrepared {
    plan: Plan,
    metadata: ModelMetadata,
    label: String,
}

impl PreparedModel for TractPrepared {
    fn metadata(&self) -> &ModelMetadata {
        &self.metadata
    }

    fn spawn(&self) -> Result<Box<dyn ModelRunner>> {
        let states = match &self.plan {
            Plan::Symbolic(plan) => States::Symbolic(plan.spawn().map_err(|e| Error::Backend {
                backend: NAME,
                message: format!("cannot create a state for {}: {e:#}", self.label),
            })?),
            Plan::PerShape(per_shape) => States::PerShape {
                planner: per_shape.clone(),
                by_shape: HashMap::new(),
            },
        };
        Ok(Box::new(TractRunner {
            states,
            metadata: self.metadata.clone(),
            label: self.label.clone(),
        }))
    }
}

/// A runner's tract states: one, or one per input shapes.
enum States {
    Symbolic(TypedSimpleState),
    PerShape {
        planner: Arc<PerShape>,
        by_shape: HashMap<Vec<Vec<usize>>, TypedSimpleState>,
    },
}

/// One worker's tract state.
struct TractRunner {
    states: States,
    metadata: ModelMetadata,
    label: String,
}

impl TractRunner {
    /// The state to run `inputs` with, planning for their shapes if needed.
    fn state_for(&mut self, inputs: &[tract_onnx::prelude::Tensor]) -> Result<&mut TypedSimpleState> {
        match &mut self.states {
            States::Symbolic(state) => Ok(state),
            States::PerShape { planner, by_shape } => {
                let key: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape().to_vec()).collect();
                if !by_shape.contains_key(&key) {
                    let state = planner.plan(inputs, &self.label)?;
                    if by_shape.len() >= MAX_PLANS_PER_RUNNER {
                        by_shape.clear();
                    }
                    by_shape.insert(key.clone(), state);
                }
                Ok(by_shape.get_mut(&key).expect("inserted above"))
            }
        }
    }
}

impl ModelRunner for TractRunner {
    fn run(&mut self, inputs: &[NamedTensor]) -> Result<Vec<NamedTensor>> {
        self.metadata.validate_inputs(inputs)?;
        let mut ordered = Vec::with_capacity(inputs.len());
        for spec in &self.metadata.inputs {
            let given = inputs.iter().find(|t| t.name == spec.name).expect("validated above");
            ordered.push(to_tract(&given.tensor)?);
        }
        let label = self.label.clone();
        let state = self.state_for(&ordered)?;
        let values: TVec<TValue> = ordered.into_iter().map(TValue::from).collect();
        let outputs = state.run(values).map_err(|e| Error::Backend {
            backend: NAME,
            message: format!("running {label}: {e:#}"),
        })?;
        self.metadata
            .outputs
            .iter()
            .zip(outputs)
            .map(|(spec, value)| Ok(NamedTensor::new(spec.name.clone(), from_tract(&value, &label)?)))
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
        TensorData::BF16(_) => return Err(Error::Unsupported("tract does not run BF16 tensors".into())),
        TensorData::Bytes(v) => {
            let strings = hinfer_core::tensor::utf8_strings(v)?;
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
