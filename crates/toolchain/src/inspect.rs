//! What `hinfer inspect` reports about an ONNX model, read from the protobuf alone
//! (no engine involved, so it works on models no backend can run).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use hinfer_core::{DType, Dim, Shape, TensorSpec};
use serde::Serialize;

use crate::proto::{tensor_proto, type_proto, GraphProto, ModelProto, TensorProto, TypeProto};
use crate::{Error, Result};

/// Reads and decodes an `.onnx` file, checking that it has a graph.
pub fn load_model(path: &Path) -> Result<ModelProto> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    decode_checked(&bytes, &path.display().to_string())
}

/// Decodes `.onnx` bytes; `label` names the model in errors.
pub fn decode_checked(bytes: &[u8], label: &str) -> Result<ModelProto> {
    if bytes.is_empty() {
        return Err(Error::Decode {
            model: label.into(),
            reason: "the file is empty".into(),
        });
    }
    let model = crate::proto::decode_model(bytes).map_err(|e| Error::Decode {
        model: label.into(),
        reason: e.to_string(),
    })?;
    if model.graph.is_none() {
        return Err(Error::Invalid {
            model: label.into(),
            reason: "the model has no graph".into(),
        });
    }
    if model.opset_import.is_empty() {
        return Err(Error::Invalid {
            model: label.into(),
            reason: "the model declares no opset".into(),
        });
    }
    Ok(model)
}

/// One input or output as the file declares it.
#[derive(Clone, Debug, Serialize)]
pub struct IoSummary {
    pub name: String,
    /// hinfer dtype name (`FP32`), or the ONNX type when hinfer has none.
    pub dtype: String,
    /// Dimensions: a number, a symbol, or `?`.
    pub shape: Vec<String>,
}

/// Where a model keeps its weights.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WeightStorage {
    /// Graph initializers held inside the file.
    pub initializers: usize,
    pub initializer_bytes: u64,
    /// `Constant` nodes carrying tensors (a style some exporters use for weights).
    pub constant_nodes: usize,
    pub constant_bytes: u64,
    /// Initializers whose data lives in external files.
    pub external_tensors: usize,
    pub external_bytes: u64,
    /// The external data files named by the model.
    pub external_files: Vec<String>,
}

/// Everything `hinfer inspect` prints.
#[derive(Clone, Debug, Serialize)]
pub struct ModelSummary {
    pub ir_version: i64,
    pub producer: String,
    /// (domain, version); the default domain is written `ai.onnx`.
    pub opsets: Vec<(String, i64)>,
    pub inputs: Vec<IoSummary>,
    pub outputs: Vec<IoSummary>,
    /// Nodes per op type, subgraphs included.
    pub op_histogram: BTreeMap<String, usize>,
    pub node_count: usize,
    pub subgraph_count: usize,
    /// Scalar parameters in initializers and Constant nodes.
    pub parameter_count: u64,
    pub weights: WeightStorage,
}

impl ModelSummary {
    /// Summarises a decoded model.
    pub fn of(model: &ModelProto) -> ModelSummary {
        let graph = model.graph.clone().unwrap_or_default();
        let initializer_names: BTreeSet<&str> = graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
        let io = |v: &crate::proto::ValueInfoProto| IoSummary {
            name: v.name.clone().unwrap_or_default(),
            dtype: v.r#type.as_ref().map_or("?".into(), type_name),
            shape: v.r#type.as_ref().map(shape_strings).unwrap_or_default(),
        };
        let mut summary = ModelSummary {
            ir_version: model.ir_version.unwrap_or(0),
            producer: format!(
                "{} {}",
                model.producer_name.as_deref().unwrap_or("unknown"),
                model.producer_version.as_deref().unwrap_or("")
            )
            .trim()
            .to_string(),
            opsets: model
                .opset_import
                .iter()
                .map(|o| {
                    let domain = o.domain.as_deref().filter(|d| !d.is_empty()).unwrap_or("ai.onnx");
                    (domain.to_string(), o.version.unwrap_or(0))
                })
                .collect(),
            inputs: graph
                .input
                .iter()
                .filter(|v| !initializer_names.contains(v.name.as_deref().unwrap_or("")))
                .map(io)
                .collect(),
            outputs: graph.output.iter().map(io).collect(),
            op_histogram: BTreeMap::new(),
            node_count: 0,
            subgraph_count: 0,
            parameter_count: 0,
            weights: WeightStorage::default(),
        };
        for t in &graph.initializer {
            summary.parameter_count += element_count(t);
            if is_external(t) {
                summary.weights.external_tensors += 1;
                summary.weights.external_bytes += external_length(t).unwrap_or(0);
                if let Some(location) = external_entry(t, "location") {
                    if !summary.weights.external_files.contains(&location) {
                        summary.weights.external_files.push(location);
                    }
                }
            } else {
                summary.weights.initializers += 1;
                summary.weights.initializer_bytes += data_bytes(t);
            }
        }
        summary.walk(&graph);
        summary
    }

    fn walk(&mut self, graph: &GraphProto) {
        for node in &graph.node {
            self.node_count += 1;
            let op = match node.domain.as_deref() {
                Some(d) if !d.is_empty() && d != "ai.onnx" => format!("{d}.{}", node.op_type.as_deref().unwrap_or("?")),
                _ => node.op_type.clone().unwrap_or_else(|| "?".into()),
            };
            *self.op_histogram.entry(op).or_default() += 1;
            for attr in &node.attribute {
                if node.op_type.as_deref() == Some("Constant") {
                    if let Some(t) = &attr.t {
                        self.weights.constant_nodes += 1;
                        self.weights.constant_bytes += data_bytes(t);
                        self.parameter_count += element_count(t);
                    }
                }
                for g in attr.g.iter().chain(&attr.graphs) {
                    self.subgraph_count += 1;
                    self.walk(g);
                }
            }
        }
    }

    /// The inputs as hinfer tensor specs, when their types are ones hinfer knows.
    pub fn input_specs(&self) -> Vec<Option<TensorSpec>> {
        self.inputs.iter().map(io_spec).collect()
    }
}

fn io_spec(io: &IoSummary) -> Option<TensorSpec> {
    let dtype = io.dtype.parse::<DType>().ok()?;
    let dims = io
        .shape
        .iter()
        .map(|d| match d.parse::<usize>() {
            Ok(n) => Dim::Fixed(n),
            Err(_) => Dim::Dynamic((d != "?").then(|| d.clone())),
        })
        .collect();
    Some(TensorSpec {
        name: io.name.clone(),
        dtype,
        shape: Shape(dims),
    })
}

/// Maps an ONNX element type number to hinfer's dtype, when there is one.
pub fn dtype_of(onnx_type: i32) -> Option<DType> {
    use tensor_proto::DataType as D;
    Some(match D::try_from(onnx_type).ok()? {
        D::Float => DType::F32,
        D::Uint8 => DType::U8,
        D::Int8 => DType::I8,
        D::Uint16 => DType::U16,
        D::Int16 => DType::I16,
        D::Int32 => DType::I32,
        D::Int64 => DType::I64,
        D::String => DType::Bytes,
        D::Bool => DType::Bool,
        D::Float16 => DType::F16,
        D::Double => DType::F64,
        D::Uint32 => DType::U32,
        D::Uint64 => DType::U64,
        D::Bfloat16 => DType::BF16,
        _ => return None,
    })
}

fn type_name(t: &TypeProto) -> String {
    match &t.value {
        Some(type_proto::Value::TensorType(tensor)) => {
            let elem = tensor.elem_type.unwrap_or(0);
            match dtype_of(elem) {
                Some(d) => d.name().to_string(),
                None => tensor_proto::DataType::try_from(elem).map_or("?".into(), |d| d.name().to_string()),
            }
        }
        Some(other) => format!("{other:?}").split('(').next().unwrap_or("?").to_string(),
        None => "?".into(),
    }
}

fn shape_strings(t: &TypeProto) -> Vec<String> {
    use crate::proto::tensor_shape_proto::dimension::Value;
    let Some(type_proto::Value::TensorType(tensor)) = &t.value else {
        return vec![];
    };
    let Some(shape) = &tensor.shape else { return vec![] };
    shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(Value::DimValue(n)) => n.to_string(),
            Some(Value::DimParam(p)) if !p.is_empty() => p.clone(),
            _ => "?".into(),
        })
        .collect()
}

fn element_count(t: &TensorProto) -> u64 {
    t.dims.iter().map(|&d| d.max(0) as u64).product()
}

fn is_external(t: &TensorProto) -> bool {
    t.data_location == Some(tensor_proto::DataLocation::External as i32)
}

fn external_entry(t: &TensorProto, key: &str) -> Option<String> {
    t.external_data
        .iter()
        .find(|e| e.key.as_deref() == Some(key))
        .and_then(|e| e.value.clone())
}

fn external_length(t: &TensorProto) -> Option<u64> {
    external_entry(t, "length")?.parse().ok()
}

/// Bytes of tensor data stored in the file.
fn data_bytes(t: &TensorProto) -> u64 {
    if let Some(raw) = &t.raw_data {
        return raw.len() as u64;
    }
    (t.float_data.len() * 4
        + t.int32_data.len() * 4
        + t.int64_data.len() * 8
        + t.double_data.len() * 8
        + t.uint64_data.len() * 8
        + t.string_data.iter().map(Vec::len).sum::<usize>()) as u64
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

impl fmt::Display for ModelSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opsets: Vec<String> = self.opsets.iter().map(|(d, v)| format!("{d} v{v}")).collect();
        writeln!(f, "ir version   {}", self.ir_version)?;
        writeln!(f, "producer     {}", self.producer)?;
        writeln!(f, "opsets       {}", opsets.join(", "))?;
        for (title, list) in [("inputs", &self.inputs), ("outputs", &self.outputs)] {
            writeln!(f, "{title}")?;
            for io in list {
                writeln!(f, "  {:<24} {:<6} [{}]", io.name, io.dtype, io.shape.join(","))?;
            }
        }
        writeln!(
            f,
            "nodes        {} ({} op types{})",
            self.node_count,
            self.op_histogram.len(),
            if self.subgraph_count > 0 {
                format!(", {} subgraphs", self.subgraph_count)
            } else {
                String::new()
            }
        )?;
        let mut ops: Vec<_> = self.op_histogram.iter().collect();
        ops.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (op, n) in ops {
            writeln!(f, "  {op:<24} {n}")?;
        }
        writeln!(f, "parameters   {}", self.parameter_count)?;
        let w = &self.weights;
        writeln!(f, "weights")?;
        writeln!(
            f,
            "  initializers    {} tensors, {}",
            w.initializers,
            human_bytes(w.initializer_bytes)
        )?;
        writeln!(
            f,
            "  Constant nodes  {} tensors, {}",
            w.constant_nodes,
            human_bytes(w.constant_bytes)
        )?;
        if w.external_tensors > 0 {
            writeln!(
                f,
                "  external data   {} tensors, {} in {}",
                w.external_tensors,
                human_bytes(w.external_bytes),
                w.external_files.join(", ")
            )?;
        } else {
            writeln!(f, "  external data   none")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
    }

    #[test]
    fn summarises_the_digits_cnn() {
        let s = ModelSummary::of(&load_model(&fixture("digits_cnn.onnx")).unwrap());
        assert_eq!(s.inputs.len(), 1);
        assert_eq!(s.inputs[0].name, "input");
        assert_eq!(s.inputs[0].dtype, "FP32");
        assert_eq!(s.inputs[0].shape, vec!["N", "1", "8", "8"]);
        assert_eq!(s.op_histogram.get("BatchNormalization"), Some(&2));
        assert_eq!(s.op_histogram.get("Conv"), Some(&2));
        assert_eq!(s.opsets, vec![("ai.onnx".to_string(), 13)]);
        // conv1 8·1·3·3+8, conv2 16·8·3·3+16, two BNs 4·(8+16), gemm 256·10+10
        assert_eq!(s.parameter_count, 80 + 1168 + 96 + 2570);
        assert_eq!(s.weights.external_tensors, 0);
        let text = s.to_string();
        assert!(
            text.contains("BatchNormalization") && text.contains("initializers"),
            "{text}"
        );
        let spec = s.input_specs()[0].clone().unwrap();
        assert_eq!(spec.shape.to_kserve(), vec![-1, 1, 8, 8]);
    }

    #[test]
    fn refuses_broken_files_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(fixture("digits_mlp.onnx")).unwrap();
        let cut = dir.path().join("cut.onnx");
        std::fs::write(&cut, &good[..good.len() - 100]).unwrap();
        let e = load_model(&cut).unwrap_err().to_string();
        assert!(e.contains("cut.onnx") && e.contains("truncated"), "{e}");
        let e = load_model(&dir.path().join("absent.onnx")).unwrap_err().to_string();
        assert!(e.contains("absent.onnx"), "{e}");
        let e = decode_checked(b"", "empty").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }
}
