//! `graph.db` in SQLite: the graph read, and changed in batches, all or nothing, audited.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::change::{apply_one, invariants};
use super::types::{AuditRow, Edge, GraphError, Mutation, Node, Rule, row_edge, row_node};
use crate::author::ontology::{EdgeType, NodeType, Stage};

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
