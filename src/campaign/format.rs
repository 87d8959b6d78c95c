//! The campaign file formats as Rust types: every structured file, serde's model of it.
//!
//! The formats are seed 002 §6.2's, seed 003's and seed 001's content packs;
//! `schemas/campaign/` is generated from these types (the counterpart of
//! `story/model.rs` for `story.json`).
//!
//! Every struct denies unknown fields, so a misspelt key is an error with a
//! line rather than silently ignored data. Loreloom's extensions to the seed
//! formats are marked "(Loreloom)".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rules::state::{Clock, Fact, Relation, Thread};

/// `manifest.json` (seed 002 §6.2.3): only `title` and `version` are required.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[schemars(length(min = 1))]
    pub title: String,
    /// Semantic version (`2.1.0`).
    #[schemars(regex(
        pattern = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
    ))]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub genre: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_rating: Option<ContentRating>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_hint: Option<RulesHint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hydration_guidance: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub estimated_playtime_hours: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// (Loreloom) The ruleset: a system ruleset id (`campaigns/rulesets/<id>`) or a
    /// folder inside the campaign (`./rules`). Default: `default-2d6`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruleset: Option<String>,
    /// (Loreloom) The scenario a new session starts with (`scenarios/<id>.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_scenario: Option<String>,
    /// (Loreloom) Content packs to load, by id, from `packs/<id>/` in the campaign.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<String>,
    /// (Loreloom) Cover image, relative to the campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover: Option<String>,
    /// (Loreloom) At most this many NPCs act in one turn (the one the player
    /// addressed first, then baked ones, then by chattiness); the others stay
    /// quiet that turn. Default: `DEFAULT_NPCS_PER_TURN` (2). A session may
    /// set its own at session zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 16))]
    pub npcs_per_turn: Option<u32>,
    /// (Loreloom) Skill tools (`skill` or `skill/script`) called on every
    /// played turn besides those the planner chooses, e.g. `weather` to move
    /// the weather and the hour on; each is optional: a failure costs the
    /// turn nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_every_turn: Vec<String>,
}

/// How many NPCs act in one turn when neither the campaign nor the session says.
pub const DEFAULT_NPCS_PER_TURN: u32 = 2;

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentRating {
    Everyone,
    #[serde(rename = "Everyone 10+")]
    Everyone10,
    Teen,
    Mature,
    #[serde(rename = "Adults Only")]
    AdultsOnly,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RulesHint {
    RulesLight,
    Narrative,
    Crunchy,
    Tactical,
}

/// `characters/npcs/<id>/profile.json` (seed 002 §6.2.4); the folder name is the NPC's id.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NpcProfile {
    #[schemars(length(min = 1))]
    pub name: String,
    #[schemars(length(min = 1))]
    pub role: String,
    pub personality: Personality,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub motivations: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speech_patterns: Option<SpeechPatterns>,
    /// How this NPC sees others, by character id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub relationships: BTreeMap<String, String>,
    /// Secrets inline, or "See secrets.md".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub portrait: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appearance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goals: Vec<Goal>,
    /// (Loreloom) The stat block, validated against the ruleset's `character_stat_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<serde_json::Map<String, Value>>,
    /// Item ids the NPC carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<NpcMetadata>,
    /// (Loreloom, seed 004) How eagerly the NPC acts when not called on: 0 never, 1 always.
    #[serde(default = "half")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub chattiness: f64,
    /// (Loreloom, seed 004) Story-critical NPCs always act, first.
    #[serde(default)]
    pub baked: bool,
    /// (Loreloom, seed 002 §4.2.3) Faction ids the NPC belongs to: half of their first impression of the persona.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factions: Vec<String>,
    /// (Loreloom, seed 002 §4.2.3) How the NPC regards the persona's visible traits: a tag or carried item id → −100..=100.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub regards: BTreeMap<String, i64>,
    /// (Loreloom, #42) What the NPC says aloud when the player asks it about
    /// a thread, a person, a place or an item, by that one's id: lines in its
    /// own voice, said in order, one per asking. The engine says them as
    /// written, in place of a line the model would make up.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, Vec<String>>,
    /// Written by enrichment (seed 002 §6.2.12); requires `provenance`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generated: bool,
    /// Source model, time and seed data of a generated file (seed 002 §6.2.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Map<String, Value>>,
}

fn half() -> f64 {
    0.5
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Personality {
    #[schemars(length(min = 1))]
    pub traits: Vec<String>,
    #[serde(default)]
    pub flaws: Vec<String>,
    #[serde(default)]
    pub virtues: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpeechPatterns {
    pub style: String,
    #[serde(default)]
    pub examples: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    pub goal: String,
    #[serde(default = "medium")]
    pub priority: Priority,
    #[serde(default = "active")]
    pub status: String,
}

fn medium() -> Priority {
    Priority::Medium
}

fn active() -> String {
    "active".to_owned()
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NpcMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_appearance: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Beat and goal priority (seed 002 §6.2.5), highest first.
#[derive(
    Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Critical,
    High,
    Medium,
    Low,
    Optional,
}

/// `plot/beats.json` (seed 002 §6.2.5).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BeatsFile {
    pub beats: Vec<Beat>,
    /// Written by enrichment (seed 002 §6.2.12); requires `provenance`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generated: bool,
    /// Source model, time and seed data of a generated file (seed 002 §6.2.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Map<String, Value>>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Beat {
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub id: String,
    pub title: String,
    pub description: String,
    #[serde(default)]
    pub conditions: Conditions,
    #[serde(default = "medium")]
    pub priority: Priority,
    #[serde(default)]
    pub consequences: Vec<String>,
    #[serde(default)]
    pub skippable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood: Option<String>,
    /// Music to play, relative to the campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub music: Option<String>,
    /// Branches and their probabilities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<Outcome>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialogue: Vec<DialogueLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Timeout>,
}

/// When a beat may trigger (seed 002 §6.2.5's condition types); all given conditions must hold.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Conditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene_count: Option<SceneWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_beat: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_any_beat: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_choice: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub player_choices: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_state: Option<String>,
    /// Conditions on NPCs, by NPC id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub npc_state: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SceneWindow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub description: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub probability: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_beat: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DialogueLine {
    pub speaker: String,
    pub line: String,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Timeout {
    /// Scenes after which the beat gives way.
    #[schemars(range(min = 1))]
    pub after_scenes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_beat: Option<String>,
}

/// `characters/player/template.json` (seed 002 §6.2.6).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlayerTemplate {
    /// How the player makes their character (freeform when omitted).
    #[serde(default)]
    pub character_creation: CharacterCreation,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_races: Vec<Choice>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_classes: Vec<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_location: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starting_items: Vec<String>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub constraints: serde_json::Map<String, Value>,
    /// (Loreloom) The player's starting stat block, validated against the ruleset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<serde_json::Map<String, Value>>,
    /// (Loreloom) The default name and description offered at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CharacterCreation {
    #[serde(default)]
    pub mode: CreationMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CreationMode {
    #[default]
    Freeform,
    Guided,
    Preset,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traits: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abilities: Vec<String>,
}

/// `scenarios/<id>.json` (seed 003 `scenarios`); the ruleset defaults to the manifest's.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"))]
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruleset_id: Option<String>,
    /// The cast: `player` and NPC ids (pack NPCs as `pack:id`).
    #[schemars(length(min = 1))]
    pub character_ids: Vec<String>,
    /// Where it opens (a location id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The opening scene state, validated against the ruleset's `scene_state_schema`.
    pub scene_seed: serde_json::Map<String, Value>,
    pub stakes: String,
    /// Goals by character id.
    #[serde(default)]
    pub goals: BTreeMap<String, String>,
    pub tone: String,
    pub intro_seed: String,
    #[serde(default = "one")]
    pub schema_version: u32,
}

fn one() -> u32 {
    1
}

/// `world/state.json` (Loreloom): the world's structured starting state.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct WorldFile {
    #[serde(default)]
    pub locations: Vec<Entity>,
    #[serde(default)]
    pub items: Vec<Entity>,
    #[serde(default)]
    pub factions: Vec<Entity>,
    #[serde(default)]
    pub clocks: Vec<Clock>,
    #[serde(default)]
    pub relationships: Vec<Relation>,
    #[serde(default)]
    pub inventory: Vec<Holding>,
    #[serde(default)]
    pub facts: Vec<Fact>,
    #[serde(default)]
    pub threads: Vec<Thread>,
    /// Reputation and perception tuning (seed 002 §4.1.4, §4.2.3); the seed's defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<crate::rules::standing::StandingConfig>,
    /// The ways between places (#41 reach): when any are listed, a move goes
    /// only to a place one route away; when none are, every place is one step
    /// from every other, [`DEFAULT_ROUTE_MINUTES`] apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

/// Minutes between two places when the campaign lists no routes.
pub const DEFAULT_ROUTE_MINUTES: i64 = 20;

/// A way between two places, both ways, and how long it takes.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// A location id.
    pub from: String,
    /// A location id.
    pub to: String,
    /// In-game minutes the way takes.
    #[serde(default = "route_minutes")]
    #[schemars(range(min = 0))]
    pub minutes: i64,
    /// When the way is shut (#41: a clock that closes a way): the clock at
    /// or past a value, and why, in the story's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_when: Option<ClosedWhen>,
}

/// A way shut by a clock: from the moment `clock` reaches `at_least`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClosedWhen {
    /// A clock id of the world.
    pub clock: String,
    pub at_least: i64,
    /// Why the way is shut, as the player is told ("the plank walks are under the flood").
    #[schemars(length(min = 1, max = 200))]
    pub why: String,
}

fn route_minutes() -> i64 {
    DEFAULT_ROUTE_MINUTES
}

/// A location, item or faction.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Entity {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*(:[a-z0-9][a-z0-9_-]*)?$"))]
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Holding {
    pub owner: String,
    pub item: String,
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub qty: u32,
}

/// `<asset>.meta.json` beside an image or audio file (seed 002 §6.2.9).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct AssetMeta {
    #[serde(default)]
    pub generated: bool,
    /// Required when `generated`, forbidden otherwise (seed 002 §6.2.11); checked by the loader with the seed's messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt_text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Audio: whether it loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#loop: Option<bool>,
}

/// `pack.yaml` (seed 001 content packs).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_]*$"))]
    pub id: String,
    pub name: String,
    #[serde(default = "first_version")]
    pub version: String,
    #[serde(default)]
    pub description: String,
    /// Packs this one builds on, by id.
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

fn first_version() -> String {
    "1.0.0".to_owned()
}

/// The YAML frontmatter of a content pack's markdown file (seed 001).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Frontmatter {
    /// Unique within the pack; becomes `pack_id:id`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_]*$"))]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub related_entities: Vec<String>,
    #[serde(default)]
    pub related_factions: Vec<String>,
    #[serde(default)]
    pub related_locations: Vec<String>,
    #[serde(default)]
    pub related_threads: Vec<String>,
    /// Any other facts about the entry (`district: undercity`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attrs: BTreeMap<String, Value>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Location,
    Npc,
    Faction,
    Culture,
    History,
    Technology,
    Item,
    Event,
}
