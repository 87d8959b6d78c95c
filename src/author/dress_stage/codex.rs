//! DRESS sub-stage 2b: each entity's codex tiers, gated by its codewords, without spoilers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::read::{data_of, details_text, short};
use super::report::Report;
use crate::author::answers::CodexAnswer;
use crate::author::ask::{self, Ask, StageError};
use crate::author::diegetic::{self, CodexProblem, Gated, Tier};
use crate::author::fields;
use crate::author::graph::{Graph, GraphError, Mutation, Node};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// Retries of an entity's codex after the first answer (seed: at most 2).
pub const CODEX_RETRIES: usize = 2;

/// The codewords that may gate an entity's tiers, with what each means:
/// those its overlays are shown under, and those tracking a consequence
/// of a dilemma that involves it.
fn entity_codewords(
    graph: &Graph,
    entity: &Node,
    codewords: &[Node],
) -> Result<Vec<(String, String)>, GraphError> {
    let mut ids: BTreeSet<String> = fields::overlays(entity)
        .into_iter()
        .flat_map(|o| o.when)
        .collect();
    let dilemmas: BTreeSet<String> = graph
        .edges(EdgeType::DilemmaInvolves)?
        .into_iter()
        .filter(|e| e.to == entity.id)
        .map(|e| e.from)
        .collect();
    for c in codewords {
        let dilemma = field_of(graph, c.str("path"), "dilemma_id")?;
        if dilemma.is_some_and(|d| dilemmas.contains(&d)) {
            ids.insert(c.id.clone());
        }
    }
    let mut out = Vec::new();
    for id in ids {
        let Some(c) = codewords.iter().find(|c| c.id == id) else {
            continue;
        };
        let meaning = field_of(graph, c.str("tracks"), "description")?;
        out.push((
            id,
            meaning.unwrap_or_else(|| short(&c.id).replace('_', " ")),
        ));
    }
    Ok(out)
}

/// A text field of the node `id` names, if both are there.
fn field_of(graph: &Graph, id: Option<&str>, field: &str) -> Result<Option<String>, GraphError> {
    let Some(id) = id else { return Ok(None) };
    Ok(graph
        .node(id)?
        .and_then(|n| n.str(field).map(str::to_owned)))
}

/// An entity's details that only some codewords show (its overlays').
fn gated_details(entity: &Node) -> Vec<Gated> {
    let mut out = Vec::new();
    for o in fields::overlays(entity) {
        for v in o.details.iter().flat_map(|d| d.values()) {
            if let Some(text) = v.as_str() {
                out.push(Gated {
                    when: o.when.clone(),
                    text: text.to_owned(),
                });
            }
        }
    }
    out
}

/// Sub-stage 2b: each entity's tiers, checked, retried at most twice with
/// the problems said; then rank 1 alone (its own, or the entity's concept).
pub(super) fn codex(
    graph: &mut Graph,
    entities: &BTreeMap<String, Node>,
    voice: &Value,
    ask: &mut Ask,
    report: &mut Report,
) -> Result<(), StageError> {
    let vision = data_of(graph.node("vision")?);
    let codewords = graph.nodes(NodeType::Codeword)?;
    for entity in entities.values() {
        let related = entity_codewords(graph, entity, &codewords)?;
        let allowed: BTreeSet<String> = related.iter().map(|(c, _)| c.clone()).collect();
        let gated = gated_details(entity);
        let name = entity.str("name").unwrap_or(&entity.id).to_owned();
        let vars_entity = json!({
            "name": name, "type": entity.str("type").unwrap_or("character"),
            "concept": entity.str("concept"), "details": details_text(entity),
            "overlays": entity.data.get("overlays").cloned().unwrap_or_else(|| json!([])),
        });
        let listed: Vec<Value> = related
            .iter()
            .map(|(id, meaning)| json!({"id": id, "meaning": meaning}))
            .collect();
        let vars = |said: Vec<String>| {
            json!({"entity": vars_entity, "codewords": listed, "vision": vision,
                   "voice": voice, "problems": said})
        };
        let (mut tiers, problems, retried) = asked(ask, vars, &allowed, &gated)?;
        let mut why = format!(
            "{}'s codex: {} tier{}",
            entity.id,
            tiers.len(),
            if tiers.len() == 1 { "" } else { "s" }
        );
        if !retried.is_empty() {
            why = format!("{why} (asked again: {})", retried.join("; "));
        }
        if !problems.is_empty() {
            let first_ok = !tiers.is_empty()
                && !problems.iter().any(|p| {
                    matches!(
                        p,
                        CodexProblem::FirstGated
                            | CodexProblem::Empty(1)
                            | CodexProblem::Meta { rank: 1, .. }
                            | CodexProblem::Spoiler { rank: 1, .. }
                    )
                });
            let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
            tiers.truncate(1);
            if !first_ok {
                tiers = vec![Tier {
                    rank: 1,
                    visible_when: Vec::new(),
                    title: None,
                    content: entity.str("concept").unwrap_or(&name).to_owned(),
                }];
            }
            let note = format!(
                "{}: the tiers still had problems after {CODEX_RETRIES} retries ({}); rank 1 only{}",
                entity.id,
                said.join("; "),
                if first_ok {
                    ""
                } else {
                    ", from its concept (rewrite it at the gate)"
                }
            );
            why = format!("{why}; {note}");
            report.notes.push(note);
        }
        let mut changes = Vec::new();
        for t in &tiers {
            let id = format!("codex::{}::{}", short(&entity.id), t.rank);
            changes.push(Mutation::create(
                id.clone(),
                NodeType::CodexEntry,
                json!({"rank": t.rank, "visible_when": t.visible_when, "title": t.title, "content": t.content}),
            ));
            changes.push(Mutation::link(EdgeType::HasEntry, id, entity.id.clone()));
        }
        graph.apply(Stage::Dress, "codex", &why, &changes)?;
        report.codex_entries += tiers.len();
    }
    Ok(())
}

/// An entity's tiers as the model answers, checked; asked again with the problems said, at
/// most [`CODEX_RETRIES`] times. Returns the last tiers, their problems, and the problems
/// each retry was asked to mend.
fn asked(
    ask: &mut Ask,
    vars: impl Fn(Vec<String>) -> Value,
    allowed: &BTreeSet<String>,
    gated: &[Gated],
) -> Result<(Vec<Tier>, Vec<CodexProblem>, Vec<String>), StageError> {
    let mut problems: Vec<CodexProblem> = Vec::new();
    let mut tiers: Vec<Tier> = Vec::new();
    let mut retried: Vec<String> = Vec::new();
    for attempt in 0..=CODEX_RETRIES {
        if attempt > 0 {
            retried.extend(problems.iter().map(ToString::to_string));
        }
        let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let answer: CodexAnswer = ask::answer(ask, vars(said))?;
        tiers = answer.tiers;
        problems = diegetic::check_codex(&mut tiers, allowed, gated);
        if problems.is_empty() {
            break;
        }
    }
    Ok((tiers, problems, retried))
}
