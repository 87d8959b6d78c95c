//! What DRESS reads of the story: kept entities, who each passage shows, visual profiles.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::author::graph::{Graph, GraphError, Node};
use crate::author::ontology::{EdgeType, NodeType};

/// The part of an id after its `kind::` prefix.
pub(super) fn short(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, rest)| rest)
}

/// The entities SEED kept.
pub(super) fn kept_entities(graph: &Graph) -> Result<Vec<Node>, GraphError> {
    Ok(graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .filter(|e| e.str("disposition") != Some("cut"))
        .collect())
}

/// passage → the entities it shows, in the graph's order.
pub(super) fn appearances(graph: &Graph) -> Result<BTreeMap<String, Vec<String>>, GraphError> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in graph.edges(EdgeType::Appears)? {
        out.entry(e.to).or_default().push(e.from);
    }
    Ok(out)
}

/// An entity's details as the prompts show them (`{}` when it has none).
pub(super) fn details_text(node: &Node) -> Value {
    node.data.get("base").cloned().unwrap_or_else(|| json!({}))
}

/// A node's data as a prompt variable (`{}` when the node is not there).
pub(super) fn data_of(node: Option<Node>) -> Value {
    node.map_or_else(|| json!({}), |v| Value::Object(v.data))
}

/// Each entity's visual profile, by entity id.
pub(super) fn visuals(graph: &Graph) -> Result<BTreeMap<String, Node>, GraphError> {
    let mut out = BTreeMap::new();
    for e in graph.edges(EdgeType::DescribesVisual)? {
        if let Some(v) = graph.node(&e.from)? {
            out.insert(e.to, v);
        }
    }
    Ok(out)
}
