//! GROW's choices written with labels the model writes; each checked, else the target's words.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::read::Vision;
use crate::author::answers::LabelsAnswer;
use crate::author::ask::{self, Ask, StageError};
use crate::author::graph::{Graph, Mutation};
use crate::author::grow::{Beat, Grown, Passage, Seeded, label_from};
use crate::author::ontology::{EdgeType, Stage};

/// Whether a label reads as something the player does in the story, not
/// as talk about the story (seed 000: never "Continue").
pub fn diegetic(label: &str) -> bool {
    let lower = label.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let meta = [
        "continue", "passage", "choice", "option", "reader", "chapter",
    ];
    !words.is_empty()
        && label.chars().count() <= 70
        && !words.iter().any(|w| meta.contains(w))
        && !matches!(words.as_slice(), ["next" | "ok"] | ["go", "on"])
}

/// Phase: choices, with labels the model writes (one bounded call), each checked; a
/// missing, repeated or meta label is the target's first sentence. The same batch keeps
/// the start and GROW's notes (`notes` then has every note of the run).
pub(super) fn choices(
    graph: &mut Graph,
    seed: &Seeded,
    grown: &Grown,
    ask: &mut Ask,
    notes: &mut Vec<String>,
) -> Result<(), StageError> {
    let beats: BTreeMap<&str, &Beat> = seed.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let passages: BTreeMap<&str, &Passage> =
        grown.passages.iter().map(|p| (p.id.as_str(), p)).collect();
    let summary_of = |id: &str| beats[passages[id].beat.as_str()].summary.clone();
    let vision = Vision::read(graph)?;
    let asked: Vec<Value> = grown
        .choices
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"n": i + 1, "from": summary_of(&c.from), "to": summary_of(&c.to)}))
        .collect();
    let vars = json!({
        "genre": vision.genre,
        "tone": vision.tone,
        "choices": asked,
    });
    let written: BTreeMap<usize, String> = match ask::answer::<LabelsAnswer>(ask, vars) {
        Ok(answer) => answer
            .labels
            .into_iter()
            .map(|l| (l.n, l.label.trim().to_owned()))
            .collect(),
        Err(e) => {
            notes.push(format!(
                "the model wrote no labels ({e}); each is its target's first sentence"
            ));
            BTreeMap::new()
        }
    };
    let mut changes = Vec::new();
    let mut used: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut fallbacks = 0;
    for (i, c) in grown.choices.iter().enumerate() {
        let taken = used.entry(c.from.as_str()).or_default();
        let label = match written.get(&(i + 1)) {
            Some(l) if diegetic(l) && !taken.contains(l) => l.clone(),
            _ => {
                fallbacks += 1;
                label_from(&summary_of(&c.to))
            }
        };
        taken.push(label.clone());
        changes.push(Mutation::link_with(
            EdgeType::Choice,
            c.from.clone(),
            c.to.clone(),
            json!({"label": label, "requires": c.requires, "grants": c.grants}),
        ));
    }
    if fallbacks > 0 && !written.is_empty() {
        notes.push(format!(
            "{fallbacks} of {} labels were missing, repeated or not in the story's voice; those are their target's first sentence",
            grown.choices.len()
        ));
    }
    changes.push(Mutation::Meta {
        key: "grow.start".into(),
        value: json!(grown.start),
    });
    changes.push(Mutation::Meta {
        key: "grow.notes".into(),
        value: json!(notes),
    });
    Ok(graph.apply(
        Stage::Grow,
        "choices",
        "choices from comparing the arcs' sequences, labelled by the model where its labels hold",
        &changes,
    )?)
}
