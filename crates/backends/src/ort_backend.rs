//! ONNX Runtime through the `ort` crate, with `libonnxruntime.so` loaded at run time.
//!
//! The library is located once per process (see [`crate::ort_library`]) and the
//! ONNX Runtime environment built once. A [`PreparedModel`] keeps the model bytes
//! and a weight-prepacking cache; every worker gets its own `Session` (the Rust
//! API needs `&mut` to run), sharing the prepacked weights of the first, so workers
//! run concurrently without locks.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use hinfer_core::{
    Backend, BackendKind, DType, Dim, Error, ModelMetadata, ModelRunner, ModelSource, NamedTensor, PreparedModel,
    Result, SessionOptions, Shape, Tensor, TensorData, TensorSpec,
};
use ort::environment::Environment;
use ort::session::builder::{GraphOptimizationLevel, PrepackedWeights, SessionBuilder};
use ort::session::{Session, SessionInputValue};
use ort::value::{DynValue, TensorElementType, TensorRef, ValueType};

use crate::ort_library::{find_onnxruntime, LibrarySearch};

const NAME: &str = "onnxruntime";

/// The loaded library and the process-wide ONNX Runtime environment.
struct OrtProcess {
    library: PathBuf,
    via: &'static str,
    environment: Environment,
}

static PROCESS: OnceLock<std::result::Result<OrtProcess, String>> = OnceLock::new();

/// Finds and loads libonnxruntime once; later calls return the same outcome.
fn process() -> Result<&'static OrtProcess> {
    PROCESS
        .get_or_init(|| {
            let (library, via) = match find_onnxruntime() {
                LibrarySearch::Found { path, via } => (path, via),
                LibrarySearch::NotFound { searched } => return Err(LibrarySearch::not_found_reason(&searched)),
            };
            let builder = ort::init_from(&library).map_err(|e| format!("could not load {}: {e}", library.display()))?;
            let environment = builder
                .with_name("hinfer")
                .build()
                .map_err(|e| format!("could not start ONNX Runtime from {}: {e}", library.display()))?;
            tracing::info!(library = %library.display(), via, "loaded ONNX Runtime");
            Ok(OrtProcess {
                library,
                via,
                environment,
            })
        })
        .as_ref()
        .map_err(|reason| Error::BackendUnavailable {
            backend: NAME,
            reason: reason.clone(),
        })
}

/// The ONNX Runtime backend (CPU execution provider).
pub struct OrtBackend {
    process: &'static OrtProcess,
}

impl OrtBackend {
    /// Loads the ONNX Runtime library, or says where it looked and why it failed.
    pub fn new() -> Result<OrtBackend> {
        Ok(OrtBackend { process: process()? })
    }
}

impl Backend for OrtBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Ort
    }

    fn describe(&self) -> String {
        format!(
            "onnxruntime from {} (found via {})",
            self.process.library.display(),
            self.process.via
        )
    }

    fn prepare(&self, model: &ModelSource, options: &SessionOptions) -> Result<Arc<dyn PreparedModel>> {
        let prepacked = PrepackedWeights::new();
        let session = new_session(self.process, model, options, &prepacked)?;
        let metadata = metadata_of(&session, &model.label)?;
        Ok(Arc::new(OrtPrepared {
            process: self.process,
            model: model.clone(),
            options: options.clone(),
            prepacked,
            metadata,
            first_session: Mutex::new(Some(session)),
        }))
    }
}

fn backend_error(model: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: NAME,
        message: format!("{what} {model}: {e}"),
    }
}

fn new_session(
    process: &OrtProcess,
    model: &ModelSource,
    options: &SessionOptions,
    prepacked: &PrepackedWeights,
) -> Result<Session> {
    let configure = || -> ort::Result<SessionBuilder> {
        let level = if options.optimize {
            GraphOptimizationLevel::All
        } else {
            GraphOptimizationLevel::Disable
        };
        Session::builder(&process.environment)?
            .with_optimization_level(level)?
            .with_intra_threads(options.intra_threads.max(1))?
            .with_inter_threads(1)?
            .with_prepacked_weights(prepacked)
            .map_err(Into::into)
    };
    let mut builder = configure().map_err(|e| backend_error(&model.label, "cannot configure a session for", e))?;
    let session = match &model.path {
        // From the file, so that external data beside it is found.
        Some(path) => builder.commit_from_file(path),
        None => builder.commit_from_memory(&model.bytes),
    };
    session.map_err(|e| Error::InvalidModel {
        model: model.label.clone(),
        reason: format!("onnxruntime: {e}"),
    })
}

fn metadata_of(session: &Session, label: &str) -> Result<ModelMetadata> {
    let spec = |outlet: &ort::value::Outlet| -> Result<TensorSpec> {
        let ValueType::Tensor {
            ty,
            shape,
            dimension_symbols,
        } = outlet.dtype()
        else {
            return Err(Error::Unsupported(format!(
                "model {label}: `{}` is not a tensor ({:?}); only tensor inputs and outputs are served",
                outlet.name(),
                outlet.dtype()
            )));
        };
        let dims = shape
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d >= 0 {
                    Dim::Fixed(d as usize)
                } else {
                    Dim::Dynamic(dimension_symbols.get(i).filter(|s| !s.is_empty()).cloned())
                }
            })
            .collect();
        Ok(TensorSpec {
            name: outlet.name().to_string(),
            dtype: dtype_of(*ty, label)?,
            shape: Shape(dims),
        })
    };
    Ok(ModelMetadata {
        inputs: session.inputs().iter().map(spec).collect::<Result<_>>()?,
        outputs: session.outputs().iter().map(spec).collect::<Result<_>>()?,
    })
}

fn dtype_of(ty: TensorElementType, label: &str) -> Result<DType> {
    Ok(match ty {
        TensorElementType::Bool => DType::Bool,
        TensorElementType::Uint8 => DType::U8,
        TensorElementType::Uint16 => DType::U16,
        TensorElementType::Uint32 => DType::U32,
        TensorElementType::Uint64 => DType::U64,
        TensorElementType::Int8 => DType::I8,
        TensorElementType::Int16 => DType::I16,
        TensorElementType::Int32 => DType::I32,
        TensorElementType::Int64 => DType::I64,
        TensorElementType::Float16 => DType::F16,
        TensorElementType::Bfloat16 => DType::BF16,
        TensorElementType::Float32 => DType::F32,
        TensorElementType::Float64 => DType::F64,
        TensorElementType::String => DType::Bytes,
        other => return Err(Error::Unsupported(format!("model {label}: element type {other:?}"))),
    })
}

/// A model loaded into ONNX Runtime.
struct OrtPrepared {
    process: &'static OrtProcess,
    model: ModelSource,
    options: SessionOptions,
    prepacked: PrepackedWeights,
    metadata: ModelMetadata,
    /// The session built by `prepare`, handed to the first worker.
    first_session: Mutex<Option<Session>>,
}

impl PreparedModel for OrtPrepared {
    fn metadata(&self) -> &ModelMetadata {
        &self.metadata
    }

    fn spawn(&self) -> Result<Box<dyn ModelRunner>> {
        let reused = self.first_session.lock().map(|mut s| s.take()).unwrap_or(None);
        let session = match reused {
            Some(s) => s,
            None => new_session(self.process, &self.model, &self.options, &self.prepacked)?,
        };
        Ok(Box::new(OrtRunner {
            session,
            metadata: self.metadata.clone(),
            label: self.model.label.clone(),
        }))
    }
}

/// One worker's ONNX Runtime session.
struct OrtRunner {
    session: Session,
    metadata: ModelMetadata,
    label: String,
}

impl ModelRunner for OrtRunner {
    fn run(&mut self, inputs: &[NamedTensor]) -> Result<Vec<NamedTensor>> {
        self.metadata.validate_inputs(inputs)?;
        let values: Vec<(String, SessionInputValue<'_>)> = inputs
            .iter()
            .map(|t| Ok((t.name.clone(), input_value(&t.tensor)?)))
            .collect::<Result<_>>()?;
        let label = &self.label;
        let outputs = self
            .session
            .run(values)
            .map_err(|e| backend_error(label, "running", e))?;
        self.metadata
            .outputs
            .iter()
            .map(|spec| {
                let value = outputs
                    .get(&spec.name)
                    .ok_or_else(|| backend_error(label, "missing output", &spec.name))?;
                Ok(NamedTensor::new(
                    spec.name.clone(),
                    output_tensor(value, spec.dtype, label)?,
                ))
            })
            .collect()
    }
}

/// Borrows a hinfer tensor as an ONNX Runtime input without copying (but strings).
fn input_value(t: &Tensor) -> Result<SessionInputValue<'_>> {
    let shape = t.shape().to_vec();
    let err = |e: ort::Error| Error::Backend {
        backend: NAME,
        message: format!("cannot pass a {} tensor: {e}", t.dtype()),
    };
    macro_rules! view {
        ($v:expr) => {
            TensorRef::from_array_view((shape, $v.as_slice()))
                .map(SessionInputValue::from)
                .map_err(err)
        };
    }
    match t.data() {
        TensorData::Bool(v) => view!(v),
        TensorData::U8(v) => view!(v),
        TensorData::U16(v) => view!(v),
        TensorData::U32(v) => view!(v),
        TensorData::U64(v) => view!(v),
        TensorData::I8(v) => view!(v),
        TensorData::I16(v) => view!(v),
        TensorData::I32(v) => view!(v),
        TensorData::I64(v) => view!(v),
        TensorData::F16(v) => view!(v),
        TensorData::BF16(v) => view!(v),
        TensorData::F32(v) => view!(v),
        TensorData::F64(v) => view!(v),
        TensorData::Bytes(v) => {
            let strings = hinfer_core::tensor::utf8_strings(v)?;
            ort::value::Tensor::from_string_array((shape, strings.as_slice()))
                .map(SessionInputValue::from)
                .map_err(err)
        }
    }
}

/// Copies an ONNX Runtime output into a hinfer tensor.
fn output_tensor(value: &DynValue, dtype: DType, label: &str) -> Result<Tensor> {
    let fail = |e: ort::Error| backend_error(label, "reading an output of", e);
    macro_rules! copy {
        ($t:ty, $variant:ident) => {{
            let (shape, data) = value.try_extract_tensor::<$t>().map_err(fail)?;
            let dims = shape.iter().map(|&d| d as usize).collect();
            Tensor::new(dims, TensorData::$variant(data.to_vec()))
        }};
    }
    match dtype {
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
        DType::BF16 => copy!(half::bf16, BF16),
        DType::F32 => copy!(f32, F32),
        DType::F64 => copy!(f64, F64),
        DType::Bytes => {
            let (shape, strings) = value.try_extract_strings().map_err(fail)?;
            let dims = shape.iter().map(|&d| d as usize).collect();
            Tensor::new(
                dims,
                TensorData::Bytes(strings.into_iter().map(String::into_bytes).collect()),
            )
        }
    }
}
