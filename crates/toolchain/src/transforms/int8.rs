//! Static int8 quantization written as QDQ (QuantizeLinear/DequantizeLinear
//! pairs), so one file runs on any ONNX backend and ONNX Runtime fuses the pairs
//! into integer kernels.
//!
//! Activations: uint8, asymmetric, from calibrated ranges (U8S8, the format that
//! is fast on x86 CPUs). Weights of Conv, Gemm and MatMul: int8, symmetric, per
//! output channel. Biases: int32 with scale = activation scale × weight scale.

use std::collections::{BTreeMap, BTreeSet};

use crate::calibrate::TensorRange;
use crate::passes::{attribute, is_op};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_proto::DataType;
use crate::proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto};
use crate::tensor_data::f32_values;
use crate::{Error, Result};

/// Ops whose float activations (inputs and outputs) get Q/DQ pairs.
pub const QUANTIZED_OPS: &[&str] = &[
    "Conv",
    "MatMul",
    "Gemm",
    "Add",
    "Mul",
    "Relu",
    "Clip",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Concat",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "LeakyRelu",
];

/// What to leave in float.
#[derive(Clone, Debug, Default)]
pub struct Int8Options {
    /// Node names kept in float (their tensors get no Q/DQ from them).
    pub keep_float_nodes: Vec<String>,
}

/// What the quantization did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Int8Report {
    pub quantized_nodes: usize,
    pub quantized_weights: usize,
    pub quantized_activations: usize,
    /// Relu/Clip nodes removed because the quantization range of the tensor before
    /// them already clips (as ONNX Runtime's quantizer does).
    pub folded_activations: usize,
}

/// The activation tensors [`quantize_qdq`] needs ranges for.
pub fn activations_to_calibrate(graph: &GraphProto, options: &Int8Options) -> Vec<String> {
    let types = crate::graph::element_types(graph);
    let float = |name: &str| types.get(name) == Some(&(DataType::Float as i32));
    let initializers: BTreeSet<&str> = graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
    let mut out = BTreeSet::new();
    for node in graph.node.iter().filter(|n| quantizable(n, options)) {
        // Only float computations are quantized (not the int64 shape arithmetic).
        if !node.output.first().is_some_and(|o| float(o)) {
            continue;
        }
        let weight_slots = weight_inputs(node);
        for (k, input) in node.input.iter().enumerate() {
            if !input.is_empty() && float(input) && !initializers.contains(input.as_str()) && !weight_slots.contains(&k)
            {
                out.insert(input.clone());
            }
        }
        out.extend(node.output.iter().take(1).filter(|o| !o.is_empty()).cloned());
    }
    out.into_iter().collect()
}

fn quantizable(node: &NodeProto, options: &Int8Options) -> bool {
    QUANTIZED_OPS.iter().any(|op| is_op(node, op))
        && !node.name.as_ref().is_some_and(|n| options.keep_float_nodes.contains(n))
}

/// Input slots holding weights (1) and biases (2) of Conv/Gemm, and MatMul's B.
fn weight_inputs(node: &NodeProto) -> Vec<usize> {
    match node.op_type.as_deref() {
        Some("Conv" | "Gemm") => vec![1, 2],
        Some("MatMul") => vec![1],
        _ => vec![],
    }
}

/// Scale and zero point of a uint8 activation range (the range always holds 0).
fn activation_params(range: TensorRange) -> (f32, u8) {
    let (lo, hi) = (range.min.min(0.0), range.max.max(0.0));
    let scale = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
    let zero = (-lo / scale).round().clamp(0.0, 255.0) as u8;
    (scale, zero)
}

/// Rewrites `model` with Q/DQ pairs on calibrated activations and quantized weights.
/// Tensors without a range stay float.
pub fn quantize_qdq(
    model: &mut ModelProto,
    ranges: &BTreeMap<String, TensorRange>,
    options: &Int8Options,
) -> Result<Int8Report> {
    let label = crate::graph::label(model);
    let opset = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version)
        .unwrap_or(0);
    if opset < 10 {
        return Err(Error::Invalid {
            model: label,
            reason: format!("int8 QDQ needs opset 10 or later, the model has {opset}"),
        });
    }
    // Per-channel DequantizeLinear (the `axis` attribute) exists from opset 13 on.
    let per_channel = opset >= 13;
    let graph = crate::graph::main_graph_mut(model, &label)?;
    let mut report = Int8Report::default();
    let initializers: BTreeMap<String, TensorProto> = graph
        .initializer
        .iter()
        .filter_map(|t| Some((t.name.clone()?, t.clone())))
        .collect();
    let graph_outputs: BTreeSet<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
    report.folded_activations = fold_activations_into_quantization(graph, ranges, &graph_outputs, options);
    let targets: BTreeSet<String> = activations_to_calibrate(graph, options)
        .into_iter()
        .filter(|t| ranges.contains_key(t))
        .collect();

    let mut new_initializers = vec![];
    let mut dq_of: BTreeMap<String, String> = BTreeMap::new();
    let mut qdq_nodes: BTreeMap<String, Vec<NodeProto>> = BTreeMap::new();
    for t in &targets {
        let (scale, zero) = activation_params(ranges[t]);
        let (s_name, z_name, q_name, dq_name) = (
            format!("{t}.scale"),
            format!("{t}.zero_point"),
            format!("{t}.q"),
            format!("{t}.dq"),
        );
        new_initializers.push(scalar_f32(&s_name, scale));
        new_initializers.push(TensorProto {
            name: Some(z_name.clone()),
            data_type: Some(DataType::Uint8 as i32),
            raw_data: Some(vec![zero]),
            ..Default::default()
        });
        qdq_nodes.insert(
            t.clone(),
            vec![
                qdq_node("QuantizeLinear", &[t, &s_name, &z_name], &q_name, None),
                qdq_node("DequantizeLinear", &[&q_name, &s_name, &z_name], &dq_name, None),
            ],
        );
        dq_of.insert(t.clone(), dq_name);
        report.quantized_activations += 1;
    }

    let nodes = std::mem::take(&mut graph.node);
    let mut out = Vec::with_capacity(nodes.len() * 2);
    // Graph inputs (and initializer-free activations with no producer) get their pairs first.
    let produced: BTreeSet<String> = nodes.iter().flat_map(|n| n.output.iter().cloned()).collect();
    for t in targets.iter().filter(|t| !produced.contains(*t)) {
        out.extend(qdq_nodes.remove(t).unwrap_or_default());
    }
    for mut node in nodes {
        let is_q = quantizable(&node, options) && node.output.first().is_some_and(|o| targets.contains(o));
        if is_q {
            report.quantized_nodes += 1;
            let sink = WeightSink {
                per_channel,
                new_initializers: &mut new_initializers,
                out: &mut out,
                report: &mut report,
            };
            quantize_weights(&mut node, &initializers, &dq_of, ranges, sink);
        }
        // Consumers read the dequantized value of every quantized activation.
        for input in node.input.iter_mut() {
            if let Some(dq) = dq_of.get(input.as_str()) {
                input.clone_from(dq);
            }
        }
        let produced_now: Vec<String> = node.output.clone();
        out.push(node);
        for o in produced_now {
            out.extend(qdq_nodes.remove(&o).unwrap_or_default());
        }
    }
    // A graph output keeps its float value; only its readers inside the graph see Q/DQ.
    let _ = graph_outputs;
    graph.node = out;
    graph.initializer.extend(new_initializers);
    graph.value_info.clear();
    crate::graph::check(graph).map_err(|reason| Error::Invalid {
        model: label,
        reason: format!("int8 quantization: {reason}"),
    })?;
    Ok(report)
}

/// Where quantized weights go.
struct WeightSink<'a> {
    /// One scale per output channel (opset ≥ 13), else one per tensor.
    per_channel: bool,
    new_initializers: &'a mut Vec<TensorProto>,
    out: &'a mut Vec<NodeProto>,
    report: &'a mut Int8Report,
}

/// Removes each Relu or Clip that directly follows a quantized node whose output
/// only it reads: the producer writes the Relu's output instead, and that
/// tensor's calibrated range (which starts at 0 after a Relu, or lies inside the
/// Clip bounds) makes the uint8 quantization do the clipping. Returns how many.
fn fold_activations_into_quantization(
    graph: &mut GraphProto,
    ranges: &BTreeMap<String, TensorRange>,
    graph_outputs: &BTreeSet<String>,
    options: &Int8Options,
) -> usize {
    let mut folded = 0;
    loop {
        let index = crate::graph::GraphIndex::new(graph);
        let candidate = graph.node.iter().enumerate().find_map(|(i, act)| {
            let clip_like = is_op(act, "Relu") || is_op(act, "Clip");
            let (x, y) = (act.input.first()?, act.output.first()?);
            let (p, producer) = index.producer_of(x)?;
            let producer_ok =
                ["Conv", "MatMul", "Gemm"].iter().any(|op| is_op(producer, op)) && quantizable(producer, options);
            let range_ok = ranges.get(y).is_some_and(|r| r.min >= 0.0 || is_op(act, "Clip"));
            (clip_like
                && quantizable(act, options)
                && producer_ok
                && range_ok
                && index.single_use(x)
                && !graph_outputs.contains(x))
            .then(|| (i, p, y.clone()))
        });
        let Some((act, producer, output)) = candidate else {
            break;
        };
        graph.node[producer].output[0] = output;
        graph.node.remove(act);
        folded += 1;
    }
    folded
}

/// Replaces a Conv/Gemm/MatMul weight (and bias) with int8 (int32) initializers behind DequantizeLinear.
fn quantize_weights(
    node: &mut NodeProto,
    initializers: &BTreeMap<String, TensorProto>,
    dq_of: &BTreeMap<String, String>,
    ranges: &BTreeMap<String, TensorRange>,
    sink: WeightSink<'_>,
) {
    let WeightSink {
        per_channel,
        new_initializers,
        out,
        report,
    } = sink;
    let op = node.op_type.clone().unwrap_or_default();
    let Some(w) = node.input.get(1).and_then(|n| initializers.get(n)) else {
        return;
    };
    let Some(values) = f32_values(w) else { return };
    // The output-channel axis of the weight.
    let trans_b = attribute(node, "transB").and_then(|a| a.i) == Some(1);
    let axis = match op.as_str() {
        "Conv" => 0,
        "Gemm" if trans_b => 0,
        "Gemm" | "MatMul" if w.dims.len() == 2 => 1,
        _ => return,
    };
    let dims: Vec<usize> = w.dims.iter().map(|&d| d.max(0) as usize).collect();
    let channels = dims[axis];
    if channels == 0 || values.is_empty() {
        return;
    }
    let channel_of = |i: usize| {
        if axis == 0 {
            i / (values.len() / channels)
        } else {
            i % channels
        }
    };
    let mut absmax = vec![0f32; channels];
    for (i, v) in values.iter().enumerate() {
        let c = channel_of(i);
        absmax[c] = absmax[c].max(v.abs());
    }
    if !per_channel {
        let all = absmax.iter().copied().fold(0f32, f32::max);
        absmax.iter_mut().for_each(|m| *m = all);
    }
    let scales: Vec<f32> = absmax.iter().map(|&m| if m > 0.0 { m / 127.0 } else { 1.0 }).collect();
    let q: Vec<u8> = values
        .iter()
        .enumerate()
        .map(|(i, v)| ((v / scales[channel_of(i)]).round().clamp(-127.0, 127.0) as i8) as u8)
        .collect();
    let name = w.name.clone().unwrap_or_default();
    let (wq, ws, wz, wdq) = (
        format!("{name}.q8"),
        format!("{name}.scale"),
        format!("{name}.zero_point"),
        format!("{name}.dq"),
    );
    new_initializers.push(TensorProto {
        name: Some(wq.clone()),
        dims: w.dims.clone(),
        data_type: Some(DataType::Int8 as i32),
        raw_data: Some(q),
        ..Default::default()
    });
    let n = if per_channel { channels } else { 1 };
    let shape: Vec<i64> = if per_channel { vec![channels as i64] } else { vec![] };
    new_initializers.push(crate::tensor_data::f32_tensor(&ws, &shape, &scales[..n]));
    new_initializers.push(TensorProto {
        name: Some(wz.clone()),
        dims: shape.clone(),
        data_type: Some(DataType::Int8 as i32),
        raw_data: Some(vec![0; n]),
        ..Default::default()
    });
    out.push(qdq_node(
        "DequantizeLinear",
        &[&wq, &ws, &wz],
        &wdq,
        per_channel.then_some(axis as i64),
    ));
    node.input[1] = wdq;
    report.quantized_weights += 1;

    // Bias: int32 at scale x_scale · w_scale[c], when the input activation is quantized.
    let (Some(x), Some(b)) = (node.input.first(), node.input.get(2).and_then(|n| initializers.get(n))) else {
        return;
    };
    let (Some(range), true) = (ranges.get(x.as_str()), dq_of.contains_key(x.as_str())) else {
        return;
    };
    let Some(bias) = f32_values(b).filter(|b| b.len() == channels) else {
        return;
    };
    let (x_scale, _) = activation_params(*range);
    let b_scales: Vec<f32> = scales.iter().map(|s| s * x_scale).collect();
    let bq: Vec<u8> = bias
        .iter()
        .zip(&b_scales)
        .flat_map(|(v, s)| ((v / s).round().clamp(i32::MIN as f32, i32::MAX as f32) as i32).to_le_bytes())
        .collect();
    let bname = b.name.clone().unwrap_or_default();
    let (bqn, bs, bz, bdq) = (
        format!("{bname}.q32"),
        format!("{bname}.scale"),
        format!("{bname}.zero_point"),
        format!("{bname}.dq"),
    );
    new_initializers.push(TensorProto {
        name: Some(bqn.clone()),
        dims: vec![channels as i64],
        data_type: Some(DataType::Int32 as i32),
        raw_data: Some(bq),
        ..Default::default()
    });
    new_initializers.push(crate::tensor_data::f32_tensor(&bs, &shape, &b_scales[..n]));
    new_initializers.push(TensorProto {
        name: Some(bz.clone()),
        dims: shape,
        data_type: Some(DataType::Int32 as i32),
        raw_data: Some(vec![0; n * 4]),
        ..Default::default()
    });
    out.push(qdq_node(
        "DequantizeLinear",
        &[&bqn, &bs, &bz],
        &bdq,
        per_channel.then_some(0),
    ));
    node.input[2] = bdq;
}

fn qdq_node(op: &str, inputs: &[&str], output: &str, axis: Option<i64>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("{output}.node")),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        attribute: axis
            .map(|a| AttributeProto {
                name: Some("axis".into()),
                r#type: Some(AttributeType::Int as i32),
                i: Some(a),
                ..Default::default()
            })
            .into_iter()
            .collect(),
        ..Default::default()
    }
}

fn scalar_f32(name: &str, v: f32) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(DataType::Float as i32),
        raw_data: Some(v.to_le_bytes().to_vec()),
        ..Default::default()
    }
}
