//! The orchestrator around turns (feature `store`): commands, commits, rewinds, slots.
//!
//! The controller never waits on a model. [`Controller::handle`] turns one line
//! of player input into either a [`Report`] (commands the orchestrator answers
//! itself: `/rewind`, `/end-scene`, `/fallback`) or a [`PlayerInput`] whose turn
//! the caller runs however it likes (the terminal blocks on
//! [`super::play::run_turn`]; the window polls calls each frame) and hands back
//! to [`Controller::finish`], which commits it. The "Previously…" recap and
//! stream compression are in `summaries`; a save's files in `saves`.

use std::path::Path;
use std::sync::Arc;

use super::commands::{COMMANDS, Command, parse_command};
use super::error::ControllerError;
use super::play::{end_scene_turn, fallback_templates, fallback_turn};
use super::remember::{Difficulty, SessionMemory};
use super::save_files::{load_campaign, unique};
use super::summaries::{self, Compression, load_summaries};
use super::turn::{PERSONA, PlayerInput, Ruling, SessionState, TurnError, TurnResult};
use crate::llm::CallRequest;
use crate::memory::Embedder;
use crate::store::{PlaySession, SceneKind, SessionInfo, Store, StoreError};
use crate::transcript::stream::{Kind, player_view};

/// What the controller did with a line or a finished turn.
#[derive(Clone, Debug)]
pub enum Report {
    /// A turn was committed (played, fallback-narrated, or a closed scene).
    Committed {
        result: Box<TurnResult>,
        scene_index: i64,
        kind: SceneKind,
    },
    /// The referee asks one question first; nothing was saved.
    Question(String),
    /// A stage failed; nothing was saved. `/retry` or `/fallback` may follow.
    Failed(TurnError),
    /// The turn happened but could not be saved (another writer moved the
    /// save on, or the disk refused): nothing of it was kept.
    NotSaved(String),
    Rewound {
        to: i64,
        scene_index: i64,
    },
    /// The scene was kept in a save slot.
    Saved(crate::store::Bookmark),
    /// A save slot was loaded: play goes on from its scene, on a new branch.
    Loaded {
        slot: String,
        scene_index: i64,
    },
    /// A message for the player (a hint, a refused command).
    Note(String),
}

/// "Saved to slot 2: Reedmere Quay, scene 12: …" for a [`Report::Saved`].
pub fn saved_words(b: &crate::store::Bookmark) -> String {
    let end = if b.summary.ends_with('…') { "" } else { "." };
    format!(
        "Saved to slot {}: {}{end}",
        b.slot.trim_start_matches("slot-"),
        b.summary
    )
}

/// What the caller does next.
#[derive(Clone, Debug)]
pub enum Step {
    /// Run this turn, then hand its outcome to [`Controller::finish`].
    Run(PlayerInput),
    Report(Report),
    Quit,
}

/// A save being played.
#[derive(Debug)]
pub struct Controller {
    store: Store,
    pub state: SessionState,
    current_scene: String,
    scene_index: i64,
    pub choices: Vec<String>,
    /// Per choice, the seed 002 §4.2.1 difficulty mark when the persona is
    /// unlikely to pull it off (display only: never stored or replayed).
    pub choice_marks: Vec<Option<Difficulty>>,
    /// Per choice, what the referee would decide (#21 fast path); `None`
    /// when it cannot be told (no embedder): a pick then goes to the referee.
    pub choice_rulings: Vec<Option<Ruling>>,
    clarified: bool,
    last: Option<(String, Option<String>)>,
    failed: Option<PlayerInput>,
    templates: Vec<String>,
    play_session: PlaySession,
    /// The "Previously…" of this sitting, once made.
    pub recap: Option<String>,
    /// What opening the save found about its pinned prompts (edited or
    /// removed since): for the player and the log, said once.
    pub prompt_changes: Vec<super::pins::PinChange>,
    /// Semantic memory and lore of the save.
    pub memory: SessionMemory,
}

impl Controller {
    /// Open a save and begin a play session in it, with the default embedder
    /// when it is installed (else recall falls back to keywords and recency).
    pub fn open(path: &Path) -> Result<Self, ControllerError> {
        let embedder = match crate::memory::default_embedder() {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!("{e}; lore and memory recall fall back to keywords");
                None
            }
        };
        Self::open_with(path, embedder)
    }

    /// What opening the save at `path` would embed with the embedder whose
    /// key is `model` ([`SessionMemory::texts_to_embed`], and the offered
    /// choices the difficulty marks are judged on), without opening it.
    pub fn texts_to_embed(path: &Path, model: &str) -> Result<Vec<String>, ControllerError> {
        let store = Store::open(path)?;
        let info = store.session()?;
        let campaign = load_campaign(&info.campaign_path)?;
        let mut texts =
            SessionMemory::texts_to_embed(&store, &campaign, model).map_err(|source| {
                ControllerError::Memory {
                    path: path.to_owned(),
                    source: Box::new(source),
                }
            })?;
        texts.extend(SessionMemory::choices_to_embed(last_choices(&store)?));
        Ok(texts)
    }

    /// Open a save with a given embedder (or none).
    pub fn open_with(
        path: &Path,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, ControllerError> {
        let mut store = Store::open(path)?;
        let info = store.session()?;
        let campaign = load_campaign(&info.campaign_path)?;
        let mut state = super::save_rows::state(&store, campaign.clone())?;
        // The skills this play session may call, all healthy (#25).
        state.skills = super::skills::SessionSkills::discover(
            &info.campaign_path,
            Some(super::skills::assets_dir(path)),
        );
        // A save from before standing existed starts it now (nothing already set is changed).
        let seed = state.seed;
        super::people::initialise(&campaign, &mut state.world, super::turn::PERSONA, seed);
        load_summaries(&store, &mut state);
        let prompt_changes = reconcile_pins(&store, &mut state);
        let choices = last_choices(&store)?;
        let memory = SessionMemory::open(&mut store, &campaign, embedder).map_err(|source| {
            ControllerError::Memory {
                path: path.to_owned(),
                source: Box::new(source),
            }
        })?;
        let play_session = store.start_play_session()?;
        let templates = crate::files::read_to_string(
            &crate::files::resource_dir("prompts").join("fallback_narration.txt"),
        )
        .map(|t| fallback_templates(&t))
        .unwrap_or_default();
        let mut ctl = Self {
            store,
            state,
            current_scene: info.current_scene_id,
            scene_index: info.scene_index,
            choices: Vec::new(),
            choice_marks: Vec::new(),
            choice_rulings: Vec::new(),
            clarified: false,
            last: None,
            failed: None,
            templates,
            play_session,
            recap: None,
            prompt_changes,
            memory,
        };
        ctl.set_choices(choices);
        Ok(ctl)
    }

    /// Offer these choices, each with its difficulty mark.
    fn set_choices(&mut self, choices: Vec<String>) {
        let judged = self.memory.judge_choices(&self.state, &choices);
        self.choice_marks = judged.iter().map(|(mark, _)| mark.clone()).collect();
        self.choice_rulings = judged.into_iter().map(|(_, ruling)| ruling).collect();
        self.choices = choices;
    }

    pub fn info(&self) -> Result<SessionInfo, ControllerError> {
        Ok(self.store.session()?)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The save, to keep what changed ([`Store::keep`]).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The scene the story stands at.
    pub fn scene_index(&self) -> i64 {
        self.scene_index
    }

    /// Whether the last turn failed (so `/fallback` can go on).
    pub fn has_failed_turn(&self) -> bool {
        self.failed.is_some()
    }

    /// What the player has seen so far, oldest first: narrations and their own intentions.
    pub fn transcript(&self) -> Vec<&crate::transcript::stream::Message> {
        player_view(&self.state.stream.messages, PERSONA, false)
    }

    /// One line from the player.
    pub fn handle(&mut self, line: &str) -> Step {
        let command = match parse_command(line, &self.choices) {
            Ok(c) => c,
            Err(hint) => return Step::Report(Report::Note(hint.to_string())),
        };
        match command {
            Command::Quit => Step::Quit,
            Command::Help => Step::Report(Report::Note(format!(
                "type what you do, or a choice's number; commands: {COMMANDS}"
            ))),
            Command::Act { text, whisper_to } => Step::Run(self.input(text, whisper_to)),
            Command::Retry => match self.last.clone() {
                Some((text, whisper_to)) => Step::Run(self.input(text, whisper_to)),
                None => Step::Report(Report::Note("nothing to retry".into())),
            },
            Command::Fallback => Step::Report(self.fallback()),
            Command::Rewind(n) => Step::Report(self.rewind(n)),
            Command::Save(slot) => Step::Report(self.save_slot(&slot)),
            Command::Load(slot) => Step::Report(self.load_slot(&slot)),
            Command::EndScene => Step::Report(self.end_scene()),
        }
    }

    fn input(&mut self, text: String, whisper_to: Option<String>) -> PlayerInput {
        self.state.recalled = self.memory.recall_for(&self.store, &self.state, &text);
        (self.state.recalled.scene, self.state.recalled.scene_cached) = self.scene_lore();
        self.state.recalled.skills = self.memory.route_skills(&self.state.skills.found, &text);
        self.last = Some((text.clone(), whisper_to.clone()));
        // A picked choice (said aloud, not whispered, not answering a
        // question) carries the ruling it was offered with (#21 fast path).
        let ruling = if whisper_to.is_none() && !self.clarified {
            self.choices
                .iter()
                .position(|c| *c == text)
                .and_then(|i| self.choice_rulings.get(i).cloned().flatten())
        } else {
            None
        };
        PlayerInput {
            text,
            whisper_to,
            action_id: format!("action-{}", unique()),
            clarified: self.clarified,
            ruling,
        }
    }

    /// Take a turn's outcome: commit it, or keep what the player needs to retry.
    pub fn finish(
        &mut self,
        input: &PlayerInput,
        outcome: Result<TurnResult, TurnError>,
    ) -> Report {
        match outcome {
            Ok(r) if r.clarification.is_some() => {
                self.clarified = true;
                Report::Question(r.clarification.unwrap_or_default())
            }
            Ok(r) => {
                self.clarified = false;
                self.failed = None;
                self.commit(r, input, SceneKind::Play)
            }
            Err(e) => {
                self.failed = Some(PlayerInput {
                    clarified: true,
                    action_id: format!("action-{}", unique()),
                    ..input.clone()
                });
                Report::Failed(e)
            }
        }
    }

    fn commit(&mut self, result: TurnResult, input: &PlayerInput, kind: SceneKind) -> Report {
        let mut commit = super::save_rows::turn_commit(&result, input, &self.current_scene, kind);
        if input.text != "/end-scene" {
            commit.memory = self.memory.event_for(
                &self.state,
                &result,
                input,
                self.play_session.id,
                kind == SceneKind::Fallback,
            );
        }
        match self.store.commit_turn(&commit) {
            Ok(c) => {
                tracing::info!(scene = c.scene_index, "turn: {}", result.budget.summary());
                if let (false, Some((event, vector))) = (c.duplicate, commit.memory) {
                    self.memory.remember(event, vector, &c.scene_id);
                }
                self.state.advance(&result);
                self.current_scene = c.scene_id;
                self.scene_index = c.scene_index;
                self.set_choices(result.choices.clone());
                Report::Committed {
                    result: Box::new(result),
                    scene_index: c.scene_index,
                    kind,
                }
            }
            Err(e) => {
                // Another process may have moved the save on: start again from it.
                if let Err(reload) = self.reload() {
                    return Report::NotSaved(format!("{e}; and reading the save again: {reload}"));
                }
                Report::NotSaved(e.to_string())
            }
        }
    }

    fn reload(&mut self) -> Result<(), ControllerError> {
        let skills = self.state.skills.clone();
        self.state = super::save_rows::state(&self.store, self.state.campaign.clone())?;
        // The skill state comes back with the scene; the skills and their
        // health stay this play session's.
        self.state.skills = skills;
        load_summaries(&self.store, &mut self.state);
        let info = self.info()?;
        self.current_scene = info.current_scene_id;
        self.scene_index = info.scene_index;
        self.memory
            .reload(&self.store)
            .map_err(|source| ControllerError::Memory {
                path: self.store.path().to_owned(),
                source: Box::new(source),
            })?;
        // The choices the scene returned to was left with, as when the save opens.
        let choices = last_choices(&self.store)?;
        self.set_choices(choices);
        Ok(())
    }

    fn fallback(&mut self) -> Report {
        let Some(input) = self.failed.take() else {
            return Report::Note("nothing failed; /fallback continues after a failed turn".into());
        };
        let result = fallback_turn(&self.state, &input, &self.templates);
        self.commit(result, &input, SceneKind::Fallback)
    }

    fn end_scene(&mut self) -> Report {
        let input = PlayerInput {
            text: "/end-scene".into(),
            whisper_to: None,
            action_id: format!("end-scene-{}", unique()),
            clarified: true,
            ruling: None,
        };
        let mut result = end_scene_turn(&self.state);
        // Seed 002 §7.5: plot beats are decided as the next scene begins.
        let mut stream = self.state.stream.clone();
        stream.messages.extend(result.messages.iter().cloned());
        let scene = super::beats::scene_number(&stream);
        let campaign = Arc::clone(&self.state.campaign);
        for e in super::beats::transition(
            &campaign.beats,
            &mut result.world,
            scene,
            |c| self.memory.support(c),
            self.memory.config.beat_threshold,
        ) {
            tracing::info!(beat = %e.id, title = %e.title, status = ?e.status, "plot beat at scene {scene}");
        }
        self.commit(result, &input, SceneKind::Play)
    }

    fn rewind(&mut self, to: i64) -> Report {
        match self.store.rewind(to, &format!("rewind-{}", unique())) {
            Ok(c) => match self.reload() {
                Ok(()) => Report::Rewound {
                    to,
                    scene_index: c.scene_index,
                },
                Err(e) => Report::NotSaved(e.to_string()),
            },
            Err(e) => Report::Note(format!("cannot rewind: {e}")),
        }
    }

    fn save_slot(&mut self, slot: &str) -> Report {
        let (_, place) = self.state.place();
        // Where, and the first words of the last narration, as a story slot shows a passage.
        let last = self
            .state
            .stream
            .messages
            .iter()
            .rev()
            .find(|m| m.kind == Kind::Narration)
            .map(|m| {
                m.content
                    .split_whitespace()
                    .take(8)
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        let summary = match last {
            Some(words) if !words.is_empty() => {
                format!("{place}, scene {}: {words}…", self.scene_index)
            }
            _ => format!("{place}, scene {}", self.scene_index),
        };
        match self.store.bookmark(slot, &summary) {
            Ok(b) => Report::Saved(b),
            Err(e) => Report::Note(format!("cannot save: {e}")),
        }
    }

    fn load_slot(&mut self, slot: &str) -> Report {
        match self
            .store
            .load_bookmark(slot, &format!("load-{}", unique()))
        {
            Ok(c) => match self.reload() {
                Ok(()) => Report::Loaded {
                    slot: slot.to_owned(),
                    scene_index: c.scene_index,
                },
                Err(e) => Report::NotSaved(e.to_string()),
            },
            Err(e) => Report::Note(format!("cannot load: {e}")),
        }
    }

    /// Seed 001's scene lore cache: materialised once per scene (scene number
    /// and place) and stored; a new scene or place makes a new one. Says
    /// whether it came from the cache.
    fn scene_lore(&self) -> (serde_json::Value, bool) {
        let scene = super::beats::scene_number(&self.state.stream);
        let place = self
            .state
            .world
            .scene
            .get("location")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        let key = format!("{}:scene-{scene}:{place}", self.current_scene_branch_root());
        if let Ok(Some(cached)) = self.store.scene_lore(&key) {
            return (cached, true);
        }
        let brief = crate::session::turn::vars::to_value(&self.memory.scene_brief(&self.state));
        if let Err(e) = self.store.put_scene_lore(&key, &self.current_scene, &brief) {
            tracing::warn!("the scene lore cache could not be saved: {e}");
        }
        (brief, false)
    }

    /// What makes a scene number unique across rewinds: the scene snapshot the
    /// current narrative scene opened from (the latest `scene_close`, else the start).
    fn current_scene_branch_root(&self) -> String {
        let last_close = self
            .state
            .stream
            .messages
            .iter()
            .rev()
            .find(|m| {
                crate::transcript::marker::SceneMarker::of(m)
                    == Some(crate::transcript::marker::SceneMarker::Close)
            })
            .map_or(0, |m| m.id.turn_id);
        format!("turn-{last_close}")
    }

    /// Seed 004 stream summarisation: the call that compresses this branch's
    /// oldest unsummarised turns, when there are enough of them.
    pub fn compression_request(&self) -> Option<Compression> {
        summaries::compression_request(&self.state)
    }

    /// Store a compression's summary: from the next turn the narrator reads it instead of those turns.
    pub fn finish_compression(&mut self, c: &Compression, written: Result<String, String>) {
        summaries::finish_compression(
            &self.store,
            &mut self.state,
            &self.current_scene,
            c,
            written,
        );
    }

    /// Seed 004 stream summarisation on the calling thread: when old turns
    /// are due, `gateway` writes their summary (the terminal and the harness
    /// call this between turns; the window runs the same call as a task).
    pub fn compress_with(&mut self, gateway: &crate::llm::Gateway) {
        if let Some(c) = self.compression_request() {
            let outcome = gateway.call(c.request.clone()).wait();
            let written = outcome
                .result
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .map_err(|e| e.to_string());
            self.finish_compression(&c, written);
        }
    }

    /// The model call that writes this sitting's "Previously…", when there is a past to recap.
    pub fn recap_request(&self) -> Option<CallRequest> {
        summaries::recap_request(&self.store, &self.state)
    }

    /// Keep this sitting's recap (the model's, or the last narration when it
    /// failed); returns the text to show.
    pub fn finish_recap(&mut self, written: Result<String, String>) -> String {
        let text =
            summaries::finish_recap(&mut self.store, &self.state, self.play_session.id, written);
        self.recap = Some(text.clone());
        text
    }

    /// End this sitting (the save keeps which turns it covered).
    pub fn close(&self) {
        if let Err(e) = self.store.end_play_session(self.play_session.id) {
            tracing::warn!("could not mark the play session ended: {e}");
        }
    }
}

/// The choices the current scene's turn offered (none for an opening).
/// The save's prompt pins brought in line with the prompts installed (see
/// [`super::pins::PromptPins::reconcile`]), kept when they changed; what
/// changed under them is returned and logged.
fn reconcile_pins(store: &Store, state: &mut SessionState) -> Vec<super::pins::PinChange> {
    let prompts = match crate::llm::PromptRegistry::load(crate::files::resource_dir("prompts")) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("the prompts cannot be read to check this save's pins: {e}");
            return Vec::new();
        }
    };
    let (changed, told) = state.prompt_pins.reconcile(&prompts);
    if changed && let Err(e) = store.set_prompt_versions(&state.prompt_pins.to_value()) {
        tracing::warn!("the prompt pins could not be kept: {e}");
    }
    for change in &told {
        tracing::warn!("{change}");
    }
    told
}

fn last_choices(store: &Store) -> Result<Vec<String>, StoreError> {
    Ok(store
        .last_result()?
        .map(|r| super::save_rows::offered_choices(&r))
        .unwrap_or_default())
}
