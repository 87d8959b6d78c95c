//! Replaying stored turns from their recordings, exactly or with overrides (seeds 003 and 001).
//!
//! An exact replay must reproduce every rendered prompt, message, roll, state
//! operation and choice of the recording; a replay with [`Overrides`] (another
//! prompt version, model or seed, or the live model) says where it differs.
//! [`answers`] decides who answers each call; [`diff`] compares a turn.

mod answers;
mod diff;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::error::ControllerError;
use super::save_files::load_campaign;
use super::skills::{Recorded, SessionSkills, SkillAttempt};
use super::turn::{ActivationRoll, PlayerInput, Ruling, SessionState, TurnError, TurnResult};
use crate::llm::record::AttemptKind;
use crate::llm::{Backend, CallRecord, Gateway};

use crate::store::{Store, StoreError, StoredTurn};
pub use answers::{Answered, Answers};
pub use diff::{Area, Difference};

/// Why a stored turn could not be replayed (a difference is not an error: see [`Replayed`]).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Open(#[from] ControllerError),
    #[error(transparent)]
    Store(Box<StoreError>),
    #[error("scene 0 is the opening; no turn made it")]
    Opening,
    #[error(
        "scene {scene} was made by a {kind} turn, which calls no model; only played turns replay"
    )]
    NotPlayed { scene: i64, kind: String },
    #[error("{what} cannot be read: {source}")]
    Unreadable {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("the model gateway: {0}")]
    Gateway(#[source] Box<crate::llm::GatewayError>),
    #[error("the replay failed where the original did not: {0}")]
    Diverged(#[source] TurnError),
    #[error("the model `{key}` cannot answer the replay: {reason}")]
    Model { key: String, reason: String },
}

impl From<StoreError> for ReplayError {
    fn from(e: StoreError) -> Self {
        Self::Store(Box::new(e))
    }
}

/// What replaying a stored turn found (the single-turn form of [`replay_range`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    pub scene_index: i64,
    pub model_calls: usize,
    pub dice: usize,
    /// Where the replay differs from what was stored (empty: identical).
    pub differences: Vec<String>,
}

/// Replay the turn that made scene `scene_index` of the current branch from
/// its recorded model outputs and the session's seed (seed 003 determinism):
/// the same prompts, messages, dice, world and choices must come out.
pub fn replay(save: &Path, scene_index: i64) -> Result<Replayed, ReplayError> {
    if scene_index == 0 {
        return Err(ReplayError::Opening);
    }
    let range = replay_range(save, scene_index..=scene_index, &Overrides::default())?;
    let Some(turn) = range.turns.into_iter().next() else {
        return Err(ReplayError::Opening);
    };
    if let Skipped::Yes(kind) = turn.skipped {
        return Err(ReplayError::NotPlayed {
            scene: scene_index,
            kind,
        });
    }
    let mut differences: Vec<String> = range.notes;
    differences.extend(turn.differences.iter().map(ToString::to_string));
    Ok(Replayed {
        scene_index,
        model_calls: turn.model_calls,
        dice: turn.dice,
        differences,
    })
}

/// What a replay changes from the recording (seed 001's replay harness:
/// prompt overrides, another model, another seed, the live model).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Stage → prompt version, over the save's pins.
    pub prompts: BTreeMap<String, String>,
    /// Another model key (from `models.ron`) for every call; its calls are live.
    pub model: Option<String>,
    /// Another session seed (the dice, and the choices' fallback pick).
    pub seed: Option<u64>,
    /// Every call goes to the live model, even one whose prompt is unchanged.
    pub live: bool,
}

impl Overrides {
    /// The session as the replay plays it: pins, seed and model keys changed.
    fn apply(&self, state: &mut SessionState) {
        for (stage, version) in &self.prompts {
            state.prompt_pins.set(stage, version, "");
        }
        if let Some(seed) = self.seed {
            state.seed = seed;
        }
        if let Some(model) = &self.model {
            state.small_model.clone_from(model);
            state.large_model.clone_from(model);
        }
    }

    /// Whether calls whose prompt changed can be answered by a live model.
    fn has_live_model(&self) -> bool {
        self.live || self.model.is_some() || !self.prompts.is_empty()
    }
}

/// Whether a turn in the range was replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skipped {
    No,
    /// A turn of this kind (fallback, rewind…) calls no model: not replayed.
    Yes(String),
}

/// One turn of a replayed range.
#[derive(Clone, Debug)]
pub struct TurnReplay {
    pub scene_index: i64,
    pub skipped: Skipped,
    /// What the player did.
    pub action: String,
    /// The session as the turn began (the replayed one, in a chained range).
    pub before: Option<Box<SessionState>>,
    /// What the replay produced (none when skipped or when it failed).
    pub result: Option<Box<TurnResult>>,
    /// Why the replayed turn failed, where the recorded one did not.
    pub failed: Option<String>,
    pub differences: Vec<Difference>,
    /// The narrations stored and those the replay wrote, in order.
    pub stored_narration: Vec<String>,
    pub replayed_narration: Vec<String>,
    /// Each call: its stage and how it was answered.
    pub answered: Vec<(String, Answered)>,
    pub model_calls: usize,
    pub dice: usize,
}

/// A replayed range: its turns in order, and what the replay could not keep exact.
#[derive(Clone, Debug)]
pub struct RangeReplay {
    pub turns: Vec<TurnReplay>,
    /// What the replay could not reproduce exactly, whatever the turns say
    /// (a clock a save from before schema 6 did not keep, a prompt version
    /// no longer installed).
    pub notes: Vec<String>,
}

/// Replay scenes `range` of the current branch with `overrides`: the state
/// before the first is rebuilt from the save, each played turn runs again
/// from the state the replayed turn before it left (a change carries on),
/// each call is answered from the record where its prompt is unchanged and
/// by the live model where it changed (when the overrides give one), and
/// every turn says where it differs from the recording.
pub fn replay_range(
    save: &Path,
    range: std::ops::RangeInclusive<i64>,
    overrides: &Overrides,
) -> Result<RangeReplay, ReplayError> {
    let store = Store::open(save)?;
    let info = store.session()?;
    let campaign = load_campaign(&info.campaign_path)?;
    let gateway = Gateway::open().map_err(|e| ReplayError::Gateway(Box::new(e)))?;
    let mut notes = Vec::new();
    let live = live_model(&gateway, &info, overrides)?;
    let mut answers: Option<Answers> = None;
    let mut chained: Option<SessionState> = None;
    let mut turns = Vec::new();
    for scene_index in range.clone() {
        if scene_index == 0 {
            continue;
        }
        let scene = store.scene_on_branch(scene_index)?;
        let turn = store.stored_turn(&scene.id)?;
        let recording = Recording::of(&turn)?;
        if turn.kind != "play" {
            // A turn that called no model: the range goes on from the save.
            chained = None;
            turns.push(TurnReplay::skipped(scene_index, &turn));
            continue;
        }
        let mut state = if let Some(state) = chained.take() {
            state
        } else {
            state_before(&store, &campaign, &info.campaign_path, &turn, &mut notes)?
        };
        // The turn is shown exactly the lore and memories it was shown then
        // (and rolls with the same episodic +1); nothing is embedded again.
        if let Some(recalled) = recording.recalled.clone() {
            state.recalled = recalled;
        }
        overrides.apply(&mut state);
        let turn_answers = if let Some(a) = &answers {
            a.next_turn(&recording.records)
        } else {
            let a = Answers::recorded(&recording.records);
            if let Some((config, always)) = &live {
                a.with_live(config.clone(), gateway.data_dir().to_owned(), *always)
            } else {
                a
            }
        };
        answers = Some(turn_answers.clone());
        register(
            &gateway,
            &recording.records,
            &state,
            turn_answers.clone(),
            overrides,
        );
        let mut recorded = Recorded::new(&recording.attempts);
        let before = state.clone();
        let outcome = super::play::run_turn_with(
            &gateway,
            state,
            recording.input(&turn),
            &mut |work| recorded.next(work),
            |_| {},
        );
        let mut replay = TurnReplay {
            scene_index,
            skipped: Skipped::No,
            action: turn.action_text.clone(),
            before: Some(Box::new(before.clone())),
            result: None,
            failed: None,
            differences: Vec::new(),
            stored_narration: owned_narrations(&turn.messages),
            replayed_narration: Vec::new(),
            answered: turn_answers.log(),
            model_calls: recording.records.len(),
            dice: recording.rolls.len(),
        };
        match outcome {
            Ok(result) => {
                replay.differences = diff::differences(&recording, &turn, &scene, &result);
                replay.replayed_narration = owned_narrations(&result.messages);
                let mut next = before;
                next.advance(&result);
                chained = Some(next);
                replay.result = Some(Box::new(result));
            }
            Err(e) if !overrides.has_live_model() && overrides.seed.is_none() => {
                return Err(ReplayError::Diverged(e));
            }
            Err(e) => {
                // With overrides a turn may fail where the recording did not:
                // that is a finding; the range goes on from the save.
                replay.failed = Some(e.to_string());
            }
        }
        turns.push(replay);
    }
    if turns.is_empty() {
        return Err(ReplayError::Opening);
    }
    Ok(RangeReplay { turns, notes })
}

/// The session as `turn` began, rebuilt from the save (noting a scene
/// whose play clock a save from before schema 6 did not keep).
fn state_before(
    store: &Store,
    campaign: &std::sync::Arc<crate::campaign::Campaign>,
    campaign_path: &Path,
    turn: &StoredTurn,
    notes: &mut Vec<String>,
) -> Result<SessionState, ReplayError> {
    let before = store.scene(&turn.scene_before_id)?;
    if before.play_minutes.is_none() {
        notes.push(format!(
            "scene {}: this save kept no play clock for it (saved before schema 6); \
             its memories decay by the session's clock",
            before.scene_index
        ));
    }
    let mut state = super::save_rows::state_at(store, campaign.clone(), &turn.scene_before_id)?;
    // The skills are offered as they were; their recorded runs are handed
    // back in order and no script runs again (#25).
    state.skills = SessionSkills::discover(campaign_path, None);
    Ok(state)
}

impl TurnReplay {
    fn skipped(scene_index: i64, turn: &StoredTurn) -> Self {
        Self {
            scene_index,
            skipped: Skipped::Yes(turn.kind.clone()),
            action: turn.action_text.clone(),
            before: None,
            result: None,
            failed: None,
            differences: Vec::new(),
            stored_narration: owned_narrations(&turn.messages),
            replayed_narration: Vec::new(),
            answered: Vec::new(),
            model_calls: 0,
            dice: 0,
        }
    }
}

/// The narrations among `messages`, owned (for a report).
fn owned_narrations(messages: &[crate::transcript::Message]) -> Vec<String> {
    crate::transcript::stream::narrations(messages)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The model a replay's changed calls go to, and whether every call goes:
/// none for an exact replay (or one that only changes the seed).
fn live_model(
    gateway: &Gateway,
    info: &crate::store::SessionInfo,
    overrides: &Overrides,
) -> Result<Option<(crate::llm::BackendConfig, bool)>, ReplayError> {
    if !overrides.has_live_model() {
        return Ok(None);
    }
    let key = overrides
        .model
        .clone()
        .unwrap_or_else(|| info.large_model_key.clone());
    let config = gateway
        .models()
        .get(&key, gateway.data_dir())
        .map_err(|e| ReplayError::Model {
            key: key.clone(),
            reason: e.to_string(),
        })?;
    Ok(Some((
        config.backend.clone(),
        overrides.live || overrides.model.is_some(),
    )))
}

/// Serves the state's model keys from `answers`, in as many drafts as were
/// recorded for the player's narration (or as `models.ron` says, for
/// another model).
fn register(
    gateway: &Gateway,
    records: &[CallRecord],
    state: &SessionState,
    answers: Answers,
    overrides: &Overrides,
) {
    let drafts = records
        .iter()
        .filter(|r| r.attempts.iter().any(|a| a.kind == AttemptKind::Draft))
        .map(|r| r.attempts.len())
        .max()
        .unwrap_or(1);
    for key in [&state.small_model, &state.large_model] {
        let answers = answers.clone();
        gateway.register_backend(key.clone(), move || {
            Ok(Box::new(answers) as Box<dyn Backend>)
        });
        if overrides.model.is_none() {
            gateway.set_drafts(key, u32::try_from(drafts).unwrap_or(1));
        }
    }
}

/// What the player sent, as the turn's `user_action` event keeps it.
#[derive(Deserialize, Default)]
struct Action {
    #[serde(default)]
    whisper_to: Option<String>,
    /// A ruling that no longer reads is none (the referee is asked again).
    #[serde(default, deserialize_with = "lenient")]
    ruling: Option<Ruling>,
}

fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Ruling>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or(None))
}

/// A stored turn's events, read: every model call, roll, skill run, what it
/// was shown from memory and lore, and what the player sent.
struct Recording {
    records: Vec<CallRecord>,
    rolls: Vec<Value>,
    /// The state operations applied (the `state_apply` event).
    changes: Value,
    /// The chattiness rolls that chose who acted (none in saves from before
    /// they were recorded: then only the cast that acted is compared).
    activation: Option<Vec<ActivationRoll>>,
    attempts: Vec<SkillAttempt>,
    recalled: Option<super::recalled::Recalled>,
    action: Action,
}

impl Recording {
    fn of(turn: &StoredTurn) -> Result<Self, ReplayError> {
        let unreadable = |what| move |source| ReplayError::Unreadable { what, source };
        let events = |kind: &'static str, step: Option<&'static str>| {
            turn.events
                .iter()
                .filter(move |e| e.event_type == kind && step.is_none_or(|s| e.step_name == s))
        };
        let records = events("model_output", None)
            .map(|e| serde_json::from_value(e.payload.clone()))
            .collect::<Result<_, _>>()
            .map_err(unreadable("a recorded model output"))?;
        let rolls = events("tool_call", Some("dice"))
            .map(|e| e.payload.clone())
            .collect();
        let changes = events("state_apply", None)
            .next()
            .map_or_else(|| Value::Array(Vec::new()), |e| e.payload.clone());
        let activation = events("tool_call", Some("npc_activation"))
            .next()
            .map(|e| serde_json::from_value(e.payload.clone()))
            .transpose()
            .map_err(unreadable("the recorded NPC activation rolls"))?;
        let attempts = events("tool_call", Some("skills"))
            .map(|e| serde_json::from_value(e.payload.clone()))
            .collect::<Result<_, _>>()
            .map_err(unreadable("a recorded skill run"))?;
        let recalled = events("recall", None)
            .next()
            .map(|e| serde_json::from_value(e.payload.clone()))
            .transpose()
            .map_err(unreadable("the recorded recall of that turn"))?;
        let action = events("user_action", None)
            .next()
            .and_then(|e| serde_json::from_value(e.payload.clone()).ok())
            .unwrap_or_default();
        Ok(Self {
            records,
            rolls,
            changes,
            activation,
            attempts,
            recalled,
            action,
        })
    }

    /// The player's submission, as it was played.
    fn input(&self, turn: &StoredTurn) -> PlayerInput {
        PlayerInput {
            text: turn.action_text.clone(),
            whisper_to: self.action.whisper_to.clone(),
            action_id: turn.user_action_id.clone(),
            // A committed turn either asked nothing or had its question answered.
            clarified: true,
            // A picked choice's ruling, as it was played.
            ruling: self.action.ruling.clone(),
        }
    }
}
