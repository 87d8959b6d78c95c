//! DRESS sub-stage 1: the art direction and each shown entity's visual profile (gate 1).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::read::{appearances, data_of, details_text, kept_entities, short};
use super::report::Report;
use crate::author::answers::{ArtAnswer, VisualIdea, VisualProfile};
use crate::author::ask::{self, Ask, StageError, with_notes};
use crate::author::dress::{self, ART_DIRECTION, Direction};
use crate::author::graph::{Graph, Mutation, Node};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// Sub-stage 1: the art direction and a visual profile for every entity a
/// passage shows, from the discussion's brief. A profile the model left
/// out is made from the entity's own words (and said); one for an entity
/// the story does not show is dropped.
pub fn art(graph: &mut Graph, brief: &str, ask: &mut Ask) -> Result<Report, StageError> {
    let vision = data_of(graph.node("vision")?);
    let voice = data_of(graph.node("voice")?);
    let shown: BTreeSet<String> = appearances(graph)?.into_values().flatten().collect();
    let entities: Vec<Node> = kept_entities(graph)?
        .into_iter()
        .filter(|e| shown.contains(&e.id))
        .collect();
    let listed: Vec<Value> = entities
        .iter()
        .map(|e| {
            json!({"id": e.id, "name": e.str("name").unwrap_or(&e.id), "type": e.str("type").unwrap_or("character"),
                   "concept": e.str("concept"), "details": details_text(e)})
        })
        .collect();
    let answer: ArtAnswer = ask::answer(
        ask,
        json!({"brief": brief, "vision": vision, "voice": voice, "entities": listed}),
    )?;
    let mut notes = Vec::new();
    let direction = direction(&answer, &mut notes);
    let mut changes = vec![Mutation::create(
        ART_DIRECTION,
        NodeType::ArtDirection,
        json!(direction),
    )];
    let mut given = profiles(answer.visuals, &entities, &mut notes);
    let mut visuals = 0;
    for e in &entities {
        let profile = given
            .remove(&e.id)
            .unwrap_or_else(|| made_from_concept(e, &mut notes));
        let id = format!("visual::{}", short(&e.id));
        changes.push(Mutation::create(
            id.clone(),
            NodeType::EntityVisual,
            json!(with_fragment(profile, e)),
        ));
        changes.push(Mutation::link(EdgeType::DescribesVisual, id, e.id.clone()));
        visuals += 1;
    }
    let why = with_notes(
        "the art direction and each shown entity's visual profile",
        &notes,
    );
    graph.apply(Stage::Dress, "art", &why, &changes)?;
    Ok(Report {
        visuals,
        notes,
        ..Report::default()
    })
}

/// The art direction from the answer: an aspect ratio that is not `W:H` becomes 16:9, and
/// palette entries that name no colour are dropped (each said).
fn direction(answer: &ArtAnswer, notes: &mut Vec<String>) -> Direction {
    let mut aspect = answer.aspect_ratio.trim().to_owned();
    if dress::aspect(&aspect).is_none() {
        notes.push(format!(
            "the aspect ratio `{aspect}` is not W:H; 16:9 is used"
        ));
        aspect = "16:9".into();
    }
    let (palette, dropped) = dress::usable_palette(&answer.palette);
    if !dropped.is_empty() {
        notes.push(format!(
            "palette entries that name no colour were dropped: {}{}",
            dropped
                .iter()
                .map(|d| format!("\"{d}\""))
                .collect::<Vec<_>>()
                .join(", "),
            if palette.is_empty() {
                " (none left: pictures take their colours from the mood; set a palette at the gate)"
            } else {
                ""
            }
        ));
    }
    Direction {
        style: answer.style.clone(),
        medium: answer.medium.clone(),
        palette,
        composition_notes: answer.composition_notes.clone(),
        negative_defaults: answer.negative_defaults.clone(),
        aspect_ratio: aspect,
    }
}

/// The model's profiles by entity id: the first for an entity (by id or short id); a
/// second, or one for an entity no passage shows, dropped and said.
fn profiles(
    visuals: Vec<VisualIdea>,
    entities: &[Node],
    notes: &mut Vec<String>,
) -> BTreeMap<String, VisualProfile> {
    let mut given = BTreeMap::new();
    for v in visuals {
        let id = v.entity.clone();
        let known = entities.iter().find(|e| e.id == id || short(&e.id) == id);
        match known {
            Some(e) if !given.contains_key(&e.id) => {
                given.insert(e.id.clone(), v.into_profile());
            }
            Some(_) => notes.push(format!("a second profile for `{id}` (the first kept)")),
            None => notes.push(format!(
                "a profile for `{id}`, which no passage shows (dropped)"
            )),
        }
    }
    given
}

/// A profile the model left out, made from the entity's own words (and said).
fn made_from_concept(e: &Node, notes: &mut Vec<String>) -> VisualProfile {
    notes.push(format!(
        "no profile for `{}`; made from its concept (edit it at the gate)",
        e.id
    ));
    VisualProfile {
        description: e
            .str("concept")
            .unwrap_or(e.str("name").unwrap_or(&e.id))
            .to_owned(),
        distinguishing_features: Vec::new(),
        color_associations: Vec::new(),
        reference_prompt_fragment: String::new(),
    }
}

/// Seed: a profile's reference fragment is never empty; the entity's own words stand in.
fn with_fragment(mut profile: VisualProfile, e: &Node) -> VisualProfile {
    if profile.reference_prompt_fragment.trim().is_empty() {
        let name = e.str("name").unwrap_or(&e.id);
        let concept = e.str("concept").unwrap_or_default();
        profile.reference_prompt_fragment = if concept.is_empty() {
            name.to_owned()
        } else {
            format!("{name}, {concept}")
        };
    }
    profile
}
