//! Read-only views of an ONNX graph that passes need: who produces and who uses
//! each tensor, initializers by name, and the consistency check run after every
//! pass.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::passes::{attribute, is_op};
use crate::proto::tensor_proto::DataType;
use crate::proto::{GraphProto, ModelProto, NodeProto, TensorProto};

/// Indexes of one graph (top level; names used inside subgraphs count as uses).
pub struct GraphIndex<'g> {
    graph: &'g GraphProto,
    /// Tensor name → index of the node producing it.
    pub producer: HashMap<&'g str, usize>,
    /// Tensor name → indices of the nodes reading it.
    pub consumers: HashMap<&'g str, Vec<usize>>,
    /// Initializers by name.
    pub initializers: HashMap<&'g str, &'g TensorProto>,
    /// Names read inside subgraphs (If/Loop/Scan bodies) and graph outputs: never removable.
    pub pinned: BTreeSet<String>,
}

impl<'g> GraphIndex<'g> {
    /// Indexes `graph`.
    pub fn new(graph: &'g GraphProto) -> GraphIndex<'g> {
        let mut producer = HashMap::new();
        let mut consumers: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut pinned: BTreeSet<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
        for (i, node) in graph.node.iter().enumerate() {
            for out in node.output.iter().filter(|o| !o.is_empty()) {
                producer.insert(out.as_str(), i);
            }
            for input in node.input.iter().filter(|n| !n.is_empty()) {
                consumers.entry(input.as_str()).or_default().push(i);
            }
            for attr in &node.attribute {
                for g in attr.g.iter().chain(&attr.graphs) {
                    collect_subgraph_uses(g, &mut pinned);
                }
            }
        }
        let initializers = graph
            .initializer
            .iter()
            .filter_map(|t| Some((t.name.as_deref()?, t)))
            .collect();
        GraphIndex {
            graph,
            producer,
            consumers,
            initializers,
            pinned,
        }
    }

    /// The graph.
    pub fn graph(&self) -> &'g GraphProto {
        self.graph
    }

    /// Readers of `name` (nodes), not counting graph outputs or subgraph uses.
    pub fn uses(&self, name: &str) -> usize {
        self.consumers.get(name).map_or(0, Vec::len)
    }

    /// True when `name` is a graph output or read inside a subgraph.
    pub fn is_pinned(&self, name: &str) -> bool {
        self.pinned.contains(name)
    }

    /// True when exactly one node reads `name` and nothing else does.
    pub fn single_use(&self, name: &str) -> bool {
        self.uses(name) == 1 && !self.is_pinned(name)
    }

    /// The node that produces `name`.
    pub fn producer_of(&self, name: &str) -> Option<(usize, &'g NodeProto)> {
        self.producer.get(name).map(|&i| (i, &self.graph.node[i]))
    }
}

fn collect_subgraph_uses(graph: &GraphProto, into: &mut BTreeSet<String>) {
    for node in &graph.node {
        into.extend(node.input.iter().filter(|n| !n.is_empty()).cloned());
        for attr in &node.attribute {
            for g in attr.g.iter().chain(&attr.graphs) {
                collect_subgraph_uses(g, into);
            }
        }
    }
    into.extend(graph.output.iter().filter_map(|o| o.name.clone()));
}

/// A name for the model in messages: its graph's name, or `model`.
pub fn label(model: &ModelProto) -> String {
    model
        .graph
        .as_ref()
        .and_then(|g| g.name.clone())
        .unwrap_or_else(|| "model".into())
}

/// The model's main graph, or an error naming the model when it has none.
pub fn main_graph_mut<'m>(model: &'m mut ModelProto, label: &str) -> crate::Result<&'m mut GraphProto> {
    model.graph.as_mut().ok_or_else(|| crate::Error::Invalid {
        model: label.to_string(),
        reason: "the model has no graph".into(),
    })
}

/// Checks what every pass must preserve: nodes in topological order, every input
/// defined before use (graph input, initializer or earlier node), no tensor
/// produced twice, every graph output defined. The error names the first problem.
pub fn check(graph: &GraphProto) -> Result<(), String> {
    let mut defined: BTreeSet<&str> = graph.input.iter().filter_map(|v| v.name.as_deref()).collect();
    defined.extend(graph.initializer.iter().filter_map(|t| t.name.as_deref()));
    defined.extend(
        graph
            .sparse_initializer
            .iter()
            .filter_map(|s| s.values.as_ref()?.name.as_deref()),
    );
    let mut produced_by: BTreeMap<&str, &str> = BTreeMap::new();
    for node in &graph.node {
        let node_name = node.name.as_deref().unwrap_or("<unnamed>");
        for input in node.input.iter().filter(|n| !n.is_empty()) {
            if !defined.contains(input.as_str()) {
                return Err(format!(
                    "node `{node_name}` reads `{input}`, which nothing defines before it"
                ));
            }
        }
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            if let Some(other) = produced_by.insert(out, node_name) {
                return Err(format!("`{out}` is produced by both `{other}` and `{node_name}`"));
            }
            defined.insert(out);
        }
    }
    for out in graph.output.iter().filter_map(|o| o.name.as_deref()) {
        if !defined.contains(out) {
            return Err(format!("graph output `{out}` is not produced"));
        }
    }
    Ok(())
}

/// ONNX element type of every tensor, as far as declared types and simple rules
/// tell: most ops give their first input's type; `Shape`, comparisons, `Cast`,
/// `ConstantOfShape`, quantization ops and secondary outputs have their own rule.
pub fn element_types(graph: &GraphProto) -> HashMap<String, i32> {
    use crate::proto::type_proto::Value;
    let mut types: HashMap<String, i32> = HashMap::new();
    for v in graph.input.iter().chain(&graph.value_info).chain(&graph.output) {
        if let (Some(name), Some(Value::TensorType(t))) = (&v.name, v.r#type.as_ref().and_then(|t| t.value.as_ref())) {
            if let Some(e) = t.elem_type {
                types.insert(name.clone(), e);
            }
        }
    }
    for t in &graph.initializer {
        if let (Some(name), Some(dt)) = (&t.name, t.data_type) {
            types.insert(name.clone(), dt);
        }
    }
    const FLOAT: i32 = DataType::Float as i32;
    const BOOL: i32 = DataType::Bool as i32;
    const INT64: i32 = DataType::Int64 as i32;
    for node in &graph.node {
        let first = node.input.first().and_then(|i| types.get(i)).copied();
        let op = node.op_type.as_deref().unwrap_or("");
        for (k, out) in node.output.iter().enumerate().filter(|(_, o)| !o.is_empty()) {
            let ty = match op {
                "Shape" | "Size" | "NonZero" | "ArgMax" | "ArgMin" => Some(INT64),
                "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "Not" | "And" | "Or" | "Xor"
                | "IsNaN" | "IsInf" => Some(BOOL),
                "Cast" => attribute(node, "to").and_then(|a| a.i).map(|i| i as i32),
                "ConstantOfShape" => Some(
                    attribute(node, "value")
                        .and_then(|a| a.t.as_ref()?.data_type)
                        .unwrap_or(FLOAT),
                ),
                "Constant" => attribute(node, "value").and_then(|a| a.t.as_ref()?.data_type),
                "TopK" | "MaxPool" | "Unique" if k > 0 => Some(INT64),
                "Dropout" if k > 0 => Some(BOOL),
                "QuantizeLinear" => node
                    .input
                    .get(2)
                    .and_then(|z| types.get(z))
                    .copied()
                    .or(Some(DataType::Uint8 as i32)),
                "DequantizeLinear" => node.input.get(1).and_then(|s| types.get(s)).copied(),
                "Where" => node.input.get(1).and_then(|i| types.get(i)).copied(),
                _ if is_op(node, op) => first,
                _ => None,
            };
            // Declared types (value infos) win over the rules.
            if let Some(ty) = ty {
                types.entry(out.clone()).or_insert(ty);
            }
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ValueInfoProto;

    fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            name: Some(format!("{op}_{}", outputs[0])),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn value(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.into()),
            ..Default::default()
        }
    }

    #[test]
    fn check_names_the_first_problem() {
        let mut g = GraphProto {
            input: vec![value("x")],
            output: vec![value("z")],
            node: vec![node("Relu", &["x"], &["y"]), node("Neg", &["y"], &["z"])],
            ..Default::default()
        };
        check(&g).unwrap();
        g.node.swap(0, 1);
        assert!(check(&g).unwrap_err().contains("reads `y`"));
        g.node = vec![node("Relu", &["x"], &["y"]), node("Neg", &["x"], &["y"])];
        assert!(check(&g).unwrap_err().contains("produced by both"));
        g.node.pop();
        assert!(check(&g).unwrap_err().contains("graph output `z`"));
    }

    #[test]
    fn identity_removal_keeps_graph_outputs() {
        use crate::passes::{optimize, EliminateDeadCode, EliminateIdentity, Pass};
        let graph = GraphProto {
            input: vec![value("x")],
            output: vec![value("out")],
            node: vec![
                node("Identity", &["x"], &["a"]),
                node("Relu", &["a"], &["b"]),
                node("Dropout", &["b"], &["c"]),
                node("Identity", &["c"], &["out"]),
            ],
            ..Default::default()
        };
        let mut model = crate::proto::ModelProto {
            graph: Some(graph),
            ..Default::default()
        };
        let passes: Vec<Box<dyn Pass>> = vec![Box::new(EliminateIdentity), Box::new(EliminateDeadCode)];
        optimize(&mut model, &passes, 10).unwrap();
        let ops: Vec<_> = model
            .graph
            .unwrap()
            .node
            .iter()
            .map(|n| n.op_type.clone().unwrap())
            .collect();
        assert_eq!(
            ops,
            vec!["Relu", "Identity"],
            "the Identity producing the graph output stays"
        );
    }
}
