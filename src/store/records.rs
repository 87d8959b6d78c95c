//! The save's row types: what goes into a save and what comes back out of it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::memory::MemoryEvent;
use crate::rules::{Change, WorldState};
use crate::transcript::{Message, Observation};

/// How a scene came to be.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SceneKind {
    /// The scenario's opening scene.
    Start,
    /// A played turn.
    Play,
    /// A turn narrated by the fallback templates after a stage failed (DESIGN.md).
    Fallback,
    /// A copy of an earlier scene, branching the story (`/rewind`).
    Rewind,
}

impl SceneKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            SceneKind::Start => "start",
            SceneKind::Play => "play",
            SceneKind::Fallback => "fallback",
            SceneKind::Rewind => "rewind",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Self> {
        [Self::Start, Self::Play, Self::Fallback, Self::Rewind]
            .into_iter()
            .find(|k| k.name() == s)
    }
}

/// A new save's session.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub id: String,
    pub campaign_id: String,
    pub campaign_path: PathBuf,
    pub scenario_id: Option<String>,
    pub ruleset_id: String,
    /// (character id, role: `user_persona` or `npc`).
    pub characters: Vec<(String, String)>,
    pub small_model_key: String,
    pub large_model_key: String,
    pub calibration: Value,
    pub prompt_versions: Value,
    pub seed: u64,
    /// The opening scene and world.
    pub scene: Map<String, Value>,
    pub world: WorldState,
    /// Messages of the opening (a scene marker, the intro narration), turn 0.
    pub messages: Vec<Message>,
}

/// The session row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub campaign_id: String,
    pub campaign_path: PathBuf,
    pub scenario_id: Option<String>,
    pub ruleset_id: String,
    pub character_ids: Vec<String>,
    pub current_scene_id: String,
    pub scene_index: i64,
    pub turn_index: i64,
    pub small_model_key: String,
    pub large_model_key: String,
    pub calibration: Value,
    pub prompt_versions: Value,
    pub seed: u64,
    pub play_minutes: f64,
}

/// One scene snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub id: String,
    pub scene_index: i64,
    pub parent_id: Option<String>,
    pub turn_index: i64,
    pub kind: SceneKind,
    pub state: Map<String, Value>,
    pub world: WorldState,
    /// The play clock when the scene was reached (none in saves from
    /// before schema 6).
    pub play_minutes: Option<f64>,
}

/// One character's action this turn (seed 003 `actions`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub character_id: String,
    pub action_text: String,
    pub resolved_outcome: Value,
}

/// One event of a turn (seed 003 `turn_events`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnEvent {
    /// `user_action`, `model_output`, `tool_call`, `state_apply`, `error`.
    pub event_type: String,
    pub step_name: String,
    pub payload: Value,
    pub model_key: Option<String>,
    pub prompt_version: Option<String>,
}

impl TurnEvent {
    /// An event of the engine itself (no model call).
    pub fn engine(event_type: &str, step_name: &str, payload: Value) -> Self {
        Self {
            event_type: event_type.to_owned(),
            step_name: step_name.to_owned(),
            payload,
            model_key: None,
            prompt_version: None,
        }
    }
}

/// Everything one turn commits.
#[derive(Clone, Debug)]
pub struct TurnCommit {
    /// The idempotency key (with the session id): the same submission twice commits once.
    pub user_action_id: String,
    /// The scene the turn started from: the optimistic-concurrency guard.
    pub expected_scene_id: String,
    pub kind: SceneKind,
    /// The player's action, verbatim.
    pub action_text: String,
    /// The new scene's parent: the expected scene, or for a rewind the scene rewound to.
    pub parent_scene_id: Option<String>,
    pub scene: Map<String, Value>,
    pub world: WorldState,
    /// The state operations applied, for the projections and the event log.
    pub changes: Vec<Change>,
    pub messages: Vec<Message>,
    pub actions: Vec<ActionRecord>,
    pub observations: Vec<Observation>,
    pub events: Vec<TurnEvent>,
    /// The play clock after the turn.
    pub play_minutes: f64,
    /// What the caller shows for this turn; handed back on a duplicate submission.
    pub result: Value,
    /// The turn's memory event and its vector (seed 002 §7.1 step 7), written with the turn.
    pub memory: Option<(MemoryEvent, Option<Vec<f32>>)>,
}

/// A save slot of a session: a scene of this file, kept under a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bookmark {
    pub slot: String,
    pub scene_id: String,
    pub scene_index: i64,
    /// Where and when, in the player's words ("Reedmere Quay, turn 12").
    pub summary: String,
    /// Seconds since the Unix epoch.
    pub saved_at: u64,
}

/// A committed turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed {
    pub turn_index: i64,
    pub scene_id: String,
    pub scene_index: i64,
    pub result: Value,
    /// True when this submission had been committed before and nothing new was written.
    pub duplicate: bool,
}

/// One sitting at the game inside a save (seed 001 v1 `SessionManager`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlaySession {
    pub id: i64,
    /// The first turn id played in it.
    pub turn_start: i64,
    pub turn_end: Option<i64>,
    pub recap: Option<String>,
}

/// A summary of a stretch of turns (seed 004 stream summarisation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub scope: String,
    pub scope_id: String,
    pub text: String,
    pub turn_start: i64,
    pub turn_end: i64,
}

/// A committed turn as stored, for replay.
#[derive(Clone, Debug)]
pub struct StoredTurn {
    pub user_action_id: String,
    pub scene_before_id: String,
    pub scene_id: String,
    pub kind: String,
    pub action_text: String,
    pub result: Value,
    pub events: Vec<TurnEvent>,
    /// The messages the turn appended.
    pub messages: Vec<Message>,
}
