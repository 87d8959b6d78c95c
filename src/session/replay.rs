//! Replaying a stored turn from its recorded model outputs and seed (seed 003 determinism).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::error::ControllerError;
use super::save_files::load_campaign;
use super::skills::{Recorded, SessionSkills, SkillAttempt};
use super::turn::{PlayerInput, Ruling, SessionState, TurnError, TurnResult};
use crate::llm::record::AttemptKind;
use crate::llm::{CallRecord, Gateway, Script, ScriptedBackend};
use crate::store::{Scene, Store, StoreError, StoredTurn};

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
}

impl From<StoreError> for ReplayError {
    fn from(e: StoreError) -> Self {
        Self::Store(Box::new(e))
    }
}

/// What replaying a stored turn found.
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
/// the same messages, dice, world and choices must come out.
pub fn replay(save: &Path, scene_index: i64) -> Result<Replayed, ReplayError> {
    let store = Store::open(save)?;
    let info = store.session()?;
    let campaign = load_campaign(&info.campaign_path)?;
    if scene_index == 0 {
        return Err(ReplayError::Opening);
    }
    let scene = store.scene_on_branch(scene_index)?;
    let turn = store.stored_turn(&scene.id)?;
    if turn.kind != "play" {
        return Err(ReplayError::NotPlayed {
            scene: scene_index,
            kind: turn.kind,
        });
    }
    let recording = Recording::of(&turn)?;
    let mut state = super::save_rows::state_at(&store, campaign, &turn.scene_before_id)?;
    // The turn is shown exactly the lore and memories it was shown then (and
    // rolls with the same episodic +1); nothing is embedded again.
    if let Some(recalled) = recording.recalled.clone() {
        state.recalled = recalled;
    }
    // The skills are offered as they were; their recorded runs are handed
    // back in order and no script runs again (#25).
    state.skills = SessionSkills::discover(&info.campaign_path, None);
    let gateway = answering(&recording.records, &state)?;
    let mut recorded = Recorded::new(&recording.attempts);
    let result = super::play::run_turn_with(
        &gateway,
        state,
        recording.input(&turn),
        &mut |work| recorded.next(work),
        |_| {},
    )
    .map_err(ReplayError::Diverged)?;
    Ok(Replayed {
        scene_index,
        model_calls: recording.records.len(),
        dice: recording.rolls.len(),
        differences: recording.differences(&turn, &scene, &result),
    })
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

    /// Where the replayed `result` differs from what the turn stored.
    fn differences(&self, turn: &StoredTurn, scene: &Scene, result: &TurnResult) -> Vec<String> {
        let mut differences = Vec::new();
        if result.skills != self.attempts {
            differences.push(format!(
                "skills: {} plans recorded, {} replayed differently",
                self.attempts.len(),
                result.skills.len()
            ));
        }
        let said = |m: &crate::transcript::Message| {
            (m.owner.clone(), m.kind.name().to_owned(), m.content.clone())
        };
        let stored: Vec<_> = turn.messages.iter().map(said).collect();
        let replayed: Vec<_> = result.messages.iter().map(said).collect();
        for (i, (a, b)) in stored.iter().zip(&replayed).enumerate() {
            if a != b {
                differences.push(format!("message {i}: stored {a:?}, replayed {b:?}"));
            }
        }
        if stored.len() != replayed.len() {
            differences.push(format!(
                "{} messages stored, {} replayed",
                stored.len(),
                replayed.len()
            ));
        }
        let rolls: Vec<Value> = result
            .rolls
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect();
        if rolls != self.rolls {
            differences.push(format!(
                "dice: stored {}, replayed {}",
                Value::from(self.rolls.clone()),
                Value::from(rolls)
            ));
        }
        let mut world = result.world.clone();
        let scene_state = std::mem::take(&mut world.scene);
        if world != scene.world || scene_state != scene.state {
            differences.push("the world after the turn differs".into());
        }
        let offered = super::save_rows::offered_choices(&turn.result);
        if offered != result.choices {
            differences.push(format!(
                "choices: stored {offered:?}, replayed {:?}",
                result.choices
            ));
        }
        differences
    }
}

/// A gateway whose model keys answer with `records`' outputs, in order, in as
/// many drafts as were recorded for the player's narration.
fn answering(records: &[CallRecord], state: &SessionState) -> Result<Gateway, ReplayError> {
    let gateway = Gateway::open().map_err(|e| ReplayError::Gateway(Box::new(e)))?;
    let backend = ScriptedBackend::new(Script::from_records(records.iter()));
    gateway.register_script(&state.small_model, backend.clone());
    gateway.register_script(&state.large_model, backend);
    let drafts = records
        .iter()
        .filter(|r| r.attempts.iter().any(|a| a.kind == AttemptKind::Draft))
        .map(|r| r.attempts.len())
        .max()
        .unwrap_or(1);
    gateway.set_drafts(&state.large_model, u32::try_from(drafts).unwrap_or(1));
    Ok(gateway)
}
