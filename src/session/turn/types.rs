//! The session's vocabulary: the state a turn reads, the player's input, and what a turn yields.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::campaign::Campaign;
use crate::llm::{CallRecord, CallRequest, LlmError};
use crate::rules::{Change, Roll, WorldState};
use crate::session::drafts;
use crate::session::pins::PromptPins;
use crate::session::recalled::Recalled;
use crate::session::skills::{SessionSkills, SkillAttempt};
use crate::skills::Health;
use crate::transcript::observation::Observation;
use crate::transcript::stream::{Message, StateEntry, Stream};

/// In-game minutes one played turn takes.
pub const TURN_MINUTES: f64 = 5.0;

/// The persona's character id in every campaign.
pub const PERSONA: &str = crate::campaign::PLAYER;

/// How `TurnResult::continuity`'s notes end where a narration was asked for
/// again, and where its second telling was kept (`turn::retell`; the harness
/// counts them).
pub const ASKED_AGAIN: &str = ": asked again";
pub const KEPT_SECOND: &str = ": kept the second telling";

/// How `TurnResult::refused`'s notes start where the engine added a choice
/// of its own (`turn::offers`, #42): a note for the overlay, not a refusal.
pub const ENGINE_OFFERS: &str = "choices: the engine offers";

/// What the player brings to a session: tone, difficulty, lines and veils (seed 001 calibration).
#[derive(Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    pub tone: String,
    pub difficulty: String,
    /// Never shown.
    pub lines: Vec<String>,
    /// Kept off-screen.
    pub veils: Vec<String>,
    /// At most this many NPCs act in one turn (#21): set when the session is
    /// created, from session zero or the campaign. `None` (saves made before
    /// the setting existed) lets every activated NPC act, as those turns did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npcs_per_turn: Option<u32>,
}

impl Calibration {
    /// The word check of these lines and veils (#41), compiled once.
    pub fn guard(&self) -> crate::session::lines::Guard {
        crate::session::lines::Guard::new(&self.lines, &self.veils)
    }
}

/// Everything a turn reads: the session as it stands.
#[derive(Clone, Debug)]
pub struct SessionState {
    pub campaign: Arc<Campaign>,
    pub world: WorldState,
    pub stream: Stream,
    pub observations: BTreeMap<String, Vec<Observation>>,
    pub calibration: Calibration,
    pub small_model: String,
    pub large_model: String,
    pub seed: u64,
    pub turn_index: u64,
    pub play_minutes: f64,
    /// Latent and manifest states per character (seed 004 visibility levels).
    pub states: BTreeMap<String, Vec<StateEntry>>,
    pub tone: String,
    /// Lore and memories retrieved for the coming turn (set by the orchestrator before it starts).
    pub recalled: Recalled,
    /// Compressed summaries of the turns up to `summarised_through`, oldest
    /// first (seed 004 stream summarisation): the narrator reads these instead
    /// of those turns' messages.
    pub earlier: Vec<String>,
    /// The last turn id the summaries cover (0: none).
    pub summarised_through: u64,
    /// The skills the planner may call, and their health (#25).
    pub skills: SessionSkills,
    /// The prompt version each stage renders at (the save's pins).
    pub prompt_pins: PromptPins,
}

impl SessionState {
    /// Where the scene is: its location id and its campaign name (the id,
    /// spaced, when the campaign does not name it).
    pub fn place(&self) -> (String, String) {
        let id = self
            .world
            .scene
            .get("location")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let name = self.campaign.locations.get(&id).map_or_else(
            || {
                self.world
                    .introduced
                    .get(&id)
                    .map_or_else(|| id.replace('_', " "), |p| p.name.clone())
            },
            |l| l.name.clone(),
        );
        (id, name)
    }

    /// Every place a move may name, (id, name): the campaign's and those
    /// play introduced (#41).
    pub fn places(&self) -> Vec<(&str, &str)> {
        self.campaign
            .locations
            .iter()
            .map(|(id, l)| (id.as_str(), l.name.as_str()))
            .chain(
                self.world
                    .introduced
                    .iter()
                    .filter(|(_, p)| p.kind == crate::rules::op::NewKind::Place)
                    .map(|(id, p)| (id.as_str(), p.name.as_str())),
            )
            .collect()
    }

    /// The turn id the next submission gets. Submissions are counted across
    /// branches (seed 004: it increments each time the player submits), so a
    /// rewound story never reuses one.
    /// `request` at the version the session pins for its stage (a request
    /// that names a version keeps it).
    pub fn pinned(&self, mut request: CallRequest) -> CallRequest {
        if request.version.is_none() {
            request.version = self.prompt_pins.version(&request.stage).map(str::to_owned);
        }
        request
    }

    pub fn next_turn_id(&self) -> u64 {
        (self.turn_index + 1).max(self.stream.next_turn())
    }

    /// Carry a committed turn into the state, so the next turn starts from it
    /// without reading the save again.
    pub fn advance(&mut self, result: &TurnResult) {
        self.stream.messages.extend(result.messages.iter().cloned());
        self.world.clone_from(&result.world);
        for o in &result.observations {
            self.observations
                .entry(o.character_id.clone())
                .or_default()
                .push(o.clone());
        }
        self.play_minutes = result.play_minutes;
        self.skills.health.clone_from(&result.skill_health);
        self.turn_index += 1;
    }
}

/// The player's submission.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlayerInput {
    pub text: String,
    /// `/whisper NPC text`: the narrator sees whom it is for.
    pub whisper_to: Option<String>,
    /// The idempotency key of this submission.
    pub action_id: String,
    /// Set when this answers the one clarification question a turn may ask.
    pub clarified: bool,
    /// A picked choice's ruling, known when it was offered (#21 rules fast
    /// path): the engine rolls at once and no referee is asked. Free text has none.
    pub ruling: Option<Ruling>,
}

/// What the referee would decide for an offered choice: no roll, or a check
/// with the stat it leans on (the stat its difficulty mark shows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "roll", rename_all = "snake_case")]
pub enum Ruling {
    /// An ordinary move: it simply happens.
    None,
    Check {
        check: String,
        stat: Option<String>,
    },
}

/// One model call the runner wants made.
#[derive(Clone, Debug)]
pub struct PendingCall {
    pub id: u32,
    pub request: CallRequest,
}

/// Why a turn failed: the stage, and the reason, and nothing of it was kept.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[error("the {stage} stage failed: {reason}")]
pub struct TurnError {
    pub stage: String,
    pub reason: String,
    /// Whether trying again may work (a transient model error).
    pub retryable: bool,
}

impl TurnError {
    pub(crate) fn from_llm(stage: &str, e: &LlmError) -> Self {
        Self {
            stage: stage.to_owned(),
            reason: e.to_string(),
            retryable: e.is_retryable(),
        }
    }
}

/// A dice roll made this turn, for the player, the log and replay.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct RollRecord {
    pub actor: String,
    pub check: String,
    pub stat: Option<String>,
    pub roll: Roll,
    pub band: String,
    pub label: String,
    /// A roll made to resist this NPC's action (a contested check, #41).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

impl RollRecord {
    /// `actor`'s check as rolled; `against`: the NPC whose action it resists.
    pub fn of(actor: &str, outcome: &crate::rules::CheckOutcome, against: Option<&str>) -> Self {
        Self {
            actor: actor.to_owned(),
            check: outcome.check.clone(),
            stat: outcome.stat.clone(),
            roll: outcome.roll.clone(),
            band: outcome.band.clone(),
            label: outcome.label.clone(),
            against: against.map(str::to_owned),
        }
    }
}

/// The d100 an NPC rolled against its chattiness to act this turn (seed 004
/// step 4): recorded so replay shows a different cast acting as a difference.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ActivationRoll {
    pub npc: String,
    /// The d100's face (100 when the die could not be rolled).
    pub roll: i64,
    /// Chattiness × 100: the roll acts at or under it.
    pub threshold: i64,
}

/// Seed 002 §4.2.1: what the player is offered when the choice stage fails
/// or nothing it offered can be picked.
pub const GENERIC_CHOICES: [&str; 3] = ["Continue", "Look around", "Wait"];

/// `GENERIC_CHOICES`, as a turn offers them.
pub fn generic_choices() -> Vec<String> {
    GENERIC_CHOICES.iter().map(|&c| c.to_owned()).collect()
}

/// What a finished turn produced.
#[derive(Clone, Debug)]
pub struct TurnResult {
    /// The new messages, in order.
    pub messages: Vec<Message>,
    pub world: WorldState,
    pub changes: Vec<Change>,
    pub rolls: Vec<RollRecord>,
    pub observations: Vec<Observation>,
    pub choices: Vec<String>,
    /// The choices are the generic ones (`GENERIC_CHOICES`): the choice
    /// stage failed or offered nothing the player could pick.
    pub generic_choices: bool,
    /// NPCs who acted, in order, and those who stayed quiet.
    pub acted: Vec<String>,
    pub skipped: Vec<String>,
    /// The chattiness rolls that chose them (baked NPCs roll none).
    pub activation: Vec<ActivationRoll>,
    /// Every model call, in the order it was made (what replay answers in;
    /// calls on two lanes finish in any order).
    pub records: Vec<CallRecord>,
    /// Model proposals the rules refused (kept for the log, not applied).
    pub refused: Vec<String>,
    /// State ops the models proposed (extractors, lore), and how many of
    /// them the rules refused.
    pub ops_proposed: usize,
    pub ops_refused: usize,
    /// Narrations written in drafts: which one was kept and how each read.
    pub drafts: Vec<DraftChoice>,
    pub play_minutes: f64,
    /// A question instead of a turn: nothing is committed; the player answers.
    pub clarification: Option<String>,
    /// Why the player's move could not happen (the engine's check or the referee's ruling).
    pub blocked: Option<super::check::Blocked>,
    /// Consequences that fired this turn (clock triggers, failure streaks, ruleset effects).
    pub fired: Vec<String>,
    /// Consequences that fired after the last turn's narrations, told in this one.
    pub carried: Vec<String>,
    /// Consequences the narration left untold, which the engine told itself.
    pub appended: Vec<String>,
    /// Where generated text met the player's lines or veils, by category (never the text).
    pub limits: Vec<String>,
    /// Narrations that contradicted the world, told again, and which telling
    /// was kept (`turn::retell`).
    pub continuity: Vec<String>,
    /// What the narrator and choices were shown from memory and lore.
    pub recalled: Recalled,
    /// Where the turn's time went (#21): never part of what replays.
    pub budget: crate::session::budget::TurnBudget,
    /// The skills' plans and what came of each (#25), recorded so replay
    /// hands them back instead of running the scripts again.
    pub skills: Vec<SkillAttempt>,
    /// Every plan failed: seed 002 §2.3.4's line for the player.
    pub skill_fallback: Option<String>,
    /// The skills' health after the turn.
    pub skill_health: Health,
}

impl TurnResult {
    /// A turn no model took part in (a fallback narration, `/end-scene`):
    /// `messages` and `choices`, the world as it stands, nothing rolled or
    /// changed, the play clock at `play_minutes`.
    pub fn without_model(
        state: &SessionState,
        messages: Vec<Message>,
        choices: Vec<String>,
        play_minutes: f64,
    ) -> Self {
        Self {
            messages,
            world: state.world.clone(),
            changes: Vec::new(),
            rolls: Vec::new(),
            observations: Vec::new(),
            generic_choices: !choices.is_empty() && choices == generic_choices(),
            choices,
            acted: Vec::new(),
            skipped: Vec::new(),
            activation: Vec::new(),
            records: Vec::new(),
            refused: Vec::new(),
            ops_proposed: 0,
            ops_refused: 0,
            drafts: Vec::new(),
            play_minutes,
            clarification: None,
            blocked: None,
            fired: Vec::new(),
            carried: Vec::new(),
            appended: Vec::new(),
            limits: Vec::new(),
            continuity: Vec::new(),
            recalled: Recalled::default(),
            budget: crate::session::budget::TurnBudget::default(),
            skills: Vec::new(),
            skill_fallback: None,
            skill_health: state.skills.health.clone(),
        }
    }
}

/// Which draft of a narration a turn kept, and how each read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DraftChoice {
    pub actor: String,
    /// Index of the kept draft (0: the first seed).
    pub kept: usize,
    pub verdicts: Vec<drafts::Verdict>,
    /// One line for the log and the debug overlay.
    pub note: String,
}
