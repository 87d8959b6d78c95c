//! The components a session's world is spawned as: people, clocks, relations, factions, memories.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::prelude::*;
use serde_json::{Map, Value};

use crate::rules::state::{Clock, Relation};
use crate::transcript::Observation;

/// A person of the campaign.
#[derive(Component, Debug, Clone)]
pub struct Character {
    pub id: String,
    pub name: String,
    pub persona: bool,
    pub portrait: Option<PathBuf>,
}

/// How often a non-baked NPC acts unprompted (0–1).
#[derive(Component, Debug, Clone, Copy)]
pub struct Chattiness(pub f64);

/// An NPC who acts every turn it is present (seed 004).
#[derive(Component, Debug, Clone, Copy)]
pub struct Baked;

/// In the current scene.
#[derive(Component, Debug, Clone, Copy)]
pub struct Present;

/// A character's stats (the ruleset's stat block).
#[derive(Component, Debug, Clone)]
pub struct StatBlock(pub Map<String, Value>);

/// A character's inventory: item → quantity.
#[derive(Component, Debug, Clone, Default)]
pub struct Inventory(pub BTreeMap<String, u32>);

/// A progress clock.
#[derive(Component, Debug, Clone)]
pub struct ClockState(pub Clock);

/// One relation edge between two characters (one per unordered pair).
#[derive(Component, Debug, Clone)]
pub struct RelationEdge(pub Relation);

/// An NPC's perception of the persona, −100..=100 (seed 002 §4.2.3).
#[derive(Component, Debug, Clone, Copy, PartialEq)]
pub struct Perception(pub f64);

/// A faction and the persona's reputation with it, −100..=100 (seed 002 §4.1.4).
#[derive(Component, Debug, Clone, PartialEq)]
pub struct Faction {
    pub id: String,
    pub name: String,
    pub reputation: f64,
}

/// One observation, a child of the character who made it, with its priority now (seed 003).
#[derive(Component, Debug, Clone)]
pub struct Memory {
    pub observation: Observation,
    pub priority: f64,
}

/// Everything spawned for the session (despawned when it is rebuilt or left).
#[derive(Component, Debug, Clone, Copy)]
pub struct SessionEntity;
