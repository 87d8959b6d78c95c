//! Replaying a stored turn from its recorded model outputs and seed (seed 003 determinism).

use std::path::Path;

use serde_json::json;

use super::error::ControllerError;
use super::saves::load_campaign;
use super::turn::{PlayerInput, TurnError};
use crate::llm::record::AttemptKind;
use crate::store::{Store, StoreError};

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
    let unreadable = |what| move |source| ReplayError::Unreadable { what, source };
    let records: Vec<crate::llm::CallRecord> = turn
        .events
        .iter()
        .filter(|e| e.event_type == "model_output")
        .map(|e| serde_json::from_value(e.payload.clone()))
        .collect::<Result<_, _>>()
        .map_err(unreadable("a recorded model output"))?;
    let stored_rolls: Vec<serde_json::Value> = turn
        .events
        .iter()
        .filter(|e| e.event_type == "tool_call" && e.step_name == "dice")
        .map(|e| e.payload.clone())
        .collect();
    let action = turn
        .events
        .iter()
        .find(|e| e.event_type == "user_action")
        .map(|e| e.payload.clone())
        .unwrap_or_default();
    let mut state = super::save::state_at(&store, campaign, &turn.scene_before_id)?;
    // The turn is shown exactly the lore and memories it was shown then (and
    // rolls with the same episodic +1); nothing is embedded again.
    if let Some(recall) = turn.events.iter().find(|e| e.event_type == "recall") {
        state.recalled = serde_json::from_value(recall.payload.clone())
            .map_err(unreadable("the recorded recall of that turn"))?;
    }
    let mut differences = Vec::new();
    // The skills are offered as they were; their recorded runs are handed
    // back in order and no script runs again (#25).
    let attempts: Vec<super::skills::SkillAttempt> = turn
        .events
        .iter()
        .filter(|e| e.event_type == "tool_call" && e.step_name == "skills")
        .map(|e| serde_json::from_value(e.payload.clone()))
        .collect::<Result<_, _>>()
        .map_err(unreadable("a recorded skill run"))?;
    state.skills = super::skills::SessionSkills::discover(&info.campaign_path, None);
    let mut recorded = super::skills::Recorded::new(&attempts);
    let gateway = crate::llm::Gateway::open().map_err(|e| ReplayError::Gateway(Box::new(e)))?;
    let backend =
        crate::llm::ScriptedBackend::new(crate::llm::Script::from_records(records.iter()));
    gateway.register_script(&state.small_model, backend.clone());
    gateway.register_script(&state.large_model, backend);
    // The player's narration is asked for in as many drafts as were recorded.
    let drafts = records
        .iter()
        .filter(|r| r.attempts.iter().any(|a| a.kind == AttemptKind::Draft))
        .map(|r| r.attempts.len())
        .max()
        .unwrap_or(1);
    gateway.set_drafts(&state.large_model, u32::try_from(drafts).unwrap_or(1));
    let input = PlayerInput {
        text: turn.action_text.clone(),
        whisper_to: action["whisper_to"].as_str().map(str::to_owned),
        action_id: turn.user_action_id.clone(),
        // A committed turn either asked nothing or had its question answered.
        clarified: true,
        // A picked choice's ruling, as it was played.
        ruling: serde_json::from_value(action["ruling"].clone()).unwrap_or(None),
    };
    let result = super::play::run_turn_with(
        &gateway,
        state,
        input,
        &mut |work| recorded.next(work),
        |_| {},
    )
    .map_err(ReplayError::Diverged)?;
    if result.skills != attempts {
        differences.push(format!(
            "skills: {} plans recorded, {} replayed differently",
            attempts.len(),
            result.skills.len()
        ));
    }
    let stored: Vec<(String, String, String)> = turn
        .messages
        .iter()
        .map(|m| (m.owner.clone(), m.kind.name().to_owned(), m.content.clone()))
        .collect();
    let replayed: Vec<(String, String, String)> = result
        .messages
        .iter()
        .map(|m| (m.owner.clone(), m.kind.name().to_owned(), m.content.clone()))
        .collect();
    if stored != replayed {
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
    }
    let rolls: Vec<serde_json::Value> = result
        .rolls
        .iter()
        .map(|r| serde_json::to_value(r).unwrap_or_default())
        .collect();
    if rolls != stored_rolls {
        differences.push(format!(
            "dice: stored {}, replayed {}",
            serde_json::Value::from(stored_rolls.clone()),
            serde_json::Value::from(rolls)
        ));
    }
    let mut world = result.world.clone();
    let scene_state = std::mem::take(&mut world.scene);
    if world != scene.world || scene_state != scene.state {
        differences.push("the world after the turn differs".into());
    }
    if turn.result["choices"] != json!(result.choices) {
        differences.push(format!(
            "choices: stored {}, replayed {:?}",
            turn.result["choices"], result.choices
        ));
    }
    Ok(Replayed {
        scene_index,
        model_calls: records.len(),
        dice: stored_rolls.len(),
        differences,
    })
}
