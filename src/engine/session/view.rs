//! What a session shows, as resources that change separately, for the window, terminal and tests.
//!
//! The engine writes them; a reader takes only the ones it needs, so change
//! detection says something: [`Transcript`] changes when there is more to
//! read, [`TurnPrompt`] when what the player may answer changes, and so on.

use std::path::PathBuf;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use serde_json::{Map, Value};

use crate::session::turn::{RollRecord, TurnError};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Transcript>()
        .init_resource::<TurnPrompt>()
        .init_resource::<TurnProgress>()
        .init_resource::<SceneView>()
        .init_resource::<SaveSlots>()
        .init_resource::<DebugLog>()
        .init_resource::<SkillsView>();
}

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
    Roll(Box<RollRecord>),
    /// A scene closed or opened.
    Scene(String),
    /// An orchestrator note (a rewind, a refused command).
    Note(String),
    /// What the world did (a consequence fired), or why a move could not happen (#41).
    Notice(crate::transcript::marker::Notice),
}

/// The end of one committed turn in [`Transcript::entries`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// `entries[..end]` is everything up to and including this turn.
    pub end: usize,
    /// The scene the turn committed: `/rewind scene` returns to just after it.
    pub scene: i64,
}

/// What the player reads: the story so far, the narration arriving now and whose it is.
#[derive(Resource, Debug, Default)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    /// Narration arriving now, token by token.
    pub streaming: String,
    /// The narration streaming now crossed a line or veil: it is not shown (#41).
    pub withheld: bool,
    /// Whose narration is being written now (a character id), for the stage
    /// to light their portrait.
    pub speaker: Option<String>,
    /// Where each committed turn's entries end and the scene it made: the
    /// backlog's "return here" rewinds to that scene (oldest first).
    pub moments: Vec<Moment>,
    /// How many entries came from the save (read in an earlier sitting, or
    /// before a rewind): the text box may show them at once.
    pub read_through: usize,
}

impl Transcript {
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

/// What the player may answer with: the choices, a clarification question, a failed turn.
#[derive(Resource, Debug, Default)]
pub struct TurnPrompt {
    pub choices: Vec<String>,
    /// Per choice, its difficulty mark ("unlikely: heart -1, 42%"), if any.
    pub choice_marks: Vec<Option<String>>,
    /// The one clarification question asked, awaiting an answer.
    pub question: Option<String>,
    /// The last failed turn: the screen offers Retry and Continue-with-fallback.
    pub failure: Option<TurnError>,
    /// The browser did not keep the save (a full or refused IndexedDB): the
    /// screen says "this turn was not kept" until a snapshot is kept again.
    pub not_kept: Option<String>,
    /// Whether the campaign takes free text (else only the choices).
    pub free_text: bool,
}

/// Whether a turn (or the recap) is under way, and its stage now.
#[derive(Resource, Debug, Default)]
pub struct TurnProgress {
    pub busy: bool,
    /// The stage running now (for the "writing…" line and the overlay).
    pub stage: Option<String>,
}

/// Where the story stands: the session's title, the scene's place and mood, the scene index.
///
/// The engine writes it on every change of the world (a commit, rewind or
/// load), so a reader that follows the scene (the backdrop, the music) knows to look again.
#[derive(Resource, Debug, Default)]
pub struct SceneView {
    pub title: String,
    /// Where and when: the scene's location, time and mood.
    pub scene: Map<String, Value>,
    /// Turns committed so far, and the scene index.
    pub scene_index: i64,
}

/// The session's save slots (beside the autosave, which is the file itself).
#[derive(Resource, Debug, Default)]
pub struct SaveSlots(pub Vec<crate::store::Bookmark>);

/// The debug overlay's account of the session: stages, dice, state ops, refusals.
#[derive(Resource, Debug, Default)]
pub struct DebugLog {
    /// Newest last; the oldest go past [`DebugLog::KEEP`].
    pub lines: Vec<String>,
    /// The last committed turn's timeline (#21).
    pub budget: Option<crate::session::budget::TurnBudget>,
}

impl DebugLog {
    /// How many lines are kept.
    pub const KEEP: usize = 200;

    pub fn push(&mut self, line: impl Into<String>) {
        if self.lines.len() == Self::KEEP {
            self.lines.remove(0);
        }
        self.lines.push(line.into());
    }
}

/// The skills' side of a session (#25): the tool panel, the narrative state, the gallery, notices.
#[derive(Resource, Debug, Default)]
pub struct SkillsView {
    /// The skills' tools of the turn in progress or the last one: the tool
    /// execution panel.
    pub tools: Vec<ToolRow>,
    /// The skill state tree, and the dot paths the last turn changed (the
    /// narrative state panel).
    pub state: Map<String, Value>,
    pub changed: Vec<String>,
    /// Assets the skills handed over this sitting, newest last (the gallery).
    pub assets: Vec<SkillAsset>,
    /// A skill that failed this turn: an inline notice (Retry / Dismiss).
    pub notice: Option<SkillNotice>,
    /// Every plan failed: seed 002 §2.3.4's line, for the max-replan dialog.
    pub fallback: Option<String>,
    /// UI events the skills sent that the window has no use for, by name.
    pub ui_events: Vec<String>,
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

/// Every view resource, for the engine's systems that write several (each
/// is marked changed only when it is written through).
#[derive(SystemParam)]
pub(super) struct ViewsMut<'w> {
    pub transcript: ResMut<'w, Transcript>,
    pub prompt: ResMut<'w, TurnPrompt>,
    pub progress: ResMut<'w, TurnProgress>,
    pub scene: ResMut<'w, SceneView>,
    pub slots: ResMut<'w, SaveSlots>,
    pub log: ResMut<'w, DebugLog>,
    pub skills: ResMut<'w, SkillsView>,
}

impl ViewsMut<'_> {
    /// Everything back to nothing shown (a session opens).
    pub(super) fn clear(&mut self) {
        *self.transcript = Transcript::default();
        *self.prompt = TurnPrompt::default();
        *self.progress = TurnProgress::default();
        *self.scene = SceneView::default();
        *self.slots = SaveSlots::default();
        *self.log = DebugLog::default();
        *self.skills = SkillsView::default();
    }

    /// The scene index, written only when it moved.
    pub(super) fn set_scene_index(&mut self, index: i64) {
        if self.scene.scene_index != index {
            self.scene.scene_index = index;
        }
    }
}
