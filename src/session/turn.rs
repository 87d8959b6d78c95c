//! One turn of an open-ended session as a state machine (seed 004 turn structure): it asks for model calls, is handed their outcomes, and ends in a [`TurnCommit`]-ready result or a typed failure.
//!
//! The runner never calls the model itself: [`TurnRunner::take_requests`]
//! hands out the calls that may run now (a narrator and an extractor together,
//! seed 004's "parallel"), and [`TurnRunner::deliver`] takes their outcomes in
//! any order. The terminal drives it by waiting on each call; the ECS adapter
//! by polling call handles each frame; tests with the scripted backend.
//!
//! Order: persona intention → resolve (engine rolls the ruleset check; a
//! picked choice brings its ruling and skips it) → narrator; NPC activation
//! (the addressed NPC first, baked ones, then by chattiness, each non-baked
//! NPC rolling against it; at most `npcs_per_turn` act); per NPC: intent →
//! narrator; then the next choices. Each narration's extractors (persona or
//! character extractor, lore extractor) are made when seed 004 says and held
//! back until the choices are asked for (#21: the player reads first, the
//! extractors run while they read; the turn commits after them). State ops from band effects, extractors and lore are applied
//! through [`WorldState::apply`]; a model-proposed batch the rules refuse is
//! dropped and logged, never half-applied.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use super::observation::{DEFAULT_LAMBDA, Observation, recall};
use super::skills::{SessionSkills, SkillAttempt, SkillRun, SkillWork};
use super::stream::{
    Kind, Message, MessageId, NARRATOR, SYSTEM, Stage, StateEntry, Stream, states_for, view,
};
use super::{drafts, people};
use crate::campaign::{Campaign, slug};
use crate::llm::{CallOutcome, CallRecord, CallRequest, LlmError};
use crate::memory::Recalled;
use crate::rules::state::WHEREABOUTS;
use crate::rules::{Change, CheckOutcome, Dice, Modifiers, OpKind, Roll, StateOp, WorldState};
use crate::rules::{offer, standing};
use crate::skills::execute::{MAX_ATTEMPTS, PlanRequest, fallback_narration};
use crate::skills::{Health, Plan, planner};

/// The most known facts the referee is shown (#21 prompt diet).
const RESOLVE_FACTS: usize = 6;

/// The known facts the lorebook keeper is shown beside a narration: those it
/// may repeat or change (#21 prompt diet; it was the newest 30).
const LORE_KNOWN: usize = 8;

/// The narrations an extractor reads before the intention (#21 prompt diet).
const EXTRACT_HISTORY: usize = 3;

/// The fewest messages an NPC deciding what to do is shown, newest (#21
/// prompt diet; older turns reach it as its memories).
const NPC_HISTORY: usize = 4;
/// NPCs whose intent prompts are primed between turns.
const PRIMED_NPCS: usize = 4;
/// The window over an NPC's history moves in steps of this many messages,
/// not one message at a time, so between steps its prompt only grows and the
/// model's cached prefix of the last one carries over (it shows 4 to 11).
const NPC_HISTORY_STEP: usize = 8;

/// In-game minutes one played turn takes.
pub const TURN_MINUTES: f64 = 5.0;

/// The persona's character id in every campaign.
pub const PERSONA: &str = crate::campaign::PLAYER;

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
        let name = self
            .campaign
            .locations
            .get(&id)
            .map_or_else(|| id.replace('_', " "), |l| l.name.clone());
        (id, name)
    }

    /// The turn id the next submission gets. Submissions are counted across
    /// branches (seed 004: it increments each time the player submits), so a
    /// rewound story never reuses one.
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
    fn from_llm(stage: &str, e: &LlmError) -> Self {
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
    /// What the narrator and choices were shown from memory and lore.
    pub recalled: Recalled,
    /// Where the turn's time went (#21): never part of what replays.
    pub budget: super::budget::TurnBudget,
    /// The skills' plans and what came of each (#25), recorded so replay
    /// hands them back instead of running the scripts again.
    pub skills: Vec<SkillAttempt>,
    /// Every plan failed: seed 002 §2.3.4's line for the player.
    pub skill_fallback: Option<String>,
    /// The skills' health after the turn.
    pub skill_health: Health,
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

#[derive(Clone, Debug)]
enum Purpose {
    Resolve,
    Narrate {
        actor: String,
    },
    Extract {
        owner: String,
    },
    NpcIntent {
        npc: String,
    },
    Lore,
    Choices,
    /// The planner (#25): which skills this move calls, attempt `n`.
    Plan {
        attempt: u32,
    },
}

impl Purpose {
    /// An extractor's call: held back until the choices are asked for, its
    /// answer applied when the turn finishes.
    fn is_bookkeeping(&self) -> bool {
        matches!(self, Purpose::Extract { .. } | Purpose::Lore)
    }

    fn stage(&self) -> &'static str {
        match self {
            Purpose::Resolve => "resolve",
            Purpose::Narrate { .. } => "narrate",
            Purpose::Extract { .. } => "extract",
            Purpose::NpcIntent { .. } => "npc_intent",
            Purpose::Lore => "lore_extract",
            Purpose::Choices => "choices",
            Purpose::Plan { .. } => planner::STAGE,
        }
    }
}

/// Where the turn is.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Waiting for the persona's resolution (and extractor).
    Persona,
    /// The skills are planned and run (#25), before the persona's narration.
    Skills,
    /// The persona's narration is being written.
    PersonaNarration,
    /// NPC `i` of the activation order is forming an intention or being narrated.
    Npc {
        index: usize,
        narrated: bool,
    },
    Choices,
    Done,
}

/// One turn in progress.
pub struct TurnRunner {
    state: SessionState,
    input: PlayerInput,
    turn_id: u64,
    first_new: usize,
    phase: Phase,
    next_id: u32,
    queued: Vec<PendingCall>,
    /// Extractor calls made but held back until the choices are asked for
    /// (#21: the player reads the narrations and gets the choices first; the
    /// extractors run while they read, and the turn commits after them).
    background: Vec<PendingCall>,
    /// Bookkeeping is sent at once, to the model's second lane.
    parallel_bookkeeping: bool,
    /// Model-proposed state ops this turn, and those the rules refused.
    ops_proposed: usize,
    ops_refused: usize,
    /// Extractor answers, applied in call order when the turn finishes,
    /// whatever order they came back in.
    extracted: BTreeMap<u32, (Purpose, Value)>,
    in_flight: BTreeMap<u32, Purpose>,
    dice: Dice,
    order: Vec<String>,
    skipped: Vec<String>,
    rolls: Vec<RollRecord>,
    changes: Vec<Change>,
    observations: Vec<Observation>,
    /// Records by call id (the order the calls were made).
    records: BTreeMap<u32, CallRecord>,
    refused: Vec<String>,
    drafts: Vec<DraftChoice>,
    choices: Vec<String>,
    generic_choices: bool,
    persona_intention: MessageId,
    outcome_text: String,
    blocked: String,
    clarification: Option<String>,
    error: Option<TurnError>,
    /// When the player submitted, in seconds since the Unix epoch (the budget's zero).
    submitted_at: f64,
    /// The skills' plans so far, and the one being run (#25).
    skill_attempts: Vec<SkillAttempt>,
    skill_disabled: BTreeSet<String>,
    /// A plan for the driver to run, until it takes it.
    skill_work: Option<SkillWork>,
    /// The driver is running a plan.
    skill_running: bool,
    skill_fallback: Option<String>,
    /// A `narrative_choice` from the skills: the turn's choices.
    skill_choices: Vec<String>,
    /// What the skills did, for the narrator.
    skill_notes: Vec<String>,
}

impl TurnRunner {
    /// Start a turn: the persona's intention enters the stream, its resolution and extractor are asked for.
    /// The calls worth priming ([`crate::llm::Gateway::prime`]) while the
    /// player reads, for whatever they do next: the referee's prompt for a
    /// typed move (all but the move itself), the persona's extractor, and the
    /// intent prompts of the NPCs present, likeliest to act first. Each is
    /// rendered from `state` as the next turn's call will be, so the model's
    /// cache holds all of those prompts but the new move and what it brings.
    pub fn primers(state: SessionState) -> Vec<CallRequest> {
        let runner = Self::new(state, PlayerInput::default());
        let mut primers = vec![runner.resolve_request()];
        let mut extract = runner.extract_request(PERSONA, runner.persona_intention);
        extract.background = true;
        primers.push(extract);
        primers.extend(
            runner
                .npcs_present()
                .iter()
                .take(PRIMED_NPCS)
                .map(|(npc, _, _)| runner.intent_request(npc)),
        );
        primers
    }

    fn new(state: SessionState, input: PlayerInput) -> Self {
        let turn_id = state.next_turn_id();
        let seed = state.seed ^ turn_id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Self {
            first_new: state.stream.messages.len(),
            turn_id,
            phase: Phase::Persona,
            next_id: 0,
            queued: Vec::new(),
            background: Vec::new(),
            parallel_bookkeeping: false,
            extracted: BTreeMap::new(),
            ops_proposed: 0,
            ops_refused: 0,
            in_flight: BTreeMap::new(),
            dice: Dice::seeded(seed),
            order: Vec::new(),
            skipped: Vec::new(),
            rolls: Vec::new(),
            changes: Vec::new(),
            observations: Vec::new(),
            records: BTreeMap::new(),
            refused: Vec::new(),
            drafts: Vec::new(),
            choices: Vec::new(),
            generic_choices: false,
            persona_intention: MessageId { turn_id, seq: 0 },
            outcome_text: String::new(),
            blocked: String::new(),
            clarification: None,
            error: None,
            submitted_at: crate::llm::record::now_seconds(),
            skill_attempts: Vec::new(),
            skill_disabled: BTreeSet::new(),
            skill_work: None,
            skill_running: false,
            skill_fallback: None,
            skill_choices: Vec::new(),
            skill_notes: Vec::new(),
            state,
            input,
        }
    }

    pub fn start(state: SessionState, input: PlayerInput) -> Self {
        let mut runner = Self::new(state, input);
        let turn_id = runner.turn_id;
        // Seed 004 step 1: the orchestrator marks a scene boundary before the turn.
        if let Some(marker) = pending_marker(&runner.state) {
            runner
                .state
                .stream
                .push(turn_id, SYSTEM, Kind::SceneMarker, marker, None);
        }
        let id = runner.state.stream.push(
            turn_id,
            PERSONA,
            Kind::Intention,
            runner.input.text.clone(),
            runner.input.whisper_to.clone(),
        );
        runner.persona_intention = id;
        // A picked choice carries its ruling: no referee call (#21).
        if runner.input.ruling.is_none() {
            let resolve = runner.resolve_request();
            runner.queue(Purpose::Resolve, resolve);
        }
        // The persona's extractor reads the move as the resolver does; it is
        // held back with the other extractors (`background`).
        let extract = runner.extract_request(PERSONA, id);
        runner.queue(
            Purpose::Extract {
                owner: PERSONA.into(),
            },
            extract,
        );
        match runner.input.ruling.clone() {
            Some(Ruling::Check { check, stat }) => {
                runner.roll(&check, stat.as_deref(), &[]);
                runner.advance();
            }
            Some(Ruling::None) => runner.advance(),
            None => {}
        }
        runner
    }

    /// Whose narration the call `id` writes (a character id), if it writes one.
    pub fn narrator_of(&self, id: u32) -> Option<&str> {
        match self.in_flight.get(&id) {
            Some(Purpose::Narrate { actor }) => Some(actor),
            _ => None,
        }
    }

    /// Calls to launch now; each is returned once.
    pub fn take_requests(&mut self) -> Vec<PendingCall> {
        std::mem::take(&mut self.queued)
    }

    /// Whether every call has come back and the turn is over (or failed).
    pub fn is_finished(&self) -> bool {
        self.error.is_some() || (self.phase == Phase::Done && self.in_flight.is_empty())
    }

    /// The dice rolled so far this turn (shown as they happen).
    pub fn rolls(&self) -> &[RollRecord] {
        &self.rolls
    }

    /// The narrations written so far this turn, in order: after the echo cut
    /// and the choice among drafts, as they will be committed.
    pub fn narrations(&self) -> Vec<&str> {
        self.state.stream.messages[self.first_new..]
            .iter()
            .filter(|m| m.kind == Kind::Narration)
            .map(|m| m.content.as_str())
            .collect()
    }

    /// The stage names of calls still out, those sent first (not the
    /// extractors held back for later); `skills` while a plan runs.
    pub fn waiting_for(&self) -> Vec<&'static str> {
        let held = |id: &u32| self.background.iter().any(|c| c.id == *id);
        let (sent, held): (Vec<_>, Vec<_>) = self.in_flight.iter().partition(|(id, _)| !held(id));
        let running = self.skills_busy().then_some("skills");
        running
            .into_iter()
            .chain(sent.into_iter().chain(held).map(|(_, p)| p.stage()))
            .collect()
    }

    /// A plan the skills should run now (#25), handed out once: the driver
    /// runs it (or, replaying, hands back the recorded run) and gives the
    /// result to [`Self::deliver_skills`].
    pub fn take_skill_work(&mut self) -> Option<SkillWork> {
        let work = self.skill_work.take();
        self.skill_running |= work.is_some();
        work
    }

    /// Hand back what running the plan came to.
    pub fn deliver_skills(&mut self, run: SkillRun) {
        if !self.skill_running {
            return;
        }
        self.skill_running = false;
        let Some(attempt) = self.skill_attempts.last_mut() else {
            return;
        };
        self.state.skills.health.record_result(&run.result);
        let number = attempt.attempt;
        let success = run.result.success;
        for r in &run.refused {
            self.refused.push(format!("skills: {r}"));
        }
        if success {
            let before = std::mem::replace(
                &mut self.state.world.skills,
                run.result.aggregated_state.clone(),
            );
            for tool in &run.result.tool_results {
                if let Some(summary) = tool.summary() {
                    self.skill_notes.push(format!("{}: {summary}", tool.skill));
                }
            }
            let changed = super::skills::changed_keys(&before, &self.state.world.skills);
            self.skill_notes.extend(
                super::skills::entries(&self.state.world.skills)
                    .into_iter()
                    .filter(|(k, _)| changed.contains(k))
                    .take(6)
                    .map(|(k, v)| format!("{k}: {v}")),
            );
            if let Some(choices) = run.result.choices().filter(|c| !c.is_empty()) {
                self.skill_choices = choices;
            }
        } else {
            let why = run.result.refused.as_ref().map_or_else(
                || format!("failed: {}", run.result.failed_tools.join(", ")),
                |f| format!("refused: {}", f.message),
            );
            self.refused
                .push(format!("skills: plan {number} of {MAX_ATTEMPTS} {why}"));
            self.skill_disabled
                .extend(run.result.disabled_skills.iter().cloned());
        }
        attempt.run = Some(run);
        let replanned = !success && number < MAX_ATTEMPTS && self.ask_planner(number + 1);
        if !success && !replanned {
            let fallback = fallback_narration(&self.input.text, self.skill_attempts.len());
            self.refused.push(format!(
                "skills: every plan failed; the player was told: {fallback}"
            ));
            self.skill_fallback = Some(fallback);
        }
        self.advance();
    }

    /// Ask the planner for attempt `n` (#25), with the skills that failed so
    /// far left out; false when no skill is left to choose from.
    fn ask_planner(&mut self, attempt: u32) -> bool {
        let request = PlanRequest {
            attempt,
            disabled_skills: self.left_out().into_iter().collect(),
            parent_plan_id: self.last_plan_id(),
        };
        let outcome = if self.blocked.is_empty() {
            without_roll(&self.outcome_text)
        } else {
            format!("it cannot happen: {}", self.blocked)
        };
        let Some(call) = planner::request(
            &self.state.skills.found,
            &self.state.small_model,
            &self.input.text,
            &outcome,
            &request,
            self.state.recalled.skills.as_ref(),
        ) else {
            return false;
        };
        let call = call.seed(self.call_seed());
        self.queue(Purpose::Plan { attempt }, call);
        true
    }

    /// With no skill offered to the planner (none enabled, or none the move
    /// calls for among those that list moves), the campaign's every-turn
    /// tools still run: a plan of just those; false when there are none.
    fn plan_every_turn(&mut self) -> bool {
        let mut every_turn = Plan::default();
        self.add_every_turn(&mut every_turn);
        if every_turn.tools.is_empty() {
            // Nothing to run: no plan to record either.
            return false;
        }
        self.on_plan(1, Ok(json!({"tools": []})));
        true
    }

    /// The planner's answer for attempt `n`, with the campaign's every-turn
    /// tools added: a plan for the driver to run, or none (no tools; no plan
    /// at all and nothing every turn: the turn goes on without skills).
    fn on_plan(&mut self, attempt: u32, answer: Result<Value, String>) {
        let id = format!("plan-{}-{attempt}", self.turn_id);
        let (mut plan, planner_error) = match answer.and_then(|v| planner::to_plan(v, &id)) {
            Ok(plan) => (plan, None),
            Err(e) => {
                // Leaving skills out cannot mend a planner that gives no
                // plan: it is not asked again this turn.
                self.refused
                    .push(format!("skills: no plan this turn ({e})"));
                let empty = Plan {
                    request_id: id,
                    ..Plan::default()
                };
                (empty, Some(e))
            }
        };
        plan.metadata.generation_attempt = attempt;
        plan.metadata.parent_plan_id = self.last_plan_id();
        plan.disabled_skills = self.skill_disabled.iter().cloned().collect();
        self.add_every_turn(&mut plan);
        if !plan.tools.is_empty() {
            self.skill_work = Some(SkillWork {
                plan: plan.clone(),
                state: self.state.world.skills.clone(),
            });
        }
        self.skill_attempts.push(SkillAttempt {
            attempt,
            plan: Some(plan),
            planner_error,
            run: None,
        });
    }

    /// The campaign's `skills_every_turn` tools the plan does not call yet,
    /// each optional, when their skill is found and not left out.
    fn add_every_turn(&self, plan: &mut Plan) {
        let found = &self.state.skills.found;
        let left_out = self.left_out();
        for path in &self.state.campaign.manifest.skills_every_turn {
            let name = crate::skills::plan::skill_of(path);
            let Some(skill) = found.get(name) else {
                continue;
            };
            let Some(script) = skill.script(path) else {
                continue;
            };
            let left_out = left_out.contains(name);
            // Called already (`weather` and `weather/advance` name one script).
            let called = plan.tools.iter().any(|t| {
                crate::skills::plan::skill_of(&t.tool_path) == name
                    && skill
                        .script(&t.tool_path)
                        .is_some_and(|s| s.name == script.name)
            });
            if left_out || called {
                continue;
            }
            plan.tools.push(crate::skills::plan::ToolCall {
                tool_id: format!("every-turn-{}", path.replace('/', "-")),
                tool_path: path.clone(),
                // Where and when the scene is, for a skill starting out.
                input: json!({"scene": self.state.world.scene}),
                dependencies: Vec::new(),
                required: false,
                is_async: false,
                retry_policy: None,
            });
        }
    }

    /// The skills left out of this turn's plans: those that failed in an
    /// earlier plan, and those health has disabled for the session.
    fn left_out(&self) -> BTreeSet<String> {
        let mut out = self.skill_disabled.clone();
        out.extend(self.state.skills.health.disabled());
        out
    }

    /// The request id of this turn's last plan, the next one's parent.
    fn last_plan_id(&self) -> Option<String> {
        self.skill_attempts
            .last()
            .and_then(|a| a.plan.as_ref())
            .map(|p| p.request_id.clone())
    }

    /// A plan waits to be taken or is running.
    fn skills_busy(&self) -> bool {
        self.skill_running || self.skill_work.is_some()
    }

    /// The next choices, once the choice stage has answered (the turn may
    /// still be finishing its extractors).
    pub fn choices(&self) -> &[String] {
        &self.choices
    }

    /// Hand back one call's outcome.
    pub fn deliver(&mut self, id: u32, outcome: CallOutcome) {
        let Some(purpose) = self.in_flight.remove(&id) else {
            return;
        };
        self.records.insert(id, outcome.record.clone());
        if self.error.is_some() {
            return;
        }
        let value = match outcome.result {
            Ok(v) => v,
            // Seed 002 §4.2.1: a failed choice stage costs the turn nothing;
            // the player gets the generic choices.
            Err(e) if matches!(purpose, Purpose::Choices) => {
                self.refused
                    .push(format!("choices: the stage failed ({e})"));
                self.offer_generic_choices();
                self.advance();
                return;
            }
            // A planner that fails costs the turn its skills, nothing more.
            Err(e) if matches!(purpose, Purpose::Plan { .. }) => {
                if let Purpose::Plan { attempt } = purpose {
                    self.on_plan(attempt, Err(e.to_string()));
                }
                self.advance();
                return;
            }
            // An extractor that fails proposes nothing: the turn the player
            // has already read stands, without its bookkeeping (#21).
            Err(e) if purpose.is_bookkeeping() => {
                self.refused.push(format!(
                    "{}: the stage failed, nothing it proposed was applied ({e})",
                    purpose.stage()
                ));
                self.advance();
                return;
            }
            Err(e) => {
                self.error = Some(TurnError::from_llm(purpose.stage(), &e));
                return;
            }
        };
        match purpose {
            Purpose::Resolve => self.on_resolve(&value),
            Purpose::Narrate { actor } => {
                let part = |role: crate::llm::Role| -> String {
                    outcome.record.first().map_or_else(String::new, |a| {
                        a.messages
                            .iter()
                            .filter(|m| m.role == role)
                            .map(|m| m.content.as_str())
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                };
                let (system, user) = (part(crate::llm::Role::System), part(crate::llm::Role::User));
                let text = match &value {
                    Value::Array(drafts) => self.keep_draft(&actor, drafts, &system, &user),
                    other => other
                        .as_str()
                        .map_or_else(|| other.to_string(), str::to_owned),
                };
                let kept = cut_echo(&text, &system, &user);
                if kept.len() < text.trim().len() {
                    self.refused.push(format!(
                        "narrate: cut where the narration began repeating its prompt ({} of {} characters kept)",
                        kept.len(),
                        text.trim().len()
                    ));
                }
                let kept = drafts::whole_sentences(kept);
                if kept.is_empty() {
                    self.error = Some(TurnError {
                        stage: "narrate".into(),
                        reason: "the narrator only repeated its instructions".into(),
                        retryable: true,
                    });
                    return;
                }
                self.on_narration(&actor, &Value::String(kept.to_owned()));
            }
            held @ (Purpose::Extract { .. } | Purpose::Lore) => {
                self.extracted.insert(id, (held, value));
            }
            Purpose::NpcIntent { npc } => self.on_npc_intent(&npc, &value),
            Purpose::Choices => self.on_choices(&value),
            Purpose::Plan { attempt } => self.on_plan(attempt, Ok(value)),
        }
        self.advance();
    }

    /// The turn's result, or why it failed.
    pub fn finish(mut self) -> Result<TurnResult, TurnError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.is_finished() {
            return Err(TurnError {
                stage: self.waiting_for().join(", "),
                reason: "the turn was stopped before every stage answered".into(),
                retryable: true,
            });
        }
        // The extractors' state ops, observations and facts, in call order.
        for (purpose, value) in std::mem::take(&mut self.extracted).into_values() {
            match purpose {
                Purpose::Extract { owner } => self.on_extract(&owner, &value),
                Purpose::Lore => self.on_lore(&value),
                _ => {}
            }
        }
        let ready_ms = (crate::llm::record::now_seconds() - self.submitted_at) * 1000.0;
        let records: Vec<CallRecord> = std::mem::take(&mut self.records).into_values().collect();
        let budget = super::budget::TurnBudget::of(self.submitted_at, &records, ready_ms);
        let mut world = self.state.world;
        standing::decay(&self.state.campaign.standing, &mut world, TURN_MINUTES);
        let now = self.state.play_minutes + TURN_MINUTES;
        Ok(TurnResult {
            messages: self.state.stream.messages[self.first_new..].to_vec(),
            world,
            changes: self.changes,
            rolls: self.rolls,
            observations: self.observations,
            choices: self.choices,
            generic_choices: self.generic_choices,
            acted: self.order,
            skipped: self.skipped,
            records,
            refused: self.refused,
            ops_proposed: self.ops_proposed,
            ops_refused: self.ops_refused,
            drafts: self.drafts,
            play_minutes: now,
            clarification: self.clarification,
            recalled: self.state.recalled,
            budget,
            skills: self.skill_attempts,
            skill_fallback: self.skill_fallback,
            skill_health: self.state.skills.health,
        })
    }

    /// The draft of `actor`'s narration that reads best (`session::drafts`),
    /// judged after the echo cut against the memory and lore its prompt was
    /// shown; the choice goes to the log and the debug overlay.
    fn keep_draft(&mut self, actor: &str, drafts: &[Value], system: &str, user: &str) -> String {
        let texts: Vec<&str> = drafts.iter().map(|d| d.as_str().unwrap_or("")).collect();
        let recalled = &self.state.recalled;
        let memory = recalled
            .memories
            .first()
            .map_or_else(String::new, |m| brief(&m.summary, 1, 240));
        let lore = recalled
            .lore
            .first()
            .map_or_else(String::new, |h| brief(&h.text, 2, 240));
        let action = self
            .message(self.persona_intention)
            .map_or("", |m| m.content.as_str());
        let said_anyway = format!("{action} {}", self.state.place().1);
        let cues = drafts::Cues::new(&self.state.campaign, &memory, &lore, &said_anyway);
        let verdicts: Vec<drafts::Verdict> = texts
            .iter()
            .map(|t| {
                let kept = cut_echo(t, system, user);
                let cut = kept.len() < t.trim().len();
                drafts::judge(drafts::whole_sentences(kept), cut, &cues)
            })
            .collect();
        let kept = drafts::pick(&verdicts);
        self.drafts.push(DraftChoice {
            actor: actor.to_owned(),
            kept,
            note: drafts::explain(kept, &verdicts),
            verdicts,
        });
        texts.get(kept).copied().unwrap_or_default().to_owned()
    }

    fn queue(&mut self, purpose: Purpose, mut request: CallRequest) {
        let id = self.next_id;
        self.next_id += 1;
        let bookkeeping = purpose.is_bookkeeping();
        self.in_flight.insert(id, purpose);
        if bookkeeping {
            request.background = true;
        }
        if bookkeeping && !self.parallel_bookkeeping {
            self.background.push(PendingCall { id, request });
        } else {
            self.queued.push(PendingCall { id, request });
        }
    }

    /// #21: the model has a second lane, so the bookkeeping goes out at once
    /// (on that lane) instead of waiting until the choices are asked for.
    #[must_use]
    pub fn with_background_lane(mut self, parallel: bool) -> Self {
        self.parallel_bookkeeping = parallel;
        if parallel {
            self.queued.append(&mut self.background);
        }
        self
    }

    fn call_seed(&self) -> u32 {
        let mixed = self.state.seed ^ (self.turn_id << 16) ^ u64::from(self.next_id);
        u32::try_from(mixed & 0xFFFF_FFFF).unwrap_or(0)
    }

    /// A message of the stream, by id.
    fn message(&self, id: MessageId) -> Option<&Message> {
        self.state.stream.messages.iter().find(|m| m.id == id)
    }

    fn name_of(&self, id: &str) -> String {
        self.state
            .campaign
            .characters
            .get(id)
            .map_or_else(|| id.to_owned(), |c| c.name.clone())
    }

    fn present(&self) -> Vec<String> {
        let listed = self.state.world.present();
        if listed.is_empty() {
            self.state.campaign.characters.keys().cloned().collect()
        } else {
            listed
        }
    }

    fn history(&self, stage: &Stage) -> Vec<Value> {
        let through = self.state.summarised_through;
        view(&self.state.stream.messages, stage)
            .into_iter()
            .filter(|m| m.id.turn_id > through)
            .map(|m| json!({"kind": m.kind.name(), "owner": m.owner, "text": m.content}))
            .collect()
    }

    /// The last narration the narrator saw, cut to its first two sentences
    /// (compact prompts' "just before"), or empty when it does not read as prose.
    fn just_before(&self, stage: &Stage) -> String {
        self.history(stage)
            .iter()
            .rev()
            .find(|m| m["kind"] == "narration")
            .and_then(|m| m["text"].as_str())
            .map(|t| brief(t, 2, 300))
            .filter(|t| crate::llm::contract::looks_like_prose(t))
            .unwrap_or_default()
    }

    /// The plot beat this scene steers toward (seed 002 §7.5), if one triggered for it.
    fn beat_var(&self) -> Value {
        let scene = super::beats::scene_number(&self.state.stream);
        super::beats::current(&self.state.campaign.beats, &self.state.world, scene)
            .first()
            .map_or(Value::Null, |b| {
                let dialogue: Vec<Value> = b
                    .dialogue
                    .iter()
                    .map(|d| json!({"speaker": self.name_of(&d.speaker), "line": d.line}))
                    .collect();
                json!({
                    "id": b.id,
                    "title": b.title,
                    "description": b.description,
                    "mood": b.mood,
                    "dialogue": dialogue,
                })
            })
    }

    /// Retrieved lore for the narrator and choices: where it comes from and what it says.
    fn lore_vars(&self) -> Vec<Value> {
        self.state
            .recalled
            .lore
            .iter()
            .map(|h| {
                json!({"source": h.section_path, "text": h.text, "brief": brief(&h.text, 2, 240)})
            })
            .collect()
    }

    /// Recalled memories: what happened, when, and whether it was a turning point.
    fn memory_vars(&self) -> Vec<Value> {
        self.state
            .recalled
            .memories
            .iter()
            .map(|m| {
                json!({
                    "turn": m.turn,
                    "summary": m.summary,
                    "recap": brief(&m.summary, 1, 240),
                    "move": remembered_move(&m.summary),
                    "episodic": m.episodic,
                })
            })
            .collect()
    }

    fn stats_of(&self, id: &str) -> Value {
        self.state
            .world
            .characters
            .get(id)
            .map_or(json!({}), |c| Value::Object(c.stats.clone()))
    }

    /// The known facts that may bear on `text` (#21 prompt diet): those
    /// naming someone present or a word of it, newest first, at most `max`,
    /// as the prompts take them.
    fn relevant_facts(&self, text: &str, max: usize) -> Vec<Value> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(|w| {
                if w.chars().count() > 4 {
                    w.trim_end_matches('s')
                } else {
                    w
                }
            })
            .collect();
        let present = self.present();
        let names: Vec<String> = present
            .iter()
            .filter(|id| id.as_str() != PERSONA)
            .flat_map(|id| {
                let name = self.name_of(id).to_lowercase();
                let mut keys: Vec<String> = name
                    .split_whitespace()
                    .filter(|w| w.chars().count() >= 4)
                    .map(str::to_owned)
                    .collect();
                keys.push(id.clone());
                keys
            })
            .collect();
        let mut facts = self
            .state
            .world
            .facts
            .iter()
            .rev()
            .filter(|f| {
                let said = format!("{} {} {}", f.subject, f.predicate, f.object).to_lowercase();
                names.iter().any(|n| said.contains(n.as_str()))
                    || words.iter().any(|w| said.contains(w))
            })
            .take(max)
            .map(|f| json!({"subject": f.subject, "predicate": f.predicate, "object": f.object}))
            .collect::<Vec<_>>();
        // Oldest first: a prompt that lists them starts alike from call to
        // call (the model's cached prefix) until the chosen facts change.
        facts.reverse();
        facts
    }

    fn resolve_request(&self) -> CallRequest {
        let ruleset = &self.state.campaign.ruleset;
        let checks: Vec<Value> = ruleset
            .mechanics_guidance
            .checks
            .iter()
            .map(|c| {
                json!({
                    "id": c.id, "when": c.when, "binds_stat": c.bind.is_some(),
                    "stats": if c.bind_to.is_empty() { ruleset.stat_names() } else { c.bind_to.clone() },
                    "modifiers": c.modifiers.iter().map(|m| json!({"name": m.name, "min": m.min, "max": m.max, "meaning": m.description})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let present: Vec<Value> = self
            .present()
            .iter()
            .map(|id| json!({"id": id, "name": self.name_of(id)}))
            .collect();
        let facts = self.relevant_facts(&self.input.text, RESOLVE_FACTS);
        let vars = json!({
            "place": self.state.place().1,
            "calibration": self.state.calibration,
            "rulebook_text": ruleset.rulebook_text,
            "checks": checks,
            "scene": self.state.world.scene,
            "actor": {"id": PERSONA, "name": self.name_of(PERSONA)},
            "intention": self.input.text,
            "stats": self.stats_of(PERSONA),
            "present": present,
            "inventory": self.state.world.inventory.get(PERSONA).cloned().unwrap_or_default(),
            "facts": facts,
        });
        let campaign = self.state.campaign.clone();
        let mut check_ids: Vec<Value> = vec![json!("")];
        check_ids.extend(
            ruleset
                .mechanics_guidance
                .checks
                .iter()
                .map(|c| json!(c.id)),
        );
        let mut stats: Vec<Value> = vec![json!("")];
        stats.extend(ruleset.stat_names().into_iter().map(Value::from));
        let mut modifier_names: Vec<Value> = ruleset
            .mechanics_guidance
            .checks
            .iter()
            .flat_map(|c| c.modifiers.iter().map(|m| json!(m.name)))
            .collect();
        modifier_names.dedup();
        let mut request = CallRequest::new("resolve", &self.state.small_model, vars)
            .seed(self.call_seed())
            .allow("/check", check_ids)
            .allow("/stat", stats);
        if !modifier_names.is_empty() {
            request = request.allow("/modifiers/items/name", modifier_names);
        }
        request.check = Some(Arc::new(move |v: &Value| check_resolution(&campaign, v)));
        request
    }

    fn extract_request(&self, owner: &str, intention: MessageId) -> CallRequest {
        let stage = if owner == PERSONA {
            Stage::PersonaExtractor {
                persona: owner.into(),
                intention,
            }
        } else {
            Stage::CharacterExtractor {
                npc: owner.into(),
                intention,
            }
        };
        let seen = view(&self.state.stream.messages, &stage);
        let mut history: Vec<&str> = seen
            .iter()
            .filter(|m| m.kind == Kind::Narration)
            .map(|m| m.content.as_str())
            .collect();
        // #21 prompt diet: the books need only what just happened.
        history.drain(..history.len().saturating_sub(EXTRACT_HISTORY));
        let thoughts: Vec<&str> = seen
            .iter()
            .filter(|m| m.kind == Kind::Thought && m.id.turn_id == self.turn_id)
            .map(|m| m.content.as_str())
            .collect();
        let intention_text = seen
            .iter()
            .find(|m| m.kind == Kind::Intention)
            .map_or("", |m| m.content.as_str());
        let states: Vec<&StateEntry> = self
            .state
            .states
            .get(owner)
            .map(|s| states_for(&stage, s))
            .unwrap_or_default();
        // #20: the ops the rules would take right now, as the grammar of one op;
        // the prompt names the same paths.
        let present = self.present();
        // The player may go elsewhere: the scene moves to another known place
        // (a `location_change` marker opens the next turn).
        let places: Vec<String> = if owner == PERSONA {
            let here = self.state.place().0;
            self.state
                .campaign
                .locations
                .keys()
                .filter(|id| **id != here)
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let offer = offer::extractor_ops(
            &self.state.world,
            &self.state.campaign.ruleset,
            owner,
            &present,
            &places,
        );
        let paths = offer.as_ref().map_or_else(String::new, offer::describe);
        let vars = json!({
            "calibration": self.state.calibration,
            "owner": {"id": owner, "name": self.name_of(owner)},
            "intention": intention_text,
            "thoughts": thoughts,
            "history": history,
            "states": states,
            "stats": self.stats_of(owner),
            "paths": paths,
            "present": present,
        });
        let known: Vec<String> = self.state.campaign.characters.keys().cloned().collect();
        let observers: Vec<Value> = self
            .present()
            .into_iter()
            .filter(|id| id != owner)
            .map(Value::from)
            .collect();
        let mut request =
            CallRequest::new("extract", &self.state.small_model, vars).seed(self.call_seed());
        if !observers.is_empty() {
            request = request.allow("/observations/items/character_id", observers);
        }
        request = match offer {
            Some(op) => request.narrow("/state_ops/items", op),
            None => request.narrow("/state_ops", json!({"type": "array", "maxItems": 0})),
        };
        request.cache_slot = Some(format!("extract:{owner}"));
        request.check = Some(Arc::new(move |v: &Value| check_observers(&known, v)));
        request
    }

    fn narrate_request(
        &self,
        actor: &str,
        intention: MessageId,
        outcome: &str,
        blocked: &str,
    ) -> CallRequest {
        let stage = Stage::Narrator {
            resolving: intention,
        };
        let history: Vec<Value> = self
            .history(&stage)
            .into_iter()
            .filter(|m| m["kind"] != "intention")
            .collect();
        let message = self.message(intention);
        let whisper_to = message
            .and_then(|m| m.target.as_deref())
            .map(|t| self.name_of(t))
            .unwrap_or_default();
        let present: Vec<String> = self.present().iter().map(|id| self.name_of(id)).collect();
        let others: Vec<String> = self
            .present()
            .iter()
            .filter(|id| *id != PERSONA && *id != actor)
            .map(|id| self.name_of(id))
            .collect();
        let clocks: Vec<Value> = self
            .state
            .world
            .clocks
            .values()
            .map(|c| json!({"name": c.name, "value": c.value, "max": c.max}))
            .collect();
        let vars = json!({
            "calibration": self.state.calibration,
            "tone": self.state.tone,
            "world": {
                "location": self.state.world.scene.get("location"),
                "location_name": self.state.place().1,
                "time": self.state.world.scene.get("time"),
                "present": present,
                "others": others,
                "clocks": clocks,
            },
            "history": history,
            "actor": {"id": actor, "name": self.name_of(actor)},
            "intention": message.map_or("", |m| m.content.as_str()),
            "whisper_to": whisper_to,
            "outcome": outcome,
            "blocked": blocked,
            "lore": self.lore_vars(),
            "memories": self.memory_vars(),
            "regard": people::regard_vars(&self.state.campaign, &self.state.world, &self.present()),
            "beat": self.beat_var(),
            "earlier": self.state.earlier,
            "scene_lore": self.state.recalled.scene,
            "you_do": if actor == PERSONA {
                verb_phrase(message.map_or("", |m| m.content.as_str()))
            } else {
                String::new()
            },
            "just_before": self.just_before(&stage),
            "outcome_words": without_roll(outcome),
            "skills": if actor == PERSONA { self.skill_notes.clone() } else { Vec::new() },
        });
        let mut request =
            CallRequest::new("narrate", &self.state.large_model, vars).seed(self.call_seed());
        request.cache_slot = Some("narrate".into());
        // The player's own narration is the one that must land: a model that
        // writes drafts writes it in drafts (`session::drafts` keeps the best).
        if actor == PERSONA {
            request = request.drafted();
        }
        request
    }

    fn on_resolve(&mut self, v: &Value) {
        let question = v["clarification_question"].as_str().unwrap_or("").trim();
        // A referee that already chose a check, or ruled the move out, has
        // resolved it: its question cannot change the outcome (seed 001: ask
        // only when the answer would), so it is not put to the player.
        let undecided = v["possible"] != json!(false)
            && v["check"].as_str().is_none_or(|c| c.trim().is_empty());
        if !question.is_empty() && undecided && !self.input.clarified {
            // Seed 001: at most one question, and only when it changes the outcome.
            self.clarification = Some(question.to_owned());
            self.phase = Phase::Done;
            // Nothing of this turn is kept: its held-back extractors never run,
            // and those already sent are not waited for.
            self.background.clear();
            self.in_flight.retain(|_, p| !p.is_bookkeeping());
            return;
        }
        if v["possible"] == json!(false) {
            v["blocked_reason"]
                .as_str()
                .unwrap_or("it cannot be done here")
                .clone_into(&mut self.blocked);
            return;
        }
        let check_id = v["check"].as_str().unwrap_or("").trim();
        if check_id.is_empty() {
            return;
        }
        let stat = v["stat"].as_str().filter(|s| !s.is_empty());
        let proposed: Vec<(String, i64)> = v["modifiers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| Some((m["name"].as_str()?.to_owned(), m["value"].as_i64()?)))
            .collect();
        self.roll(check_id, stat, &proposed);
    }

    /// Roll the persona's `check_id` with `stat`, the referee's `proposed`
    /// modifiers within their ranges, and the ones the engine grants.
    fn roll(&mut self, check_id: &str, stat: Option<&str>, proposed: &[(String, i64)]) {
        let ruleset = &self.state.campaign.ruleset;
        let Ok(check) = ruleset.check(Some(check_id)) else {
            self.refused
                .push(format!("resolve: the ruleset has no check `{check_id}`"));
            return;
        };
        let mut modifiers = Modifiers::new();
        for (name, value) in proposed {
            let (name, value) = (name.as_str(), *value);
            match check.modifiers.iter().find(|s| s.name == name) {
                Some(spec) => {
                    modifiers.insert(name.to_owned(), value.clamp(spec.min, spec.max));
                }
                None => self.refused.push(format!(
                    "resolve: check `{check_id}` takes no modifier `{name}`; ignored"
                )),
            }
        }
        // Seed 002 §4.2.3: the perception of the NPC the move is aimed at sets
        // the sentiment modifier (its tier, within the ruleset's range).
        if let Some(spec) = check.modifiers.iter().find(|s| s.name == "sentiment")
            && let Some(score) = self.target_perception()
        {
            let tier = standing::modifier(score);
            modifiers.insert("sentiment".to_owned(), tier.clamp(spec.min, spec.max));
        }
        // Seed 002 §7.6: the engine, not the model, grants the episodic-memory +1.
        if let Some(spec) = check.modifiers.iter().find(|s| s.name == "memory") {
            let bonus = i64::from(self.state.recalled.episodic_bonus);
            modifiers.insert("memory".to_owned(), bonus.clamp(spec.min, spec.max));
        }
        let stats = self
            .state
            .world
            .characters
            .get(PERSONA)
            .map(|c| c.stats.clone())
            .unwrap_or_default();
        match ruleset.roll_check(check, &stats, stat, &modifiers, &mut self.dice) {
            Ok(outcome) => self.apply_check(&outcome),
            Err(e) => self.refused.push(format!("resolve: {e}")),
        }
    }

    fn apply_check(&mut self, outcome: &CheckOutcome) {
        let meaning = self
            .state
            .campaign
            .ruleset
            .check(Some(&outcome.check))
            .ok()
            .and_then(|c| c.bands.iter().find(|b| b.id == outcome.band))
            .map(|b| b.meaning.clone())
            .unwrap_or_default();
        self.outcome_text = format!(
            "{} ({} on {}). {meaning}",
            outcome.label, outcome.roll.total, outcome.roll.expression
        );
        self.rolls.push(RollRecord {
            actor: PERSONA.into(),
            check: outcome.check.clone(),
            stat: outcome.stat.clone(),
            roll: outcome.roll.clone(),
            band: outcome.band.clone(),
            label: outcome.label.clone(),
        });
        // Band effects are the rules' own: they apply (a refusal here is a ruleset bug, logged).
        self.apply_ops("ruleset", &outcome.effects);
    }

    fn apply_ops(&mut self, source: &str, ops: &[StateOp]) {
        if ops.is_empty() {
            return;
        }
        // The engine's own ops (the rules' band effects, a move elsewhere)
        // are not the model's proposals.
        let proposed = !matches!(source, "ruleset" | "move");
        if proposed {
            self.ops_proposed += ops.len();
        }
        let ruleset = &self.state.campaign.ruleset;
        match self.state.world.apply(ops, ruleset) {
            Ok(changes) => {
                self.follow_standing(source, &changes);
                self.changes.extend(changes);
            }
            Err(e) => {
                if proposed {
                    self.ops_refused += ops.len();
                }
                self.refused.push(format!("{source}: {e}"));
            }
        }
    }

    /// A move that goes to another of the campaign's places ("I row out onto
    /// the Drowned Reach") takes the scene there before it is narrated,
    /// unless it was ruled out or its roll failed: the engine reads where, so
    /// a tiny model's extractor need not (it rarely did).
    fn go_where_moved(&mut self) {
        let failed = self
            .rolls
            .iter()
            .any(|r| r.actor == PERSONA && r.band.contains("fail"));
        if !self.blocked.is_empty() || failed {
            return;
        }
        let here = self.state.place().0;
        let places: Vec<(&str, &str)> = self
            .state
            .campaign
            .locations
            .iter()
            .map(|(id, l)| (id.as_str(), l.name.as_str()))
            .collect();
        let Some(place) = destination(&self.input.text, &here, &places) else {
            return;
        };
        // Who comes along: those the move names; the others stay where they
        // were (`scene.whereabouts`), and those left at the new place before
        // are there again.
        let present = self.present();
        let company = companions(
            &self.input.text,
            &people::names(&self.state.campaign),
            &present,
        );
        let mut whereabouts = self
            .state
            .world
            .scene
            .get(WHEREABOUTS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for id in present.iter().filter(|id| *id != PERSONA) {
            if !company.contains(id) {
                whereabouts.insert(id.clone(), json!(here));
            }
        }
        let mut arrived: Vec<String> = vec![PERSONA.to_owned()];
        arrived.extend(company.iter().cloned());
        let waiting: Vec<String> = whereabouts
            .iter()
            .filter(|(id, at)| at.as_str() == Some(place.as_str()) && !arrived.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            whereabouts.remove(&id);
            arrived.push(id);
        }
        for id in &company {
            whereabouts.remove(id);
        }
        let ops: Vec<StateOp> = [
            json!({"op": "set", "path": "scene.location", "value": place}),
            json!({"op": "set", "path": "scene.present", "value": arrived}),
            json!({"op": "set", "path": format!("scene.{WHEREABOUTS}"), "value": whereabouts}),
        ]
        .iter()
        .filter_map(|v| StateOp::from_value(v).ok())
        .collect();
        self.apply_ops("move", &ops);
    }

    /// Seed 002 §4.2.3: trust and tension with the persona move the NPC's
    /// perception; a share of that reaches the NPC's factions (§4.1.4).
    fn follow_standing(&mut self, source: &str, changes: &[Change]) {
        let campaign = Arc::clone(&self.state.campaign);
        let config = &campaign.standing;
        // Perception implied by this batch's relation changes, and the factions'
        // share of this batch's own perception changes; the derived perception
        // changes spill over in the recursive call.
        let mut ops = standing::perception_ops(config, PERSONA, changes);
        ops.extend(standing::spillover_ops(config, changes, |npc| {
            people::factions_of(&campaign, npc)
        }));
        if ops.is_empty() {
            return;
        }
        match self.state.world.apply(&ops, &campaign.ruleset) {
            Ok(more) => {
                self.follow_standing(source, &more);
                self.changes.extend(more);
            }
            Err(e) => self.refused.push(format!("{source} (standing): {e}")),
        }
    }

    fn on_narration(&mut self, actor: &str, v: &Value) {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        let text = text.trim().to_owned();
        self.state
            .stream
            .push(self.turn_id, NARRATOR, Kind::Narration, text.clone(), None);
        let known = self.relevant_facts(&text, LORE_KNOWN);
        let request = CallRequest::new(
            "lore_extract",
            &self.state.small_model,
            json!({"narration": text, "known": known, "calibration": self.state.calibration}),
        )
        .seed(self.call_seed());
        self.queue(Purpose::Lore, request);
        match &mut self.phase {
            Phase::PersonaNarration if actor == PERSONA => self.activate_npcs(),
            Phase::Npc { narrated, .. } => *narrated = true,
            _ => {}
        }
    }

    /// The NPC the persona's move is aimed at: whispered to, else the first
    /// one it names.
    fn addressee(&self) -> Option<String> {
        if let Some(t) = &self.input.whisper_to {
            return Some(t.clone());
        }
        let names = people::names(&self.state.campaign);
        standing::addressed(&self.input.text.to_lowercase(), &names).map(str::to_owned)
    }

    /// The perception of the NPC the persona's move is aimed at, if it has one.
    fn target_perception(&self) -> Option<f64> {
        self.state.world.perception.get(&self.addressee()?).copied()
    }

    fn on_choices(&mut self, v: &Value) {
        let offered: Vec<String> = v["choices"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let (offered, garbled): (Vec<String>, Vec<String>) = offered
            .into_iter()
            .partition(|c| crate::llm::contract::looks_like_prose(c));
        for g in garbled {
            self.refused
                .push(format!("choices: dropped {g:?}: not a readable option"));
        }
        let names = people::names(&self.state.campaign);
        let (kept, withheld) = standing::filter_choices(offered, &self.state.world, &names);
        for w in withheld {
            self.refused.push(format!(
                "choices: withheld \"{}\": it {} ({} is at {:+.0})",
                w.choice,
                w.reason,
                self.name_of(&w.npc),
                w.perception
            ));
        }
        if kept.is_empty() {
            self.refused
                .push("choices: nothing offered could be picked".to_owned());
            self.offer_generic_choices();
        } else {
            self.choices = kept;
        }
    }

    fn offer_generic_choices(&mut self) {
        self.choices = generic_choices();
        self.generic_choices = true;
    }

    fn on_extract(&mut self, owner: &str, v: &Value) {
        let proposed = v["state_ops"].as_array().map_or(0, Vec::len);
        let ops: Vec<StateOp> = v["state_ops"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| StateOp::from_value(o).ok())
            .collect();
        // Ops that are not even well-formed count as proposed and refused.
        let malformed = proposed - ops.len();
        self.ops_proposed += malformed;
        self.ops_refused += malformed;
        self.apply_ops(&format!("extract {owner}"), &ops);
        for o in v["observations"].as_array().into_iter().flatten() {
            let (Some(who), Some(content), Some(importance)) = (
                o["character_id"].as_str(),
                o["content"].as_str(),
                o["importance"].as_u64(),
            ) else {
                continue;
            };
            self.observations.push(Observation {
                character_id: who.to_owned(),
                content: content.to_owned(),
                importance: u8::try_from(importance.clamp(1, 5)).unwrap_or(3),
                reinforcement_count: 0,
                created_minute: self.state.play_minutes,
            });
        }
    }

    fn on_npc_intent(&mut self, npc: &str, v: &Value) {
        let thought = v["thought"].as_str().unwrap_or("").trim();
        if !thought.is_empty() {
            self.state
                .stream
                .push(self.turn_id, npc, Kind::Thought, thought, None);
        }
        let intention = v["intention"].as_str().unwrap_or("").trim().to_owned();
        let id = self
            .state
            .stream
            .push(self.turn_id, npc, Kind::Intention, intention, None);
        let narrate = self.narrate_request(npc, id, "", "");
        self.queue(Purpose::Narrate { actor: npc.into() }, narrate);
        let extract = self.extract_request(npc, id);
        self.queue(Purpose::Extract { owner: npc.into() }, extract);
    }

    fn on_lore(&mut self, v: &Value) {
        for f in v["facts"].as_array().into_iter().flatten() {
            let (Some(s), Some(p), Some(o)) = (
                f["subject"].as_str(),
                f["predicate"].as_str(),
                f["object"].as_str(),
            ) else {
                continue;
            };
            let (subject, predicate) = (slug(s), slug(p));
            if subject.is_empty() || predicate.is_empty() {
                continue;
            }
            // Decided per fact, after the ones before it: a repeated fact updates.
            let exists = self
                .state
                .world
                .facts
                .iter()
                .any(|x| x.subject == subject && x.predicate == predicate);
            let op = if exists {
                OpKind::UpdateFact
            } else {
                OpKind::AddFact
            };
            let op = StateOp::new(op, &format!("facts.{subject}.{predicate}"), o);
            // Each fact on its own: one bad fact does not cost the others.
            self.apply_ops("lore", std::slice::from_ref(&op));
        }
    }

    /// Seed 004 step 4: baked NPCs first, then by chattiness; each non-baked one rolls against it.
    /// The NPCs present with whether they are baked and their chattiness,
    /// baked first, then the chattiest (the order they are activated in).
    fn npcs_present(&self) -> Vec<(String, bool, f64)> {
        let present = self.present();
        let mut npcs: Vec<(String, bool, f64)> = self
            .state
            .campaign
            .characters
            .iter()
            .filter(|(id, c)| c.kind == crate::campaign::CharacterKind::Npc && present.contains(id))
            .map(|(id, c)| (id.clone(), c.baked, c.chattiness))
            .collect();
        npcs.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
        npcs
    }

    fn activate_npcs(&mut self) {
        let npcs = self.npcs_present();
        let mut order = Vec::new();
        let mut skipped = Vec::new();
        for (id, baked, chattiness) in npcs {
            if baked {
                order.push(id.clone());
                continue;
            }
            // d100 against chattiness × 100, recorded like any roll.
            let roll = self
                .dice
                .roll_str("1d100", &Modifiers::new())
                .map_or(100, |r| r.total);
            #[allow(clippy::cast_possible_truncation, reason = "chattiness is 0..=1")]
            let threshold = (chattiness * 100.0).round() as i64;
            if roll <= threshold {
                order.push(id.clone());
            } else {
                skipped.push(id.clone());
            }
        }
        // #21: at most `npcs_per_turn` act; the NPC the player addressed goes
        // first, then the order above. Saves from before the setting keep
        // every activated NPC, in the old order.
        if let Some(cap) = self.state.calibration.npcs_per_turn {
            if let Some(addressed) = self.addressee() {
                if let Some(at) = order.iter().position(|id| *id == addressed) {
                    let id = order.remove(at);
                    order.insert(0, id);
                } else if let Some(at) = skipped.iter().position(|id| *id == addressed) {
                    // Spoken to, an NPC answers whatever its chattiness rolled.
                    order.insert(0, skipped.remove(at));
                }
            }
            let cap = usize::try_from(cap).unwrap_or(usize::MAX);
            if order.len() > cap {
                skipped.splice(0..0, order.drain(cap..));
            }
        }
        self.order = order;
        self.skipped = skipped;
        self.next_npc(0);
    }

    fn next_npc(&mut self, index: usize) {
        let Some(npc) = self.order.get(index).cloned() else {
            // A skill's `narrative_choice` is the turn's choices (#25): the
            // choice stage is not asked.
            if !self.skill_choices.is_empty() {
                self.choices = std::mem::take(&mut self.skill_choices);
                self.phase = Phase::Done;
                self.queued.append(&mut self.background);
                return;
            }
            self.phase = Phase::Choices;
            let recent: Vec<&str> = self
                .state
                .stream
                .messages
                .iter()
                .rev()
                .filter(|m| m.kind == Kind::Narration)
                .take(4)
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let present: Vec<String> = self
                .present()
                .iter()
                .filter(|id| id.as_str() != PERSONA)
                .map(|id| self.name_of(id))
                .collect();
            let request = CallRequest::new(
                "choices",
                &self.state.small_model,
                json!({
                    "calibration": self.state.calibration,
                    "persona": self.name_of(PERSONA),
                    "history": recent,
                    "scene": self.state.world.scene,
                    "present": present,
                    "lore": self.lore_vars(),
                    "memories": self.memory_vars(),
                    "regard": people::regard_vars(&self.state.campaign, &self.state.world, &self.present()),
                    "reputation": people::reputation_vars(&self.state.campaign, &self.state.world),
                    "beat": self.beat_var(),
                    "just_now": recent.last().map(|t| brief(t, 2, 240)).unwrap_or_default(),
                }),
            )
            .seed(self.call_seed());
            self.queue(Purpose::Choices, request);
            // Every narration is written: the extractors go out after the choices.
            self.queued.append(&mut self.background);
            return;
        };
        self.phase = Phase::Npc {
            index,
            narrated: false,
        };
        let request = self.intent_request(&npc);
        self.queue(Purpose::NpcIntent { npc }, request);
    }

    /// The call in which `npc` decides what to do.
    fn intent_request(&self, npc: &str) -> CallRequest {
        let stage = Stage::NpcIntent {
            npc: npc.to_owned(),
        };
        let memories: Vec<Value> = self
            .state
            .observations
            .get(npc)
            .map(|o| {
                recall(o, self.state.play_minutes, DEFAULT_LAMBDA, 8)
                    .into_iter()
                    .map(|(p, o)| json!({"memory": o.content, "priority": (p * 100.0).round() / 100.0}))
                    .collect()
            })
            .unwrap_or_default();
        let states: Vec<&StateEntry> = self
            .state
            .states
            .get(npc)
            .map(|s| states_for(&stage, s))
            .unwrap_or_default();
        let profile = self
            .state
            .campaign
            .characters
            .get(npc)
            .and_then(|c| c.profile.as_ref())
            .map_or(json!({}), |p| {
                json!({
                    "role": p.role,
                    "personality": p.personality,
                    "motivations": p.motivations,
                    "speech": p.speech_patterns,
                })
            });
        let mut history = self.history(&stage);
        history.drain(..window_start(history.len(), NPC_HISTORY, NPC_HISTORY_STEP));
        let vars = json!({
            "calibration": self.state.calibration,
            "name": self.name_of(npc),
            "profile": profile,
            "states": states,
            "history": history,
            "memories": memories,
            "scene": self.state.world.scene,
            "regard": people::regard_vars(&self.state.campaign, &self.state.world, &[npc.to_owned()]).pop(),
            "persona": self.name_of(PERSONA),
        });
        let mut request =
            CallRequest::new("npc_intent", &self.state.small_model, vars).seed(self.call_seed());
        request.cache_slot = Some(format!("npc_intent:{npc}"));
        request
    }

    /// Move on when what the current phase waits for has come back.
    fn advance(&mut self) {
        let waiting = |runner: &Self, f: fn(&Purpose) -> bool| runner.in_flight.values().any(f);
        match self.phase.clone() {
            Phase::Persona => {
                if waiting(self, |p| matches!(p, Purpose::Resolve)) {
                    return;
                }
                self.go_where_moved();
                if self.ask_planner(1) || self.plan_every_turn() {
                    self.phase = Phase::Skills;
                    return;
                }
                self.narrate_persona();
            }
            Phase::Skills => {
                let planning = waiting(self, |p| matches!(p, Purpose::Plan { .. }));
                if !(planning || self.skills_busy()) {
                    self.narrate_persona();
                }
            }
            Phase::Npc {
                index,
                narrated: true,
            } => {
                // The next NPC sees this one's narration; extractors may still be out.
                self.next_npc(index + 1);
            }
            Phase::Choices if !waiting(self, |p| matches!(p, Purpose::Choices)) => {
                self.phase = Phase::Done;
            }
            _ => {}
        }
    }

    /// The persona's narration is asked for (after its resolution and skills).
    fn narrate_persona(&mut self) {
        let narrate = self.narrate_request(
            PERSONA,
            self.persona_intention,
            &self.outcome_text.clone(),
            &self.blocked.clone(),
        );
        self.queue(
            Purpose::Narrate {
                actor: PERSONA.into(),
            },
            narrate,
        );
        self.phase = Phase::PersonaNarration;
    }
}

/// The scene marker the next turn starts with, if any: `scene_open: PLACE`
/// after a `scene_close`, `location_change: FROM -> TO` when the scene's
/// location moved since the last marker.
fn pending_marker(state: &SessionState) -> Option<String> {
    let here = state.world.scene.get("location").and_then(Value::as_str)?;
    let last = state
        .stream
        .messages
        .iter()
        .rev()
        .find(|m| m.kind == Kind::SceneMarker);
    let Some(last) = last else {
        return Some(format!("scene_open: {here}"));
    };
    if last.content == SCENE_CLOSE {
        return Some(format!("scene_open: {here}"));
    }
    let marked = last
        .content
        .strip_prefix("scene_open: ")
        .or_else(|| last.content.split_once(" -> ").map(|(_, to)| to))?;
    (marked != here).then(|| format!("location_change: {marked} -> {here}"))
}

/// A player's typed move as a verb phrase the narrator can address them
/// with: "I ask Hesper about my letter" → "ask Hesper about your letter",
/// "Ask Tamsin to help" → "ask Tamsin to help", speech → `say "…"`. Used as
/// "you tried to …" in memories and "you …" in compact narrator prompts.
pub fn verb_phrase(action: &str) -> String {
    let text = action.trim().trim_end_matches('.').trim();
    let first_person = text.starts_with("I ") || text.starts_with("I'");
    let addressed = text
        .split_whitespace()
        .next()
        .is_some_and(|w| w.ends_with(','));
    if !first_person && (text.starts_with(['"', '\u{201c}']) || text.ends_with('?') || addressed) {
        let quoted = text.trim_matches(['"', '\u{201c}', '\u{201d}']);
        return format!("say \"{quoted}\"");
    }
    let body = if let Some(rest) = text
        .strip_prefix("I'm ")
        .or_else(|| text.strip_prefix("I am "))
    {
        format!("be {rest}")
    } else {
        ["I'll ", "I will ", "I "]
            .iter()
            .find_map(|p| text.strip_prefix(p))
            .unwrap_or(text)
            .to_owned()
    };
    let swapped: Vec<String> = body
        .split(' ')
        .map(|w| {
            let end = w
                .find(|c: char| !c.is_alphanumeric() && c != '\'')
                .unwrap_or(w.len());
            let (core, tail) = w.split_at(end);
            let to = match core {
                "I" | "me" => "you",
                "my" => "your",
                "mine" => "yours",
                "myself" => "yourself",
                "I'm" => "you're",
                "I've" => "you've",
                other => other,
            };
            format!("{to}{tail}")
        })
        .collect();
    let joined = swapped.join(" ");
    let mut chars = joined.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().collect::<String>() + chars.as_str()
    })
}

/// How a memory summary introduces the player's move (written by
/// `remember::memory_event`, read back by [`remembered_move`]).
pub const TRIED: &str = "you tried to ";

/// The player's move a memory summary records ("At X, you tried to ask
/// Hesper … (success)." → "Ask Hesper …"), as a choice could offer it again;
/// empty when the summary is not in that form.
pub fn remembered_move(summary: &str) -> String {
    let Some((_, rest)) = summary.split_once(TRIED) else {
        return String::new();
    };
    let end = rest
        .find(" (")
        .or_else(|| rest.find(". "))
        .unwrap_or(rest.len());
    let phrase = rest[..end].trim_end_matches('.');
    let mut chars = phrase.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}

/// An outcome in words without its roll ("Failure (6 on 2d6+stat). It does
/// not work…" → "Failure. It does not work…"): small models copy dice
/// notation into the story.
pub fn without_roll(outcome: &str) -> String {
    match (outcome.find(" ("), outcome.find(')')) {
        (Some(open), Some(close)) if open < close && outcome[open..close].contains(" on ") => {
            format!("{}{}", &outcome[..open], &outcome[close + 1..])
        }
        _ => outcome.to_owned(),
    }
}

/// The place a move goes to, if it goes anywhere: one of `places` (id, name)
/// other than `here`, named in `text` (by its name, with or without "the",
/// or its id's words) right after "to", "onto", "into" or "toward(s)", or
/// right after a verb of going in with ("enter", "reach", "board", "cross",
/// "visit"), with a verb of going earlier in the move. "I ask about the way
/// to the chapel" goes nowhere: asking is not going.
pub fn destination(text: &str, here: &str, places: &[(&str, &str)]) -> Option<String> {
    const GOING: [&str; 23] = [
        "go", "walk", "head", "row", "take", "cross", "climb", "return", "enter", "reach", "run",
        "hurry", "sail", "pole", "board", "follow", "leave", "make", "ride", "wade", "swim",
        "visit", "step",
    ];
    const INTO: [&str; 5] = ["to", "onto", "into", "toward", "towards"];
    const ARRIVING: [&str; 5] = ["enter", "reach", "board", "cross", "visit"];
    // The verb or its -s, -es, -ed, -ing forms ("goes", "rowing"), not a
    // word that merely starts like one ("gold").
    let inflected = |w: &str, g: &str| {
        w == g
            || ["s", "es", "ed", "ing"].iter().any(|end| {
                w.strip_suffix(end)
                    .is_some_and(|stem| stem == g || stem == g.trim_end_matches('e'))
            })
    };
    let text = text.to_lowercase();
    let words_before = |at: usize| -> Vec<&str> {
        text[..at]
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let mut best: Option<(usize, &str)> = None;
    for (id, name) in places.iter().filter(|(id, _)| *id != here) {
        let name = name.to_lowercase();
        let bare = name.strip_prefix("the ").unwrap_or(&name).to_owned();
        for form in [name.clone(), bare, id.replace('_', " ")] {
            if form.chars().count() < 4 {
                continue;
            }
            let Some(at) = text.find(&form) else { continue };
            let mut before = words_before(at);
            if before.last() == Some(&"the") {
                before.pop();
            }
            let Some(last) = before.last() else { continue };
            let going = before.iter().any(|w| GOING.iter().any(|g| inflected(w, g)));
            if going
                && (INTO.contains(last) || ARRIVING.iter().any(|a| last.starts_with(a)))
                && best.is_none_or(|(b, _)| at < b)
            {
                best = Some((at, id));
            }
        }
    }
    best.map(|(_, id)| id.to_owned())
}

/// Of the NPCs `present`, those a move names (by a name or id, as
/// `people::names` lists them), who go along with the player.
pub fn companions(text: &str, names: &[(String, Vec<String>)], present: &[String]) -> Vec<String> {
    standing::named(&text.to_lowercase(), names)
        .into_iter()
        .filter(|id| present.iter().any(|p| p == id))
        .map(str::to_owned)
        .collect()
}

/// Where a window of at least `keep` of the newest `len` messages starts when
/// it moves `step` messages at a time: a prompt built over it starts alike from
/// one call to the next until the window moves.
fn window_start(len: usize, keep: usize, step: usize) -> usize {
    len.saturating_sub(keep) / step.max(1) * step.max(1)
}

/// The first `sentences` sentences of `text`, at most `max` characters (cut
/// at a word), for prompts that can only take a line of each thing.
pub fn brief(text: &str, sentences: usize, max: usize) -> String {
    let joined = crate::memory::chunk::sentences(text)
        .into_iter()
        .take(sentences)
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let cut: String = joined.chars().take(max).collect();
    let at = cut.rfind(' ').unwrap_or(cut.len());
    format!("{}…", cut[..at].trim_end_matches([',', ';', ':']))
}

/// A narration up to the first line that recites its prompt (small models
/// sometimes go on to repeat their instructions, the headings of their
/// background or the labelled lines of the question): a line that begins as
/// a line of `system` begins (the first 24 characters, list markers aside),
/// or that opens with a label the prompt uses (`Just before:`, `Known:`: a
/// capitalised phrase of at most four words before a colon, at the start of
/// a line of `system` or `user`). When it opens by reciting, the recited
/// lines are skipped and the story after them kept, if there is any.
/// Retelling the story so far is not echo.
pub fn cut_echo<'a>(text: &'a str, system: &str, user: &str) -> &'a str {
    fn body(line: &str) -> &str {
        line.trim().trim_start_matches(['-', '*', '•', ' '])
    }
    let head = |line: &str| -> Option<String> {
        let h: String = body(line).chars().take(24).collect();
        (h.chars().count() == 24).then_some(h)
    };
    let label = |line: &str| -> Option<String> {
        let (before, _) = body(line).split_once(':')?;
        let words = before.split_whitespace().count();
        let capital = before.chars().next().is_some_and(char::is_uppercase);
        (capital && (1..=4).contains(&words) && before.len() <= 32).then(|| before.to_lowercase())
    };
    let starts: std::collections::BTreeSet<String> = system.lines().filter_map(head).collect();
    let labels: std::collections::BTreeSet<String> = system
        .lines()
        .chain(user.lines())
        .filter_map(label)
        .collect();
    let recites = |line: &str| {
        head(line).is_some_and(|h| starts.contains(&h))
            || label(line).is_some_and(|l| labels.contains(&l))
    };
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if recites(line) {
            break;
        }
        offset += line.len();
    }
    let kept = text[..offset].trim();
    if !kept.is_empty() || offset == text.len() {
        return kept;
    }
    // It opened by reciting: what follows the recited lines, up to the next
    // one that recites, may still be the story.
    let mut rest = text;
    for line in text.split_inclusive('\n') {
        if !recites(line) {
            break;
        }
        rest = &rest[line.len()..];
    }
    if rest.is_empty() {
        return "";
    }
    cut_echo(rest, system, user)
}

/// The marker `/end-scene` leaves; the next turn opens a new scene.
pub const SCENE_CLOSE: &str = "scene_close";

/// The resolve contract's engine checks: a named check exists, its stat and modifiers fit.
fn check_resolution(campaign: &Campaign, v: &Value) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let ruleset = &campaign.ruleset;
    let id = v["check"].as_str().unwrap_or("").trim();
    if id.is_empty() {
        return Ok(());
    }
    let Ok(check) = ruleset.check(Some(id)) else {
        let ids: Vec<&str> = ruleset
            .mechanics_guidance
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        return Err(vec![format!(
            "/check: no check `{id}`; the checks are {}",
            ids.join(", ")
        )]);
    };
    if check.bind.is_some() {
        let stat = v["stat"].as_str().unwrap_or("");
        let allowed = if check.bind_to.is_empty() {
            ruleset.stat_names()
        } else {
            check.bind_to.clone()
        };
        if !allowed.iter().any(|s| s == stat) {
            errors.push(format!(
                "/stat: check `{id}` needs one of {}, not `{stat}`",
                allowed.join(", ")
            ));
        }
    }
    // Modifiers the check does not take are dropped, and values clamped, by the engine (`on_resolve`).
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Observations must name characters of the campaign.
fn check_observers(known: &[String], v: &Value) -> Result<(), Vec<String>> {
    let errors: Vec<String> = v["observations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["character_id"].as_str())
        .filter(|id| !known.iter().any(|k| k == id))
        .map(|id| {
            format!(
                "/observations: `{id}` is not a character here ({})",
                known.join(", ")
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::{companions, cut_echo, destination, window_start};

    #[test]
    fn those_a_move_names_come_along() {
        let people: Vec<(String, Vec<String>)> = [
            ("hesper_vane", "Hesper Vane", "Hesper"),
            ("ned_fallow", "Ned Fallow", "Ned"),
            ("tamsin_reed", "Tamsin Reed", "Tamsin"),
        ]
        .iter()
        .map(|(id, name, first)| {
            (
                (*id).to_owned(),
                vec![(*name).to_owned(), (*first).to_owned()],
            )
        })
        .collect();
        let present: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
        let go = |text: &str| companions(text, &people, &present);
        assert_eq!(go("I follow Tamsin to the toll house"), ["tamsin_reed"]);
        assert_eq!(
            go("Hesper Vane and Ned row me out"),
            ["hesper_vane", "ned_fallow"]
        );
        assert!(go("I take the skiff out alone").is_empty());
    }

    #[test]
    fn a_move_goes_where_it_says_and_asking_goes_nowhere() {
        let places = [
            ("reedmere_quay", "Reedmere Quay"),
            ("drowned_reach", "The Drowned Reach"),
            ("lamp_chapel", "The Lamp Chapel of St Wick"),
            ("toll_house", "The Toll House"),
        ];
        let go = |text: &str| destination(text, "reedmere_quay", &places);
        assert_eq!(
            go("I take the skiff out onto the Drowned Reach.").as_deref(),
            Some("drowned_reach")
        );
        assert_eq!(
            go("I follow Tamsin to the toll house").as_deref(),
            Some("toll_house")
        );
        assert_eq!(
            go("Row out toward the drowned reach").as_deref(),
            Some("drowned_reach")
        );
        assert_eq!(go("I enter the Toll House").as_deref(), Some("toll_house"));
        // Not going: asking, talking about a place, or where one already is.
        assert_eq!(go("I ask Hesper about the way to the lamp chapel"), None);
        assert_eq!(go("I tell Ned the Drowned Reach frightens me"), None);
        assert_eq!(go("I walk along Reedmere Quay"), None);
        assert_eq!(go("I walk to the lantern store"), None);
        assert_eq!(go("I give the gold to the toll house"), None);
        assert_eq!(
            go("Rowing hard, I head into the Drowned Reach").as_deref(),
            Some("drowned_reach")
        );
    }

    #[test]
    fn an_npc_history_window_moves_in_steps_and_keeps_its_start_between_them() {
        // Nothing cut until there is more than `keep`.
        assert_eq!(window_start(3, 4, 8), 0);
        assert_eq!(window_start(11, 4, 8), 0);
        // Then it jumps a whole step, keeping at least `keep`, at most `keep + step - 1`.
        assert_eq!(window_start(12, 4, 8), 8);
        assert_eq!(window_start(19, 4, 8), 8);
        assert_eq!(window_start(20, 4, 8), 16);
        for len in 0..60 {
            let shown = len - window_start(len, 4, 8);
            assert!(shown == len || (4..=11).contains(&shown), "{len}: {shown}");
        }
        // A step of one is the plain sliding window.
        assert_eq!(window_start(12, 4, 1), 8);
    }

    #[test]
    fn a_narration_is_cut_where_it_starts_reciting_its_prompt() {
        let prompt = "Background for you alone.\nWhat is true in this world: The Lamp Chapel keeps the Mother Flame.\nWhat has happened before: The lanterns flare; someone moves in the fog.";
        let echoed = "Hesper looks at you a long moment.\n- What is true in this world (weave it out):\nThe Northfields are islands.";
        assert_eq!(
            cut_echo(echoed, prompt, ""),
            "Hesper looks at you a long moment."
        );
        let clean = "The fog thickens.\nThe lanterns flare; someone moves in the fog.";
        assert_eq!(cut_echo(clean, prompt, ""), clean);
        assert_eq!(
            cut_echo("What is true in this world: the end", prompt, ""),
            ""
        );
    }

    #[test]
    fn an_outcome_in_words_loses_its_dice_notation() {
        assert_eq!(
            super::without_roll("Failure (6 on 2d6+stat+skill). It does not work."),
            "Failure. It does not work."
        );
        assert_eq!(super::without_roll("Success."), "Success.");
    }

    #[test]
    fn a_remembered_move_can_be_offered_again() {
        assert_eq!(
            super::remembered_move(
                "At Reedmere Quay, you tried to ask Hesper about the ledger (success). She looks away."
            ),
            "Ask Hesper about the ledger"
        );
        assert_eq!(
            super::remembered_move("At the quay, you tried to wait. Fog."),
            "Wait"
        );
        assert_eq!(super::remembered_move("The Surveyor tried: I wait"), "");
    }

    #[test]
    fn a_compact_narration_is_cut_where_it_recites_a_labelled_line() {
        let user = "Place: Reedmere Quay, dusk.\nLast time: at Reedmere Quay you tried to ask Hesper.\nJust before: The fog thickens.\nNow: you ask Hesper again.\nHow it goes: success\nWhat happens next?";
        let told =
            "Hesper turns the ledger to the lamp.\nJust before: She had a choice.\nLater: more.";
        assert_eq!(
            cut_echo(told, "", user),
            "Hesper turns the ledger to the lamp."
        );
        let speech = "Hesper lowers her voice.\nHesper: \"Not here.\"";
        assert_eq!(
            cut_echo(speech, "", user),
            speech,
            "dialogue is not a label of the prompt"
        );
        assert_eq!(cut_echo("Now: you ask again.", "", user), "");
        assert_eq!(
            cut_echo(
                "Now: you ask again.\nHesper shakes her head.\nJust before: x",
                "",
                user
            ),
            "Hesper shakes her head."
        );
    }
}
