//! `FoldBatchNormIntoConv`: an inference-mode `BatchNormalization` right after a
//! `Conv` becomes part of the Conv's weights and bias.
//!
//! With s = scale / sqrt(var + epsilon), per output channel m:
//! W'[m] = W[m] · s[m] and B'[m] = (B[m] − mean[m]) · s[m] + bias[m].
//! The folded weights get new initializer names (the originals may be shared);
//! `EliminateDeadCode` removes the old ones once unused.

use super::{attribute, is_op, Pass, Patch};
use crate::graph::GraphIndex;
use crate::proto::NodeProto;
use crate::tensor_data::{f32_tensor, f32_values};

/// Folds BatchNormalization into the preceding Conv.
pub struct FoldBatchNormIntoConv;

impl Pass for FoldBatchNormIntoConv {
    fn name(&self) -> &'static str {
        "FoldBatchNormIntoConv"
    }

    fn propose(&self, index: &GraphIndex<'_>) -> Option<Patch> {
        let mut patch = Patch::default();
        let mut touched = std::collections::BTreeSet::new();
        for (bn_index, bn) in index.graph().node.iter().enumerate() {
            if !is_op(bn, "BatchNormalization") {
                continue;
            }
            let Some(conv_index) = foldable_conv(index, bn) else {
                continue;
            };
            if !touched.insert(conv_index) {
                continue;
            }
            let Some(folded) = fold(index, &index.graph().node[conv_index], bn) else {
                continue;
            };
            let (conv, weight, bias) = folded;
            patch.set_initializers.push(weight);
            patch.set_initializers.push(bias);
            patch.replace_nodes.push((conv_index, conv));
            patch.remove_nodes.insert(bn_index);
            patch.notes.push(format!(
                "folded BatchNormalization `{}` into Conv `{}`",
                bn.name.as_deref().unwrap_or("?"),
                index.graph().node[conv_index].name.as_deref().unwrap_or("?")
            ));
        }
        Some(patch)
    }
}

/// The index of the Conv feeding `bn`, when folding is valid: inference mode (one
/// output), the Conv's only output read by this BN alone.
fn foldable_conv(index: &GraphIndex<'_>, bn: &NodeProto) -> Option<usize> {
    let training = attribute(bn, "training_mode").is_some_and(|a| a.i == Some(1));
    if training || bn.output.iter().filter(|o| !o.is_empty()).count() != 1 || bn.input.len() != 5 {
        return None;
    }
    let x = &bn.input[0];
    let (conv_index, conv) = index.producer_of(x)?;
    (is_op(conv, "Conv") && conv.output.len() == 1 && index.single_use(x)).then_some(conv_index)
}

/// The rewritten Conv (output renamed to the BN's) and its new weight and bias.
fn fold(
    index: &GraphIndex<'_>,
    conv: &NodeProto,
    bn: &NodeProto,
) -> Option<(NodeProto, crate::proto::TensorProto, crate::proto::TensorProto)> {
    let init = |name: &str| index.initializers.get(name).copied();
    let weight = init(conv.input.get(1)?)?;
    let w = f32_values(weight)?;
    let channels = usize::try_from(*weight.dims.first()?).ok()?;
    if channels == 0 || w.len() % channels != 0 {
        return None;
    }
    let per_channel = |name: &String| f32_values(init(name)?).filter(|v| v.len() == channels);
    let scale = per_channel(&bn.input[1])?;
    let shift = per_channel(&bn.input[2])?;
    let mean = per_channel(&bn.input[3])?;
    let var = per_channel(&bn.input[4])?;
    let bias = match conv.input.get(2).filter(|b| !b.is_empty()) {
        Some(b) => per_channel(b)?,
        None => vec![0.0; channels],
    };
    let epsilon = f64::from(attribute(bn, "epsilon").and_then(|a| a.f).unwrap_or(1e-5));
    let s: Vec<f64> = (0..channels)
        .map(|m| f64::from(scale[m]) / (f64::from(var[m]) + epsilon).sqrt())
        .collect();
    let per = w.len() / channels;
    let new_w: Vec<f32> = w
        .iter()
        .enumerate()
        .map(|(i, &v)| (f64::from(v) * s[i / per]) as f32)
        .collect();
    let new_b: Vec<f32> = (0..channels)
        .map(|m| ((f64::from(bias[m]) - f64::from(mean[m])) * s[m] + f64::from(shift[m])) as f32)
        .collect();
    let base = bn.output[0].clone();
    let w_name = unique(index, &format!("{base}.folded_weight"));
    let b_name = unique(index, &format!("{base}.folded_bias"));
    let mut new_conv = conv.clone();
    new_conv.input.truncate(2);
    new_conv.input[1] = w_name.clone();
    new_conv.input.push(b_name.clone());
    new_conv.output = vec![base];
    Some((
        new_conv,
        f32_tensor(&w_name, &weight.dims, &new_w),
        f32_tensor(&b_name, &[channels as i64], &new_b),
    ))
}

/// `wanted`, or `wanted` with a numeric suffix if the name is taken.
fn unique(index: &GraphIndex<'_>, wanted: &str) -> String {
    let taken = |n: &str| index.initializers.contains_key(n) || index.producer.contains_key(n) || index.uses(n) > 0;
    if !taken(wanted) {
        return wanted.to_string();
    }
    (1..)
        .map(|i| format!("{wanted}.{i}"))
        .find(|n| !taken(n))
        .expect("an unused name exists")
}
