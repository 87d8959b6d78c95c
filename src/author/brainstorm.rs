//! BRAINSTORM's answer as graph mutations: entities, dilemmas, their two answers.
//!
//! Ids are the engine's (`dilemma::…` added); an entity given twice keeps the first, a
//! dilemma given under a taken id is numbered (`…_2`), an answer id already taken is renamed
//! after its dilemma, and an `involves` naming no entity is dropped; each is said in the
//! notes the batch's rationale carries.

use std::collections::BTreeSet;

use serde_json::json;

use super::answers::{BrainstormAnswer, DilemmaIdea};
use super::ask::StageError;
use super::graph::Mutation;
use super::ontology::{EdgeType, NodeType};

/// BRAINSTORM's answer as graph mutations, and notes on what was dropped.
pub fn brainstorm_mutations(
    answer: &BrainstormAnswer,
) -> Result<(Vec<Mutation>, Vec<String>), StageError> {
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let mut ids = BTreeSet::new();
    for e in &answer.entities {
        if !ids.insert(e.id.clone()) {
            notes.push(format!("entity `{}` given twice (the first kept)", e.id));
            continue;
        }
        let mut data = json!({
            "type": e.kind,
            "name": e.name,
            "concept": e.concept,
        });
        if !e.notes.is_empty() {
            data["notes"] = json!(e.notes);
        }
        changes.push(Mutation::create(e.id.clone(), NodeType::Entity, data));
    }
    for d in &answer.dilemmas {
        // A second dilemma under a taken id is still a dilemma the scope counts: renamed.
        let given = format!("dilemma::{}", d.id.trim_start_matches("dilemma::"));
        let mut id = given.clone();
        let mut n = 1;
        while !ids.insert(id.clone()) {
            n += 1;
            id = format!("{given}_{n}");
        }
        if id != given {
            notes.push(format!(
                "dilemma `{given}` given twice: the second is `{id}`"
            ));
        }
        let count = d.answers.iter().filter(|a| a.canonical).count();
        if count != 1 {
            return Err(StageError::Canonical { dilemma: id, count });
        }
        changes.push(Mutation::create(
            id.clone(),
            NodeType::Dilemma,
            json!({"question": d.question, "why_it_matters": d.why_it_matters}),
        ));
        answers(d, &id, &mut ids, &mut changes, &mut notes)?;
        for entity in &d.involves {
            if answer.entities.iter().any(|e| e.id == *entity) {
                changes.push(Mutation::link(
                    EdgeType::DilemmaInvolves,
                    id.clone(),
                    entity.clone(),
                ));
            } else {
                notes.push(format!(
                    "`{id}` involves `{entity}`, which is no entity (dropped)"
                ));
            }
        }
    }
    Ok((changes, notes))
}

/// A dilemma's answers: ids are unique across the graph, so an answer named
/// like an entity or another answer takes its dilemma's name first.
fn answers(
    d: &DilemmaIdea,
    id: &str,
    ids: &mut BTreeSet<String>,
    changes: &mut Vec<Mutation>,
    notes: &mut Vec<String>,
) -> Result<(), StageError> {
    for a in &d.answers {
        let given = a.id.clone();
        let mut answer_id = given.clone();
        if !ids.insert(answer_id.clone()) {
            answer_id = format!("{}_{given}", id.trim_start_matches("dilemma::"));
            if !ids.insert(answer_id.clone()) {
                return Err(StageError::AnswerIdTaken {
                    given,
                    dilemma: id.to_owned(),
                    renamed: answer_id,
                });
            }
            notes.push(format!(
                "answer `{given}` of `{id}` renamed `{answer_id}` (the id was taken)"
            ));
        }
        changes.push(Mutation::create(
            answer_id.clone(),
            NodeType::Answer,
            json!({"description": a.description, "canonical": a.canonical, "dilemma_id": id}),
        ));
        changes.push(Mutation::link(
            EdgeType::HasAnswer,
            id.to_owned(),
            answer_id,
        ));
    }
    Ok(())
}
