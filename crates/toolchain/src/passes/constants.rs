//! `ConstantsToInitializers`: `Constant` nodes become graph initializers, so that
//! every later pass finds weights in one place (PP-OCRv5 keeps all its weights in
//! Constant nodes).

use super::{attribute, is_op, Pass, Patch};
use crate::graph::GraphIndex;
use crate::proto::{tensor_proto::DataType, TensorProto};

/// Turns `Constant` nodes (tensor, float(s) or int(s) values) into initializers.
pub struct ConstantsToInitializers;

impl Pass for ConstantsToInitializers {
    fn name(&self) -> &'static str {
        "ConstantsToInitializers"
    }

    fn propose(&self, index: &GraphIndex<'_>) -> Option<Patch> {
        let mut patch = Patch::default();
        for (i, node) in index.graph().node.iter().enumerate() {
            if !is_op(node, "Constant") || node.output.len() != 1 {
                continue;
            }
            let output = &node.output[0];
            // A graph output must stay produced by a node.
            if index.graph().output.iter().any(|o| o.name.as_ref() == Some(output)) {
                continue;
            }
            let Some(mut tensor) = constant_value(node) else {
                continue;
            };
            tensor.name = Some(output.clone());
            patch.remove_nodes.insert(i);
            patch.set_initializers.push(tensor);
        }
        if !patch.remove_nodes.is_empty() {
            patch.notes.push(format!(
                "{} Constant nodes became initializers",
                patch.remove_nodes.len()
            ));
        }
        Some(patch)
    }
}

fn constant_value(node: &crate::proto::NodeProto) -> Option<TensorProto> {
    if let Some(t) = attribute(node, "value").and_then(|a| a.t.clone()) {
        return Some(t);
    }
    if let Some(f) = attribute(node, "value_float").and_then(|a| a.f) {
        return Some(TensorProto {
            data_type: Some(DataType::Float as i32),
            float_data: vec![f],
            ..Default::default()
        });
    }
    if let Some(a) = attribute(node, "value_floats") {
        return Some(TensorProto {
            data_type: Some(DataType::Float as i32),
            dims: vec![a.floats.len() as i64],
            float_data: a.floats.clone(),
            ..Default::default()
        });
    }
    if let Some(i) = attribute(node, "value_int").and_then(|a| a.i) {
        return Some(TensorProto {
            data_type: Some(DataType::Int64 as i32),
            int64_data: vec![i],
            ..Default::default()
        });
    }
    if let Some(a) = attribute(node, "value_ints") {
        return Some(TensorProto {
            data_type: Some(DataType::Int64 as i32),
            dims: vec![a.ints.len() as i64],
            int64_data: a.ints.clone(),
            ..Default::default()
        });
    }
    // value_string(s) and sparse_value are left as Constant nodes.
    None
}
