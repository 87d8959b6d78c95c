//! The author's views of the graph at a gate: `exports/graph.yaml` (every node and edge, to read or edit and re-apply) and `exports/graph.md` (a readable summary with what the stage under review changed).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::graph::{Edge, Graph, GraphError, Node};
use super::model::{EdgeType, NodeType, Stage};

/// The graph as one document: nodes by type, edges by type.
pub fn document(graph: &Graph) -> Result<Value, GraphError> {
    let mut nodes = serde_json::Map::new();
    for kind in NodeType::ALL {
        let of: Vec<Node> = graph.nodes(kind)?;
        if of.is_empty() {
            continue;
        }
        let mut by_id = serde_json::Map::new();
        for n in of {
            by_id.insert(n.id, Value::Object(n.data));
        }
        nodes.insert(kind.name().to_owned(), Value::Object(by_id));
    }
    let mut edges = serde_json::Map::new();
    for kind in EdgeType::ALL {
        let of: Vec<Edge> = graph.edges(kind)?;
        if of.is_empty() {
            continue;
        }
        let list = of
            .into_iter()
            .map(|e| {
                let mut m = serde_json::Map::new();
                m.insert("from".into(), Value::String(e.from));
                m.insert("to".into(), Value::String(e.to));
                m.extend(e.data);
                Value::Object(m)
            })
            .collect();
        edges.insert(kind.name().to_owned(), Value::Array(list));
    }
    let meta: serde_json::Map<String, Value> = graph.all_meta()?.into_iter().collect();
    Ok(serde_json::json!({"meta": meta, "nodes": nodes, "edges": edges}))
}

/// `graph.yaml`: the whole graph.
pub fn yaml(graph: &Graph) -> Result<String, GraphError> {
    let doc = document(graph)?;
    Ok(serde_norway::to_string(&doc).unwrap_or_else(|e| format!("# cannot write YAML: {e}\n")))
}

fn list(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `graph.md`: what the story is so far, type by type, and the changes the
/// stage under review (if any) made.
pub fn markdown(
    graph: &Graph,
    spark: &str,
    in_review: Option<Stage>,
) -> Result<String, GraphError> {
    let mut out = String::new();
    let _ = writeln!(out, "# Story graph\n\nSpark: {spark}\n");
    if let Some(vision) = graph.node("vision")? {
        let d = &vision.data;
        let _ = writeln!(out, "## Vision\n");
        for (label, key) in [
            ("Genre", "genre"),
            ("Tone", "tone"),
            ("Themes", "themes"),
            ("Audience", "audience"),
            ("Constraints", "constraints"),
            ("Content notes", "content_notes"),
        ] {
            let _ = writeln!(out, "- **{label}:** {}", list(d.get(key)));
        }
        if let Some(scope) = d.get("scope") {
            let _ = writeln!(
                out,
                "- **Scope:** {} length, {} branching",
                list(scope.get("length")),
                list(scope.get("branches"))
            );
        }
        out.push('\n');
    }
    let entities = graph.nodes(NodeType::Entity)?;
    if !entities.is_empty() {
        let _ = writeln!(out, "## Entities\n");
        for e in &entities {
            let _ = writeln!(
                out,
                "- `{}` ({}): {}",
                e.id,
                e.str("type").unwrap_or("?"),
                e.str("concept").unwrap_or("")
            );
        }
        out.push('\n');
    }
    let dilemmas = graph.nodes(NodeType::Dilemma)?;
    if !dilemmas.is_empty() {
        let _ = writeln!(out, "## Dilemmas\n");
        for d in &dilemmas {
            let _ = writeln!(out, "### `{}`: {}\n", d.id, d.str("question").unwrap_or(""));
            for a in graph.targets(EdgeType::HasAnswer, &d.id)? {
                if let Some(answer) = graph.node(&a)? {
                    let canonical =
                        answer.data.get("canonical").and_then(Value::as_bool) == Some(true);
                    let _ = writeln!(
                        out,
                        "- `{a}`{}: {}",
                        if canonical { " (canonical)" } else { "" },
                        answer.str("description").unwrap_or("")
                    );
                }
            }
            out.push('\n');
        }
    }
    let counts: BTreeMap<&str, usize> = NodeType::ALL
        .iter()
        .filter(|k| !matches!(k, NodeType::Vision | NodeType::Entity | NodeType::Dilemma))
        .map(|k| Ok((k.name(), graph.nodes(*k)?.len())))
        .collect::<Result<_, GraphError>>()?;
    let counted: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    if !counted.is_empty() {
        let _ = writeln!(out, "## Also in the graph\n\n{}\n", counted.join(", "));
    }
    if let Some(stage) = in_review {
        let changes: Vec<_> = graph
            .audit(Some(stage))?
            .into_iter()
            .filter(|r| r.phase != "gate")
            .collect();
        let _ = writeln!(out, "## What {stage} changed ({} changes)\n", changes.len());
        for row in changes {
            let _ = writeln!(
                out,
                "- {} {} [{}]: {}",
                row.operation, row.target, row.phase, row.rationale
            );
        }
    }
    Ok(out)
}
