//! `EliminateDeadCode`: removes nodes whose outputs nobody reads, initializers no
//! node reads, and value infos of tensors that no longer exist.

use super::{Pass, Patch};
use crate::graph::GraphIndex;

/// Removes unused nodes and initializers.
pub struct EliminateDeadCode;

impl Pass for EliminateDeadCode {
    fn name(&self) -> &'static str {
        "EliminateDeadCode"
    }

    fn propose(&self, index: &GraphIndex<'_>) -> Option<Patch> {
        let mut patch = Patch::default();
        for (i, node) in index.graph().node.iter().enumerate() {
            let used = node
                .output
                .iter()
                .any(|o| !o.is_empty() && (index.uses(o) > 0 || index.is_pinned(o)));
            if !used {
                patch.remove_nodes.insert(i);
            }
        }
        for name in index.initializers.keys() {
            if index.uses(name) == 0 && !index.is_pinned(name) {
                patch.remove_initializers.insert(name.to_string());
            }
        }
        for info in &index.graph().value_info {
            let Some(name) = info.name.as_deref() else { continue };
            let exists = index.producer.contains_key(name) || index.initializers.contains_key(name);
            if !exists && !index.graph().input.iter().any(|i| i.name.as_deref() == Some(name)) {
                patch.remove_value_info.insert(name.to_string());
            }
        }
        if !patch.remove_nodes.is_empty() || !patch.remove_initializers.is_empty() {
            patch.notes.push(format!(
                "removed {} unused nodes and {} unused initializers",
                patch.remove_nodes.len(),
                patch.remove_initializers.len()
            ));
        }
        Some(patch)
    }
}
