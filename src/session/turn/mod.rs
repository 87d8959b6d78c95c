//! One turn of an open-ended session as a sans-IO state machine (seed 004 turn structure).
//!
//! The runner never calls the model itself: [`TurnRunner::take_requests`]
//! hands out the calls that may run now (a narrator and an extractor together,
//! seed 004's "parallel"), and [`TurnRunner::deliver`] takes their outcomes in
//! any order. The terminal drives it by waiting on each call; the ECS adapter
//! by polling call handles each frame; tests with the scripted backend.
//!
//! Order: persona intention → resolve (engine rolls the ruleset check; a
//! picked choice brings its ruling and skips it) → skills → narrator; NPC
//! activation (the addressed NPC first, baked ones, then by chattiness, each
//! non-baked NPC rolling against it; at most `npcs_per_turn` act); per NPC:
//! intent → narrator; then the next choices. Each narration's extractors
//! (persona or character extractor, lore extractor) are made when seed 004
//! says and held back until the choices are asked for (#21: the player reads
//! first, the extractors run while they read; the turn commits after them).
//!
//! The machine is here; its parts are its children: the session's vocabulary
//! (`types`), each stage's typed prompt variables (`vars`) and answers
//! (`contracts`), the request builders (`requests`), the rules applied to the
//! answers (`rules`), NPC activation (`npcs`), the skills' sub-machine
//! (`skills`) and the answer handlers (`answers`).

mod answers;
mod blocked;
pub mod check;
pub mod contracts;
mod cuts;
mod names;
mod npcs;
mod offers;
mod plans;
mod reading;
mod requests;
mod retell;
mod rules;
pub mod types;
pub mod vars;
mod voices;
mod world;

use std::collections::{BTreeMap, BTreeSet};

pub use types::{
    ASKED_AGAIN, ActivationRoll, Calibration, DraftChoice, ENGINE_OFFERS, GENERIC_CHOICES,
    KEPT_SECOND, PERSONA, PendingCall, PlayerInput, RollRecord, Ruling, SessionState, TURN_MINUTES,
    TurnError, TurnResult, generic_choices,
};
pub use world::{OPENED_AT, opening_minute, tells};

use self::contracts::{Choices, Extraction, LoreFacts, Narration, NpcIntent, Resolution, read};
use super::skills::{SkillAttempt, SkillWork};
use crate::llm::{CallOutcome, CallRecord, CallRequest, LlmError, Role};
use crate::rules::{Change, Consequence, Dice, standing};
use crate::transcript::marker::{SceneMarker, markers};
use crate::transcript::observation::Observation;
use crate::transcript::stream::{Kind, MessageId, SYSTEM};

/// Why a call was made: what its answer is for.
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
            Purpose::Plan { .. } => crate::skills::planner::STAGE,
        }
    }
}

/// A delivered answer, read as its stage's type.
enum Answer {
    Resolve(Resolution),
    Narrate(Narration),
    Extract(Extraction),
    NpcIntent(NpcIntent),
    Lore(LoreFacts),
    Choices(Choices),
    /// The planner's Plan JSON, read by `skills::planner::parse`.
    Plan(serde_json::Value),
}

impl Answer {
    fn read(purpose: &Purpose, value: serde_json::Value) -> Result<Self, LlmError> {
        let stage = purpose.stage();
        Ok(match purpose {
            Purpose::Resolve => Answer::Resolve(read(stage, value)?),
            Purpose::Narrate { .. } => Answer::Narrate(Narration::of(value)),
            Purpose::Extract { .. } => Answer::Extract(read(stage, value)?),
            Purpose::NpcIntent { .. } => Answer::NpcIntent(read(stage, value)?),
            Purpose::Lore => Answer::Lore(read(stage, value)?),
            Purpose::Choices => Answer::Choices(read(stage, value)?),
            Purpose::Plan { .. } => Answer::Plan(value),
        })
    }
}

/// An extractor's answer, held until the turn finishes.
enum Held {
    Extract { owner: String, answer: Extraction },
    Lore(LoreFacts),
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

/// The model calls of a turn: made, queued, held back, out, answered.
#[derive(Default)]
struct Calls {
    next_id: u32,
    queued: Vec<PendingCall>,
    /// Extractor calls made but held back until the choices are asked for
    /// (#21: the player reads the narrations and gets the choices first; the
    /// extractors run while they read, and the turn commits after them).
    background: Vec<PendingCall>,
    /// Bookkeeping is sent at once, to the model's second lane.
    parallel_bookkeeping: bool,
    in_flight: BTreeMap<u32, Purpose>,
    /// Extractor answers, applied in call order when the turn finishes,
    /// whatever order they came back in.
    held: BTreeMap<u32, Held>,
    /// Records by call id (the order the calls were made).
    records: BTreeMap<u32, CallRecord>,
}

/// What the turn has decided and done so far: what its result will carry.
#[derive(Default)]
struct Ledger {
    /// NPCs who act, in order, and those who stay quiet.
    acted: Vec<String>,
    skipped: Vec<String>,
    activation: Vec<ActivationRoll>,
    rolls: Vec<RollRecord>,
    changes: Vec<Change>,
    observations: Vec<Observation>,
    /// Model proposals the rules refused, and the turn's other notes for the log.
    refused: Vec<String>,
    /// Model-proposed state ops this turn, and those the rules refused.
    ops_proposed: usize,
    ops_refused: usize,
    drafts: Vec<DraftChoice>,
    choices: Vec<String>,
    /// The choices the engine added of its own (`offers`, #42).
    offered: Vec<String>,
    generic_choices: bool,
    clarification: Option<String>,
    /// The engine's or the referee's reason the move cannot happen, and
    /// what the choices offer instead (#41).
    blocked: Option<check::Blocked>,
    instead: Vec<String>,
    /// Minutes the move's way takes, when it goes somewhere.
    travel: Option<i64>,
    /// Minutes the move took, once spent (`world::spend_time`).
    minutes: Option<f64>,
    /// Consequences fired this turn (first: those carried from the turn
    /// before), and how many of them a narration has been given.
    fired: Vec<Consequence>,
    told: usize,
    /// How many of `fired` were carried from the turn before.
    carried: usize,
    /// The consequences the player's narration was given to tell.
    given: Vec<Consequence>,
    /// Those the engine told itself.
    appended: Vec<String>,
    /// Narrations asked for again because they crossed a line or veil, by
    /// actor, with what to keep out (`avoid` in the narrator's prompt).
    regenerated: BTreeMap<String, String>,
    /// Each time a line or veil was met: where, and its label (never the text).
    limits: Vec<String>,
    /// Narrations told again because they contradicted the world (`retell`):
    /// the first telling and its count of contradictions, by actor.
    retold: BTreeMap<String, (String, usize)>,
    /// What the continuity check found and kept, for the overlay and the save.
    continuity: Vec<String>,
    /// The player arrived somewhere this turn (`rules::go_where_moved`).
    moved: bool,
    /// The NPC who answered the player's question in its author's words
    /// with the player's narration (`narrate_persona`): it does not act again.
    answered: Option<String>,
    /// Each NPC's rolled outcome in words, for its narration.
    npc_outcome: BTreeMap<String, String>,
    /// How many new people, items, places and threads entered the world.
    introduced: usize,
}

/// The skills' part of a turn (#25): its plans, and the one being run.
#[derive(Default)]
struct SkillProgress {
    attempts: Vec<SkillAttempt>,
    disabled: BTreeSet<String>,
    /// A plan for the driver to run, until it takes it.
    work: Option<SkillWork>,
    /// The driver is running a plan.
    running: bool,
    fallback: Option<String>,
    /// A `narrative_choice` from the skills: the turn's choices.
    choices: Vec<String>,
    /// What the skills did, for the narrator.
    notes: Vec<String>,
}

/// One turn in progress.
pub struct TurnRunner {
    state: SessionState,
    input: PlayerInput,
    turn_id: u64,
    /// The first message of the stream this turn added.
    first_new: usize,
    phase: Phase,
    dice: Dice,
    persona_intention: MessageId,
    /// The persona's check in words, and why the move cannot happen (empty: it can).
    outcome_text: String,
    blocked: String,
    error: Option<TurnError>,
    /// The player's lines and veils, checked against every narration,
    /// intention and choice (#41).
    guard: crate::session::lines::Guard,
    /// When the player submitted, in seconds since the Unix epoch (the budget's zero).
    submitted_at: f64,
    calls: Calls,
    ledger: Ledger,
    skills: SkillProgress,
}

/// NPCs whose intent prompts are primed between turns.
const PRIMED_NPCS: usize = 4;

impl TurnRunner {
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
            .into_iter()
            .map(|r| runner.state.pinned(r))
            .collect()
    }

    fn new(state: SessionState, input: PlayerInput) -> Self {
        let turn_id = state.next_turn_id();
        let seed = state.seed ^ turn_id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Self {
            first_new: state.stream.messages.len(),
            turn_id,
            phase: Phase::Persona,
            dice: Dice::seeded(seed),
            persona_intention: MessageId { turn_id, seq: 0 },
            outcome_text: String::new(),
            blocked: String::new(),
            error: None,
            guard: state.calibration.guard(),
            submitted_at: crate::llm::record::now_seconds(),
            calls: Calls::default(),
            ledger: Ledger::default(),
            skills: SkillProgress::default(),
            state,
            input,
        }
    }

    /// Start a turn: the persona's intention enters the stream, its resolution and extractor are asked for.
    pub fn start(state: SessionState, input: PlayerInput) -> Self {
        let mut runner = Self::new(state, input);
        let turn_id = runner.turn_id;
        // Seed 004 step 1: the orchestrator marks a scene boundary before the turn.
        if let Some(marker) = pending_marker(&runner.state) {
            runner
                .state
                .stream
                .push(turn_id, SYSTEM, Kind::SceneMarker, marker.to_string(), None);
        }
        let id = runner.state.stream.push(
            turn_id,
            PERSONA,
            Kind::Intention,
            runner.input.text.clone(),
            runner.input.whisper_to.clone(),
        );
        runner.persona_intention = id;
        // What fired after last turn's narrations is told in this one.
        runner.ledger.fired = std::mem::take(&mut runner.state.world.untold);
        runner.ledger.carried = runner.ledger.fired.len();
        // #41: the engine reads the move against the world first; a move
        // it blocks reaches no model but the narrator.
        if runner.check_move() {
            runner.advance();
            return runner;
        }
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
        match self.calls.in_flight.get(&id) {
            Some(Purpose::Narrate { actor }) => Some(actor),
            _ => None,
        }
    }

    /// Calls to launch now; each is returned once.
    pub fn take_requests(&mut self) -> Vec<PendingCall> {
        std::mem::take(&mut self.calls.queued)
    }

    /// Whether every call has come back and the turn is over (or failed).
    pub fn is_finished(&self) -> bool {
        self.error.is_some() || (self.phase == Phase::Done && self.calls.in_flight.is_empty())
    }

    /// Whether `text` crosses one of the player's lines or veils (a
    /// narration streaming onto the screen stops showing when it does).
    pub fn crosses_limits(&self, text: &str) -> bool {
        self.guard.check(text).is_some()
    }

    /// The engine's notices this turn so far, in order: consequences fired,
    /// a move blocked (shown as they happen, like the dice).
    pub fn notices(&self) -> Vec<crate::transcript::marker::Notice> {
        self.state.stream.messages[self.first_new..]
            .iter()
            .filter_map(crate::transcript::marker::Notice::of)
            .collect()
    }

    /// The dice rolled so far this turn (shown as they happen).
    pub fn rolls(&self) -> &[RollRecord] {
        &self.ledger.rolls
    }

    /// The narrations written so far this turn, in order: after the echo cut
    /// and the choice among drafts, as they will be committed.
    pub fn narrations(&self) -> Vec<&str> {
        crate::transcript::stream::narrations(&self.state.stream.messages[self.first_new..])
    }

    /// The stage names of calls still out, those sent first (not the
    /// extractors held back for later); `skills` while a plan runs.
    pub fn waiting_for(&self) -> Vec<&'static str> {
        let held = |id: &u32| self.calls.background.iter().any(|c| c.id == *id);
        let (sent, held): (Vec<_>, Vec<_>) =
            self.calls.in_flight.iter().partition(|(id, _)| !held(id));
        let running = self.skills_busy().then_some("skills");
        running
            .into_iter()
            .chain(sent.into_iter().chain(held).map(|(_, p)| p.stage()))
            .collect()
    }

    /// The next choices, once the choice stage has answered (the turn may
    /// still be finishing its extractors).
    pub fn choices(&self) -> &[String] {
        &self.ledger.choices
    }

    /// Hand back one call's outcome.
    pub fn deliver(&mut self, id: u32, outcome: CallOutcome) {
        let Some(purpose) = self.calls.in_flight.remove(&id) else {
            return;
        };
        self.calls.records.insert(id, outcome.record.clone());
        if self.error.is_some() {
            return;
        }
        match outcome
            .result
            .and_then(|value| Answer::read(&purpose, value))
        {
            Ok(answer) => self.on_answer(id, purpose, answer, &outcome.record),
            Err(e) => self.on_failure(purpose, &e),
        }
        if self.error.is_none() {
            self.advance();
        }
    }

    /// A call that gave no answer: what that costs depends on what it was for.
    fn on_failure(&mut self, purpose: Purpose, e: &LlmError) {
        match purpose {
            // Seed 002 §4.2.1: a failed choice stage costs the turn nothing;
            // the player gets the generic choices.
            Purpose::Choices => {
                self.ledger
                    .refused
                    .push(format!("choices: the stage failed ({e})"));
                self.offer_generic_choices();
            }
            // A planner that fails costs the turn its skills, nothing more.
            Purpose::Plan { attempt } => self.on_plan(attempt, Err(e.to_string())),
            // An extractor that fails proposes nothing: the turn the player
            // has already read stands, without its bookkeeping (#21).
            p if p.is_bookkeeping() => self.ledger.refused.push(format!(
                "{}: the stage failed, nothing it proposed was applied ({e})",
                p.stage()
            )),
            p => self.error = Some(TurnError::from_llm(p.stage(), e)),
        }
    }

    fn on_answer(&mut self, id: u32, purpose: Purpose, answer: Answer, record: &CallRecord) {
        match (purpose, answer) {
            (Purpose::Resolve, Answer::Resolve(r)) => self.on_resolve(&r),
            (Purpose::Narrate { actor }, Answer::Narrate(n)) => {
                let system = record_part(record, Role::System);
                let user = record_part(record, Role::User);
                self.on_narrate(&actor, n, &system, &user);
            }
            (Purpose::Extract { owner }, Answer::Extract(answer)) => {
                self.calls.held.insert(id, Held::Extract { owner, answer });
            }
            (Purpose::Lore, Answer::Lore(facts)) => {
                self.calls.held.insert(id, Held::Lore(facts));
            }
            (Purpose::NpcIntent { npc }, Answer::NpcIntent(intent)) => {
                self.on_npc_intent(&npc, &intent);
            }
            (Purpose::Choices, Answer::Choices(c)) => self.on_choices(c.choices),
            (Purpose::Plan { attempt }, Answer::Plan(plan)) => self.on_plan(attempt, Ok(plan)),
            // `Answer::read` reads each purpose as its own kind.
            _ => {}
        }
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
        for held in std::mem::take(&mut self.calls.held).into_values() {
            match held {
                Held::Extract { owner, answer } => self.on_extract(&owner, answer),
                Held::Lore(facts) => self.on_lore(facts),
            }
        }
        let ready_ms = (crate::llm::record::now_seconds() - self.submitted_at) * 1000.0;
        let records: Vec<CallRecord> = std::mem::take(&mut self.calls.records)
            .into_values()
            .collect();
        let budget = super::budget::TurnBudget::of(self.submitted_at, &records, ready_ms);
        // What fired after the last narration is told next turn.
        let untold = self.ledger.fired[self.ledger.told..].to_vec();
        let minutes = self.ledger.minutes.unwrap_or(TURN_MINUTES);
        let mut world = self.state.world;
        world.untold = untold;
        standing::decay(&self.state.campaign.standing, &mut world, minutes);
        let now = self.state.play_minutes + minutes;
        let ledger = self.ledger;
        let carried = ledger.carried.min(ledger.fired.len());
        Ok(TurnResult {
            messages: self.state.stream.messages[self.first_new..].to_vec(),
            world,
            changes: ledger.changes,
            rolls: ledger.rolls,
            observations: ledger.observations,
            choices: ledger.choices,
            generic_choices: ledger.generic_choices,
            acted: ledger.acted,
            skipped: ledger.skipped,
            activation: ledger.activation,
            records,
            refused: ledger.refused,
            ops_proposed: ledger.ops_proposed,
            ops_refused: ledger.ops_refused,
            drafts: ledger.drafts,
            play_minutes: now,
            clarification: ledger.clarification,
            blocked: ledger.blocked,
            carried: texts(&ledger.fired[..carried]),
            fired: texts(&ledger.fired[carried..]),
            appended: ledger.appended,
            limits: ledger.limits,
            continuity: ledger.continuity,
            recalled: self.state.recalled,
            budget,
            skills: self.skills.attempts,
            skill_fallback: self.skills.fallback,
            skill_health: self.state.skills.health,
        })
    }

    fn queue(&mut self, purpose: Purpose, request: CallRequest) {
        let mut request = self.state.pinned(request);
        let calls = &mut self.calls;
        let id = calls.next_id;
        calls.next_id += 1;
        let bookkeeping = purpose.is_bookkeeping();
        calls.in_flight.insert(id, purpose);
        if bookkeeping {
            request.background = true;
        }
        if bookkeeping && !calls.parallel_bookkeeping {
            calls.background.push(PendingCall { id, request });
        } else {
            calls.queued.push(PendingCall { id, request });
        }
    }

    /// Every narration is written: the held-back extractors go out.
    fn release_bookkeeping(&mut self) {
        let calls = &mut self.calls;
        calls.queued.append(&mut calls.background);
    }

    /// #21: the model has a second lane, so the bookkeeping goes out at once
    /// (on that lane) instead of waiting until the choices are asked for.
    #[must_use]
    pub fn with_background_lane(mut self, parallel: bool) -> Self {
        self.calls.parallel_bookkeeping = parallel;
        if parallel {
            self.release_bookkeeping();
        }
        self
    }

    /// Whether a call of this kind is still out.
    fn waiting(&self, f: fn(&Purpose) -> bool) -> bool {
        self.calls.in_flight.values().any(f)
    }

    /// Move on when what the current phase waits for has come back.
    fn advance(&mut self) {
        match self.phase.clone() {
            Phase::Persona => {
                if self.waiting(|p| matches!(p, Purpose::Resolve)) {
                    return;
                }
                self.go_where_moved();
                let blocked = self.ledger.blocked.is_some();
                if !blocked && (self.ask_planner(1) || self.plan_every_turn()) {
                    self.phase = Phase::Skills;
                    return;
                }
                self.narrate_persona();
            }
            Phase::Skills => {
                let planning = self.waiting(|p| matches!(p, Purpose::Plan { .. }));
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
            Phase::Choices if !self.waiting(|p| matches!(p, Purpose::Choices)) => {
                self.phase = Phase::Done;
            }
            _ => {}
        }
    }

    /// The persona's narration is asked for (after its resolution and skills).
    fn narrate_persona(&mut self) {
        self.spend_time();
        // #41: a move the engine blocked is told by the engine, in the
        // story's words: no model can narrate it as done.
        if let Some(told) = self
            .ledger
            .blocked
            .as_ref()
            .and_then(check::Blocked::narration)
        {
            self.tell_for_the_player(told, None);
            return;
        }
        // #42: a question whose answer its author wrote is told by the
        // engine: the player's words, then the answer, without a model call
        // (what a small model makes of a question is rarely the answer).
        if let Some(answer) = self.authored_answer() {
            self.tell_for_the_player(self.outcome_opening(), Some(answer));
            return;
        }
        // #42: arriving somewhere, or looking around, where the place has
        // not been told yet: the engine tells it as its author wrote it.
        if let Some(told) = self.place_told() {
            self.ledger
                .continuity
                .push("narrate the player: the place told in the author's words".to_owned());
            self.tell_for_the_player(told, None);
            return;
        }
        let narrate = self.narrate_request(
            PERSONA,
            self.persona_intention,
            &self.outcome_text.clone(),
            &self.blocked.clone(),
        );
        self.ledger.given = self.untold().to_vec();
        self.mark_told();
        self.queue(
            Purpose::Narrate {
                actor: PERSONA.into(),
            },
            narrate,
        );
        self.phase = Phase::PersonaNarration;
    }

    /// The engine tells the player's narration itself (`told`), then the
    /// `answer` of the NPC asked (who then does not act again), then what
    /// fired; and the NPCs act.
    fn tell_for_the_player(&mut self, told: String, answer: Option<(String, String)>) {
        self.phase = Phase::PersonaNarration;
        self.state.stream.push(
            self.turn_id,
            crate::transcript::stream::ENGINE,
            Kind::Narration,
            told.clone(),
            None,
        );
        if let Some((npc, line)) = answer {
            let name = self.name_of(&npc);
            self.ledger.continuity.push(format!(
                "narrate the player: {name} answers in the author's words"
            ));
            self.say_line(&npc, &line, true);
            self.ledger.answered = Some(npc);
        }
        self.ledger.given = self.untold().to_vec();
        self.mark_told();
        self.tell_the_rest(&told);
        self.activate_npcs();
    }

    /// Every NPC has acted: the choices are asked for (or a skill's are taken)
    /// and the held-back extractors go out.
    fn ask_choices(&mut self) {
        // A skill's `narrative_choice` is the turn's choices (#25): the
        // choice stage is not asked.
        if !self.skills.choices.is_empty() {
            // #41: a skill's choices meet the player's lines and veils too.
            let offered = std::mem::take(&mut self.skills.choices);
            let kept = self.within_limits("skill choices", offered);
            if kept.is_empty() {
                self.offer_generic_choices();
            } else {
                self.ledger.choices = kept;
            }
            self.phase = Phase::Done;
            self.release_bookkeeping();
            return;
        }
        self.phase = Phase::Choices;
        let request = self.choices_request();
        self.queue(Purpose::Choices, request);
        self.release_bookkeeping();
    }

    fn call_seed(&self) -> u32 {
        let mixed = self.state.seed ^ (self.turn_id << 16) ^ u64::from(self.calls.next_id);
        u32::try_from(mixed & 0xFFFF_FFFF).unwrap_or(0)
    }
}

/// The words of consequences, for the turn's result.
fn texts(fired: &[Consequence]) -> Vec<String> {
    fired.iter().map(|c| c.text.clone()).collect()
}

/// The text of a call's first attempt's messages of one role, joined.
fn record_part(record: &CallRecord, role: Role) -> String {
    record.first().map_or_else(String::new, |a| {
        a.messages
            .iter()
            .filter(|m| m.role == role)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The scene marker the next turn starts with, if any (see [`SceneMarker::next`]).
fn pending_marker(state: &SessionState) -> Option<SceneMarker> {
    let here = state
        .world
        .scene
        .get("location")
        .and_then(serde_json::Value::as_str)?;
    let last = markers(&state.stream.messages).next_back();
    SceneMarker::next(last.as_ref(), here)
}
