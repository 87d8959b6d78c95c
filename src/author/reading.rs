//! What FILL and DRESS read of a grown graph: the passages in writing order, their beats.

use std::collections::BTreeSet;

use super::graph::{Graph, GraphError, Node};
use super::ontology::NodeType;

/// Every passage once, in FILL's order: the spine's passages first, then
/// each branch's not yet met; with the arc it is written along and its
/// place on it.
pub fn order(graph: &Graph) -> Result<Vec<(String, (String, usize))>, GraphError> {
    let mut arcs = graph.nodes(NodeType::Arc)?;
    arcs.sort_by_key(|a| (a.str("type") != Some("spine"), a.id.clone()));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for arc in &arcs {
        for (i, p) in arc.strings("passages").into_iter().enumerate() {
            if seen.insert(p.clone()) {
                out.push((p, (arc.id.clone(), i)));
            }
        }
    }
    // Passages on no arc (none, after GROW) still get written.
    for p in graph.nodes(NodeType::Passage)? {
        if seen.insert(p.id.clone()) {
            out.push((p.id, (String::new(), 0)));
        }
    }
    Ok(out)
}

/// A passage's beats, in order (several for a passage merged from a run).
pub fn beat_ids(passage: &Node) -> Vec<String> {
    match passage.data.get("from_beats") {
        Some(b) => super::graph::strings(Some(b)),
        None => passage
            .str("from_beat")
            .map(str::to_owned)
            .into_iter()
            .collect(),
    }
}

/// The scene types of a passage's beats, in order.
pub fn scene_types(graph: &Graph, passage: &Node) -> Result<Vec<String>, GraphError> {
    let mut out = Vec::new();
    for b in beat_ids(passage) {
        let t = graph
            .node(&b)?
            .and_then(|n| n.str("scene_type").map(str::to_owned))
            .unwrap_or_else(|| "scene".to_owned());
        out.push(t);
    }
    Ok(out)
}
