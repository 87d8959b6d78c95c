//! The world that state operations change: scene, characters, clocks, relations, facts, threads.
//!
//! One session's mutable world ([`WorldState`]), saved with every scene
//! snapshot, rewound with it and replayed exactly. It changes only through
//! typed operations (`rules/op.rs`), applied a batch at a time by
//! `rules/apply.rs`.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A character's mutable state: its stat block and tags.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
pub struct CharacterState {
    pub stats: Map<String, Value>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tags: BTreeSet<String>,
}

/// `scene.whereabouts`: where each character not in the scene was last left
/// (id → location id), kept by the engine when the player goes elsewhere; a
/// field of every ruleset's scene.
pub const WHEREABOUTS: &str = "whereabouts";

/// A progress clock (seed 001): fills from 0 to `max`; triggers fire at values.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub value: i64,
    pub max: i64,
    /// What happens when the clock reaches a value (`"6": "the tide turns"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub triggers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Play time runs it: one tick per this many in-game minutes (#41: what
    /// depends on time follows the time moves cost). `None`: only ops tick it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub every_minutes: Option<i64>,
    /// What changes when a trigger fires, by the trigger's value (`"4": [set
    /// scene.danger_tier 2]`): applied by the engine in the turn it fires.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub effects: BTreeMap<String, Vec<crate::rules::StateOp>>,
}

/// A relation between two characters; the pair is unordered (seed 003).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Relation {
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub trust: i64,
    #[serde(default)]
    pub tension: i64,
    #[serde(default)]
    pub closeness: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
}

impl Relation {
    /// One axis's value (`trust`, `tension`, `closeness`).
    pub fn axis(&self, axis: &str) -> Option<i64> {
        match axis {
            "trust" => Some(self.trust),
            "tension" => Some(self.tension),
            "closeness" => Some(self.closeness),
            _ => None,
        }
    }

    pub fn is_between(&self, a: &str, b: &str) -> bool {
        (self.a == a && self.b == b) || (self.a == b && self.b == a)
    }

    pub(super) fn axis_mut(&mut self, axis: &str) -> Option<&mut i64> {
        match axis {
            "trust" => Some(&mut self.trust),
            "tension" => Some(&mut self.tension),
            "closeness" => Some(&mut self.closeness),
            _ => None,
        }
    }
}

/// Who knows a fact.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    #[default]
    Public,
    Secret,
}

/// A fact about the world (seed 001 `facts`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub subject: String,
    pub predicate: String,
    pub object: Value,
    #[serde(default, skip_serializing_if = "is_default")]
    pub visibility: Visibility,
}

/// A story thread (seed 001 `threads`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Thread {
    pub id: String,
    pub title: String,
    #[serde(default = "open")]
    pub status: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub stakes: Value,
}

fn open() -> String {
    "open".to_owned()
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// Everything state operations may change: one session's mutable world.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
pub struct WorldState {
    /// The scene state (validated against the ruleset's scene state schema).
    pub scene: Map<String, Value>,
    pub characters: BTreeMap<String, CharacterState>,
    pub clocks: BTreeMap<String, Clock>,
    pub relations: Vec<Relation>,
    /// Quantities by owner, then item.
    pub inventory: BTreeMap<String, BTreeMap<String, u32>>,
    pub facts: Vec<Fact>,
    pub threads: BTreeMap<String, Thread>,
    /// Each NPC's perception of the persona, −100..=100 (seed 002 §4.2.3).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub perception: BTreeMap<String, f64>,
    /// The persona's reputation with each faction, −100..=100 (seed 002 §4.1.4).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reputation: BTreeMap<String, f64>,
    /// In-game minutes of decay applied so far.
    #[serde(default, skip_serializing_if = "is_default")]
    pub standing_minute: f64,
    /// Where each plot beat stands (seed 002 §7.5); beats not listed are waiting.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub beats: BTreeMap<String, BeatStatus>,
    /// The skills' state tree (seed 002 §2.1: their `state_patch`es
    /// deep-merged), committed with the turn and restored by a rewind.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub skills: Map<String, Value>,
    /// Consequences that fired after a turn's narrations (an extractor's op
    /// filled a clock): told at the start of the next turn (#41).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untold: Vec<Consequence>,
    /// People, items and places play brought into the world (#41), by id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub introduced: BTreeMap<String, Introduced>,
}

/// A trigger that fired, as the story tells it (#41).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Consequence {
    pub text: String,
    /// A clock's trigger: the campaign's own story words (the engine may tell
    /// them itself); else a rule's (a failure streak), told only by a narrator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_clock: bool,
}

/// Someone, something or somewhere play introduced, with its provenance.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Introduced {
    pub kind: crate::rules::op::NewKind,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Where the scene was when it was introduced (a place is one way from there).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
    /// The turn that introduced it ("introduced in turn N").
    #[serde(default)]
    pub turn: u64,
}

/// A plot beat's progress, decided at scene transitions (`session::beats`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BeatStatus {
    /// Its prerequisites (beats, scene window) hold since scene `since`; its story conditions not yet.
    Open { since: u32 },
    /// Every condition holds since scene `since` (or it was forced); it triggers within two scenes.
    Ready { since: u32, why: String },
    /// It played in scene `scene` (`why` it was ready).
    Triggered { scene: u32, why: String },
    /// It can no longer happen.
    Skipped { scene: u32, why: String },
}

impl WorldState {
    /// The character ids the scene lists as present (`scene.present`), in order.
    pub fn present(&self) -> Vec<String> {
        self.scene
            .get("present")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}
