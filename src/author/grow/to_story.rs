//! The grown topology as a story file the player's validation reads, without a graph.

use std::collections::BTreeMap;

use super::choices::label_from;
use super::types::{Beat, Grown, Seeded};

/// The grown topology as a story file (summaries as prose, labels from
/// summaries): what the player's validation reads, without a graph.
pub fn to_story(grown: &Grown, seeded: &Seeded) -> crate::story::model::StoryFile {
    use crate::story::model as m;
    let beats: BTreeMap<&str, &Beat> = seeded.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let passages = grown
        .passages
        .iter()
        .map(|p| m::Passage {
            id: p.id.clone(),
            prose: p
                .all_beats()
                .iter()
                .map(|b| beats[b.as_str()].summary.as_str())
                .collect::<Vec<_>>()
                .join("\n\n"),
            choices: grown
                .choices
                .iter()
                .filter(|c| c.from == p.id)
                .map(|c| {
                    let to = grown
                        .passages
                        .iter()
                        .find(|q| q.id == c.to)
                        .map_or("", |q| q.beat.as_str());
                    m::Choice {
                        label: label_from(&beats[to].summary),
                        to: c.to.clone(),
                        requires: c.requires.clone(),
                        grants: c.grants.clone(),
                    }
                })
                .collect(),
            ..m::Passage::default()
        })
        .collect();
    m::StoryFile {
        format: m::STORY_FORMAT.to_owned(),
        version: m::STORY_FORMAT_VERSION,
        meta: m::StoryMeta {
            id: "grown".into(),
            title: "Grown".into(),
            ..m::StoryMeta::default()
        },
        start: Some(grown.start.clone()),
        passages,
        codewords: grown
            .codewords
            .iter()
            .map(|c| m::Codeword {
                id: c.id.clone(),
                tracks: c.tracks.clone(),
                ..m::Codeword::default()
            })
            .collect(),
        entities: Vec::new(),
        relationships: Vec::new(),
        codex: Vec::new(),
        illustrations: Vec::new(),
        art_direction: None,
        scenes: Vec::new(),
    }
}
