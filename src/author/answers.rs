//! The model's answers to the authoring prompts, one type per contract in `schemas/author/`.
//!
//! The hand-written contract stays the source of truth for limits (lengths, counts,
//! patterns): the gateway checks an answer against it first, and the stage then reads it as
//! the type here (never by string index). `tests/author_contracts.rs` proves each type and
//! its contract agree (property names, required fields, JSON types, no extra properties).

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use super::diegetic::Tier;
use crate::story::model::IllustrationCategory;

/// An answer type and the prompt stage that answers with it.
pub trait Answer: DeserializeOwned + JsonSchema {
    /// The prompt stage (`author/…`); its contract is `schemas/<PROMPT>.schema.json`.
    const PROMPT: &'static str;
}

macro_rules! answers {
    ($($t:ty => $prompt:literal),* $(,)?) => {
        $(impl Answer for $t { const PROMPT: &'static str = $prompt; })*
    };
}

answers! {
    DreamAnswer => "author/dream",
    BrainstormAnswer => "author/brainstorm",
    SeedAnswer => "author/seed",
    IntersectionsAnswer => "author/grow_intersections",
    PacingAnswer => "author/grow_pacing",
    OverlaysAnswer => "author/grow_overlays",
    LabelsAnswer => "author/grow_labels",
    VoiceAnswer => "author/fill_voice",
    ProseAnswer => "author/fill_prose",
    ReviewAnswer => "author/fill_review",
    ArtAnswer => "author/dress_art",
    BriefAnswer => "author/dress_brief",
    CodexAnswer => "author/dress_codex",
}

/// A field the answer may leave out, give as `null` or give: `None`, `Some(None)`,
/// `Some(Some(v))`, so what is stored keeps the difference.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The schema of a string that may be `null` (a required field that may be empty).
fn nullable_string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["string", "null"]})
}

// DREAM ---------------------------------------------------------------------------------

/// DREAM's vision, before the engine stores it as the graph's vision node.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DreamAnswer {
    pub genre: String,
    pub tone: Vec<String>,
    pub themes: Vec<String>,
    pub audience: String,
    pub constraints: Vec<String>,
    pub content_notes: Vec<String>,
    pub branches: Branching,
}

/// How much the story branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Branching {
    Minimal,
    Moderate,
    Extensive,
}

// BRAINSTORM ----------------------------------------------------------------------------

/// BRAINSTORM's entities and dilemmas.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrainstormAnswer {
    pub entities: Vec<EntityIdea>,
    pub dilemmas: Vec<DilemmaIdea>,
}

/// What kind of thing an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntityKind {
    Character,
    Location,
    Object,
    Faction,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityIdea {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: EntityKind,
    pub name: String,
    pub concept: String,
    #[serde(default)]
    pub notes: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DilemmaIdea {
    pub id: String,
    pub question: String,
    pub answers: Vec<AnswerIdea>,
    pub involves: Vec<String>,
    pub why_it_matters: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerIdea {
    pub id: String,
    pub description: String,
    pub canonical: bool,
}

// SEED ----------------------------------------------------------------------------------

/// SEED's curation, paths, consequences, beats, analyses and constraints.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeedAnswer {
    pub cut_entities: Vec<String>,
    #[serde(default)]
    pub relationships: Vec<RelationshipIdea>,
    pub paths: Vec<PathIdea>,
    pub beats: Vec<BeatIdea>,
    pub dilemma_analyses: Vec<DilemmaAnalysis>,
    pub convergence_sketch: ConvergenceSketch,
    pub interaction_constraints: Vec<InteractionConstraint>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationshipIdea {
    pub from: String,
    pub to: String,
    pub nature: String,
}

/// A path's weight in the story.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PathTier {
    Major,
    Minor,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathIdea {
    pub dilemma_id: String,
    pub answer_id: String,
    pub name: String,
    pub tier: PathTier,
    pub description: String,
    pub consequences: Vec<ConsequenceIdea>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsequenceIdea {
    pub id: String,
    pub description: String,
    pub ripples: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BeatIdea {
    pub id: String,
    pub summary: String,
    pub paths: Vec<String>,
    pub impacts: Vec<ImpactIdea>,
    pub entities: Vec<String>,
    #[schemars(schema_with = "nullable_string")]
    pub location: Option<String>,
    #[serde(default)]
    pub location_alternatives: Vec<String>,
    #[serde(default)]
    pub after: Vec<String>,
}

/// What a beat does to a dilemma.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Advances,
    Reveals,
    Commits,
    Complicates,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactIdea {
    pub dilemma_id: String,
    pub effect: Effect,
    pub note: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConvergencePolicy {
    Hard,
    Soft,
    Flavor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EndingSalience {
    High,
    Low,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResidueWeight {
    Heavy,
    Light,
    Cosmetic,
}

/// A dilemma's analysis; stored on the dilemma (without its id) as `analysis`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DilemmaAnalysis {
    #[serde(skip_serializing)]
    pub dilemma_id: String,
    pub convergence_policy: ConvergencePolicy,
    pub ending_salience: EndingSalience,
    pub residue_weight: ResidueWeight,
    pub payoff_budget: u32,
    pub reasoning: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[schemars(schema_with = "nullable_string")]
    pub ending_tone: Option<Option<String>>,
}

/// Where SEED means the branches to come back together; kept as graph meta.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvergenceSketch {
    pub convergence_points: Vec<String>,
    pub residue_notes: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    SharedEntity,
    CausalChain,
    ResourceConflict,
}

/// How two dilemmas bear on each other; kept as graph meta.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InteractionConstraint {
    pub dilemma_a: String,
    pub dilemma_b: String,
    pub constraint_type: ConstraintKind,
    pub description: String,
    pub reasoning: String,
}

// GROW ----------------------------------------------------------------------------------

/// The candidates (by number) the model would merge into one scene.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntersectionsAnswer {
    pub merge: Vec<usize>,
    pub reasons: String,
}

/// A beat's pacing kind (seed 000 scene types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SceneType {
    Scene,
    Sequel,
    MicroBeat,
}

impl SceneType {
    /// The name as stored on a beat (`scene`, `sequel`, `micro_beat`).
    pub fn name(self) -> &'static str {
        match self {
            SceneType::Scene => "scene",
            SceneType::Sequel => "sequel",
            SceneType::MicroBeat => "micro_beat",
        }
    }
}

/// A scene type per numbered beat, and bridging beats for some numbered gaps.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacingAnswer {
    pub scene_types: Vec<Paced>,
    #[serde(default)]
    pub gaps: Vec<Bridge>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Paced {
    pub n: usize,
    pub scene_type: SceneType,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bridge {
    pub n: usize,
    pub summary: String,
    #[serde(default)]
    #[schemars(with = "SceneType")]
    pub scene_type: Option<SceneType>,
}

/// What each numbered consequence changes in the entities offered for it.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlaysAnswer {
    pub overlays: Vec<OverlayIdea>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayIdea {
    pub n: usize,
    pub entity: String,
    pub details: BTreeMap<String, String>,
}

/// A label per numbered choice.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelsAnswer {
    pub labels: Vec<Label>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub n: usize,
    pub label: String,
}

// FILL ----------------------------------------------------------------------------------

/// Whose eyes the story is told through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pov {
    First,
    Second,
    ThirdLimited,
    ThirdOmniscient,
}

impl Pov {
    /// The name as stored (`third_limited`, …).
    pub fn name(self) -> &'static str {
        match self {
            Pov::First => "first",
            Pov::Second => "second",
            Pov::ThirdLimited => "third_limited",
            Pov::ThirdOmniscient => "third_omniscient",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tense {
    Past,
    Present,
}

impl Tense {
    pub fn name(self) -> &'static str {
        match self {
            Tense::Past => "past",
            Tense::Present => "present",
        }
    }
}

/// FILL's voice document, stored whole as the voice node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VoiceAnswer {
    pub story_title: String,
    pub pov: Pov,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[schemars(schema_with = "nullable_string")]
    pub pov_character: Option<Option<String>>,
    pub tense: Tense,
    pub register: String,
    pub sentence_rhythm: String,
    pub tone_words: Vec<String>,
    pub avoid_words: Vec<String>,
    pub avoid_patterns: Vec<String>,
    pub exemplar: Exemplar,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exemplar {
    pub text: String,
    pub note: String,
}

/// One passage's prose and the entity details it shows.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProseAnswer {
    pub prose: String,
    #[serde(default)]
    pub entity_updates: Vec<EntityUpdate>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityUpdate {
    pub id: String,
    pub field: String,
    pub value: String,
}

/// The review's flags, each on a numbered passage of the window.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewAnswer {
    pub flags: Vec<Flag>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flag {
    pub n: usize,
    pub issue: String,
}

// DRESS ---------------------------------------------------------------------------------

/// The art direction and each shown entity's visual profile.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtAnswer {
    pub style: String,
    pub medium: String,
    pub palette: Vec<String>,
    pub composition_notes: String,
    pub negative_defaults: String,
    pub aspect_ratio: String,
    pub visuals: Vec<VisualIdea>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VisualIdea {
    pub entity: String,
    pub description: String,
    pub distinguishing_features: Vec<String>,
    pub color_associations: Vec<String>,
    pub reference_prompt_fragment: String,
}

impl VisualIdea {
    /// The profile, without the entity it names.
    pub fn into_profile(self) -> VisualProfile {
        VisualProfile {
            description: self.description,
            distinguishing_features: self.distinguishing_features,
            color_associations: self.color_associations,
            reference_prompt_fragment: self.reference_prompt_fragment,
        }
    }
}

/// An entity's look, stored as its visual node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VisualProfile {
    pub description: String,
    pub distinguishing_features: Vec<String>,
    pub color_associations: Vec<String>,
    pub reference_prompt_fragment: String,
}

/// One passage's illustration brief and the model's judgement of the passage.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefAnswer {
    pub category: IllustrationCategory,
    pub subject: String,
    pub composition: String,
    pub mood: String,
    pub negative: String,
    pub caption: String,
    pub visually_striking: bool,
    pub emotionally_pivotal: bool,
    pub dialogue_heavy: bool,
}

/// An entity's codex tiers.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodexAnswer {
    pub tiers: Vec<Tier>,
}
