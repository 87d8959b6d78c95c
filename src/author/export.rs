//! The project's graph as the story package the player reads (`story.json`).
//!
//! Passages with their prose, or with their summary (marked as such) until FILL writes it;
//! choices, codewords, kept entities, relationships and appearances, DRESS's codex and
//! pictures. What `loreloom validate`, `preview` and `play` open for a project folder.

use std::collections::BTreeMap;

use serde_json::Value;

use super::graph::{Graph, GraphError, Node};
use super::ontology::{EdgeType, NodeType};
use crate::story::model::{
    Appearance, ArtDirection, Choice, Codeword, CodewordKind, CodexEntry, Entity, Illustration,
    IllustrationCategory, Passage, Relationship, STORY_FORMAT, STORY_FORMAT_VERSION, StoryFile,
    StoryMeta,
};

/// Marks a passage shown by its summary because its prose is not written yet.
pub const SUMMARY_MARK: &str = "*(summary; FILL writes the prose)*";

/// A node's field read as `T` (its default when absent or not a `T`).
fn field<T: serde::de::DeserializeOwned + Default>(node: &Node, key: &str) -> T {
    node.field(key).unwrap_or_default()
}

/// The graph as a story file.
pub fn story_file(graph: &Graph, id: &str) -> Result<StoryFile, GraphError> {
    let vision = graph.node("vision")?;
    let spark = graph
        .meta("spark")?
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let voice = graph.node("voice")?;
    let title = voice
        .as_ref()
        .and_then(|v| v.str("story_title").map(str::to_owned))
        .or_else(|| {
            vision
                .as_ref()
                .and_then(|v| v.str("title").map(str::to_owned))
        })
        .unwrap_or_else(|| spark.chars().take(60).collect());
    let illustrations = illustrations(graph)?;
    // The cover: the opening's picture, else the first one drawn.
    let start = graph
        .meta("grow.start")?
        .and_then(|v| v.as_str().map(str::to_owned));
    let cover = illustrations
        .iter()
        .find(|i| start.as_ref().is_some_and(|s| i.depicts.contains(s)))
        .or_else(|| illustrations.first())
        .map(|i| i.asset.clone());
    let passages = passages(graph)?;
    Ok(StoryFile {
        format: STORY_FORMAT.to_owned(),
        version: STORY_FORMAT_VERSION,
        meta: StoryMeta {
            id: id.to_owned(),
            title,
            description: Some(spark),
            cover,
            ..StoryMeta::default()
        },
        start,
        passages,
        codewords: codewords(graph)?,
        entities: entities(graph)?,
        relationships: relationships(graph)?,
        codex: codex(graph)?,
        illustrations,
        art_direction: art_direction(graph)?,
        scenes: Vec::new(),
    })
}

/// Every passage, with its choices and who appears in it (its summary, marked as such,
/// until FILL writes its prose).
fn passages(graph: &Graph) -> Result<Vec<Passage>, GraphError> {
    let mut choices: BTreeMap<String, Vec<Choice>> = BTreeMap::new();
    for e in graph.edges(EdgeType::Choice)? {
        let list = |k: &str| super::graph::strings(e.data.get(k));
        choices.entry(e.from.clone()).or_default().push(Choice {
            label: e
                .data
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or("Go on")
                .to_owned(),
            to: e.to.clone(),
            requires: list("requires"),
            grants: list("grants"),
        });
    }
    let mut appears: BTreeMap<String, Vec<Appearance>> = BTreeMap::new();
    for e in graph.edges(EdgeType::Appears)? {
        appears.entry(e.to.clone()).or_default().push(Appearance {
            entity: e.from.clone(),
            role: e
                .data
                .get("role")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
    }
    Ok(graph
        .nodes(NodeType::Passage)?
        .into_iter()
        .map(|p| {
            let prose = match p.str("prose") {
                Some(prose) if !prose.trim().is_empty() => prose.to_owned(),
                _ => format!("{SUMMARY_MARK} {}", p.str("summary").unwrap_or_default()),
            };
            Passage {
                choices: choices.remove(&p.id).unwrap_or_default(),
                appears: appears.remove(&p.id).unwrap_or_default(),
                from_beat: p.str("from_beat").map(str::to_owned),
                prose,
                id: p.id,
                ..Passage::default()
            }
        })
        .collect())
}

/// GROW's codewords.
fn codewords(graph: &Graph) -> Result<Vec<Codeword>, GraphError> {
    Ok(graph
        .nodes(NodeType::Codeword)?
        .into_iter()
        .map(|c| Codeword {
            kind: CodewordKind::Granted,
            tracks: c.str("tracks").map(str::to_owned),
            id: c.id,
            ..Codeword::default()
        })
        .collect())
}

/// The entities SEED kept.
fn entities(graph: &Graph) -> Result<Vec<Entity>, GraphError> {
    Ok(graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .filter(|e| e.str("disposition") != Some("cut"))
        .map(|e| Entity {
            kind: e.str("type").unwrap_or("character").to_owned(),
            name: e.str("name").unwrap_or(&e.id).to_owned(),
            concept: e.str("concept").map(str::to_owned),
            base: field(&e, "base"),
            overlays: field(&e, "overlays"),
            id: e.id,
            ..Entity::default()
        })
        .collect())
}

/// The relationships between kept entities.
fn relationships(graph: &Graph) -> Result<Vec<Relationship>, GraphError> {
    Ok(graph
        .nodes(NodeType::Relationship)?
        .into_iter()
        .map(|r| Relationship {
            from: r.str("from_entity").unwrap_or_default().to_owned(),
            to: r.str("to_entity").unwrap_or_default().to_owned(),
            base: field(&r, "base"),
            overlays: field(&r, "overlays"),
            id: r.id,
        })
        .collect())
}

/// DRESS's art direction, if it has run.
fn art_direction(graph: &Graph) -> Result<Option<ArtDirection>, GraphError> {
    Ok(graph
        .node(super::dress::ART_DIRECTION)?
        .map(|a| ArtDirection {
            id: a.id.clone(),
            style: a.str("style").unwrap_or_default().to_owned(),
            medium: a.str("medium").unwrap_or_default().to_owned(),
            palette: a.strings("palette"),
            composition_notes: a.str("composition_notes").map(str::to_owned),
            negative_defaults: a.str("negative_defaults").map(str::to_owned),
            aspect_ratio: a.str("aspect_ratio").unwrap_or("16:9").to_owned(),
            ..ArtDirection::default()
        }))
}

/// DRESS's illustrations with the passages they depict.
fn illustrations(graph: &Graph) -> Result<Vec<Illustration>, GraphError> {
    let mut depicts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in graph.edges(EdgeType::Depicts)? {
        depicts.entry(e.from).or_default().push(e.to);
    }
    Ok(graph
        .nodes(NodeType::Illustration)?
        .into_iter()
        .map(|i| Illustration {
            asset: i.str("asset").unwrap_or_default().to_owned(),
            caption: i.str("caption").unwrap_or_default().to_owned(),
            category: serde_json::from_value(i.data.get("category").cloned().unwrap_or_default())
                .unwrap_or(IllustrationCategory::Scene),
            depicts: depicts.remove(&i.id).unwrap_or_default(),
            id: i.id,
        })
        .collect())
}

/// DRESS's codex entries with the entity each describes.
fn codex(graph: &Graph) -> Result<Vec<CodexEntry>, GraphError> {
    let mut entity_of: BTreeMap<String, String> = BTreeMap::new();
    for e in graph.edges(EdgeType::HasEntry)? {
        entity_of.insert(e.from, e.to);
    }
    let mut out: Vec<CodexEntry> = graph
        .nodes(NodeType::CodexEntry)?
        .into_iter()
        .filter_map(|c| {
            Some(CodexEntry {
                entity: entity_of.remove(&c.id)?,
                rank: field(&c, "rank"),
                visible_when: c.strings("visible_when"),
                title: c.str("title").map(str::to_owned),
                content: c.str("content").unwrap_or_default().to_owned(),
                id: c.id,
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.entity, a.rank).cmp(&(&b.entity, b.rank)));
    Ok(out)
}
