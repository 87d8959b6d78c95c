//! Between a session and its save: the stored rows read back as a state, a turn's result as rows.
//!
//! The store knows rows, not turns; this file is the session's side of that
//! boundary. [`state`] and [`state_at`] assemble the [`SessionState`] the turn
//! runner needs from a save (for a campaign already loaded), and
//! [`turn_commit`] turns a finished [`TurnResult`] into the [`TurnCommit`] the
//! store writes in one transaction.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::recalled::Recalled;
use super::skills::SessionSkills;
use super::turn::{Calibration, PlayerInput, SessionState, TurnResult};
use crate::campaign::{Campaign, PLAYER};
use crate::store::{ActionRecord, SceneKind, Store, StoreError, TurnCommit, TurnEvent};
use crate::transcript::{Kind, Observation, Stream};

/// The choices a stored turn result offered (none when it holds none that read).
pub fn offered_choices(result: &Value) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Offered {
        choices: Vec<String>,
    }
    serde_json::from_value::<Offered>(result.clone()).map_or_else(|_| Vec::new(), |o| o.choices)
}

/// The session as the turn runner needs it, at the save's current scene.
pub fn state(store: &Store, campaign: Arc<Campaign>) -> Result<SessionState, StoreError> {
    let current = store.session()?.current_scene_id;
    state_at(store, campaign, &current)
}

/// The session as it stood at scene `scene_id` (for replay), its play clock
/// the scene's own (the session's, for scenes saved before schema 6 kept it).
pub fn state_at(
    store: &Store,
    campaign: Arc<Campaign>,
    scene_id: &str,
) -> Result<SessionState, StoreError> {
    let info = store.session()?;
    let scene = store.scene(scene_id)?;
    let turn_index = scene.turn_index;
    let mut world = scene.world;
    world.scene = scene.state;
    let mut observations: BTreeMap<String, Vec<Observation>> = BTreeMap::new();
    for o in store.observations_at(scene_id)? {
        observations
            .entry(o.character_id.clone())
            .or_default()
            .push(o);
    }
    // Never defaults: a save whose lines and veils do not read back is not
    // played without them.
    let calibration: Calibration =
        serde_json::from_value(info.calibration.clone()).map_err(|source| StoreError::Json {
            path: store.path().to_owned(),
            context: "the player's lines and veils (calibration), which are not played without; restore the save from a backup or start a new session",
            source,
        })?;
    let scenario = info
        .scenario_id
        .as_deref()
        .and_then(|id| campaign.scenarios.get(id));
    let tone = super::play::session_tone(&campaign, scenario);
    let mut state = SessionState {
        stream: Stream::new(store.messages_at(scene_id)?),
        campaign,
        world,
        observations,
        calibration,
        small_model: info.small_model_key,
        large_model: info.large_model_key,
        seed: info.seed,
        turn_index: u64::try_from(turn_index).map_err(|_| StoreError::Corrupt {
            path: store.path().to_owned(),
            reason: format!("scene `{scene_id}` has turn index {turn_index}"),
        })?,
        play_minutes: scene.play_minutes.unwrap_or(info.play_minutes),
        recalled: Recalled::default(),
        earlier: Vec::new(),
        summarised_through: 0,
        states: BTreeMap::new(),
        tone,
        skills: SessionSkills::default(),
        prompt_pins: super::pins::PromptPins::read(&info.prompt_versions),
    };
    // The stream summaries that turn read (those made at this scene or before).
    super::summaries::load_summaries_until(store, &mut state, scene.scene_index);
    Ok(state)
}

/// What a finished turn commits: its scene, messages, observations, actions,
/// and an event per model call, roll and refusal.
pub fn turn_commit(
    result: &TurnResult,
    input: &PlayerInput,
    expected_scene_id: &str,
    kind: SceneKind,
) -> TurnCommit {
    let narration = crate::transcript::stream::narrations(&result.messages);
    let actions = result
        .messages
        .iter()
        .filter(|m| m.kind == Kind::Intention)
        .map(|m| ActionRecord {
            character_id: m.owner.clone(),
            action_text: m.content.clone(),
            resolved_outcome: if m.owner == PLAYER {
                serde_json::to_value(&result.rolls).unwrap_or(Value::Null)
            } else {
                Value::Null
            },
        })
        .collect();
    let mut world = result.world.clone();
    let scene = std::mem::take(&mut world.scene);
    TurnCommit {
        user_action_id: input.action_id.clone(),
        expected_scene_id: expected_scene_id.to_owned(),
        kind,
        action_text: input.text.clone(),
        parent_scene_id: None,
        scene,
        world,
        changes: result.changes.clone(),
        messages: result.messages.clone(),
        actions,
        observations: result.observations.clone(),
        events: turn_events(result, input),
        play_minutes: result.play_minutes,
        memory: None,
        result: json!({
            "narration": narration,
            "rolls": result.rolls,
            "choices": result.choices,
            "acted": result.acted,
            "skipped": result.skipped,
        }),
    }
}

/// The turn's event log: the player's action, then each model call, the
/// recall, the budget, each roll, the state applied, skills, drafts and refusals.
fn turn_events(result: &TurnResult, input: &PlayerInput) -> Vec<TurnEvent> {
    let value = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
    let mut events = vec![TurnEvent::engine(
        "user_action",
        "persona_intent",
        json!({"text": input.text, "whisper_to": input.whisper_to, "ruling": input.ruling}),
    )];
    for r in &result.records {
        events.push(TurnEvent {
            event_type: "model_output".into(),
            step_name: r.stage.clone(),
            payload: value(serde_json::to_value(r)),
            model_key: Some(r.model_key.clone()),
            prompt_version: Some(r.prompt_version.clone()),
        });
    }
    if result.recalled != Recalled::default() {
        let recalled = value(serde_json::to_value(&result.recalled));
        events.push(TurnEvent::engine("recall", "memory_recall", recalled));
    }
    let budget = value(serde_json::to_value(&result.budget));
    events.push(TurnEvent::engine("metrics", "turn_budget", budget));
    if !result.activation.is_empty() {
        let rolls = value(serde_json::to_value(&result.activation));
        events.push(TurnEvent::engine("tool_call", "npc_activation", rolls));
    }
    for roll in &result.rolls {
        let roll = value(serde_json::to_value(roll));
        events.push(TurnEvent::engine("tool_call", "dice", roll));
    }
    if !result.changes.is_empty() {
        let changes = value(serde_json::to_value(&result.changes));
        events.push(TurnEvent::engine("state_apply", "engine_apply", changes));
    }
    for attempt in &result.skills {
        let attempt = value(serde_json::to_value(attempt));
        events.push(TurnEvent::engine("tool_call", "skills", attempt));
    }
    if let Some(fallback) = &result.skill_fallback {
        let fallback = json!({"fallback": fallback});
        events.push(TurnEvent::engine("error", "skills", fallback));
    }
    for choice in &result.drafts {
        let choice = value(serde_json::to_value(choice));
        events.push(TurnEvent::engine("tool_call", "narrate_drafts", choice));
    }
    if let Some(blocked) = &result.blocked {
        let blocked = value(serde_json::to_value(blocked));
        events.push(TurnEvent::engine("tool_call", "move_check", blocked));
    }
    for fired in &result.fired {
        events.push(TurnEvent::engine(
            "state_apply",
            "consequence",
            json!({"told": fired}),
        ));
    }
    for limit in &result.limits {
        events.push(TurnEvent::engine(
            "error",
            "lines_and_veils",
            json!({"met": limit}),
        ));
    }
    for told in &result.continuity {
        events.push(TurnEvent::engine(
            "error",
            "continuity",
            json!({"found": told}),
        ));
    }
    for refusal in &result.refused {
        let refusal = json!({"refused": refusal});
        events.push(TurnEvent::engine("error", "engine_apply", refusal));
    }
    events
}
