//! `exports/graph.yaml`: every node and edge as one document, and an edited one read back.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::author::graph::{Edge, Graph, GraphError, Mutation, Node};
use crate::author::ontology::{EdgeType, NodeType, UnknownName};

/// Why an edited `graph.yaml` does not read as the review's document.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Name(#[from] UnknownName),
    #[error("`nodes` must map node types to nodes by id")]
    Nodes,
    #[error("`nodes.{kind}` must map ids to fields")]
    Ids { kind: NodeType },
    #[error("`nodes.{kind}.{id}` must be a map of fields")]
    Fields { kind: NodeType, id: String },
    #[error("an edge in `edges.{kind}` has no `{end}`")]
    EdgeEnd { kind: EdgeType, end: &'static str },
}

/// The graph as one document: nodes by type, edges by type.
pub fn document(graph: &Graph) -> Result<Value, GraphError> {
    let mut nodes = Map::new();
    for kind in NodeType::ALL {
        let of: Vec<Node> = graph.nodes(kind)?;
        if of.is_empty() {
            continue;
        }
        let mut by_id = Map::new();
        for n in of {
            by_id.insert(n.id, Value::Object(n.data));
        }
        nodes.insert(kind.name().to_owned(), Value::Object(by_id));
    }
    let mut edges = Map::new();
    for kind in EdgeType::ALL {
        let of: Vec<Edge> = graph.edges(kind)?;
        if of.is_empty() {
            continue;
        }
        let list = of
            .into_iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("from".into(), Value::String(e.from));
                m.insert("to".into(), Value::String(e.to));
                m.extend(e.data);
                Value::Object(m)
            })
            .collect();
        edges.insert(kind.name().to_owned(), Value::Array(list));
    }
    let meta: Map<String, Value> = graph.all_meta()?.into_iter().collect();
    Ok(serde_json::json!({"meta": meta, "nodes": nodes, "edges": edges}))
}

/// `graph.yaml`: the whole graph.
pub fn yaml(graph: &Graph) -> Result<String, GraphError> {
    let doc = document(graph)?;
    Ok(serde_norway::to_string(&doc).unwrap_or_else(|e| format!("# cannot write YAML: {e}\n")))
}

/// A section of a document (`null` when it has none).
fn section(doc: &Value, key: &str) -> Value {
    doc.get(key).cloned().unwrap_or(Value::Null)
}

/// The mutations that turn the graph into `doc` (a [`document`], as the
/// author edited it): changed fields, new and removed nodes, new and
/// removed edges (an edge whose data changed is removed and made again).
/// `meta` is the engine's (gates, notes) and is not read. Whether the stage
/// under review may make these changes is [`Graph::apply`]'s to say.
pub fn changes(graph: &Graph, doc: &Value) -> Result<Vec<Mutation>, ReviewError> {
    let now = document(graph)?;
    let mut out = node_changes(&section(&now, "nodes"), &section(doc, "nodes"))?;
    out.extend(edge_changes(
        &edge_set(&section(&now, "edges"))?,
        &edge_set(&section(doc, "edges"))?,
    ));
    Ok(out)
}

/// The node changes from the graph's nodes (`old`) to the edited ones.
fn node_changes(old: &Value, edited: &Value) -> Result<Vec<Mutation>, ReviewError> {
    let edited = match edited {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return Err(ReviewError::Nodes),
    };
    let mut out = Vec::new();
    let mut kept = BTreeSet::new();
    for (kind, by_id) in &edited {
        let kind: NodeType = kind.parse()?;
        let Some(by_id) = by_id.as_object() else {
            return Err(ReviewError::Ids { kind });
        };
        for (id, data) in by_id {
            let Some(data) = data.as_object() else {
                return Err(ReviewError::Fields {
                    kind,
                    id: id.clone(),
                });
            };
            kept.insert(id.clone());
            let was = old
                .get(kind.name())
                .and_then(|of| of.get(id))
                .and_then(Value::as_object);
            match was {
                None => out.push(Mutation::Create {
                    id: id.clone(),
                    kind,
                    data: data.clone(),
                }),
                Some(was) => {
                    let mut fields = Map::new();
                    for (k, v) in data {
                        if was.get(k) != Some(v) {
                            fields.insert(k.clone(), v.clone());
                        }
                    }
                    for k in was.keys().filter(|k| !data.contains_key(*k)) {
                        fields.insert(k.clone(), Value::Null);
                    }
                    if !fields.is_empty() {
                        out.push(Mutation::Update {
                            id: id.clone(),
                            fields,
                        });
                    }
                }
            }
        }
    }
    for by_id in old.as_object().into_iter().flat_map(|m| m.values()) {
        for id in by_id.as_object().into_iter().flat_map(|m| m.keys()) {
            if !kept.contains(id) {
                out.push(Mutation::Remove { id: id.clone() });
            }
        }
    }
    Ok(out)
}

/// An edge of a document: its type, ends and data.
type DocEdge = (EdgeType, String, String, Map<String, Value>);

/// The edges of a document's `edges` section.
fn edge_set(edges: &Value) -> Result<Vec<DocEdge>, ReviewError> {
    let mut all = Vec::new();
    for (kind, list) in edges.as_object().into_iter().flatten() {
        let kind: EdgeType = kind.parse()?;
        for e in list.as_array().into_iter().flatten() {
            let mut data = e.as_object().cloned().unwrap_or_default();
            let mut end = |end: &'static str| match data.remove(end) {
                Some(Value::String(s)) => Ok(s),
                _ => Err(ReviewError::EdgeEnd { kind, end }),
            };
            let from = end("from")?;
            let to = end("to")?;
            all.push((kind, from, to, data));
        }
    }
    Ok(all)
}

/// The edges removed (in the graph, not in the edit) and made (in the edit, not the graph).
fn edge_changes(old: &[DocEdge], edited: &[DocEdge]) -> Vec<Mutation> {
    let mut out = Vec::new();
    for e in old {
        if !edited.contains(e) {
            out.push(Mutation::Unlink {
                kind: e.0,
                from: e.1.clone(),
                to: e.2.clone(),
            });
        }
    }
    for e in edited {
        if !old.contains(e) {
            out.push(Mutation::Link {
                kind: e.0,
                from: e.1.clone(),
                to: e.2.clone(),
                data: e.3.clone(),
            });
        }
    }
    out
}
