//! One change applied inside a batch's transaction, held to seed 000's rules; the invariants.
//!
//! Each change is checked against the stage's rights as it is made (no backflow: a stage
//! makes, changes and removes only what the ontology gives it); after the batch's last, the
//! whole graph's invariants: two answers per dilemma (one canonical), path ids that match
//! what they explore, an acyclic `sequenced_after`.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction as Tx, params};
use serde_json::{Map, Value, json};

use super::order::cycle_member;
use super::types::{GraphError, Mutation, Node, Rule, row_node};
use crate::author::ontology::{EdgeType, NodeType, Stage, parse_path_id};

/// A refusal or a database error inside a transaction.
pub(super) enum Failure {
    Rule(Stage, String, Rule, String),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sql(e)
    }
}

impl Failure {
    pub(super) fn into_graph(self, sql: &impl Fn(rusqlite::Error) -> GraphError) -> GraphError {
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

fn node_in(tx: &Tx<'_>, id: &str) -> Result<Option<Node>, Failure> {
    Ok(tx
        .query_row(
            "SELECT id, type, data FROM nodes WHERE id = ?1",
            [id],
            row_node,
        )
        .optional()?)
}

/// What a change replaced and what it wrote, for the audit.
type Audited = (Option<Value>, Option<Value>);

/// Applies one change inside the transaction; returns what it replaced and what it wrote.
pub(super) fn apply_one(tx: &Tx<'_>, stage: Stage, change: &Mutation) -> Result<Audited, Failure> {
    match change {
        Mutation::Create { id, kind, data } => create(tx, stage, id, *kind, data),
        Mutation::Update { id, fields } => update(tx, stage, id, fields),
        Mutation::Remove { id } => remove(tx, stage, id),
        Mutation::Link {
            kind,
            from,
            to,
            data,
        } => link(tx, stage, &change.target(), *kind, (from, to), data),
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

/// A new node: made by a stage that creates its type, with a new id.
fn create(
    tx: &Tx<'_>,
    stage: Stage,
    id: &str,
    kind: NodeType,
    data: &Map<String, Value>,
) -> Result<Audited, Failure> {
    if !kind.created_in().contains(&stage) {
        let rule_note = if kind == NodeType::Path {
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

/// Fields of a node set (`null` removes one): each one the stage may change.
fn update(
    tx: &Tx<'_>,
    stage: Stage,
    id: &str,
    fields: &Map<String, Value>,
) -> Result<Audited, Failure> {
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

/// A node removed with its edges: by a stage that may remove it and each of those edges.
fn remove(tx: &Tx<'_>, stage: Stage, id: &str) -> Result<Audited, Failure> {
    let Some(old) = node_in(tx, id)? else {
        return refuse(stage, id, Rule::Identity, "no such node to remove");
    };
    if !old.kind.may_remove(stage) {
        return refuse(
            stage,
            id,
            Rule::Ownership,
            format!(
                "{stage} may not remove {}",
                with_article(&old.kind.to_string())
            ),
        );
    }
    // Edges go with the node; each must be one this stage may remove.
    let mut stmt = tx.prepare_cached("SELECT type FROM edges WHERE from_id = ?1 OR to_id = ?1")?;
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

/// A new edge (`target` as the audit says it): made by its stage, between nodes of the
/// types its ends want; an edge that may not repeat and is there already is not made again.
fn link(
    tx: &Tx<'_>,
    stage: Stage,
    target: &str,
    kind: EdgeType,
    (from, to): (&str, &str),
    data: &Map<String, Value>,
) -> Result<Audited, Failure> {
    if !kind.made_in().contains(&stage) {
        return refuse(
            stage,
            target,
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
                    target,
                    Rule::EdgeEnds,
                    format!("`{id}` is a {}, a {kind} edge wants a {want}", n.kind),
                );
            }
            None => {
                return refuse(
                    stage,
                    target,
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

/// The rows the invariants read, inside the transaction.
struct Rows<'t, 'c> {
    tx: &'t Tx<'c>,
}

impl Rows<'_, '_> {
    fn nodes_of(&self, kind: NodeType) -> Result<Vec<Node>, Failure> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT id, type, data FROM nodes WHERE type = ?1")?;
        let rows = stmt.query_map([kind.name()], row_node)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn edges_of(&self, kind: EdgeType) -> Result<Vec<(String, String)>, Failure> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT from_id, to_id FROM edges WHERE type = ?1 ORDER BY id")?;
        let rows = stmt.query_map([kind.name()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The whole graph's invariants, checked before a batch commits.
pub(super) fn invariants(tx: &Tx<'_>, stage: Stage) -> Result<(), Failure> {
    let rows = Rows { tx };
    let by_dilemma = two_answers(&rows, stage)?;
    path_ids(&rows, stage, &by_dilemma)?;
    acyclic(&rows, stage)
}

/// Exactly two answers per dilemma, exactly one canonical; returns each dilemma's answers.
fn two_answers(rows: &Rows, stage: Stage) -> Result<BTreeMap<String, Vec<String>>, Failure> {
    let answers: BTreeMap<String, Node> = rows
        .nodes_of(NodeType::Answer)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let mut by_dilemma: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (d, a) in rows.edges_of(EdgeType::HasAnswer)? {
        by_dilemma.entry(d).or_default().push(a);
    }
    for dilemma in rows.nodes_of(NodeType::Dilemma)? {
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
            .filter(|a| answers.get(*a).is_some_and(|n| n.flag("canonical")))
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

    Ok(by_dilemma)
}

/// Hierarchical path ids that match what the path explores.
fn path_ids(
    rows: &Rows,
    stage: Stage,
    by_dilemma: &BTreeMap<String, Vec<String>>,
) -> Result<(), Failure> {
    let explores: BTreeMap<String, Vec<String>> = rows
        .edges_of(EdgeType::Explores)?
        .into_iter()
        .fold(BTreeMap::new(), |mut m, (p, a)| {
            m.entry(p).or_insert_with(Vec::new).push(a);
            m
        });
    for path in rows.nodes_of(NodeType::Path)? {
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

    Ok(())
}

/// `sequenced_after` is acyclic (Kahn's algorithm).
fn acyclic(rows: &Rows, stage: Stage) -> Result<(), Failure> {
    let order = rows.edges_of(EdgeType::SequencedAfter)?;
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

/// "a beat", "an answer": a node kind as a sentence names one.
fn with_article(kind: &str) -> String {
    let vowel = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if vowel { "an" } else { "a" })
}
