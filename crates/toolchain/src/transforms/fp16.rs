//! The fp16 variant: weights and compute in float16 with explicit `Cast`s, the
//! graph's float32 inputs and outputs kept, and overflow-prone ops left in float32.
//!
//! Float types are propagated through the graph (most ops give their first
//! input's type; `Shape`, comparisons, `Cast`, ... have their own rule). Every
//! float32 tensor used by a converted node becomes float16: initializers are
//! converted (values clamped to ±65504), other producers are fed float16, and a
//! `Cast` is inserted where a float32 tensor (a graph input, a blocked node's
//! output) meets a converted node, or a float16 tensor meets a blocked node or a
//! graph output. Nodes carrying subgraphs stay in float32.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hinfer_core::half::f16;

use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_proto::DataType;
use crate::proto::{AttributeProto, ModelProto, NodeProto, TensorProto};
use crate::tensor_data::f32_values;
use crate::{Error, Result};

/// Ops kept in float32 by default: overflow-prone reductions and exponentials,
/// ops whose extra inputs must be float32, and ops without float16 kernels.
pub const DEFAULT_BLOCK_LIST: &[&str] = &[
    "Exp",
    "Pow",
    "Softmax",
    "LogSoftmax",
    "ReduceSum",
    "ReduceMean",
    "ReduceSumSquare",
    "ReduceL2",
    "ReduceProd",
    "ReduceLogSumExp",
    "LayerNormalization",
    "Resize",
    "Upsample",
    "Range",
    "TopK",
    "NonMaxSuppression",
    "RoiAlign",
    "CumSum",
    "RandomUniformLike",
    "RandomNormalLike",
    "Multinomial",
];

/// What to keep in float32.
#[derive(Clone, Debug, Default)]
pub struct Fp16Options {
    /// Op types kept in float32, in addition to [`DEFAULT_BLOCK_LIST`].
    pub block_ops: Vec<String>,
    /// Node names kept in float32.
    pub block_nodes: Vec<String>,
}

/// What the conversion did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fp16Report {
    pub converted_nodes: usize,
    pub blocked_nodes: Vec<String>,
    pub converted_initializers: usize,
    pub inserted_casts: usize,
    /// Weights whose magnitude exceeded the float16 range and were clamped.
    pub clamped_values: usize,
}

const FLOAT: i32 = DataType::Float as i32;
const FLOAT16: i32 = DataType::Float16 as i32;

/// Converts `model` (in place) to float16 compute with float32 inputs and outputs.
pub fn to_fp16(model: &mut ModelProto, options: &Fp16Options) -> Result<Fp16Report> {
    let label = crate::graph::label(model);
    let graph = crate::graph::main_graph_mut(model, &label)?;
    let types = crate::graph::element_types(graph);
    let blocked: Vec<bool> = graph.node.iter().map(|n| is_blocked(n, options)).collect();
    let mut report = Fp16Report::default();

    // Which float32 tensors each side uses.
    let initializer_names: BTreeSet<String> = graph.initializer.iter().filter_map(|t| t.name.clone()).collect();
    let mut used_in_fp16: BTreeSet<String> = BTreeSet::new();
    let mut used_in_fp32: BTreeSet<String> = BTreeSet::new();
    for (i, node) in graph.node.iter().enumerate() {
        for input in node
            .input
            .iter()
            .filter(|n| !n.is_empty() && types.get(n.as_str()) == Some(&FLOAT))
        {
            if blocked[i] {
                &mut used_in_fp32
            } else {
                &mut used_in_fp16
            }
            .insert(input.clone());
        }
    }
    let graph_outputs: BTreeSet<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
    used_in_fp32.extend(
        graph_outputs
            .iter()
            .filter(|o| types.get(o.as_str()) == Some(&FLOAT))
            .cloned(),
    );

    // Tensors that will hold float16: outputs of converted nodes with a float type.
    let mut fp16_tensors: BTreeSet<String> = BTreeSet::new();
    for (i, node) in graph.node.iter().enumerate() {
        if !blocked[i] {
            fp16_tensors.extend(
                node.output
                    .iter()
                    .filter(|o| types.get(o.as_str()) == Some(&FLOAT))
                    .cloned(),
            );
        }
    }

    // Initializers: converted when only float16 nodes read them, copied when both do.
    let mut new_initializers = vec![];
    let mut renamed_for_fp16: HashMap<String, String> = HashMap::new();
    for t in &mut graph.initializer {
        let Some(name) = t.name.clone() else { continue };
        if t.data_type != Some(FLOAT) || !used_in_fp16.contains(&name) {
            continue;
        }
        let Some(values) = f32_values(t) else { continue };
        let (half, clamped) = to_half(&values);
        report.clamped_values += clamped;
        report.converted_initializers += 1;
        let converted = TensorProto {
            name: Some(name.clone()),
            dims: t.dims.clone(),
            data_type: Some(FLOAT16),
            raw_data: Some(half.iter().flat_map(|h| h.to_le_bytes()).collect()),
            ..TensorProto::default()
        };
        if used_in_fp32.contains(&name) {
            let fp16_name = format!("{name}.fp16");
            renamed_for_fp16.insert(name, fp16_name.clone());
            new_initializers.push(TensorProto {
                name: Some(fp16_name),
                ..converted
            });
        } else {
            *t = converted;
            fp16_tensors.insert(name);
        }
    }
    graph.initializer.extend(new_initializers);

    // Casts: float32 → float16 for float16 consumers, float16 → float32 for the others.
    let mut casts_to_16: BTreeMap<String, String> = BTreeMap::new();
    let mut casts_to_32: BTreeMap<String, String> = BTreeMap::new();
    let nodes = std::mem::take(&mut graph.node);
    let mut out_nodes = Vec::with_capacity(nodes.len() + 8);
    let mut prelude = vec![];
    for name in graph.input.iter().filter_map(|v| v.name.clone()) {
        if types.get(name.as_str()) == Some(&FLOAT)
            && used_in_fp16.contains(&name)
            && !initializer_names.contains(&name)
        {
            let cast = format!("{name}.to_fp16");
            prelude.push(cast_node(&name, &cast, FLOAT16));
            casts_to_16.insert(name, cast);
        }
    }
    out_nodes.extend(prelude);
    for (i, mut node) in nodes.into_iter().enumerate() {
        let mut before = vec![];
        for input in node.input.iter_mut().filter(|n| !n.is_empty()) {
            if types.get(input.as_str()) != Some(&FLOAT) {
                continue;
            }
            let is16 = fp16_tensors.contains(input.as_str());
            if !blocked[i] {
                if let Some(copy) = renamed_for_fp16.get(input.as_str()) {
                    *input = copy.clone();
                } else if !is16 {
                    let cast = casts_to_16.entry(input.clone()).or_insert_with(|| {
                        let c = format!("{input}.to_fp16");
                        before.push(cast_node(input, &c, FLOAT16));
                        c
                    });
                    *input = cast.clone();
                }
            } else if is16 {
                let cast = casts_to_32.entry(input.clone()).or_insert_with(|| {
                    let c = format!("{input}.to_fp32");
                    before.push(cast_node(input, &c, FLOAT));
                    c
                });
                *input = cast.clone();
            }
        }
        if blocked[i] {
            report.blocked_nodes.push(
                node.name
                    .clone()
                    .unwrap_or_else(|| node.op_type.clone().unwrap_or_default()),
            );
        } else {
            report.converted_nodes += 1;
            retype_attributes(&mut node);
        }
        report.inserted_casts += before.len();
        out_nodes.extend(before);
        out_nodes.push(node);
    }
    // Graph outputs stay float32: their converted producers write `<name>.fp16`.
    for output in graph_outputs.iter().filter(|o| fp16_tensors.contains(o.as_str())) {
        let inner = format!("{output}.fp16");
        for node in &mut out_nodes {
            for o in node.output.iter_mut().filter(|o| *o == output) {
                o.clone_from(&inner);
            }
            for i in node.input.iter_mut().filter(|i| *i == output) {
                i.clone_from(&inner);
            }
        }
        out_nodes.push(cast_node(&inner, output, FLOAT));
        report.inserted_casts += 1;
    }
    graph.node = out_nodes;
    // Intermediate types changed; value infos are optional, so drop the stale ones.
    graph.value_info.clear();
    crate::graph::check(graph).map_err(|reason| Error::Invalid {
        model: label,
        reason: format!("fp16 conversion: {reason}"),
    })?;
    Ok(report)
}

fn is_blocked(node: &NodeProto, options: &Fp16Options) -> bool {
    let op = node.op_type.as_deref().unwrap_or("");
    let foreign_domain = !matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"));
    let has_subgraph = node.attribute.iter().any(|a| a.g.is_some() || !a.graphs.is_empty());
    foreign_domain
        || has_subgraph
        || DEFAULT_BLOCK_LIST.contains(&op)
        || options.block_ops.iter().any(|b| b == op)
        || node.name.as_ref().is_some_and(|n| options.block_nodes.contains(n))
}

/// Float16 values, clamped to the float16 range; returns how many were clamped.
fn to_half(values: &[f32]) -> (Vec<f16>, usize) {
    let max = f32::from(f16::MAX);
    let mut clamped = 0;
    let half = values
        .iter()
        .map(|&v| {
            if v.is_finite() && v.abs() > max {
                clamped += 1;
                f16::from_f32(v.clamp(-max, max))
            } else {
                f16::from_f32(v)
            }
        })
        .collect();
    (half, clamped)
}

fn cast_node(input: &str, output: &str, to: i32) -> NodeProto {
    NodeProto {
        op_type: Some("Cast".into()),
        name: Some(format!("{output}.cast")),
        input: vec![input.into()],
        output: vec![output.into()],
        attribute: vec![AttributeProto {
            name: Some("to".into()),
            r#type: Some(AttributeType::Int as i32),
            i: Some(i64::from(to)),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A converted node that makes float32 by attribute now makes float16.
fn retype_attributes(node: &mut NodeProto) {
    let op = node.op_type.clone().unwrap_or_default();
    for attr in &mut node.attribute {
        match (op.as_str(), attr.name.as_deref()) {
            ("Cast", Some("to")) | ("EyeLike" | "RandomNormal" | "RandomUniform", Some("dtype"))
                if attr.i == Some(i64::from(FLOAT)) =>
            {
                attr.i = Some(i64::from(FLOAT16));
            }
            ("ConstantOfShape", Some("value")) => {
                if let Some(t) = attr.t.as_mut().filter(|t| t.data_type == Some(FLOAT)) {
                    if let Some(v) = f32_values(t) {
                        let (half, _) = to_half(&v);
                        t.data_type = Some(FLOAT16);
                        t.float_data.clear();
                        t.raw_data = Some(half.iter().flat_map(|h| h.to_le_bytes()).collect());
                    }
                }
            }
            _ => {}
        }
    }
}
