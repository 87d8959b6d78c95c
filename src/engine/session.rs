//! Open-ended sessions in the ECS (feature `store`): the campaign's people, clocks, relations and memories as entities, and a turn as a chain of system sets that start model calls and collect them without ever blocking a frame.
//!
//! One frame of a session, in order ([`SessionSystems`], all in `Update`
//! after the model calls were polled in `PreUpdate`):
//!
//! 1. `Input` — a [`SessionInput`] line goes to the [`Controller`]: commands
//!    the orchestrator answers itself (`/rewind`, `/end-scene`, `/fallback`)
//!    report at once; an intention starts a [`TurnRunner`].
//! 2. `Launch` — every call the runner asks for is started on the gateway
//!    (a narrator and its extractor together).
//! 3. `Collect` — streamed narration goes to [`SessionView::streaming`];
//!    finished calls are handed to the runner, which decides the next stage
//!    (resolution → narration ∥ extraction → lore → NPC activation → per NPC
//!    intent → narration ∥ extraction → choices).
//! 4. `Commit` — a finished turn is committed in one transaction (or its
//!    failure kept for Retry / Continue-with-fallback).
//! 5. `Sync` — after a commit or a rewind, the world's entities are rebuilt
//!    from the session state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::platform::cell::SyncCell;
use bevy::prelude::*;
use serde_json::{Map, Value};

use super::llm::{LlmCalls, LlmFinished, LlmGateway, LlmSystems, LlmToken};
use crate::rules::state::{Clock, Relation};
use crate::session::controller::{Controller, Report, Step};
use crate::session::turn::{PERSONA, PlayerInput, RollRecord, TurnError, TurnRunner};
use crate::session::{DEFAULT_LAMBDA, Kind, Observation};

pub(super) fn plugin(app: &mut App) {
    app.add_message::<SessionInput>()
        .add_message::<SessionReport>()
        .add_message::<WorldChanged>()
        .init_resource::<SessionView>()
        .configure_sets(
            Update,
            (
                SessionSystems::Input,
                SessionSystems::Launch,
                SessionSystems::Collect,
                SessionSystems::Commit,
                SessionSystems::Sync,
            )
                .chain()
                .run_if(resource_exists::<ActiveSession>),
        )
        .add_systems(
            Update,
            (
                accept_input.in_set(SessionSystems::Input),
                launch_calls.in_set(SessionSystems::Launch),
                (collect_calls, collect_skills, collect_portraits).in_set(SessionSystems::Collect),
                commit_turn.in_set(SessionSystems::Commit),
                (sync_world, prime_next_turn, reload_skills).in_set(SessionSystems::Sync),
            ),
        );
    // The browser's save is a snapshot to keep; natively the file is the save.
    #[cfg(target_family = "wasm")]
    app.add_systems(Update, keep_save.in_set(SessionSystems::Sync));
    app.add_systems(
        PreUpdate,
        open_session
            .after(LlmSystems::Poll)
            .run_if(resource_added::<ActiveSession>),
    );
}

/// A turn's stages, in the order they run each frame.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum SessionSystems {
    Input,
    Launch,
    Collect,
    Commit,
    Sync,
}

/// The tag of a turn's model calls.
const TURN_TAG: &str = "session-turn";
/// The tag of the recap call.
const RECAP_TAG: &str = "session-recap";
/// The tag of a background stream-compression call.
const COMPRESS_TAG: &str = "session-compress";

/// The save being played. Insert it (with an [`LlmGateway`]) to start.
#[derive(Resource)]
pub struct ActiveSession {
    controller: SyncCell<Controller>,
    turn: Option<RunningTurn>,
    recap_call: Option<u64>,
    /// A stream compression running in the background (seed 004), with its call id.
    compression: Option<(u64, crate::session::summaries::Compression)>,
    save: PathBuf,
    /// Notices changes to the campaign's skill folders while the game runs.
    watcher: crate::skills::manifest::Watcher,
    /// Portraits being drawn for the characters the campaign gives none, one
    /// by one on their own thread (#25).
    portraits: Option<crossbeam_channel::Receiver<DrawnPortrait>>,
}

/// A character's portrait from the `character-portraits` skill, or why not.
type DrawnPortrait = (String, Result<Option<PathBuf>, String>);

impl std::fmt::Debug for ActiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveSession")
            .field("save", &self.save)
            .field("turn_running", &self.turn.is_some())
            .finish_non_exhaustive()
    }
}

struct RunningTurn {
    input: PlayerInput,
    runner: TurnRunner,
    /// Gateway call id → the runner's call id.
    calls: BTreeMap<u64, u32>,
    /// The call whose narration is streaming.
    narrating: Option<u64>,
    /// Rolls already shown.
    rolls_shown: usize,
    /// Narrations already shown.
    narrations_shown: usize,
    /// A skill plan running on its own thread (#25): its progress as it
    /// happens, and its end.
    skills: Option<SkillJob>,
}

struct SkillJob {
    progress: crossbeam_channel::Receiver<crate::skills::execute::Progress>,
    done: crossbeam_channel::Receiver<crate::session::skills::SkillRun>,
}

impl ActiveSession {
    /// Open a save (beginning a play session in it).
    pub fn open(save: PathBuf) -> Result<Self, String> {
        let controller = Controller::open(&save).map_err(|e| e.to_string())?;
        let info = controller.info().map_err(|e| e.to_string())?;
        let dirs = crate::session::skills::skill_dirs(&info.campaign_path);
        Ok(Self {
            controller: SyncCell::new(controller),
            turn: None,
            recap_call: None,
            compression: None,
            save,
            watcher: crate::skills::manifest::Watcher::watch(dirs),
            portraits: None,
        })
    }

    pub fn controller(&mut self) -> &mut Controller {
        self.controller.get()
    }

    pub fn save(&self) -> &PathBuf {
        &self.save
    }

    /// The folders this session's skills come from (the bundled and the campaign's).
    pub fn skill_dirs(&self) -> &[PathBuf] {
        self.watcher.dirs()
    }

    /// The session's skills from a new discovery (their folders changed, or
    /// the player switched one), their health kept.
    pub fn refresh_skills(&mut self, found: crate::skills::Discovery) {
        let ctl = self.controller.get();
        ctl.state.skills = ctl.state.skills.refreshed(found);
    }

    /// Whether a turn is being played (input waits).
    pub fn busy(&self) -> bool {
        self.turn.is_some() || self.recap_call.is_some()
    }

    /// End the play session (on leaving the screen or quitting): scripts
    /// still running are stopped (seed 002 §10.5).
    pub fn close(&mut self) {
        let ctl = self.controller.get();
        ctl.state.skills.cancel_running();
        ctl.close();
    }
}

/// One line of player input: free text, a choice's number, or a command.
#[derive(Message, Debug, Clone)]
pub struct SessionInput(pub String);

/// What happened to the last input (for toasts, scripted play and tests).
#[derive(Message, Debug, Clone)]
pub struct SessionReport(pub Report);

/// One entry of what the player reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// "Previously…", at the top of a sitting.
    Recap(String),
    /// The player's own intention.
    Intention {
        text: String,
        whisper_to: Option<String>,
    },
    Narration(String),
    Roll(RollRecord),
    /// A scene closed or opened.
    Scene(String),
    /// An orchestrator note (a rewind, a refused command).
    Note(String),
}

/// Everything the play screen shows, kept by the engine so the window, the
/// terminal and tests read the same thing.
#[derive(Resource, Debug, Default)]
pub struct SessionView {
    pub title: String,
    /// Where and when: the scene's location, time and mood.
    pub scene: Map<String, Value>,
    pub entries: Vec<Entry>,
    /// Narration arriving now, token by token.
    pub streaming: String,
    /// Whose narration is being written now (a character id), for the stage
    /// to light their portrait.
    pub speaker: Option<String>,
    /// The stage running now (for the "writing…" line and the overlay).
    pub stage: Option<String>,
    pub choices: Vec<String>,
    /// Per choice, its difficulty mark ("unlikely: heart -1, 42%"), if any.
    pub choice_marks: Vec<Option<String>>,
    /// The one clarification question asked, awaiting an answer.
    pub question: Option<String>,
    /// The last failed turn: the screen offers Retry and Continue-with-fallback.
    pub failure: Option<TurnError>,
    pub busy: bool,
    /// Whether the campaign takes free text (else only the choices).
    pub free_text: bool,
    /// Turns committed so far, and the scene index.
    pub scene_index: i64,
    /// The debug overlay's lines: stages, dice, state ops, refusals (newest last).
    pub log: Vec<String>,
    /// The last committed turn's timeline, for the debug overlay (#21).
    pub budget: Option<crate::session::budget::TurnBudget>,
    /// Where each committed turn's entries end and the scene it made: the
    /// backlog's "return here" rewinds to that scene (oldest first).
    pub moments: Vec<Moment>,
    /// How many entries came from the save (read in an earlier sitting, or
    /// before a rewind): the text box may show them at once.
    pub read_through: usize,
    /// The session's save slots (beside the autosave, which is the file itself).
    pub slots: Vec<crate::store::Bookmark>,
    /// Bumped whenever something the player reads changed.
    pub revision: u64,
    /// The skills' tools of the turn in progress or the last one (#25): the
    /// tool execution panel.
    pub tools: Vec<ToolRow>,
    /// The skill state tree, and the dot paths the last turn changed (the
    /// narrative state panel).
    pub skill_state: Map<String, Value>,
    pub skill_changed: Vec<String>,
    /// Assets the skills handed over this sitting, newest last (the gallery).
    pub assets: Vec<SkillAsset>,
    /// A skill that failed this turn: an inline notice (Retry / Dismiss).
    pub skill_notice: Option<SkillNotice>,
    /// Every plan failed: seed 002 §2.3.4's line, for the max-replan dialog.
    pub skill_fallback: Option<String>,
    /// UI events the skills sent that the window has no use for, by name.
    pub ui_events: Vec<String>,
    /// Portraits the `character-portraits` skill drew for characters the
    /// campaign gives none, by character id (in the save's asset store).
    pub drawn_portraits: BTreeMap<String, PathBuf>,
}

/// One tool of a plan, as the tool execution panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRow {
    pub tool_id: String,
    pub skill: String,
    /// How it ended; `None` while it runs.
    pub status: Option<crate::skills::execute::ToolState>,
    pub retries: u32,
    pub ms: Option<u64>,
    /// Log lines and events as they came.
    pub lines: Vec<String>,
    pub error: Option<String>,
}

/// A file a skill made, kept in the save's asset store.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillAsset {
    pub skill: String,
    pub kind: String,
    pub path: PathBuf,
    /// An image the window can show (else a placeholder card).
    pub shown: bool,
    pub scene: i64,
}

/// A skill that failed during the last turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillNotice {
    pub skill: String,
    pub message: String,
}

/// The end of one committed turn in [`SessionView::entries`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// `entries[..end]` is everything up to and including this turn.
    pub end: usize,
    /// The scene the turn committed: `/rewind scene` returns to just after it.
    pub scene: i64,
}

impl SessionView {
    /// Where the turn on show starts: the player's latest move (the opening
    /// narration and recap before any), so the text box holds one turn and the
    /// backlog the rest.
    pub fn turn_start(&self) -> usize {
        self.entries
            .iter()
            .rposition(|e| matches!(e, Entry::Intention { .. }))
            .unwrap_or(0)
    }
}

impl SessionView {
    fn log(&mut self, line: impl Into<String>) {
        const KEEP: usize = 200;
        if self.log.len() == KEEP {
            self.log.remove(0);
        }
        self.log.push(line.into());
    }
}

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

fn open_session(
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
    mut calls: ResMut<LlmCalls>,
    mut view: ResMut<SessionView>,
    mut commands: Commands,
) {
    let ctl = session.controller();
    *view = SessionView::default();
    view.title.clone_from(&ctl.state.campaign.manifest.title);
    view.free_text = true;
    show_choices(&mut view, ctl);
    view.scene_index = ctl.scene_index();
    show_transcript(&mut view, ctl);
    let recap = ctl.recap_request();
    if let (Some(request), Some(gateway)) = (recap, gateway) {
        view.busy = true;
        view.stage = Some("recap".into());
        let id = calls.start(&gateway.0, RECAP_TAG, request);
        session.recap_call = Some(id);
    }
    session.portraits = draw_portraits(session.controller());
    view.revision += 1;
    commands.write_message(WorldChanged);
}

/// Starts drawing, off the frame, a portrait for each character the campaign
/// gives none (those present first); `None` when there is none to draw.
fn draw_portraits(ctl: &Controller) -> Option<crossbeam_channel::Receiver<DrawnPortrait>> {
    let state = &ctl.state;
    let present = state.world.present();
    let mut wanted: Vec<(String, String, String)> = state
        .campaign
        .characters
        .iter()
        .filter(|(id, c)| id.as_str() != PERSONA && campaign_portrait(&state.campaign, c).is_none())
        .map(|(id, c)| (id.clone(), c.name.clone(), c.description.clone()))
        .collect();
    if wanted.is_empty()
        || state
            .skills
            .found
            .get(crate::session::skills::PORTRAITS)
            .is_none()
    {
        return None;
    }
    wanted.sort_by_key(|(id, _, _)| !present.contains(id));
    let skills = state.skills.clone();
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        for (id, name, description) in wanted {
            let drawn = crate::session::skills::portrait(&skills, &id, &name, &description)
                .map_err(|e| e.to_string());
            if tx.send((id, drawn)).is_err() {
                return;
            }
        }
    });
    Some(rx)
}

/// The campaign's own picture of a character, when its file is there.
fn campaign_portrait(
    campaign: &crate::campaign::Campaign,
    c: &crate::campaign::Character,
) -> Option<PathBuf> {
    let path = campaign.root.join(c.portrait.as_ref()?);
    crate::files::is_file(&path).then_some(path)
}

/// The portraits drawn so far onto the stage.
fn collect_portraits(
    mut session: ResMut<ActiveSession>,
    mut view: ResMut<SessionView>,
    mut people: Query<&mut Character>,
) {
    let Some(rx) = &session.portraits else {
        return;
    };
    let mut drawn: Vec<DrawnPortrait> = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(d) => drawn.push(d),
            Err(crossbeam_channel::TryRecvError::Empty) => break,
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                // Every portrait drawn.
                session.portraits = None;
                break;
            }
        }
    }
    for (id, result) in drawn {
        match result {
            Ok(Some(path)) => {
                for mut c in &mut people {
                    if c.id == id {
                        c.portrait = Some(path.clone());
                    }
                }
                // In the gallery too, with what else the skills made.
                let scene = view.scene_index;
                view.assets.push(SkillAsset {
                    skill: crate::session::skills::PORTRAITS.into(),
                    kind: "image".into(),
                    path: path.clone(),
                    shown: true,
                    scene,
                });
                view.drawn_portraits.insert(id, path);
                view.revision += 1;
            }
            Ok(None) => {}
            Err(e) => warn!("{e}; the stage keeps the silhouette"),
        }
    }
}

/// The player's view of the stored story, as entries, with each turn's scene
/// (and the save slots, read again with it).
fn show_transcript(view: &mut SessionView, ctl: &Controller) {
    let scenes = ctl.store().turn_scenes().unwrap_or_else(|e| {
        warn!("the backlog cannot return to earlier scenes: {e}");
        BTreeMap::new()
    });
    view.slots = ctl.store().bookmarks().unwrap_or_else(|e| {
        warn!("the save slots cannot be read: {e}");
        Vec::new()
    });
    let (mut entries, mut moments) = (Vec::new(), Vec::new());
    let mut turn = None;
    for m in &ctl.state.stream.messages {
        if turn != Some(m.id.turn_id) {
            if let Some(scene) = turn.and_then(|t| scenes.get(&t))
                && !entries.is_empty()
            {
                moments.push(Moment {
                    end: entries.len(),
                    scene: *scene,
                });
            }
            turn = Some(m.id.turn_id);
        }
        match m.kind {
            Kind::Narration => entries.push(Entry::Narration(m.content.clone())),
            Kind::Intention if m.owner == PERSONA => entries.push(Entry::Intention {
                text: m.content.clone(),
                whisper_to: m.target.clone(),
            }),
            Kind::SceneMarker if m.id.turn_id > 0 => {
                entries.push(Entry::Scene(scene_words(&m.content)));
            }
            _ => {}
        }
    }
    if let Some(scene) = turn.and_then(|t| scenes.get(&t))
        && !entries.is_empty()
    {
        moments.push(Moment {
            end: entries.len(),
            scene: *scene,
        });
    }
    // A new session's opening has not been read yet.
    view.read_through = if ctl.scene_index() == 0 {
        0
    } else {
        entries.len()
    };
    view.entries = entries;
    view.moments = moments;
}

/// `scene_open: reedmere_quay` → "A new scene: reedmere quay".
fn scene_words(marker: &str) -> String {
    if marker == crate::session::turn::SCENE_CLOSE {
        return "The scene closes.".into();
    }
    match marker.split_once(": ") {
        Some(("scene_open", place)) => format!("A new scene: {}", place.replace('_', " ")),
        Some(("location_change", moved)) => format!("Elsewhere: {}", moved.replace('_', " ")),
        _ => marker.replace('_', " "),
    }
}

/// The world changed: rebuild its entities.
#[derive(Message, Debug, Clone, Copy)]
struct WorldChanged;

fn accept_input(
    mut inputs: MessageReader<SessionInput>,
    mut session: ResMut<ActiveSession>,
    mut view: ResMut<SessionView>,
    mut reports: MessageWriter<SessionReport>,
    mut changed: MessageWriter<WorldChanged>,
    gateway: Option<Res<LlmGateway>>,
) {
    for SessionInput(line) in inputs.read() {
        if session.busy() {
            view.log(format!("input ignored while a turn runs: {line}"));
            continue;
        }
        let step = session.controller().handle(line);
        match step {
            Step::Quit => {}
            Step::Run(input) => {
                view.failure = None;
                view.question = None;
                view.choices.clear();
                view.choice_marks.clear();
                view.entries.push(Entry::Intention {
                    text: input.text.clone(),
                    whisper_to: input.whisper_to.clone(),
                });
                view.busy = true;
                view.log(format!("turn: {}", input.text));
                let state = session.controller().state.clone();
                for line in recall_lines(&state.recalled) {
                    view.log(line);
                }
                if let Some(line) = beat_line(&state) {
                    view.log(line);
                }
                // #21: a model with a second lane takes the bookkeeping at once.
                let lanes = gateway
                    .as_ref()
                    .map_or(1, |g| g.0.lanes(&state.small_model));
                session.turn = Some(RunningTurn {
                    runner: TurnRunner::start(state, input.clone()).with_background_lane(lanes > 1),
                    input,
                    calls: BTreeMap::new(),
                    narrating: None,
                    rolls_shown: 0,
                    narrations_shown: 0,
                    skills: None,
                });
                view.tools.clear();
                view.skill_notice = None;
                view.skill_fallback = None;
            }
            Step::Report(report) => {
                let ctl = session.controller();
                present(&report, ctl, &mut view);
                if matches!(
                    report,
                    Report::Committed { .. } | Report::Rewound { .. } | Report::Loaded { .. }
                ) {
                    changed.write(WorldChanged);
                }
                reports.write(SessionReport(report));
            }
        }
        view.revision += 1;
    }
}

fn launch_calls(
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
    mut calls: ResMut<LlmCalls>,
    mut view: ResMut<SessionView>,
) {
    // A plan to run: on its own thread, never in the frame (#25).
    let work = session
        .turn
        .as_mut()
        .and_then(|t| t.runner.take_skill_work());
    let skills = work
        .is_some()
        .then(|| session.controller().state.skills.clone());
    let Some(turn) = session.turn.as_mut() else {
        return;
    };
    if let (Some(work), Some(skills)) = (work, skills) {
        let (progress_tx, progress) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        view.log(format!(
            "skills: plan {} runs {} tool(s)",
            work.plan.request_id,
            work.plan.tools.len()
        ));
        view.stage = Some("skills".into());
        skills.rearm();
        std::thread::spawn(move || {
            let run = crate::session::skills::run_live(&skills, &work, Some(progress_tx));
            let _ = done_tx.send(run);
        });
        turn.skills = Some(SkillJob { progress, done });
    }
    let pending = turn.runner.take_requests();
    if pending.is_empty() {
        return;
    }
    let Some(gateway) = gateway else {
        view.log("no model gateway: the turn cannot run");
        return;
    };
    for call in pending {
        let stage = call.request.stage.clone();
        let actor = turn.runner.narrator_of(call.id).map(str::to_owned);
        let id = calls.start(&gateway.0, TURN_TAG, call.request);
        turn.calls.insert(id, call.id);
        if stage == "narrate" {
            turn.narrating = Some(id);
            view.stage = Some("narrate".into());
            view.speaker = actor;
        } else if view.stage.as_deref() != Some("narrate") {
            view.stage = Some(stage.clone());
        }
        view.log(format!("stage {stage} started (call {id})"));
    }
}

fn collect_calls(
    mut session: ResMut<ActiveSession>,
    mut tokens: MessageReader<LlmToken>,
    mut finished: MessageReader<LlmFinished>,
    mut view: ResMut<SessionView>,
) {
    let narrating = session.turn.as_ref().and_then(|t| t.narrating);
    for token in tokens.read() {
        if token.tag == TURN_TAG && Some(token.call) == narrating {
            view.streaming.push_str(&token.text);
            view.revision += 1;
        }
    }
    for done in finished.read() {
        if done.tag == RECAP_TAG && session.recap_call == Some(done.call) {
            session.recap_call = None;
            let written = text_of(&done.outcome);
            let text = session.controller().finish_recap(written);
            if !text.is_empty() {
                view.entries.push(Entry::Recap(text));
            }
            view.stage = None;
            view.busy = false;
            view.revision += 1;
            continue;
        }
        if done.tag == COMPRESS_TAG {
            if let Some((id, c)) = session.compression.take() {
                if id == done.call {
                    let written = text_of(&done.outcome);
                    session.controller().finish_compression(&c, written);
                    view.log(format!(
                        "turns {}..={} summarised",
                        c.turn_start, c.turn_end
                    ));
                } else {
                    session.compression = Some((id, c));
                }
            }
            continue;
        }
        if done.tag != TURN_TAG {
            continue;
        }
        let Some(turn) = session.turn.as_mut() else {
            continue;
        };
        let Some(id) = turn.calls.remove(&done.call) else {
            continue;
        };
        let record = &done.outcome.record;
        view.log(format!(
            "stage {} {} in {} ms ({} tokens out)",
            record.stage,
            if done.outcome.result.is_ok() {
                "done"
            } else {
                "FAILED"
            },
            record.total.as_millis(),
            record.attempts.iter().map(|a| a.tokens_out).sum::<u32>(),
        ));
        if turn.narrating == Some(done.call) {
            turn.narrating = None;
            view.speaker = None;
            view.streaming.clear();
            view.revision += 1;
        }
        turn.runner.deliver(id, (*done.outcome).clone());
        // The narration as it will be committed (the echo cut, the kept
        // draft), in place of what streamed.
        let narrations = turn.runner.narrations();
        for text in narrations.iter().skip(turn.narrations_shown) {
            view.entries.push(Entry::Narration((*text).to_owned()));
            view.revision += 1;
        }
        turn.narrations_shown = narrations.len();
        // Dice appear as soon as the engine rolls them, before the narration they decide.
        for roll in &turn.runner.rolls()[turn.rolls_shown..] {
            view.entries.push(Entry::Roll(roll.clone()));
        }
        turn.rolls_shown = turn.runner.rolls().len();
        // The next choices as soon as they are written, greyed out until the
        // turn commits (#21: the player reads on while the extractors finish).
        if view.choices.is_empty() && !turn.runner.choices().is_empty() {
            view.choices = turn.runner.choices().to_vec();
            view.choice_marks = vec![None; view.choices.len()];
            view.revision += 1;
        }
        let waiting = turn.runner.waiting_for();
        if let Some(stage) = waiting.first() {
            view.stage = Some((*stage).to_owned());
        }
    }
}

/// The panel's row of a tool, made when it is first heard of.
fn tool_row<'a>(view: &'a mut SessionView, tool_id: &str, skill: &str) -> &'a mut ToolRow {
    let i = view
        .tools
        .iter()
        .position(|t| t.tool_id == tool_id)
        .unwrap_or_else(|| {
            view.tools.push(ToolRow {
                tool_id: tool_id.to_owned(),
                skill: skill.to_owned(),
                status: None,
                retries: 0,
                ms: None,
                lines: Vec::new(),
                error: None,
            });
            view.tools.len() - 1
        });
    &mut view.tools[i]
}

/// A running plan's progress into the tool panel; its end to the runner.
fn collect_skills(mut session: ResMut<ActiveSession>, mut view: ResMut<SessionView>) {
    use crate::skills::execute::Progress;
    let Some(turn) = session.turn.as_mut() else {
        return;
    };
    let Some(job) = &turn.skills else {
        return;
    };
    for p in job.progress.try_iter() {
        match p {
            Progress::Started {
                tool_id,
                skill,
                attempt,
            } => {
                let row = tool_row(&mut view, &tool_id, &skill);
                row.status = None;
                row.retries = attempt;
                if attempt > 0 {
                    row.lines.push(format!("retry {attempt}"));
                }
            }
            Progress::Event { tool_id, event } => {
                if let Some(row) = view.tools.iter_mut().find(|t| t.tool_id == tool_id) {
                    row.lines.push(event_line(&event));
                }
            }
            Progress::Finished {
                tool_id,
                state,
                ms,
                retries,
            } => {
                if let Some(row) = view.tools.iter_mut().find(|t| t.tool_id == tool_id) {
                    row.status = Some(state);
                    row.ms = Some(ms);
                    row.retries = retries;
                }
            }
        }
        view.revision += 1;
    }
    let Ok(run) = job.done.try_recv() else {
        return;
    };
    turn.skills = None;
    // The final trace: errors, and skipped tools (which sent no progress).
    for tool in &run.result.tool_results {
        let row = tool_row(&mut view, &tool.tool_id, &tool.skill);
        if row.status.is_none() && row.lines.is_empty() {
            row.lines = tool.events.iter().map(event_line).collect();
        }
        row.status = Some(tool.state);
        row.ms = Some(tool.execution_time_ms);
        row.error = tool.error.as_ref().map(|f| f.message.clone());
    }
    if let Some(refused) = &run.result.refused {
        view.log(format!("skills: plan refused: {}", refused.message));
    }
    let failed = run
        .result
        .tool_results
        .iter()
        .find(|t| t.error.is_some() && t.state != crate::skills::execute::ToolState::Skipped);
    if let Some(t) = failed {
        view.skill_notice = Some(SkillNotice {
            skill: t.skill.clone(),
            message: t
                .error
                .as_ref()
                .map(|f| f.message.clone())
                .unwrap_or_default(),
        });
    }
    view.log(format!(
        "skills: plan {} {} in {} ms",
        run.result.plan_id,
        if run.result.success {
            "succeeded"
        } else {
            "FAILED"
        },
        run.result.execution_time_ms
    ));
    turn.runner.deliver_skills(run);
    view.revision += 1;
}

/// One event as a line of the tool panel.
fn event_line(event: &crate::skills::protocol::Event) -> String {
    use crate::skills::protocol::Event;
    match event {
        Event::Log { level, message, .. } => format!("{level:?}: {message}").to_lowercase(),
        Event::StatePatch { patch } => format!("state ← {}", Value::Object(patch.clone())),
        Event::Asset { asset_id, path, .. } => format!("asset {asset_id}: {path}"),
        Event::UiEvent { event, .. } => format!("ui: {event}"),
        Event::Error {
            error_code,
            error_message,
            ..
        } => format!("error {error_code}: {error_message}"),
        Event::Done { ok, summary } => {
            format!(
                "done ({}) {}",
                if *ok { "ok" } else { "not ok" },
                summary.as_deref().unwrap_or("")
            )
        }
    }
}

/// Keeps what changed in the browser's save (its snapshot in the page's
/// storage). A failure is said once and tried again next frame: the session
/// goes on in the open page.
#[cfg(target_family = "wasm")]
fn keep_save(mut session: ResMut<ActiveSession>, mut failing: Local<bool>) {
    match session.controller().store_mut().keep() {
        Ok(()) => *failing = false,
        Err(e) if !*failing => {
            error!("{e}");
            *failing = true;
        }
        Err(_) => {}
    }
}

/// Skill folders changed on disk: discovered again between turns, health kept.
fn reload_skills(
    mut session: ResMut<ActiveSession>,
    time: Res<Time>,
    mut view: ResMut<SessionView>,
    mut last: Local<f32>,
) {
    let now = time.elapsed_secs();
    if now - *last < 1.0 || session.turn.is_some() {
        return;
    }
    *last = now;
    let Some(found) = session.watcher.poll() else {
        return;
    };
    let names: Vec<&str> = found
        .skills
        .iter()
        .map(|s| s.manifest.name.as_str())
        .collect();
    view.log(format!("skills changed on disk: now {}", names.join(", ")));
    for w in &found.warnings {
        view.log(format!("skills: {w}"));
    }
    session.refresh_skills(found);
    view.revision += 1;
}

/// UI events that need no placeholder: `narrative_choice` becomes the turn's
/// choices; the bundled skills' `weather` and `dice_roll` say again what their
/// `done` and state already show.
const QUIET_UI_EVENTS: [&str; 3] = ["narrative_choice", "weather", "dice_roll"];

fn commit_turn(
    mut session: ResMut<ActiveSession>,
    mut calls: ResMut<LlmCalls>,
    gateway: Option<Res<LlmGateway>>,
    mut view: ResMut<SessionView>,
    mut reports: MessageWriter<SessionReport>,
    mut changed: MessageWriter<WorldChanged>,
) {
    if !session
        .turn
        .as_ref()
        .is_some_and(|t| t.runner.is_finished())
    {
        return;
    }
    let Some(turn) = session.turn.take() else {
        return;
    };
    if !turn.calls.is_empty() {
        // A stage failed while others ran: they are no longer needed.
        calls.cancel_all();
    }
    let outcome = turn.runner.finish();
    if let Ok(r) = &outcome {
        for change in &r.changes {
            view.log(format!(
                "op {}: {} → {}",
                serde_json::to_string(&change.op).unwrap_or_default(),
                change.before,
                change.after
            ));
        }
        for refusal in &r.refused {
            view.log(format!("refused: {refusal}"));
        }
        for choice in &r.drafts {
            view.log(choice.note.clone());
        }
        view.log(format!("turn: {}", r.budget.summary()));
        view.budget = Some(r.budget.clone());
        for roll in &r.rolls {
            view.log(format!(
                "dice {} {:?} {:+} = {} ({}), seed {:?}",
                roll.roll.expression,
                roll.roll.rolls,
                roll.roll.modifier,
                roll.roll.total,
                roll.band,
                roll.roll.seed
            ));
        }
    }
    let before = session.controller().state.world.skills.clone();
    let report = session.controller().finish(&turn.input, outcome);
    if let Report::Committed {
        result,
        scene_index,
        ..
    } = &report
    {
        let store = crate::session::skills::assets_dir(session.save());
        for run in result.skills.iter().filter_map(|a| a.run.as_ref()) {
            for t in &run.result.tool_results {
                for e in &t.events {
                    if let crate::skills::protocol::Event::UiEvent { event, .. } = e
                        && !QUIET_UI_EVENTS.contains(&event.as_str())
                    {
                        view.ui_events.push(format!("{} sent `{event}`", t.skill));
                    }
                }
            }
            for a in &run.assets {
                view.assets.push(SkillAsset {
                    skill: a.skill.clone(),
                    kind: a.stored.kind.clone(),
                    path: store.join(&a.stored.file),
                    shown: a.stored.shown,
                    scene: *scene_index,
                });
            }
        }
        view.skill_fallback.clone_from(&result.skill_fallback);
        let after = session.controller().state.world.skills.clone();
        view.skill_changed = crate::session::skills::changed_keys(&before, &after);
        view.skill_state = after;
    }
    view.busy = false;
    view.stage = None;
    view.streaming.clear();
    let ctl = session.controller();
    present(&report, ctl, &mut view);
    if matches!(report, Report::Committed { .. }) {
        changed.write(WorldChanged);
        // Seed 004: compress old turns in the background while the player reads.
        if session.compression.is_none()
            && let Some(gateway) = &gateway
            && let Some(c) = session.controller().compression_request()
        {
            view.log(format!(
                "compressing turns {}..={} into a summary",
                c.turn_start, c.turn_end
            ));
            let id = calls.start(&gateway.0, COMPRESS_TAG, c.request.clone());
            session.compression = Some((id, c));
        }
    }
    reports.write(SessionReport(report));
    view.revision += 1;
}

/// A prose call's text, or why it failed.
fn text_of(outcome: &crate::llm::CallOutcome) -> Result<String, String> {
    outcome
        .result
        .clone()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .map_err(|e| e.to_string())
}

/// The controller's choices and their difficulty marks, on screen.
fn show_choices(view: &mut SessionView, ctl: &Controller) {
    view.choices.clone_from(&ctl.choices);
    view.choice_marks = ctl
        .choice_marks
        .iter()
        .map(|m| m.as_ref().map(ToString::to_string))
        .collect();
}

/// Show a report: the turn's narrations already streamed; add its dice, choices, or the failure.
fn present(report: &Report, ctl: &Controller, view: &mut SessionView) {
    view.scene_index = ctl.scene_index();
    match report {
        Report::Committed {
            result,
            scene_index,
            ..
        } => {
            // Dice were shown as they were rolled; narrations not streamed (a fallback) are added.
            let shown: Vec<String> = view
                .entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Narration(t) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            for m in &result.messages {
                match m.kind {
                    Kind::Narration if !shown.contains(&m.content) => {
                        view.entries.push(Entry::Narration(m.content.clone()));
                    }
                    Kind::SceneMarker => view.entries.push(Entry::Scene(scene_words(&m.content))),
                    _ => {}
                }
            }
            show_choices(view, ctl);
            view.failure = None;
            view.moments.push(Moment {
                end: view.entries.len(),
                scene: *scene_index,
            });
        }
        Report::Question(q) => {
            view.question = Some(q.clone());
        }
        Report::Failed(e) => {
            view.failure = Some(e.clone());
        }
        Report::NotSaved(e) => {
            view.entries.push(Entry::Note(format!(
                "The turn could not be saved ({e}); nothing of it was kept."
            )));
        }
        Report::Rewound { to, .. } => {
            show_transcript(view, ctl);
            view.entries
                .push(Entry::Note(format!("Rewound to scene {to}.")));
            show_choices(view, ctl);
        }
        Report::Loaded { slot, .. } => {
            show_transcript(view, ctl);
            view.entries.push(Entry::Note(format!(
                "Loaded save slot {}.",
                slot.trim_start_matches("slot-")
            )));
            show_choices(view, ctl);
        }
        Report::Saved(kept) => {
            view.slots.retain(|s| s.slot != kept.slot);
            view.slots.push(kept.clone());
            view.slots.sort_by(|a, b| a.slot.cmp(&b.slot));
            view.entries
                .push(Entry::Note(crate::session::controller::saved_words(kept)));
        }
        Report::Note(n) => view.entries.push(Entry::Note(n.clone())),
    }
}

/// #21: when the session opens and after each commit or rewind, the next
/// turn's prompts are read into the model while the player reads.
fn prime_next_turn(
    mut changed: MessageReader<WorldChanged>,
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
) {
    if changed.read().count() == 0 {
        return;
    }
    if let Some(gateway) = gateway {
        crate::session::play::prime(&gateway.0, &session.controller().state);
    }
}

fn sync_world(
    mut changed: MessageReader<WorldChanged>,
    mut session: ResMut<ActiveSession>,
    mut view: ResMut<SessionView>,
    old: Query<Entity, With<SessionEntity>>,
    mut commands: Commands,
) {
    if changed.read().count() == 0 {
        return;
    }
    for e in &old {
        commands.entity(e).despawn();
    }
    let ctl = session.controller();
    let state = &ctl.state;
    view.scene.clone_from(&state.world.scene);
    if view.skill_state != state.world.skills {
        // A rewind or a load: the skill state of that scene, nothing lit.
        view.skill_state.clone_from(&state.world.skills);
        view.skill_changed.clear();
    }
    let present = state.world.present();
    for (id, c) in &state.campaign.characters {
        let mut entity = commands.spawn((
            SessionEntity,
            Character {
                id: id.clone(),
                name: c.name.clone(),
                persona: id == PERSONA,
                portrait: campaign_portrait(&state.campaign, c)
                    .or_else(|| view.drawn_portraits.get(id).cloned()),
            },
            Chattiness(c.chattiness),
            StatBlock(
                state
                    .world
                    .characters
                    .get(id)
                    .map(|s| s.stats.clone())
                    .unwrap_or_default(),
            ),
            Inventory(state.world.inventory.get(id).cloned().unwrap_or_default()),
        ));
        if c.baked {
            entity.insert(Baked);
        }
        if let Some(p) = state.world.perception.get(id) {
            entity.insert(Perception(*p));
        }
        if present.contains(id) {
            entity.insert(Present);
        }
        if let Some(observations) = state.observations.get(id) {
            entity.with_children(|children| {
                for o in observations {
                    children.spawn((
                        SessionEntity,
                        Memory {
                            priority: o.priority(state.play_minutes, DEFAULT_LAMBDA),
                            observation: o.clone(),
                        },
                    ));
                }
            });
        }
    }
    for clock in state.world.clocks.values() {
        commands.spawn((SessionEntity, ClockState(clock.clone())));
    }
    for relation in &state.world.relations {
        commands.spawn((SessionEntity, RelationEdge(relation.clone())));
    }
    for (id, reputation) in &state.world.reputation {
        let name = state
            .campaign
            .factions
            .get(id)
            .map_or_else(|| id.clone(), |f| f.name.clone());
        commands.spawn((
            SessionEntity,
            Faction {
                id: id.clone(),
                name,
                reputation: *reputation,
            },
        ));
    }
    view.revision += 1;
}

/// The overlay's account of the plot beats: what this scene steers toward, what waits, what was skipped.
pub fn beat_line(state: &crate::session::turn::SessionState) -> Option<String> {
    use crate::rules::BeatStatus;
    let scene = crate::session::beats::scene_number(&state.stream);
    let mut parts = Vec::new();
    for b in &state.campaign.beats {
        match state.world.beats.get(&b.id) {
            Some(BeatStatus::Triggered { scene: s, why }) if *s == scene => {
                parts.push(format!("steering toward \"{}\" ({why})", b.title));
            }
            Some(BeatStatus::Ready { since, why }) => {
                parts.push(format!(
                    "ready since scene {since}: \"{}\" ({why})",
                    b.title
                ));
            }
            Some(BeatStatus::Skipped { scene: s, why }) if *s == scene => {
                parts.push(format!("skipped \"{}\": {why}", b.title));
            }
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| format!("beats (scene {scene}): {}", parts.join("; ")))
}

/// The overlay's account of what a turn was shown from lore and memory, with scores.
pub fn recall_lines(r: &crate::memory::Recalled) -> Vec<String> {
    let mut out = vec![format!(
        "recall ({:.1} ms): {} lore chunk(s), {} tokens; {} memor{}{}",
        r.took_ms,
        r.lore.len(),
        r.lore_tokens(),
        r.memories.len(),
        if r.memories.len() == 1 { "y" } else { "ies" },
        if r.episodic_bonus {
            "; episodic +1"
        } else {
            ""
        }
    )];
    for h in &r.lore {
        out.push(format!(
            "  lore {} score {:.3} (semantic {:.3}, keywords {:.3}{})",
            h.chunk_id,
            h.score,
            h.semantic,
            h.keyword,
            if h.metadata { ", metadata" } else { "" }
        ));
    }
    for m in &r.memories {
        let summary: String = m.summary.chars().take(80).collect();
        out.push(format!(
            "  memory turn {} relevance {:.3}{}: {summary}",
            m.turn,
            m.relevance,
            if m.episodic { " (episodic)" } else { "" }
        ));
    }
    if !r.scene.is_null() {
        let count = |k: &str| {
            r.scene[k]
                .as_array()
                .map(Vec::len)
                .or_else(|| r.scene[k].as_object().map(serde_json::Map::len))
                .unwrap_or(0)
        };
        out.push(format!(
            "  scene lore of {}: {} atmosphere, {} NPC briefing(s), {} discoverable(s), {} thread link(s)",
            r.scene["location_name"].as_str().unwrap_or("?"),
            count("atmosphere"),
            count("npc_briefings"),
            count("discoverable"),
            count("thread_connections"),
        ));
    }
    out
}
