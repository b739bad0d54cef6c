//! Graph passes: each a named type that looks at a graph and proposes a
//! [`Patch`]; it never edits in place. [`optimize`] applies patches, checks the
//! graph after each (with the pass named in any error), and runs the list again
//! until no pass proposes anything.

use std::collections::BTreeSet;

use crate::graph::{check, GraphIndex};
use crate::proto::{GraphProto, ModelProto, NodeProto, TensorProto};
use crate::{Error, Result};

mod constants;
mod dead_code;
mod fold_batch_norm;
mod identity;

pub use constants::ConstantsToInitializers;
pub use dead_code::EliminateDeadCode;
pub use fold_batch_norm::FoldBatchNormIntoConv;
pub use identity::EliminateIdentity;

/// A graph rewrite.
pub trait Pass {
    /// A verb phrase naming the pass (`FoldBatchNormIntoConv`).
    fn name(&self) -> &'static str;

    /// The change this pass would make to `graph`, or `None` when it has nothing to do.
    fn propose(&self, graph: &GraphIndex<'_>) -> Option<Patch>;
}

/// Edits proposed by a pass, applied by the driver in one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Patch {
    /// Node indices (as the pass saw the graph) to remove.
    pub remove_nodes: BTreeSet<usize>,
    /// Nodes to put in place of the node at an index (which is removed).
    pub replace_nodes: Vec<(usize, NodeProto)>,
    /// Initializers to add, or to replace when the name exists.
    pub set_initializers: Vec<TensorProto>,
    /// Initializers to remove.
    pub remove_initializers: BTreeSet<String>,
    /// Every node input reading `.0` reads `.1` instead.
    pub rename_uses: Vec<(String, String)>,
    /// Value infos to drop (their tensors no longer exist).
    pub remove_value_info: BTreeSet<String>,
    /// One line per change, for the report.
    pub notes: Vec<String>,
}

impl Patch {
    fn is_empty(&self) -> bool {
        self.remove_nodes.is_empty()
            && self.replace_nodes.is_empty()
            && self.set_initializers.is_empty()
            && self.remove_initializers.is_empty()
            && self.rename_uses.is_empty()
            && self.remove_value_info.is_empty()
    }

    /// Applies the patch to `graph`.
    fn apply(self, graph: &mut GraphProto) {
        let mut replacements: std::collections::HashMap<usize, NodeProto> = self.replace_nodes.into_iter().collect();
        let nodes = std::mem::take(&mut graph.node);
        graph.node = nodes
            .into_iter()
            .enumerate()
            .filter_map(|(i, node)| match replacements.remove(&i) {
                Some(new) => Some(new),
                None if self.remove_nodes.contains(&i) => None,
                None => Some(node),
            })
            .collect();
        for (from, to) in &self.rename_uses {
            for node in &mut graph.node {
                for input in node.input.iter_mut().filter(|n| *n == from) {
                    input.clone_from(to);
                }
            }
        }
        graph
            .initializer
            .retain(|t| !self.remove_initializers.contains(t.name.as_deref().unwrap_or("")));
        graph
            .input
            .retain(|v| !self.remove_initializers.contains(v.name.as_deref().unwrap_or("")));
        graph
            .value_info
            .retain(|v| !self.remove_value_info.contains(v.name.as_deref().unwrap_or("")));
        for t in self.set_initializers {
            match graph.initializer.iter_mut().find(|e| e.name == t.name) {
                Some(existing) => *existing = t,
                None => graph.initializer.push(t),
            }
        }
    }
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct PassReport {
    pub pass: &'static str,
    pub notes: Vec<String>,
}

/// The default pipeline, in order.
pub fn default_passes() -> Vec<Box<dyn Pass>> {
    vec![
        Box::new(ConstantsToInitializers),
        Box::new(EliminateIdentity),
        Box::new(FoldBatchNormIntoConv),
        Box::new(EliminateDeadCode),
    ]
}

/// Runs `passes` over the model's main graph until none proposes a change (at
/// most `max_rounds` rounds), checking the graph after every applied patch.
pub fn optimize(model: &mut ModelProto, passes: &[Box<dyn Pass>], max_rounds: usize) -> Result<Vec<PassReport>> {
    let label = crate::graph::label(model);
    let graph = crate::graph::main_graph_mut(model, &label)?;
    check(graph).map_err(|reason| Error::Invalid {
        model: label.clone(),
        reason: format!("before any pass: {reason}"),
    })?;
    let mut reports = vec![];
    for _ in 0..max_rounds {
        let mut changed = false;
        for pass in passes {
            let Some(patch) = pass.propose(&GraphIndex::new(graph)) else {
                continue;
            };
            if patch.is_empty() {
                continue;
            }
            let notes = patch.notes.clone();
            patch.apply(graph);
            check(graph).map_err(|reason| Error::Invalid {
                model: label.clone(),
                reason: format!("pass {} broke the graph: {reason}", pass.name()),
            })?;
            reports.push(PassReport {
                pass: pass.name(),
                notes,
            });
            changed = true;
        }
        if !changed {
            break;
        }
    }
    Ok(reports)
}

/// An attribute of a node by name.
pub(crate) fn attribute<'n>(node: &'n NodeProto, name: &str) -> Option<&'n crate::proto::AttributeProto> {
    node.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

/// True for a node of the default ONNX domain with this op type.
pub(crate) fn is_op(node: &NodeProto, op: &str) -> bool {
    node.op_type.as_deref() == Some(op) && matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"))
}
