//! Open-ended sessions in the ECS (feature `store`): a turn as system sets that never block.
//!
//! The campaign's people, clocks, relations and memories are entities
//! ([`entities`]); what the player reads is kept in a few view resources
//! ([`view`]). One frame of a session, in order ([`SessionSystems`], all in
//! `Update` after the model calls were polled in `PreUpdate`):
//!
//! 1. `Input` — a [`SessionInput`] line goes to the [`Controller`]: commands
//!    the orchestrator answers itself (`/rewind`, `/end-scene`, `/fallback`)
//!    report at once; an intention starts a [`TurnRunner`] ([`turn`]).
//! 2. `Launch` — every call the runner asks for is started on the gateway
//!    (a narrator and its extractor together); a skill plan on its own thread.
//! 3. `Collect` — streamed narration goes to [`Transcript::streaming`];
//!    finished calls are handed to the runner, which decides the next stage
//!    (resolution → narration ∥ extraction → lore → NPC activation → per NPC
//!    intent → narration ∥ extraction → choices).
//! 4. `Commit` — a finished turn is committed in one transaction, its memory
//!    embedded, on the async compute pool: the controller is lent to that task
//!    and lands back a frame or a few later ([`commit`]); a failed turn is
//!    kept for Retry / Continue-with-fallback. Input waits until it lands.
//! 5. `Sync` — after a commit or a rewind, the world's entities are rebuilt
//!    from the session state.
//!
//! [`TurnRunner`]: crate::session::turn::TurnRunner

mod commit;
mod components;
mod entities;
mod portraits;
mod present;
mod skill_runs;
mod turn;
mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::platform::cell::SyncCell;
use bevy::prelude::*;
use tracing::{info, warn};

pub use self::components::{
    Baked, Character, Chattiness, ClockState, Faction, Inventory, Memory, Perception, Present,
    RelationEdge, SessionEntity, StatBlock,
};
pub use self::present::{beat_line, recall_lines};
pub use self::view::{
    DebugLog, Entry, Moment, SaveSlots, SceneView, SkillAsset, SkillNotice, SkillsView, ToolRow,
    Transcript, TurnProgress, TurnPrompt,
};
use super::llm::{LlmCalls, LlmFinished, LlmGateway, LlmSystems};
use crate::session::controller::{Controller, Report};
use crate::session::error::ControllerError;
use crate::session::summaries::Compression;
use crate::session::turn::{PlayerInput, TurnRunner};
use crate::skills::Discovery;

pub(super) fn plugin(app: &mut App) {
    app.add_message::<SessionInput>()
        .add_message::<SessionReport>()
        .add_message::<WorldChanged>()
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
            PreUpdate,
            open_session
                .after(LlmSystems::Poll)
                .run_if(resource_added::<ActiveSession>),
        )
        .add_plugins((
            view::plugin,
            turn::plugin,
            skill_runs::plugin,
            portraits::plugin,
            commit::plugin,
            entities::plugin,
        ));
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
    /// The orchestrator; `None` while a commit has it on the async compute pool.
    controller: Option<SyncCell<Controller>>,
    /// The commit under way, which gives the controller back when it lands.
    committing: Option<commit::Commit>,
    turn: Option<RunningTurn>,
    recap_call: Option<u64>,
    /// A stream compression running in the background (seed 004), with its call id.
    compression: Option<(u64, Compression)>,
    /// The recap or a compression that finished while a commit had the
    /// controller: handled once it is back.
    deferred: Vec<LlmFinished>,
    /// Changes to the session's skills asked while a commit had the
    /// controller: made, in order, once it is back.
    skill_edits: Vec<SkillEdit>,
    save: PathBuf,
    /// Notices changes to the campaign's skill folders while the game runs.
    watcher: crate::skills::manifest::Watcher,
    /// Portraits being drawn for the characters the campaign gives none, one
    /// by one on their own thread (#25).
    portraits: Option<crossbeam_channel::Receiver<portraits::DrawnPortrait>>,
    /// Portraits the `character-portraits` skill drew for characters the
    /// campaign gives none, by character id (in the save's asset store).
    drawn_portraits: BTreeMap<String, PathBuf>,
    /// Whether lore and memory are recalled by meaning (an embedder loaded at open).
    by_meaning: bool,
    /// How long opening the save took (the lore index is built then).
    opened_in: std::time::Duration,
}

impl std::fmt::Debug for ActiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveSession")
            .field("save", &self.save)
            .field("turn_running", &self.turn.is_some())
            .field("committing", &self.committing.is_some())
            .finish_non_exhaustive()
    }
}

/// A turn being played: its runner, and what of it the player has been shown.
struct RunningTurn {
    input: PlayerInput,
    runner: TurnRunner,
    /// Gateway call id → the runner's call id.
    calls: BTreeMap<u64, u32>,
    /// The call whose narration is streaming.
    narrating: Option<u64>,
    /// Engine notices of the turn already on screen (#41).
    notices_shown: usize,
    /// Rolls already shown.
    rolls_shown: usize,
    /// Narrations already shown.
    narrations_shown: usize,
    /// A skill plan running on its own thread (#25): its progress as it
    /// happens, and its end.
    skills: Option<skill_runs::SkillJob>,
}

/// A change to the session's skills from the window.
#[derive(Debug)]
enum SkillEdit {
    /// A new discovery (their folders changed, or the player switched one).
    Refresh(Discovery),
    /// A failed skill the player asked to try again.
    Heal(String),
}

impl ActiveSession {
    /// Open a save (beginning a play session in it).
    pub fn open(save: PathBuf) -> Result<Self, ControllerError> {
        let began = web_time::Instant::now();
        let controller = Controller::open(&save)?;
        let opened_in = began.elapsed();
        let dirs = crate::session::skills::skill_dirs(&controller.info()?.campaign_path);
        let by_meaning = controller.memory.has_embedder();
        Ok(Self {
            controller: Some(SyncCell::new(controller)),
            committing: None,
            turn: None,
            recap_call: None,
            compression: None,
            deferred: Vec::new(),
            skill_edits: Vec::new(),
            save,
            watcher: crate::skills::manifest::Watcher::watch(dirs),
            portraits: None,
            drawn_portraits: BTreeMap::new(),
            by_meaning,
            opened_in,
        })
    }

    /// Whether lore and memory are recalled by meaning (the embedder loaded
    /// when the session opened), or by their words.
    pub fn recall_by_meaning(&self) -> bool {
        self.by_meaning
    }

    /// How long opening the save took (a new save's lore is embedded then).
    pub fn opened_in(&self) -> std::time::Duration {
        self.opened_in
    }

    /// The orchestrator, unless a commit has it off the frame thread (for a
    /// frame or a few after a turn ends; [`ActiveSession::busy`] says so too).
    pub fn controller(&mut self) -> Option<&mut Controller> {
        self.controller.as_mut().map(SyncCell::get)
    }

    /// The orchestrator when no turn, recap or commit is under way.
    fn idle_controller(&mut self) -> Option<&mut Controller> {
        if self.turn.is_some() || self.recap_call.is_some() {
            return None;
        }
        self.controller()
    }

    /// The turn being played and the orchestrator, both at hand.
    fn turn_and_controller(&mut self) -> Option<(&mut RunningTurn, &mut Controller)> {
        Some((self.turn.as_mut()?, self.controller.as_mut()?.get()))
    }

    /// The controller back from a commit: the skill changes asked meanwhile are made.
    fn take_back(&mut self, mut controller: Controller) {
        for edit in self.skill_edits.drain(..) {
            edit.apply(&mut controller);
        }
        self.controller = Some(SyncCell::new(controller));
    }

    pub fn save(&self) -> &PathBuf {
        &self.save
    }

    /// The folders this session's skills come from (the bundled and the campaign's).
    pub fn skill_dirs(&self) -> &[PathBuf] {
        self.watcher.dirs()
    }

    /// The session's skills from a new discovery (their folders changed, or
    /// the player switched one), their health kept: now, or when a commit
    /// under way gives the controller back.
    pub fn refresh_skills(&mut self, found: Discovery) {
        self.edit_skills(SkillEdit::Refresh(found));
    }

    /// A skill that failed may be called again from the next turn (now, or
    /// when a commit under way gives the controller back).
    pub fn heal_skill(&mut self, skill: &str) {
        self.edit_skills(SkillEdit::Heal(skill.to_owned()));
    }

    fn edit_skills(&mut self, edit: SkillEdit) {
        match self.controller() {
            Some(ctl) => edit.apply(ctl),
            None => self.skill_edits.push(edit),
        }
    }

    /// Whether a turn is being played (input waits): its calls, the recap, or its commit.
    pub fn busy(&self) -> bool {
        self.turn.is_some() || self.recap_call.is_some() || self.committing.is_some()
    }

    /// Whether a finished turn is being committed off the frame thread (the
    /// controller is lent to that task until it lands).
    pub fn committing(&self) -> bool {
        self.committing.is_some()
    }

    /// End the play session (on leaving the screen or quitting): a commit
    /// under way is waited for, then scripts still running are stopped (seed 002 §10.5).
    pub fn close(&mut self) {
        if let Some(landed) = self.committing.take().and_then(commit::Commit::wait) {
            info!("the last turn's commit landed as the session closed");
            self.take_back(landed.controller);
            // The browser keeps what the commit changed, as its frame would have.
            #[cfg(target_family = "wasm")]
            if let Some(Err(e)) = self.controller().map(|c| c.store_mut().keep()) {
                error!("{e}");
            }
        }
        let Some(ctl) = self.controller() else {
            warn!("the session closed while its last commit still runs");
            return;
        };
        ctl.state.skills.cancel_running();
        ctl.close();
    }
}

impl Drop for ActiveSession {
    /// A commit under way lands before the session goes (the app quits): the
    /// turn is saved, as it was when commits ran in the frame.
    fn drop(&mut self) {
        if let Some(commit) = self.committing.take() {
            drop(commit.wait());
        }
    }
}

impl SkillEdit {
    fn apply(self, ctl: &mut Controller) {
        match self {
            Self::Refresh(found) => ctl.state.skills = ctl.state.skills.refreshed(found),
            Self::Heal(skill) => ctl.state.skills.health.heal(&skill),
        }
    }
}

/// One line of player input: free text, a choice's number, or a command.
#[derive(Message, Debug, Clone)]
pub struct SessionInput(pub String);

/// What happened to the last input (for toasts, scripted play and tests).
#[derive(Message, Debug, Clone)]
pub struct SessionReport(pub Report);

/// The world changed: rebuild its entities.
#[derive(Message, Debug, Clone, Copy)]
struct WorldChanged;

/// A session was opened: show its story so far, start its recap and its missing portraits.
fn open_session(
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
    mut calls: ResMut<LlmCalls>,
    mut views: view::ViewsMut,
    mut commands: Commands,
) {
    let Some(ctl) = session.controller() else {
        return;
    };
    views.clear();
    views
        .scene
        .title
        .clone_from(&ctl.state.campaign.manifest.title);
    views.prompt.free_text = true;
    present::show_choices(&mut views.prompt, ctl);
    views.set_scene_index(ctl.scene_index());
    present::show_transcript(&mut views, ctl);
    let recap = ctl.recap_request();
    let portraits = portraits::draw_portraits(ctl);
    if let (Some(request), Some(gateway)) = (recap, gateway) {
        views.progress.busy = true;
        views.progress.stage = Some("recap".into());
        let id = calls.start(&gateway.0, RECAP_TAG, request);
        session.recap_call = Some(id);
    }
    session.portraits = portraits;
    commands.write_message(WorldChanged);
}
