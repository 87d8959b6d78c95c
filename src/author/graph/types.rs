//! The graph's vocabulary in Rust: nodes, edges, changes, the rules a change may break.

use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::author::ontology::{EdgeType, NodeType, Stage};

/// A node: its id, type and fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Node {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: NodeType,
    pub data: Map<String, Value>,
}

impl Node {
    /// A field as a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.data.get(key).and_then(Value::as_str)
    }

    /// A field as a list of strings (missing or not a list: empty).
    pub fn strings(&self, key: &str) -> Vec<String> {
        strings(self.data.get(key))
    }

    /// Whether a field is JSON `true` (missing or anything else: no).
    pub fn flag(&self, key: &str) -> bool {
        self.data.get(key) == Some(&Value::Bool(true))
    }

    /// A field read as `T` (`None` when missing or not a `T`: the data may be an author's edit).
    pub fn field<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.data.get(key).and_then(|v| T::deserialize(v).ok())
    }

    /// A list field's items that read as `T` (the others skipped).
    pub fn items<T: DeserializeOwned>(&self, key: &str) -> Vec<T> {
        self.data
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| T::deserialize(v).ok())
            .collect()
    }
}

/// The strings of a JSON list (missing or not a list: none).
pub fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// An edge between two nodes, with its properties.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Edge {
    #[serde(rename = "type")]
    pub kind: EdgeType,
    pub from: String,
    pub to: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub data: Map<String, Value>,
}

/// One change to the graph.
#[derive(Clone, Debug, PartialEq)]
pub enum Mutation {
    /// A new node.
    Create {
        id: String,
        kind: NodeType,
        data: Map<String, Value>,
    },
    /// Set these fields of a node (the others stay; `null` removes one).
    Update {
        id: String,
        fields: Map<String, Value>,
    },
    /// Remove a node and every edge touching it.
    Remove { id: String },
    /// A new edge.
    Link {
        kind: EdgeType,
        from: String,
        to: String,
        data: Map<String, Value>,
    },
    /// Remove the edges of this type between these nodes.
    Unlink {
        kind: EdgeType,
        from: String,
        to: String,
    },
    /// A project setting.
    Meta { key: String, value: Value },
}

impl Mutation {
    pub fn create(id: impl Into<String>, kind: NodeType, data: Value) -> Self {
        Mutation::Create {
            id: id.into(),
            kind,
            data: object(data),
        }
    }

    pub fn update(id: impl Into<String>, fields: Value) -> Self {
        Mutation::Update {
            id: id.into(),
            fields: object(fields),
        }
    }

    pub fn link(kind: EdgeType, from: impl Into<String>, to: impl Into<String>) -> Self {
        Mutation::Link {
            kind,
            from: from.into(),
            to: to.into(),
            data: Map::new(),
        }
    }

    pub fn link_with(
        kind: EdgeType,
        from: impl Into<String>,
        to: impl Into<String>,
        data: Value,
    ) -> Self {
        Mutation::Link {
            kind,
            from: from.into(),
            to: to.into(),
            data: object(data),
        }
    }

    pub(super) fn operation(&self) -> &'static str {
        match self {
            Mutation::Create { .. } => "create",
            Mutation::Update { .. } => "update",
            Mutation::Remove { .. } => "remove",
            Mutation::Link { .. } => "link",
            Mutation::Unlink { .. } => "unlink",
            Mutation::Meta { .. } => "meta",
        }
    }

    pub(super) fn target(&self) -> String {
        match self {
            Mutation::Create { id, .. } | Mutation::Update { id, .. } | Mutation::Remove { id } => {
                id.clone()
            }
            Mutation::Link { kind, from, to, .. } | Mutation::Unlink { kind, from, to } => {
                format!("{from} -{kind}-> {to}")
            }
            Mutation::Meta { key, .. } => format!("meta:{key}"),
        }
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    }
}

/// Which of seed 000's rules a change broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A stage made or changed a node or edge it does not own (no backflow).
    Ownership,
    /// A stage changed the graph after a later stage had run on it.
    StagePassed,
    /// An id used twice, or a change to a node that is not there.
    Identity,
    /// An edge joining the wrong kinds of node, or a node that is not there.
    EdgeEnds,
    /// A dilemma without exactly two answers, one of them canonical.
    TwoAnswers,
    /// A path id not of the form `path::<dilemma>__<answer>` or not matching what it explores.
    PathId,
    /// `sequenced_after` has a cycle.
    Cycle,
}

/// Why a batch of changes was refused (nothing of it was written), or why
/// the graph could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("{stage}: `{node}` breaks the {rule:?} rule: {detail}; nothing was written")]
    Rule {
        stage: Stage,
        node: String,
        rule: Rule,
        detail: String,
    },
    #[error("{path}: {message}")]
    Sql { path: PathBuf, message: String },
}

/// One line of the mutation audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRow {
    pub seq: i64,
    pub batch: i64,
    pub stage: String,
    pub phase: String,
    pub operation: String,
    pub target: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub rationale: String,
}

pub(super) fn row_node(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    let kind: String = r.get(1)?;
    let data: String = r.get(2)?;
    Ok(Node {
        id: r.get(0)?,
        kind: kind.parse().unwrap_or(NodeType::Vision),
        data: serde_json::from_str(&data).unwrap_or_default(),
    })
}

pub(super) fn row_edge(r: &rusqlite::Row<'_>) -> rusqlite::Result<Edge> {
    let kind: String = r.get(0)?;
    let data: String = r.get(3)?;
    Ok(Edge {
        kind: kind.parse().unwrap_or(EdgeType::Choice),
        from: r.get(1)?,
        to: r.get(2)?,
        data: serde_json::from_str(&data).unwrap_or_default(),
    })
}
