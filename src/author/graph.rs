//! `graph.db`: the unified story graph in SQLite (nodes as id + type + JSON, typed edges, meta, a mutation audit), changed only through [`Graph::apply`], which checks seed 000's rules for the stage making the change and writes all of a batch or nothing.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::ontology::{EdgeType, NodeType, Stage, parse_path_id};

/// The schema of `graph.db`. Rollback-journal mode (not WAL): the database is
/// one file, so a snapshot is a copy and a rollback restores it byte for byte.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS nodes (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  created_stage TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_by_type ON nodes(type, id);
CREATE TABLE IF NOT EXISTS edges (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL,
  from_id TEXT NOT NULL,
  to_id TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_from ON edges(type, from_id);
CREATE INDEX IF NOT EXISTS edges_to ON edges(type, to_id);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS mutations (
  seq INTEGER PRIMARY KEY,
  batch INTEGER NOT NULL,
  stage TEXT NOT NULL,
  phase TEXT NOT NULL,
  operation TEXT NOT NULL,
  target TEXT NOT NULL,
  before TEXT,
  after TEXT,
  rationale TEXT NOT NULL
);
";

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

    fn operation(&self) -> &'static str {
        match self {
            Mutation::Create { .. } => "create",
            Mutation::Update { .. } => "update",
            Mutation::Remove { .. } => "remove",
            Mutation::Link { .. } => "link",
            Mutation::Unlink { .. } => "unlink",
            Mutation::Meta { .. } => "meta",
        }
    }

    fn target(&self) -> String {
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

/// The project's graph.
pub struct Graph {
    conn: Connection,
    path: PathBuf,
}

impl Graph {
    /// Opens (or creates) `graph.db` at `path`.
    pub fn open(path: &Path) -> Result<Self, GraphError> {
        let sql = |e: rusqlite::Error| GraphError::Sql {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA foreign_keys = ON;")
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Self {
            conn,
            path: path.to_owned(),
        })
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
        |e| GraphError::Sql {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// A node by id.
    pub fn node(&self, id: &str) -> Result<Option<Node>, GraphError> {
        self.conn
            .query_row(
                "SELECT id, type, data FROM nodes WHERE id = ?1",
                [id],
                row_node,
            )
            .optional()
            .map_err(self.sql())
    }

    /// Every node of a type, by id.
    pub fn nodes(&self, kind: NodeType) -> Result<Vec<Node>, GraphError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, type, data FROM nodes WHERE type = ?1 ORDER BY id")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([kind.name()], row_node)
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// Every edge of a type, in the order they were made.
    pub fn edges(&self, kind: EdgeType) -> Result<Vec<Edge>, GraphError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT type, from_id, to_id, data FROM edges WHERE type = ?1 ORDER BY id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([kind.name()], row_edge)
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// The targets of `from`'s edges of a type.
    pub fn targets(&self, kind: EdgeType, from: &str) -> Result<Vec<String>, GraphError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT to_id FROM edges WHERE type = ?1 AND from_id = ?2 ORDER BY id")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([kind.name(), from], |r| r.get(0))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// A project setting.
    pub fn meta(&self, key: &str) -> Result<Option<Value>, GraphError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.sql())?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Every project setting.
    pub fn all_meta(&self) -> Result<BTreeMap<String, Value>, GraphError> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM meta ORDER BY key")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.sql())?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, v) = row.map_err(self.sql())?;
            out.insert(k, serde_json::from_str(&v).unwrap_or(Value::String(v)));
        }
        Ok(out)
    }

    /// The mutation audit, oldest first (optionally one stage's).
    pub fn audit(&self, stage: Option<Stage>) -> Result<Vec<AuditRow>, GraphError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT seq, batch, stage, phase, operation, target, before, after, rationale
                   FROM mutations WHERE ?1 IS NULL OR stage = ?1 ORDER BY seq",
            )
            .map_err(self.sql())?;
        let parse = |t: Option<String>| t.and_then(|t| serde_json::from_str(&t).ok());
        let rows = stmt
            .query_map([stage.map(Stage::name)], |r| {
                Ok(AuditRow {
                    seq: r.get(0)?,
                    batch: r.get(1)?,
                    stage: r.get(2)?,
                    phase: r.get(3)?,
                    operation: r.get(4)?,
                    target: r.get(5)?,
                    before: parse(r.get(6)?),
                    after: parse(r.get(7)?),
                    rationale: r.get(8)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// The latest stage that has changed the graph, from the audit.
    pub fn last_stage(&self) -> Result<Option<Stage>, GraphError> {
        let names: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT DISTINCT stage FROM mutations")
                .map_err(self.sql())?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(self.sql())?;
            rows.collect::<Result<_, _>>().map_err(self.sql())?
        };
        Ok(names.iter().filter_map(|n| n.parse().ok()).max())
    }

    /// Applies `changes` as `stage` in `phase`, all or nothing: each is
    /// checked against the stage's rights as it is made, and the whole
    /// graph's invariants (two answers per dilemma, path ids, an acyclic
    /// `sequenced_after`, edge ends) after the last. Every change is in the
    /// audit with what it replaced and why.
    pub fn apply(
        &mut self,
        stage: Stage,
        phase: &str,
        rationale: &str,
        changes: &[Mutation],
    ) -> Result<(), GraphError> {
        if let Some(last) = self.last_stage()?
            && last > stage
        {
            return Err(GraphError::Rule {
                stage,
                node: changes.first().map(Mutation::target).unwrap_or_default(),
                rule: Rule::StagePassed,
                detail: format!(
                    "{last} has already run on this graph; roll back to the pre-{} snapshot to change what {stage} made",
                    last.name()
                ),
            });
        }
        let path = self.path.clone();
        let sql = move |e: rusqlite::Error| GraphError::Sql {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self.conn.transaction().map_err(&sql)?;
        let batch: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(batch), 0) + 1 FROM mutations",
                [],
                |r| r.get(0),
            )
            .map_err(&sql)?;
        for change in changes {
            let (before, after) = apply_one(&tx, stage, change).map_err(|e| e.into_graph(&sql))?;
            tx.execute(
                "INSERT INTO mutations (batch, stage, phase, operation, target, before, after, rationale)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    batch,
                    stage.name(),
                    phase,
                    change.operation(),
                    change.target(),
                    before.map(|v| v.to_string()),
                    after.map(|v| v.to_string()),
                    rationale
                ],
            )
            .map_err(&sql)?;
        }
        invariants(&tx, stage).map_err(|e| e.into_graph(&sql))?;
        tx.commit().map_err(&sql)
    }

    /// Closes the database (before its file is copied).
    pub fn close(self) {
        drop(self.conn);
    }
}

fn row_node(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    let kind: String = r.get(1)?;
    let data: String = r.get(2)?;
    Ok(Node {
        id: r.get(0)?,
        kind: kind.parse().unwrap_or(NodeType::Vision),
        data: serde_json::from_str(&data).unwrap_or_default(),
    })
}

fn row_edge(r: &rusqlite::Row<'_>) -> rusqlite::Result<Edge> {
    let kind: String = r.get(0)?;
    let data: String = r.get(3)?;
    Ok(Edge {
        kind: kind.parse().unwrap_or(EdgeType::Choice),
        from: r.get(1)?,
        to: r.get(2)?,
        data: serde_json::from_str(&data).unwrap_or_default(),
    })
}

/// A refusal or a database error inside a transaction.
enum Failure {
    Rule(Stage, String, Rule, String),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sql(e)
    }
}

impl Failure {
    fn into_graph(self, sql: &impl Fn(rusqlite::Error) -> GraphError) -> GraphError {
        match self {
            Failure::Rule(stage, node, rule, detail) => GraphError::Rule {
                stage,
                node,
                rule,
                detail,
            },
            Failure::Sql(e) => sql(e),
        }
    }
}

fn refuse<T>(
    stage: Stage,
    node: &str,
    rule: Rule,
    detail: impl Into<String>,
) -> Result<T, Failure> {
    Err(Failure::Rule(stage, node.to_owned(), rule, detail.into()))
}

fn stages_text(stages: &[Stage]) -> String {
    stages
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

fn node_in(tx: &rusqlite::Transaction<'_>, id: &str) -> Result<Option<Node>, Failure> {
    Ok(tx
        .query_row(
            "SELECT id, type, data FROM nodes WHERE id = ?1",
            [id],
            row_node,
        )
        .optional()?)
}

/// Applies one change inside the transaction; returns what it replaced and what it wrote.
fn apply_one(
    tx: &rusqlite::Transaction<'_>,
    stage: Stage,
    change: &Mutation,
) -> Result<(Option<Value>, Option<Value>), Failure> {
    match change {
        Mutation::Create { id, kind, data } => {
            if !kind.created_in().contains(&stage) {
                let rule_note = if *kind == NodeType::Path {
                    " (PATH FREEZE: every path is declared in SEED)"
                } else {
                    ""
                };
                return refuse(
                    stage,
                    id,
                    Rule::Ownership,
                    format!(
                        "{stage} may not create a {kind}: {kind} nodes are created in {} only{rule_note}",
                        stages_text(kind.created_in())
                    ),
                );
            }
            if id.trim().is_empty() {
                return refuse(stage, id, Rule::Identity, "a node needs an id");
            }
            if let Some(old) = node_in(tx, id)? {
                return refuse(
                    stage,
                    id,
                    Rule::Identity,
                    format!("the id is already a {}", old.kind),
                );
            }
            let text = Value::Object(data.clone()).to_string();
            tx.execute(
                "INSERT INTO nodes (id, type, data, created_stage) VALUES (?1, ?2, ?3, ?4)",
                params![id, kind.name(), text, stage.name()],
            )?;
            Ok((None, Some(json!({"type": kind.name(), "data": data}))))
        }
        Mutation::Update { id, fields } => {
            let Some(old) = node_in(tx, id)? else {
                return refuse(stage, id, Rule::Identity, "no such node to change");
            };
            if let Some(field) = fields.keys().find(|f| !old.kind.may_change(stage, f)) {
                return refuse(
                    stage,
                    id,
                    Rule::Ownership,
                    format!(
                        "{stage} may not change `{field}` of a {} (created in {})",
                        old.kind,
                        stages_text(old.kind.created_in())
                    ),
                );
            }
            let mut data = old.data.clone();
            let mut before = Map::new();
            for (k, v) in fields {
                before.insert(k.clone(), old.data.get(k).cloned().unwrap_or(Value::Null));
                if v.is_null() {
                    data.remove(k);
                } else {
                    data.insert(k.clone(), v.clone());
                }
            }
            tx.execute(
                "UPDATE nodes SET data = ?2 WHERE id = ?1",
                params![id, Value::Object(data).to_string()],
            )?;
            Ok((
                Some(Value::Object(before)),
                Some(Value::Object(fields.clone())),
            ))
        }
        Mutation::Remove { id } => {
            let Some(old) = node_in(tx, id)? else {
                return refuse(stage, id, Rule::Identity, "no such node to remove");
            };
            if !old.kind.may_remove(stage) {
                return refuse(
                    stage,
                    id,
                    Rule::Ownership,
                    format!("{stage} may not remove a {}", old.kind),
                );
            }
            // Edges go with the node; each must be one this stage may remove.
            let mut stmt =
                tx.prepare_cached("SELECT type FROM edges WHERE from_id = ?1 OR to_id = ?1")?;
            let kinds: Vec<String> = stmt
                .query_map([id], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            if let Some(kind) = kinds
                .iter()
                .filter_map(|k| k.parse::<EdgeType>().ok())
                .find(|k| !k.made_in().contains(&stage))
            {
                return refuse(
                    stage,
                    id,
                    Rule::Ownership,
                    format!("{stage} may not remove its {kind} edges"),
                );
            }
            tx.execute("DELETE FROM edges WHERE from_id = ?1 OR to_id = ?1", [id])?;
            tx.execute("DELETE FROM nodes WHERE id = ?1", [id])?;
            Ok((
                Some(json!({"type": old.kind.name(), "data": old.data})),
                None,
            ))
        }
        Mutation::Link {
            kind,
            from,
            to,
            data,
        } => {
            let target = change.target();
            if !kind.made_in().contains(&stage) {
                return refuse(
                    stage,
                    &target,
                    Rule::Ownership,
                    format!(
                        "{stage} may not add {kind} edges (made in {} only)",
                        stages_text(kind.made_in())
                    ),
                );
            }
            let (want_from, want_to) = kind.ends();
            for (id, want) in [(from, want_from), (to, want_to)] {
                match node_in(tx, id)? {
                    Some(n) if n.kind == want => {}
                    Some(n) => {
                        return refuse(
                            stage,
                            &target,
                            Rule::EdgeEnds,
                            format!("`{id}` is a {}, a {kind} edge wants a {want}", n.kind),
                        );
                    }
                    None => {
                        return refuse(
                            stage,
                            &target,
                            Rule::EdgeEnds,
                            format!("no node `{id}` (a {want} is wanted)"),
                        );
                    }
                }
            }
            if !kind.may_repeat() {
                let exists: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM edges WHERE type = ?1 AND from_id = ?2 AND to_id = ?3)",
                    params![kind.name(), from, to],
                    |r| r.get(0),
                )?;
                if exists {
                    return Ok((None, None));
                }
            }
            tx.execute(
                "INSERT INTO edges (type, from_id, to_id, data) VALUES (?1, ?2, ?3, ?4)",
                params![
                    kind.name(),
                    from,
                    to,
                    Value::Object(data.clone()).to_string()
                ],
            )?;
            Ok((None, Some(Value::Object(data.clone()))))
        }
        Mutation::Unlink { kind, from, to } => {
            if !kind.made_in().contains(&stage) {
                return refuse(
                    stage,
                    &change.target(),
                    Rule::Ownership,
                    format!("{stage} may not remove {kind} edges"),
                );
            }
            tx.execute(
                "DELETE FROM edges WHERE type = ?1 AND from_id = ?2 AND to_id = ?3",
                params![kind.name(), from, to],
            )?;
            Ok((None, None))
        }
        Mutation::Meta { key, value } => {
            let before: Option<String> = tx
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value.to_string()],
            )?;
            Ok((
                before.and_then(|b| serde_json::from_str(&b).ok()),
                Some(value.clone()),
            ))
        }
    }
}

/// The whole graph's invariants, checked before a batch commits.
fn invariants(tx: &rusqlite::Transaction<'_>, stage: Stage) -> Result<(), Failure> {
    let nodes_of = |kind: NodeType| -> Result<Vec<Node>, Failure> {
        let mut stmt = tx.prepare_cached("SELECT id, type, data FROM nodes WHERE type = ?1")?;
        let rows = stmt.query_map([kind.name()], row_node)?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let edges_of = |kind: EdgeType| -> Result<Vec<(String, String)>, Failure> {
        let mut stmt =
            tx.prepare_cached("SELECT from_id, to_id FROM edges WHERE type = ?1 ORDER BY id")?;
        let rows = stmt.query_map([kind.name()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    };

    // Exactly two answers per dilemma, exactly one canonical.
    let answers: BTreeMap<String, Node> = nodes_of(NodeType::Answer)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let mut by_dilemma: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (d, a) in edges_of(EdgeType::HasAnswer)? {
        by_dilemma.entry(d).or_default().push(a);
    }
    for dilemma in nodes_of(NodeType::Dilemma)? {
        let theirs = by_dilemma.get(&dilemma.id).cloned().unwrap_or_default();
        if theirs.len() != 2 {
            return refuse(
                stage,
                &dilemma.id,
                Rule::TwoAnswers,
                format!(
                    "a dilemma has exactly two answers; this one has {}",
                    theirs.len()
                ),
            );
        }
        let canonical = theirs
            .iter()
            .filter(|a| {
                answers
                    .get(*a)
                    .and_then(|n| n.data.get("canonical"))
                    .and_then(Value::as_bool)
                    == Some(true)
            })
            .count();
        if canonical != 1 {
            return refuse(
                stage,
                &dilemma.id,
                Rule::TwoAnswers,
                format!("exactly one answer is canonical; {canonical} are"),
            );
        }
    }

    // Hierarchical path ids that match what the path explores.
    let explores: BTreeMap<String, Vec<String>> =
        edges_of(EdgeType::Explores)?
            .into_iter()
            .fold(BTreeMap::new(), |mut m, (p, a)| {
                m.entry(p).or_insert_with(Vec::new).push(a);
                m
            });
    for path in nodes_of(NodeType::Path)? {
        let Some((dilemma, answer)) = parse_path_id(&path.id) else {
            return refuse(
                stage,
                &path.id,
                Rule::PathId,
                "a path id is `path::<dilemma>__<answer>`",
            );
        };
        let theirs = by_dilemma.get(&dilemma);
        if theirs.is_none_or(|a| !a.contains(&answer)) {
            return refuse(
                stage,
                &path.id,
                Rule::PathId,
                format!("`{answer}` is not an answer of `{dilemma}`"),
            );
        }
        let its_answers = explores.get(&path.id).cloned().unwrap_or_default();
        if its_answers != [answer.clone()] {
            return refuse(
                stage,
                &path.id,
                Rule::PathId,
                format!(
                    "the path explores `{answer}` and nothing else (explores: {its_answers:?})"
                ),
            );
        }
    }

    // `sequenced_after` is acyclic (Kahn's algorithm).
    let order = edges_of(EdgeType::SequencedAfter)?;
    if let Some(beat) = cycle_member(&order) {
        return refuse(
            stage,
            &beat,
            Rule::Cycle,
            "`sequenced_after` runs in a circle through this beat",
        );
    }
    Ok(())
}

/// `ids` in an order where each comes after everything these `(after,
/// before)` pairs put before it; ties (and anything on a cycle, at the end)
/// in the order of `ids`. Deterministic.
pub fn topological(ids: &[String], pairs: &[(String, String)]) -> Vec<String> {
    let index: BTreeMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut indegree = vec![0usize; ids.len()];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for (after, before) in pairs {
        if let (Some(&a), Some(&b)) = (index.get(after.as_str()), index.get(before.as_str())) {
            indegree[a] += 1;
            next[b].push(a);
        }
    }
    let mut ready: BTreeSet<usize> = (0..ids.len()).filter(|i| indegree[*i] == 0).collect();
    let mut out = Vec::with_capacity(ids.len());
    let mut placed = vec![false; ids.len()];
    while let Some(i) = ready.pop_first() {
        out.push(ids[i].clone());
        placed[i] = true;
        for &m in &next[i] {
            indegree[m] -= 1;
            if indegree[m] == 0 {
                ready.insert(m);
            }
        }
    }
    out.extend(
        (0..ids.len())
            .filter(|i| !placed[*i])
            .map(|i| ids[i].clone()),
    );
    out
}

/// A node on a cycle of these `(after, before)` pairs, if there is one.
pub fn cycle_member(pairs: &[(String, String)]) -> Option<String> {
    let mut indegree: BTreeMap<&str, usize> = BTreeMap::new();
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (after, before) in pairs {
        indegree.entry(before).or_default();
        *indegree.entry(after).or_default() += 1;
        next.entry(before).or_default().push(after);
    }
    let mut queue: VecDeque<&str> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    while let Some(n) = queue.pop_front() {
        done.insert(n);
        for m in next.get(n).into_iter().flatten() {
            let d = indegree.get_mut(m).expect("every node has a degree");
            *d -= 1;
            if *d == 0 {
                queue.push_back(m);
            }
        }
    }
    indegree
        .keys()
        .find(|n| !done.contains(*n))
        .map(|n| (*n).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let p = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(cycle_member(&[p("b", "a"), p("c", "b")]), None);
        assert!(cycle_member(&[p("b", "a"), p("c", "b"), p("a", "c")]).is_some());
    }
}
