//! The story package format (`story.json`, version 1), as SHIP writes it and the player reads it.
//!
//! It holds the persistent part of the story graph.
//!
//! Ids are the stable keys of the format: saves, codex progress and author
//! tools refer to passages, codewords and entities by id, never by position.
//! The JSON Schema in `schemas/story.schema.json` is generated from these types
//! (`tests/schema.rs` keeps the two in step).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `format` tag of a Loreloom story file.
pub const STORY_FORMAT: &str = "loreloom-story";
/// The newest story format version this build reads and writes.
pub const STORY_FORMAT_VERSION: u32 = 1;

/// Key → value details of an entity or relationship, in the author's order.
pub type Details = IndexMap<String, String>;

/// A whole story package's graph.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StoryFile {
    /// Always `"loreloom-story"`.
    pub format: String,
    /// Format version; this build reads version 1.
    pub version: u32,
    /// Title, author and presentation defaults.
    pub meta: StoryMeta,
    /// The first passage. When absent, the one passage with no incoming choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Player-facing units of prose; choices are their outgoing edges.
    pub passages: Vec<Passage>,
    /// State markers granted by choices and tested by gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codewords: Vec<Codeword>,
    /// Characters, locations, objects, factions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<Entity>,
    /// Connections between two entities, with conditional state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relationships: Vec<Relationship>,
    /// Encyclopedia tiers per entity, unlocked by codewords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codex: Vec<CodexEntry>,
    /// Art shown with passages, each with an in-world caption.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub illustrations: Vec<Illustration>,
    /// The story's visual identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub art_direction: Option<ArtDirection>,
    /// Named groups of passages sharing presentation cues (music, ambience).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenes: Vec<Scene>,
}

/// Who made the story and how it is presented by default.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct StoryMeta {
    /// Stable id of the story (saves refer to it).
    pub id: String,
    /// Title shown on the title screen.
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// A line or two for the story list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Cover art, relative to the package folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover: Option<String>,
    /// Default music and ambience when no passage or scene sets any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cue: Option<Cue>,
}

/// Music and ambience to play, relative to the package folder.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Cue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub music: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ambience: Option<String>,
}

/// The unit of prose the player reads.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Passage {
    pub id: String,
    /// Display title; for an ending, the ending's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Markdown prose. Required for a shippable passage.
    pub prose: String,
    /// Outgoing choices. A passage without any is an ending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
    /// Appears edges: entities present in this passage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appears: Vec<Appearance>,
    /// Involves edges: relationships active in this passage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub involves: Vec<String>,
    /// The scene this passage belongs to (for shared cues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// Cues for this passage; override the scene's and the story's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cue: Option<Cue>,
    /// Traceability to the beat(s) the passage came from (ignored by the player).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_beat: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_beats: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_beat: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// For merged passages: how the prose moves between source beats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transition_points: Vec<TransitionPoint>,
}

/// Where a merged passage moves from one source beat to the next (guidance for FILL).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TransitionPoint {
    /// Position in `from_beats`.
    pub index: usize,
    #[serde(default)]
    pub style: TransitionStyle,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridge_entities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How a merged passage crosses a beat boundary.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TransitionStyle {
    #[default]
    Smooth,
    Cut,
}

/// A Choice edge: a diegetic label leading to another passage.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// What the player reads; always in-world ("Wait for nightfall"), never "Continue".
    pub label: String,
    /// Target passage id.
    pub to: String,
    /// Codewords the player must all hold for this choice to be offered.
    #[serde(
        default,
        alias = "requires_codewords",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub requires: Vec<String>,
    /// Codewords granted by taking this choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<String>,
}

/// An Appears edge: an entity present in a passage, in some role.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Appearance {
    pub entity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// Whether a codeword is granted by choices or derived from other state.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CodewordKind {
    #[default]
    Granted,
    /// Reserved by the specification; not evaluated by this version.
    Derived,
}

/// A state marker: the universal mechanism for plot progression and player choice.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Codeword {
    pub id: String,
    /// The word the player may see (e.g. `CONFESSED`); defaults to the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: CodewordKind,
    /// The narrative consequence this codeword represents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracks: Option<String>,
    /// For derived codewords: the condition (not evaluated yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// Conditional details applied when every codeword in `when` is held.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    pub when: Vec<String>,
    pub details: Details,
}

/// A character, location, object or other story element.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Entity {
    pub id: String,
    /// `character`, `location`, `object`, `faction`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// Display name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concept: Option<String>,
    #[serde(default)]
    pub base: Details,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<Overlay>,
    /// Author portrait, relative to the package folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub portrait: Option<String>,
}

/// A connection between two entities with conditional state.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Relationship {
    pub id: String,
    /// The entity the relationship is seen from (`from_entity` in seed 000).
    #[serde(alias = "from_entity")]
    pub from: String,
    /// The entity it points to.
    #[serde(alias = "to_entity")]
    pub to: String,
    /// Conventionally holds at least `nature`.
    #[serde(default)]
    pub base: Details,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<Overlay>,
}

/// One tier of an entity's codex; tiers are cumulative and shown by rank.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CodexEntry {
    pub id: String,
    /// HasEntry edge: the entity this tier describes.
    pub entity: String,
    /// Display order; 1 is base knowledge, higher is deeper.
    pub rank: u32,
    /// Codewords that must all be held to unlock this tier.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visible_when: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// In-world, spoiler-safe text (markdown).
    pub content: String,
}

/// What an illustration shows.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum IllustrationCategory {
    #[default]
    Scene,
    Portrait,
    Vista,
    ItemDetail,
}

/// An art asset with a diegetic caption.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Illustration {
    pub id: String,
    /// Image path relative to the package folder.
    pub asset: String,
    /// In the story's voice ("The bridge where loyalties shatter").
    pub caption: String,
    #[serde(default)]
    pub category: IllustrationCategory,
    /// Depicts edges: passages this illustration is shown with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depicts: Vec<String>,
}

/// The story's visual identity, for the presentation and for art generation.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ArtDirection {
    pub id: String,
    pub style: String,
    pub medium: String,
    #[serde(default)]
    pub palette: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative_defaults: Option<String>,
    /// e.g. `16:9`.
    pub aspect_ratio: String,
    /// How illustrations are laid out on the play screen.
    #[serde(default)]
    pub framing: Framing,
}

/// Whether illustrations fill the screen or sit in a frame.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    #[default]
    FullBleed,
    Framed,
}

/// A named group of passages sharing presentation cues.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cue: Option<Cue>,
}
