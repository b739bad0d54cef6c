//! `EliminateIdentity`: removes `Identity` and inference-mode `Dropout` nodes by
//! pointing their readers at their input.

use super::{attribute, is_op, Pass, Patch};
use crate::graph::GraphIndex;

/// Removes Identity, and Dropout whose mask output is unused and that is not in
/// training mode.
pub struct EliminateIdentity;

impl Pass for EliminateIdentity {
    fn name(&self) -> &'static str {
        "EliminateIdentity"
    }

    fn propose(&self, index: &GraphIndex<'_>) -> Option<Patch> {
        let mut patch = Patch::default();
        for (i, node) in index.graph().node.iter().enumerate() {
            let removable = if is_op(node, "Identity") {
                true
            } else if is_op(node, "Dropout") {
                let mask_unused = node
                    .output
                    .get(1)
                    .is_none_or(|m| m.is_empty() || (index.uses(m) == 0 && !index.is_pinned(m)));
                // training_mode is an input from opset 12 on; only a missing one means inference.
                let training_input = node.input.get(2).is_some_and(|t| !t.is_empty());
                let training_attr = attribute(node, "is_test").is_some_and(|a| a.i == Some(0));
                mask_unused && !training_input && !training_attr
            } else {
                false
            };
            let (Some(input), Some(output)) = (node.input.first(), node.output.first()) else {
                continue;
            };
            // Graph outputs keep their producer; renamed uses would leave them undefined.
            if !removable || input.is_empty() || index.is_pinned(output) {
                continue;
            }
            // One at a time per input chain keeps renames simple; the driver repeats.
            if patch.rename_uses.iter().any(|(from, to)| from == input || to == output) {
                continue;
            }
            patch.remove_nodes.insert(i);
            patch.rename_uses.push((output.clone(), input.clone()));
            patch.notes.push(format!(
                "removed {} `{}`",
                node.op_type.as_deref().unwrap_or("?"),
                node.name.as_deref().unwrap_or(output)
            ));
        }
        Some(patch)
    }
}
