//! Import of QuestFoundry's `questfoundry-runtime` version 1 JSON into a Loreloom story.
//!
//! Mapping: flags → codewords, `art` → illustrations (one per passage, depicting
//! it), `codex` → rank-1 codex entries visible from the start, `cover` → the
//! title art, `ending.title` → the ending passage's title. Unknown fields are
//! ignored, as the format's readers are expected to do.

use indexmap::IndexMap;
use serde::Deserialize;

use super::diagnostic::{Diagnostic, Rule, Subject};
use super::model::{
    Choice, Codeword, CodexEntry, Entity, Illustration, IllustrationCategory, Overlay, Passage,
    STORY_FORMAT, STORY_FORMAT_VERSION, StoryFile, StoryMeta,
};

/// The `format` tag QuestFoundry writes.
pub const QF_FORMAT: &str = "questfoundry-runtime";
/// The only version this importer reads.
pub const QF_VERSION: u32 = 1;

#[derive(Deserialize, Debug)]
pub(crate) struct QfStory {
    meta: QfMeta,
    start: String,
    passages: IndexMap<String, QfPassage>,
    #[serde(default)]
    flags: IndexMap<String, QfFlag>,
    #[serde(default)]
    entities: IndexMap<String, QfEntity>,
    #[serde(default)]
    codex: Vec<QfCodex>,
    #[serde(default)]
    art: Vec<QfArt>,
    #[serde(default)]
    cover: Option<QfCover>,
}

#[derive(Deserialize, Debug)]
struct QfMeta {
    title: String,
}

#[derive(Deserialize, Debug)]
struct QfPassage {
    prose: String,
    #[serde(default)]
    choices: Vec<QfChoice>,
    #[serde(default)]
    ending: Option<QfEnding>,
}

#[derive(Deserialize, Debug)]
struct QfChoice {
    label: String,
    to: String,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    grants: Vec<String>,
}

#[derive(Deserialize, Debug)]
struct QfEnding {
    #[serde(default)]
    title: Option<String>,
}

#[derive(Deserialize, Debug)]
struct QfFlag {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    codeword: Option<String>,
}

#[derive(Deserialize, Debug)]
struct QfEntity {
    name: String,
    #[serde(default)]
    concept: Option<String>,
    #[serde(default)]
    base: IndexMap<String, String>,
    #[serde(default)]
    overlays: Vec<QfOverlay>,
}

#[derive(Deserialize, Debug)]
struct QfOverlay {
    when: Vec<String>,
    details: IndexMap<String, String>,
}

#[derive(Deserialize, Debug)]
struct QfCodex {
    entity: String,
    title: String,
    body: String,
}

#[derive(Deserialize, Debug)]
struct QfArt {
    passage: String,
    image: String,
    #[serde(default)]
    caption: String,
}

#[derive(Deserialize, Debug)]
struct QfCover {
    image: String,
}

/// The entity kind QuestFoundry encodes as an id prefix (`character:emery`).
fn kind_of(id: &str) -> String {
    id.split_once(':')
        .map_or("entity", |(kind, _)| kind)
        .to_owned()
}

/// Convert a parsed runtime export. `story_id` names the story for saves
/// (the file's stem). Returns import notes as warnings.
pub(crate) fn convert(qf: QfStory, story_id: &str) -> (StoryFile, Vec<Diagnostic>) {
    let mut notes = Vec::new();
    let passages = qf
        .passages
        .into_iter()
        .map(|(id, p)| passage(id, p, &mut notes))
        .collect();
    let codewords = qf
        .flags
        .into_iter()
        .map(|(id, flag)| Codeword {
            id,
            name: flag.codeword,
            description: flag.description,
            ..Codeword::default()
        })
        .collect();
    let entities = qf
        .entities
        .into_iter()
        .map(|(id, e)| entity(id, e))
        .collect();
    let codex = codex_entries(qf.codex);
    let illustrations = qf
        .art
        .into_iter()
        .enumerate()
        .map(|(i, art)| Illustration {
            id: format!("art:{}:{}", art.passage, i + 1),
            asset: art.image,
            caption: art.caption,
            category: IllustrationCategory::Scene,
            depicts: vec![art.passage],
        })
        .collect();

    let file = StoryFile {
        format: STORY_FORMAT.to_owned(),
        version: STORY_FORMAT_VERSION,
        meta: StoryMeta {
            id: story_id.to_owned(),
            title: qf.meta.title,
            cover: qf.cover.map(|c| c.image),
            ..StoryMeta::default()
        },
        start: Some(qf.start),
        passages,
        codewords,
        entities,
        relationships: Vec::new(),
        codex,
        illustrations,
        art_direction: None,
        scenes: Vec::new(),
    };
    (file, notes)
}

/// One passage; an ending's choices are dropped, and a dead end without the ending mark is
/// played as an ending, each with a note.
fn passage(id: String, p: QfPassage, notes: &mut Vec<Diagnostic>) -> Passage {
    let mut choices: Vec<Choice> = p
        .choices
        .into_iter()
        .map(|c| Choice {
            label: c.label,
            to: c.to,
            requires: c.requires,
            grants: c.grants,
        })
        .collect();
    if p.ending.is_some() && !choices.is_empty() {
        notes.push(Diagnostic::new(
            Rule::Import,
            Subject::Passage(id.clone()),
            format!(
                "is marked as an ending but has {} choices; they were dropped, as the runtime ends the playthrough here",
                choices.len()
            ),
        ));
        choices.clear();
    }
    if p.ending.is_none() && choices.is_empty() {
        notes.push(Diagnostic::new(
            Rule::Import,
            Subject::Passage(id.clone()),
            "has no choices and is not marked as an ending; Loreloom plays it as an ending",
        ));
    }
    Passage {
        title: p.ending.and_then(|e| e.title),
        prose: p.prose,
        choices,
        id,
        ..Passage::default()
    }
}

/// One entity, its kind read from the id's prefix.
fn entity(id: String, e: QfEntity) -> Entity {
    Entity {
        kind: kind_of(&id),
        id,
        name: e.name,
        concept: e.concept,
        base: e.base,
        overlays: e
            .overlays
            .into_iter()
            .map(|o| Overlay {
                when: o.when,
                details: o.details,
            })
            .collect(),
        portrait: None,
    }
}

/// The codex: rank-1 entries visible from the start, numbered per entity (`codex:ENTITY:n`).
fn codex_entries(entries: Vec<QfCodex>) -> Vec<CodexEntry> {
    let mut per_entity: IndexMap<String, u32> = IndexMap::new();
    entries
        .into_iter()
        .map(|c| {
            let n = per_entity.entry(c.entity.clone()).or_default();
            *n += 1;
            CodexEntry {
                id: format!("codex:{}:{n}", c.entity),
                entity: c.entity,
                rank: 1,
                visible_when: Vec::new(),
                title: Some(c.title),
                content: c.body,
            }
        })
        .collect()
}
