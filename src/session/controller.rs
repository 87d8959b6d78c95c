//! The orchestrator around turns (feature `store`): out-of-character commands, commits, play sessions and the "Previously…" recap, shared by the terminal and the window.
//!
//! The controller never waits on a model. [`Controller::handle`] turns one line
//! of player input into either a [`Report`] (commands the orchestrator answers
//! itself: `/rewind`, `/end-scene`, `/fallback`) or a [`PlayerInput`] whose turn
//! the caller runs however it likes (the terminal blocks on
//! [`super::play::run_turn`]; the window polls calls each frame) and hands back
//! to [`Controller::finish`], which commits it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::play::{end_scene_turn, fallback_templates, fallback_turn, opening};
use super::remember::{Difficulty, SessionMemory};
use super::stream::{Kind, player_view};
use super::turn::{Calibration, PERSONA, PlayerInput, Ruling, SessionState, TurnError, TurnResult};
use crate::campaign::{self, Campaign, system_rulesets};
use crate::llm::CallRequest;
use crate::llm::record::AttemptKind;
use crate::memory::Embedder;
use crate::store::{NewSession, PlaySession, SceneKind, SessionInfo, Store, Summary};

/// What one line of input asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Play an intention (free text or a numbered choice), maybe whispered.
    Act {
        text: String,
        whisper_to: Option<String>,
    },
    Retry,
    Fallback,
    Rewind(i64),
    /// Keep the current scene in a save slot (`slot-1` … `slot-6`).
    Save(String),
    /// Branch from the scene a save slot keeps.
    Load(String),
    EndScene,
    Quit,
    Help,
}

/// The out-of-character commands, for help lines.
pub const COMMANDS: &str =
    "/retry, /fallback, /rewind N, /save N, /load N, /end-scene, /whisper NPC text, /quit";

/// How many save slots a session has beside its autosave (the file itself).
pub const SAVE_SLOTS: usize = 6;

/// `3` or `slot-3` → `slot-3`, for slots 1 to [`SAVE_SLOTS`].
fn slot_name(arg: &str, command: &str) -> Result<String, String> {
    let n = arg.strip_prefix("slot-").unwrap_or(arg);
    match n.parse::<usize>() {
        Ok(n) if (1..=SAVE_SLOTS).contains(&n) => Ok(format!("slot-{n}")),
        _ => Err(format!("{command} N: N is a save slot, 1 to {SAVE_SLOTS}")),
    }
}

/// Read one line: a command, a choice number, or free text. `Err` is a hint for the player.
pub fn parse_command(line: &str, choices: &[String]) -> Result<Command, String> {
    let line = line.trim();
    let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    match head {
        "/quit" => Ok(Command::Quit),
        "/help" => Ok(Command::Help),
        "/retry" => Ok(Command::Retry),
        "/fallback" => Ok(Command::Fallback),
        "/end-scene" => Ok(Command::EndScene),
        "/rewind" => rest
            .parse()
            .map(Command::Rewind)
            .map_err(|_| "/rewind N: N is a scene number".to_owned()),
        "/save" => slot_name(rest, "/save").map(Command::Save),
        "/load" => slot_name(rest, "/load").map(Command::Load),
        "/whisper" => match rest.split_once(' ') {
            Some((npc, text)) if !text.trim().is_empty() => Ok(Command::Act {
                text: text.trim().to_owned(),
                whisper_to: Some(npc.to_owned()),
            }),
            _ => Err("/whisper NPC what you say".to_owned()),
        },
        _ if head.starts_with('/') => Err(format!("commands: {COMMANDS}")),
        _ => match line.parse::<usize>() {
            Ok(n) if (1..=choices.len()).contains(&n) => Ok(Command::Act {
                text: choices[n - 1].clone(),
                whisper_to: None,
            }),
            Ok(_) if choices.is_empty() => {
                Err("there are no choices now: write what you do".into())
            }
            Ok(_) => Err(format!(
                "choose 1 to {}, or write what you do",
                choices.len()
            )),
            Err(_) if line.is_empty() => Err("write what you do".into()),
            Err(_) => Ok(Command::Act {
                text: line.to_owned(),
                whisper_to: None,
            }),
        },
    }
}

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

/// Loads a campaign with the system rulesets, or explains why it cannot play.
pub fn load_campaign(dir: &Path) -> Result<Arc<Campaign>, String> {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    loaded.map(Arc::new).ok_or_else(|| {
        format!(
            "{report}\nerror: {}: the campaign has errors; `loreloom campaign validate` lists them",
            dir.display()
        )
    })
}

/// What a new save starts from (session zero's answers included).
#[derive(Clone, Debug)]
pub struct NewSave {
    pub campaign: PathBuf,
    /// Default: a new file under the data dir's `saves/`.
    pub save: Option<PathBuf>,
    pub scenario: Option<String>,
    /// Default: random.
    pub seed: Option<u64>,
    pub small_model: String,
    pub large_model: String,
    pub calibration: Calibration,
}

/// Write a new save: the opening scene of the scenario, with the calibration stored.
pub fn create_save(new: &NewSave) -> Result<(PathBuf, SessionState), String> {
    let campaign = load_campaign(&new.campaign)?;
    let dir = crate::files::canonical(&new.campaign);
    let id = dir
        .file_name()
        .map_or_else(|| "campaign".into(), |n| n.to_string_lossy().into_owned());
    let seed = new.seed.unwrap_or_else(rand::random);
    // A new session always says how many NPCs act a turn: its own choice,
    // else the campaign's, else the default.
    let mut calibration = new.calibration.clone();
    calibration.npcs_per_turn = Some(
        calibration
            .npcs_per_turn
            .or(campaign.manifest.npcs_per_turn)
            .unwrap_or(crate::campaign::files::DEFAULT_NPCS_PER_TURN),
    );
    let state = opening(
        campaign.clone(),
        new.scenario.as_deref(),
        &new.small_model,
        &new.large_model,
        seed,
        calibration.clone(),
    )
    .map_err(|e| format!("{}: {e}", new.campaign.display()))?;
    let path = new.save.clone().unwrap_or_else(|| free_save_path(&id));
    // The browser's storage has no folders to make.
    if !cfg!(target_family = "wasm")
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("{}: cannot create the folder: {e}", parent.display()))?;
    }
    let mut world = state.world.clone();
    let scene = std::mem::take(&mut world.scene);
    let scenario = new
        .scenario
        .clone()
        .or_else(|| campaign.default_scenario().map(|s| s.id.clone()));
    let characters = campaign
        .characters
        .values()
        .map(|c| {
            let role = if c.kind == crate::campaign::CharacterKind::Player {
                "user_persona"
            } else {
                "npc"
            };
            (c.id.clone(), role.to_owned())
        })
        .collect();
    let session = NewSession {
        id: format!("{id}-{seed:016x}"),
        campaign_id: id,
        campaign_path: dir,
        scenario_id: scenario,
        ruleset_id: campaign.ruleset.id.clone(),
        characters,
        small_model_key: new.small_model.clone(),
        large_model_key: new.large_model.clone(),
        calibration: serde_json::to_value(&calibration).unwrap_or_default(),
        prompt_versions: json!({}),
        seed,
        scene,
        world,
        messages: state.stream.messages.clone(),
    };
    Store::create(&path, &session).map_err(|e| e.to_string())?;
    Ok((path, state))
}

/// Where saves of sessions live: `<data dir>/saves/`.
pub fn saves_dir() -> PathBuf {
    crate::files::data_dir().join("saves")
}

/// The most recently played save of a campaign folder, if any.
pub fn latest_save(campaign: &Path) -> Option<PathBuf> {
    let id = crate::files::canonical(campaign)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    crate::files::list(&saves_dir())
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{id}-")))
                && path.extension().is_some_and(|x| x == "db")
        })
        .filter_map(|path| Some((crate::files::modified(&path)?, path)))
        .max()
        .map(|(_, p)| p)
}

fn free_save_path(campaign_id: &str) -> PathBuf {
    let dir = saves_dir();
    (1..=10_000)
        .map(|n| dir.join(format!("{campaign_id}-{n}.db")))
        .find(|p| !crate::files::is_file(p))
        .unwrap_or_else(|| dir.join(format!("{campaign_id}-{}.db", unique())))
}

/// How many narrations a recap reads at most.
const RECAP_EVENTS: usize = 12;

/// Seed 004 stream summarisation: once more than this many turns of the
/// branch are unsummarised, the oldest of them are compressed…
pub const COMPRESS_AFTER: usize = 12;
/// …all but the most recent this many, which the narrator keeps verbatim.
pub const KEEP_VERBATIM: usize = 6;

/// A pending compression of turns `turn_start..=turn_end` into one summary.
#[derive(Clone, Debug)]
pub struct Compression {
    pub request: CallRequest,
    pub turn_start: u64,
    pub turn_end: u64,
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
    /// Semantic memory and lore of the save.
    pub memory: SessionMemory,
}

impl Controller {
    /// Open a save and begin a play session in it, with the default embedder
    /// when it is installed (else recall falls back to keywords and recency).
    pub fn open(path: &Path) -> Result<Self, String> {
        let embedder = match crate::memory::default_embedder() {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!("{e}; lore and memory recall fall back to keywords");
                None
            }
        };
        Self::open_with(path, embedder)
    }

    /// Open a save with a given embedder (or none).
    pub fn open_with(path: &Path, embedder: Option<Arc<dyn Embedder>>) -> Result<Self, String> {
        let mut store = Store::open(path).map_err(|e| e.to_string())?;
        let info = store.session().map_err(|e| e.to_string())?;
        let campaign = load_campaign(&info.campaign_path)?;
        let mut state = super::save::state(&store, campaign.clone()).map_err(|e| e.to_string())?;
        // The skills this play session may call, all healthy (#25).
        state.skills = super::skills::SessionSkills::discover(
            &info.campaign_path,
            Some(super::skills::assets_dir(path)),
        );
        // A save from before standing existed starts it now (nothing already set is changed).
        let seed = state.seed;
        super::people::initialise(&campaign, &mut state.world, super::turn::PERSONA, seed);
        load_summaries(&store, &mut state);
        let choices = last_choices(&store)?;
        let memory = SessionMemory::open(&mut store, &campaign, embedder)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let play_session = store.start_play_session().map_err(|e| e.to_string())?;
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

    pub fn info(&self) -> Result<SessionInfo, String> {
        self.store.session().map_err(|e| e.to_string())
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
    pub fn transcript(&self) -> Vec<&super::stream::Message> {
        player_view(&self.state.stream.messages, PERSONA, false)
    }

    /// One line from the player.
    pub fn handle(&mut self, line: &str) -> Step {
        let command = match parse_command(line, &self.choices) {
            Ok(c) => c,
            Err(hint) => return Step::Report(Report::Note(hint)),
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
        self.state.recalled.scene = self.scene_lore();
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
        let mut commit = super::save::turn_commit(&result, input, &self.current_scene, kind);
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

    fn reload(&mut self) -> Result<(), String> {
        let skills = self.state.skills.clone();
        self.state = super::save::state(&self.store, self.state.campaign.clone())
            .map_err(|e| e.to_string())?;
        // The skill state comes back with the scene; the skills and their
        // health stay this play session's.
        self.state.skills = skills;
        load_summaries(&self.store, &mut self.state);
        let info = self.info()?;
        self.current_scene = info.current_scene_id;
        self.scene_index = info.scene_index;
        self.memory.reload(&self.store)?;
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
                Err(e) => Report::NotSaved(e),
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
                Err(e) => Report::NotSaved(e),
            },
            Err(e) => Report::Note(format!("cannot load: {e}")),
        }
    }

    /// Seed 004 stream summarisation: when more than [`COMPRESS_AFTER`] turns
    /// of this branch are unsummarised, the call that compresses all but the
    /// last [`KEEP_VERBATIM`] of them into one summary (the `recap` stage).
    pub fn compression_request(&self) -> Option<Compression> {
        let through = self.state.summarised_through;
        let mut turns: Vec<u64> = self
            .state
            .stream
            .messages
            .iter()
            .map(|m| m.id.turn_id)
            .filter(|&t| t > through && t > 0)
            .collect();
        turns.dedup();
        if turns.len() <= COMPRESS_AFTER {
            return None;
        }
        let old = &turns[..turns.len() - KEEP_VERBATIM];
        let (turn_start, turn_end) = (*old.first()?, *old.last()?);
        let events: Vec<&str> = self
            .state
            .stream
            .messages
            .iter()
            .filter(|m| {
                (turn_start..=turn_end).contains(&m.id.turn_id)
                    && matches!(m.kind, Kind::Narration | Kind::SceneMarker)
            })
            .map(|m| m.content.as_str())
            .collect();
        let request = CallRequest::new(
            "recap",
            &self.state.small_model,
            json!({
                "calibration": self.state.calibration,
                "persona": self.persona_name(),
                "summaries": self.state.earlier,
                "events": events,
            }),
        );
        Some(Compression {
            request,
            turn_start,
            turn_end,
        })
    }

    /// Seed 001's scene lore cache: materialised once per scene (scene number
    /// and place) and stored; a new scene or place makes a new one.
    fn scene_lore(&self) -> serde_json::Value {
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
            return cached;
        }
        let brief = self.memory.scene_brief(&self.state);
        if let Err(e) = self.store.put_scene_lore(&key, &self.current_scene, &brief) {
            tracing::warn!("the scene lore cache could not be saved: {e}");
        }
        brief
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
            .find(|m| m.kind == Kind::SceneMarker && m.content == super::turn::SCENE_CLOSE)
            .map_or(0, |m| m.id.turn_id);
        format!("turn-{last_close}")
    }

    fn persona_name(&self) -> String {
        self.state
            .campaign
            .characters
            .get(PERSONA)
            .map_or_else(|| "the player".to_owned(), |c| c.name.clone())
    }

    /// Store a compression's summary; from the next turn the narrator reads it
    /// instead of those turns. A failed call changes nothing (it is tried again after the next turn).
    pub fn finish_compression(&mut self, c: &Compression, written: Result<String, String>) {
        let text = match written.map(|t| t.trim().to_owned()) {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(
                    "stream summarisation failed (the story continues uncompressed): {e}"
                );
                return;
            }
        };
        let summary = Summary {
            scope: COMPRESSION_SCOPE.into(),
            scope_id: self.current_scene.clone(),
            text,
            turn_start: i64::try_from(c.turn_start).unwrap_or(i64::MAX),
            turn_end: i64::try_from(c.turn_end).unwrap_or(i64::MAX),
        };
        if let Err(e) = self.store.add_summary(&summary) {
            tracing::warn!("a summary could not be saved: {e}");
            return;
        }
        load_summaries(&self.store, &mut self.state);
    }

    /// The model call that writes this sitting's "Previously…", when there is a past to recap.
    pub fn recap_request(&self) -> Option<CallRequest> {
        let summaries = self.store.summaries().ok()?;
        let since = summaries.last().map_or(0, |s| s.turn_end);
        let events: Vec<&str> = self
            .transcript()
            .into_iter()
            .filter(|m| {
                m.kind == Kind::Narration && m.id.turn_id > u64::try_from(since).unwrap_or(0)
            })
            .map(|m| m.content.as_str())
            .collect();
        if self.state.turn_index == 0 || (events.len() <= 1 && summaries.is_empty()) {
            return None;
        }
        let events = &events[events.len().saturating_sub(RECAP_EVENTS)..];
        let persona = self.persona_name();
        Some(
            CallRequest::new(
                "recap",
                &self.state.small_model,
                json!({
                    "calibration": self.state.calibration,
                    "persona": persona,
                    "summaries": summaries.iter().map(|s| &s.text).collect::<Vec<_>>(),
                    "events": events,
                }),
            )
            .seed(u32::try_from(self.state.seed & 0xFFFF_FFFF).unwrap_or(0)),
        )
    }

    /// Keep the recap the model wrote (it also summarises the turns since the
    /// last summary); when the model failed, recap from the last narration and
    /// store no summary. Returns the text to show.
    pub fn finish_recap(&mut self, written: Result<String, String>) -> String {
        let previous_end = self
            .store
            .summaries()
            .ok()
            .and_then(|s| s.last().map(|s| s.turn_end))
            .unwrap_or(0);
        // Summaries cover turn ids (submissions), like the messages they summarise.
        let last_turn =
            i64::try_from(self.state.stream.next_turn().saturating_sub(1)).unwrap_or(i64::MAX);
        let (text, summary) = match written.map(|t| t.trim().to_owned()) {
            Ok(text) if !text.is_empty() => {
                let summary = Summary {
                    scope: "play_session".into(),
                    scope_id: self.play_session.id.to_string(),
                    text: text.clone(),
                    turn_start: previous_end + 1,
                    turn_end: last_turn,
                };
                (text, Some(summary))
            }
            _ => {
                let last = self
                    .transcript()
                    .into_iter()
                    .rev()
                    .find(|m| m.kind == Kind::Narration)
                    .map(|m| m.content.clone())
                    .unwrap_or_default();
                (last, None)
            }
        };
        if let Err(e) = self
            .store
            .record_recap(self.play_session.id, &text, summary.as_ref())
        {
            tracing::warn!("the recap was shown but not saved: {e}");
        }
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

/// A unique suffix for action ids and file names.
pub fn unique() -> String {
    let now = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{now:x}-{:x}", rand::random::<u32>())
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
pub fn replay(save: &Path, scene_index: i64) -> Result<Replayed, String> {
    let store = Store::open(save).map_err(|e| e.to_string())?;
    let info = store.session().map_err(|e| e.to_string())?;
    let campaign = load_campaign(&info.campaign_path)?;
    if scene_index == 0 {
        return Err("scene 0 is the opening; no turn made it".into());
    }
    let scene = store
        .scene_on_branch(scene_index)
        .map_err(|e| e.to_string())?;
    let turn = store.stored_turn(&scene.id).map_err(|e| e.to_string())?;
    if turn.kind != "play" {
        return Err(format!(
            "scene {scene_index} was made by a {} turn, which calls no model; only played turns replay",
            turn.kind
        ));
    }
    let records: Vec<crate::llm::CallRecord> = turn
        .events
        .iter()
        .filter(|e| e.event_type == "model_output")
        .map(|e| serde_json::from_value(e.payload.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("a recorded model output cannot be read: {e}"))?;
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
    let mut state = super::save::state_at(&store, campaign, &turn.scene_before_id)
        .map_err(|e| e.to_string())?;
    // The turn is shown exactly the lore and memories it was shown then (and
    // rolls with the same episodic +1); nothing is embedded again.
    if let Some(recall) = turn.events.iter().find(|e| e.event_type == "recall") {
        state.recalled = serde_json::from_value(recall.payload.clone())
            .map_err(|e| format!("the recorded recall of that turn is unreadable: {e}"))?;
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
        .map_err(|e| format!("a recorded skill run cannot be read: {e}"))?;
    state.skills = super::skills::SessionSkills::discover(&info.campaign_path, None);
    let mut recorded = super::skills::Recorded::new(&attempts);
    let gateway = crate::llm::Gateway::standard()?;
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
    .map_err(|e| format!("the replay failed where the original did not: {e}"))?;
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

/// The `summaries.scope` of stream compression.
pub const COMPRESSION_SCOPE: &str = "compression";

/// The choices the current scene's turn offered (none for an opening).
fn last_choices(store: &Store) -> Result<Vec<String>, String> {
    Ok(store
        .last_result()
        .map_err(|e| e.to_string())?
        .and_then(|r| serde_json::from_value(r["choices"].clone()).ok())
        .unwrap_or_default())
}

/// The compression summaries of the branch the state is on: those whose last
/// turn is in the state's stream (a rewound-away branch's are not).
fn load_summaries(store: &Store, state: &mut SessionState) {
    let on_branch = |t: i64| {
        u64::try_from(t).is_ok_and(|t| state.stream.messages.iter().any(|m| m.id.turn_id == t))
    };
    let summaries: Vec<Summary> = store
        .summaries()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.scope == COMPRESSION_SCOPE && on_branch(s.turn_end))
        .collect();
    state.summarised_through = summaries
        .iter()
        .filter_map(|s| u64::try_from(s.turn_end).ok())
        .max()
        .unwrap_or(0);
    state.earlier = summaries.into_iter().map(|s| s.text).collect();
}
