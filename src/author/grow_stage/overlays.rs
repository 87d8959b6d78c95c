//! GROW's entity overlays: what each kept consequence changes in the entities it touches.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::read::Vision;
use crate::author::answers::{OverlayIdea, OverlaysAnswer};
use crate::author::ask::{self, Ask, StageError};
use crate::author::fields::Overlay;
use crate::author::graph::{Graph, Mutation, Node};
use crate::author::grow::{Grown, Seeded};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// The most overlays one consequence gets.
const OVERLAYS_PER_CONSEQUENCE: usize = 2;
/// The most entities offered for one consequence.
const ENTITIES_PER_CONSEQUENCE: usize = 6;

/// A consequence offered to the model: its codeword, the entities it may touch, and the
/// prompt's item.
struct Offer {
    codeword: String,
    touched: Vec<String>,
    item: Value,
}

/// Seed 000: GROW "creates entity overlays to implement consequence
/// effects". For each kept codeword that tracks a consequence, the entities
/// it can touch (those its dilemma involves and those on its path's beats);
/// one bounded model call says what changes; each overlay is gated on the
/// codeword and checked (a listed entity, at most
/// [`OVERLAYS_PER_CONSEQUENCE`] per consequence). A failed call adds none.
pub(super) fn overlays(
    graph: &mut Graph,
    seed: &Seeded,
    grown: &Grown,
    ask: &mut Ask,
    notes: &mut Vec<String>,
) -> Result<(), StageError> {
    let entities: BTreeMap<String, Node> = graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .filter(|e| e.str("disposition") != Some("cut"))
        .map(|e| (e.id.clone(), e))
        .collect();
    let offers = offers(graph, seed, grown, &entities)?;
    if offers.is_empty() {
        return Ok(());
    }
    let vars = json!({
        "genre": Vision::read(graph)?.genre,
        "consequences": offers.iter().map(|o| o.item.clone()).collect::<Vec<_>>(),
    });
    let answer = match ask::answer::<OverlaysAnswer>(ask, vars) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!(
                "the model wrote no overlays ({e}); entities look the same whatever the player chose"
            ));
            return Ok(());
        }
    };
    let (added, refused) = accepted(&answer.overlays, &offers);
    if refused > 0 {
        notes.push(format!(
            "{refused} overlays the model wrote named no listed consequence or entity, had no details, or went past {OVERLAYS_PER_CONSEQUENCE} for one consequence; left out"
        ));
    }
    let mut changes = Vec::new();
    for (entity, new) in added {
        // The entity's overlays as they are (an author's edit kept as written), then the new.
        let mut list: Vec<Value> = entities[&entity]
            .data
            .get("overlays")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.extend(new.iter().map(|o| json!(o)));
        changes.push(Mutation::update(entity, json!({"overlays": list})));
    }
    Ok(graph.apply(
        Stage::Grow,
        "overlays",
        "what each kept consequence changes in the entities it touches, gated by its codeword",
        &changes,
    )?)
}

/// For each kept codeword that tracks a consequence, the entities it can touch (those its
/// dilemma involves, then those on its path's beats; kept ones, at most
/// [`ENTITIES_PER_CONSEQUENCE`]) and the prompt's item, numbered from 1.
fn offers(
    graph: &Graph,
    seed: &Seeded,
    grown: &Grown,
    entities: &BTreeMap<String, Node>,
) -> Result<Vec<Offer>, StageError> {
    let involves = graph.edges(EdgeType::DilemmaInvolves)?;
    let mut offers: Vec<Offer> = Vec::new();
    for c in &grown.codewords {
        let Some(tracks) = &c.tracks else { continue };
        let Some(consequence) = graph.node(tracks)? else {
            continue;
        };
        let Some(path) = graph.node(&c.path)? else {
            continue;
        };
        let dilemma = path.str("dilemma_id").unwrap_or_default().to_owned();
        let mut touched: Vec<String> = involves
            .iter()
            .filter(|e| e.from == dilemma)
            .map(|e| e.to.clone())
            .collect();
        for beat in seed.beats.iter().filter(|b| b.paths.contains(&c.path)) {
            touched.extend(beat.entities.iter().cloned());
        }
        let mut listed = BTreeSet::new();
        touched.retain(|e| entities.contains_key(e) && listed.insert(e.clone()));
        touched.truncate(ENTITIES_PER_CONSEQUENCE);
        if touched.is_empty() {
            continue;
        }
        let answer = match graph.targets(EdgeType::Explores, &c.path)?.first() {
            Some(a) => graph.node(a)?,
            None => None,
        };
        let item = json!({
            "n": offers.len() + 1,
            "answer": answer.as_ref().and_then(|a| a.str("description")).unwrap_or(path.str("description").unwrap_or_default()),
            "consequence": consequence.str("description").unwrap_or_default(),
            "ripples": consequence.strings("ripples"),
            "entities": touched.iter().map(|e| json!({
                "id": e,
                "name": entities[e].str("name").unwrap_or(e),
                "base": entities[e].data.get("base").filter(|b| b.is_object()),
            })).collect::<Vec<_>>(),
        });
        offers.push(Offer {
            codeword: c.id.clone(),
            touched,
            item,
        });
    }
    Ok(offers)
}

/// The overlays that name an offered consequence and one of its entities, with details,
/// at most [`OVERLAYS_PER_CONSEQUENCE`] per consequence, gathered per entity (one overlay
/// per codeword); and how many were refused.
fn accepted(written: &[OverlayIdea], offers: &[Offer]) -> (BTreeMap<String, Vec<Overlay>>, usize) {
    let mut added: BTreeMap<String, Vec<Overlay>> = BTreeMap::new();
    let mut per_item: BTreeMap<usize, usize> = BTreeMap::new();
    let mut refused = 0;
    for o in written {
        let Some(offer) = offers.get(o.n.wrapping_sub(1)) else {
            refused += 1;
            continue;
        };
        let entity = offer
            .touched
            .iter()
            .find(|e| **e == o.entity || e.trim_start_matches("entity::") == o.entity)
            .cloned();
        let details: Map<String, Value> = o
            .details
            .iter()
            .filter_map(|(k, v)| {
                let v = v.trim();
                (!k.trim().is_empty() && !v.is_empty()).then(|| (k.trim().to_owned(), json!(v)))
            })
            .collect();
        let count = per_item.entry(o.n).or_default();
        let (Some(entity), false, true) = (
            entity,
            details.is_empty(),
            *count < OVERLAYS_PER_CONSEQUENCE,
        ) else {
            refused += 1;
            continue;
        };
        *count += 1;
        let list = added.entry(entity).or_default();
        match list
            .iter_mut()
            .find(|v| v.when == [offer.codeword.as_str()])
        {
            Some(existing) => existing.details.get_or_insert_default().extend(details),
            None => list.push(Overlay {
                when: vec![offer.codeword.clone()],
                details: Some(details),
            }),
        }
    }
    (added, refused)
}
