//! The play screen of open-ended sessions: the place's art behind the words (crossfading as the scene moves), portraits of who is present, streaming narration in a text box, dice, choices and a free-text field, clocks and relations in a side panel that folds away, the failed-turn dialog, session zero and scripted play.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use bevy::input::mouse::MouseWheel;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::RequestRedraw;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::GuiOptions;
use super::overlay::DebugLine;
use super::screens::{BarPress, Overlays, Screen, Targets, Toasts, root_ui};
use super::session_reader::{self, SessionReader};
use super::settings::Settings;
use crate::engine::llm::LlmGateway;
use crate::engine::session::{
    ActiveSession, Character, ClockState, Entry, Faction, Perception, Present, RelationEdge,
    SessionInput, SessionView,
};
use crate::llm::{CallHandle, Gateway, LlmEvent, Script, ScriptedBackend};
use crate::session::saves::{NewSave, create_save, latest_save, load_campaign};
use crate::session::turn::Calibration;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Campaigns>()
        .init_resource::<SessionZero>()
        .init_resource::<Draft>()
        .init_resource::<SessionPortraits>()
        .init_resource::<SessionScenery>()
        .init_resource::<SidePanel>()
        .init_resource::<DiceShown>()
        .init_resource::<SessionCodexView>()
        .add_message::<OpenSession>()
        .add_systems(Startup, (find_campaigns, launch_from_options).chain())
        .add_systems(
            Update,
            (
                open_session,
                (
                    load_portraits,
                    follow_scene,
                    forward_log,
                    keep_awake,
                    run_script,
                )
                    .run_if(in_state(Screen::Session)),
            ),
        )
        .add_systems(OnExit(Screen::Session), leave_session)
        .add_systems(OnEnter(Screen::Title), refresh_latest_saves)
        .add_systems(
            EguiPrimaryContextPass,
            (
                (session_screen, session_codex_window)
                    .chain()
                    .run_if(in_state(Screen::Session)),
                session_zero_window.run_if(in_state(Screen::Title)),
                enrichment_window.run_if(resource_exists::<Enriching>),
            ),
        );
}

/// What the command line asked: a save to play at once, maybe scripted.
#[derive(Debug, Clone, Default)]
pub struct SessionLaunch {
    pub save: PathBuf,
    /// Player lines to send one by one, each after the last turn ended.
    pub script: Option<PathBuf>,
    /// Answer model calls from this reply script.
    pub model_script: Option<PathBuf>,
    /// Photograph the screen when the script is done.
    pub screenshot: Option<PathBuf>,
    /// Quit when the script is done.
    pub exit: bool,
    /// Milliseconds the scripted model pauses between words, so narration
    /// streams as a real model's does (demos, the window benchmark).
    pub model_pace_ms: u64,
    /// The script reads each turn at the player's text speed, page by page,
    /// as a player would, instead of showing it whole at once.
    pub read_along: bool,
}

/// A campaign on the shelf.
#[derive(Debug, Clone)]
pub struct CampaignEntry {
    pub dir: PathBuf,
    pub title: String,
    pub description: String,
    pub warnings: Vec<String>,
    pub latest: Option<PathBuf>,
    /// When `latest` was written (seconds since the epoch, as story slots say).
    pub latest_at: Option<u64>,
}

/// The campaign in `dir`'s newest save and when it was written.
fn latest_with_time(dir: &std::path::Path) -> (Option<PathBuf>, Option<u64>) {
    let latest = latest_save(dir);
    let at = latest
        .as_deref()
        .and_then(crate::files::modified)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    (latest, at)
}

/// Campaigns found in the library folders (folders with a `manifest.json`).
#[derive(Resource, Debug, Default)]
pub struct Campaigns(pub Vec<CampaignEntry>);

/// Open this save on the session screen.
#[derive(Message, Debug, Clone)]
pub struct OpenSession {
    pub save: PathBuf,
    pub model_script: Option<PathBuf>,
    /// Milliseconds between the scripted model's words.
    pub model_pace_ms: u64,
}

/// A sparse campaign being enriched before its first session (seed 002 §6.2.12).
#[derive(Resource, Debug)]
pub struct Enriching {
    handle: CallHandle,
    new: NewSave,
    title: String,
    started: bevy::platform::time::Instant,
}

/// The gateway in use, started on first need.
fn gateway_or_start(
    gateway: Option<&LlmGateway>,
    commands: &mut Commands,
) -> Result<Arc<Gateway>, String> {
    if let Some(g) = gateway {
        return Ok(g.0.clone());
    }
    let g = Arc::new(Gateway::standard()?);
    commands.insert_resource(LlmGateway(g.clone()));
    Ok(g)
}

/// Session zero's dialog on the title screen.
#[derive(Resource, Debug, Default)]
pub struct SessionZero {
    /// The campaign being set up (index into [`Campaigns`]).
    pub open: Option<usize>,
    tone: String,
    difficulty: String,
    /// Per content warning: 0 fine, 1 veil, 2 line.
    choices: Vec<u8>,
    more_lines: String,
}

impl SessionZero {
    pub fn begin(&mut self, index: usize, warnings: usize) {
        *self = Self {
            open: Some(index),
            difficulty: "standard".into(),
            choices: vec![0; warnings],
            ..Self::default()
        };
    }
}

/// The free-text field's contents.
#[derive(Resource, Debug, Default)]
struct Draft(String);

/// Portrait textures by character id.
#[derive(Resource, Debug, Default)]
struct SessionPortraits(BTreeMap<String, (Option<PathBuf>, Handle<Image>)>);

/// Seconds a new backdrop takes to fade in over the last.
const BACKDROP_FADE: f32 = 1.2;

/// How dark the shades under the panels are (alpha of `ui::backdrop`'s shade
/// colour): the bar and side panel, the input, the text box over the picture.
const SHADE_BAR: u8 = 235;
const SHADE_INPUT: u8 = 240;
const SHADE_TEXT: u8 = 215;

/// What the stage shows and plays for the scene now (#22).
#[derive(Resource, Debug, Default)]
pub struct SessionScenery {
    /// Location, mood, time and weather: a change of any moves the backdrop on.
    key: String,
    /// The backdrop now: the art, or a painted one, with its alt text.
    pub backdrop: Option<Handle<Image>>,
    /// The backdrop it fades from.
    previous: Option<Handle<Image>>,
    /// When the backdrop changed (seconds since the app started).
    changed_at: f32,
    /// The place's name (the stage's caption), and the art's description.
    pub name: String,
    pub alt: String,
    /// Whether the backdrop is the campaign's art (else painted).
    pub from_art: bool,
    /// The music the scene wants (absolute path) and whether it is the tense kind.
    pub music: Option<PathBuf>,
    pub tense: bool,
    /// The view revision last looked at.
    revision: u64,
}

impl SessionScenery {
    /// Whether the backdrop has finished fading in at `now` (seconds since start).
    pub fn settled(&self, now: f32) -> bool {
        self.fade(now) >= 1.0
    }

    /// How far the backdrop has faded in at `now`, 0 to 1.
    pub fn fade(&self, now: f32) -> f32 {
        ((now - self.changed_at) / BACKDROP_FADE).clamp(0.0, 1.0)
    }

    /// The backdrop it fades from.
    pub fn previous(&self) -> Option<&Handle<Image>> {
        self.previous.as_ref()
    }
}

/// Whether the side panel (clocks, how people see you, relations) is open; it
/// starts folded away so the stage takes the width.
#[derive(Resource, Debug, Default)]
struct SidePanel(bool);

/// Scripted play of a session.
#[derive(Resource, Debug)]
struct SessionScript {
    lines: VecDeque<String>,
    /// Read each turn at the player's pace instead of all at once.
    read_along: bool,
    screenshot: Option<PathBuf>,
    exit: bool,
    settle: u32,
    shot_taken: bool,
    waited: u32,
}

fn find_campaigns(options: Res<GuiOptions>, mut campaigns: ResMut<Campaigns>) {
    let mut found = Vec::new();
    for dir in &options.library {
        // Sorted already.
        let dirs: Vec<PathBuf> = crate::files::list(dir)
            .into_iter()
            .filter(|p| crate::files::is_file(&p.join("manifest.json")))
            .collect();
        for dir in dirs {
            let (latest, latest_at) = latest_with_time(&dir);
            match load_campaign(&dir) {
                Ok(c) => found.push(CampaignEntry {
                    latest,
                    latest_at,
                    title: c.manifest.title.clone(),
                    description: c.manifest.description.clone().unwrap_or_default(),
                    warnings: c.manifest.content_warnings.clone(),
                    dir,
                }),
                Err(e) => warn!("{}: not offered: {e}", dir.display()),
            }
        }
    }
    campaigns.0 = found;
}

/// Back on the title screen, each campaign's latest save is looked up again
/// (a session played since has written one).
fn refresh_latest_saves(mut campaigns: ResMut<Campaigns>) {
    for c in &mut campaigns.0 {
        (c.latest, c.latest_at) = latest_with_time(&c.dir);
    }
}

fn launch_from_options(
    options: Res<GuiOptions>,
    mut opens: MessageWriter<OpenSession>,
    mut commands: Commands,
) {
    let Some(launch) = &options.session else {
        return;
    };
    opens.write(OpenSession {
        save: launch.save.clone(),
        model_script: launch.model_script.clone(),
        model_pace_ms: launch.model_pace_ms,
    });
    let lines = launch.script.as_ref().map_or_else(VecDeque::new, |file| {
        std::fs::read_to_string(file).map_or_else(
            |e| {
                error!("{}: cannot read the script: {e}", file.display());
                VecDeque::new()
            },
            |t| {
                t.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            },
        )
    });
    if launch.script.is_some() || launch.screenshot.is_some() {
        commands.insert_resource(SessionScript {
            lines,
            read_along: launch.read_along,
            screenshot: launch.screenshot.clone(),
            exit: launch.exit,
            settle: 0,
            shot_taken: false,
            waited: 0,
        });
    }
}

fn open_session(
    mut opens: MessageReader<OpenSession>,
    gateway: Option<Res<LlmGateway>>,
    mut commands: Commands,
    mut next: ResMut<NextState<Screen>>,
    mut toasts: ResMut<Toasts>,
    mut portraits: ResMut<SessionPortraits>,
    mut script_exit: MessageWriter<AppExit>,
    script: Option<Res<SessionScript>>,
) {
    let Some(open) = opens.read().last().cloned() else {
        return;
    };
    let gateway = match gateway_or_start(gateway.as_deref(), &mut commands) {
        Ok(g) => g,
        Err(e) => {
            toasts.push(format!("The models cannot start: {e}"));
            return;
        }
    };
    let session = ActiveSession::open(open.save.clone());
    let mut session = match session {
        Ok(s) => s,
        Err(e) => {
            error!("{}: {e}", open.save.display());
            toasts.push(format!("Cannot open {}: {e}", open.save.display()));
            if script.is_some_and(|s| s.exit) {
                script_exit.write(AppExit::from_code(1));
            }
            return;
        }
    };
    if let Some(file) = &open.model_script {
        match Script::load(file) {
            Ok(s) => {
                let mut backend = ScriptedBackend::new(s);
                backend.word_delay = std::time::Duration::from_millis(open.model_pace_ms);
                let state = &session.controller().state;
                gateway.register_script(&state.small_model, backend.clone());
                gateway.register_script(&state.large_model, backend);
            }
            Err(e) => toasts.push(format!("{}: {e}", file.display())),
        }
    }
    if cfg!(target_family = "wasm") {
        toasts.push(
            "In the browser, lore and memories are recalled by their words: the embedding model does not run in a page"
                .to_owned(),
        );
    }
    portraits.0.clear();
    commands.insert_resource(session);
    next.set(Screen::Session);
}

fn leave_session(
    mut commands: Commands,
    session: Option<ResMut<ActiveSession>>,
    mut scenery: ResMut<SessionScenery>,
    mut codex: ResMut<SessionCodexView>,
) {
    if let Some(mut s) = session {
        s.close();
    }
    *scenery = SessionScenery::default();
    *codex = SessionCodexView::default();
    commands.remove_resource::<ActiveSession>();
}

fn load_portraits(
    people: Query<&Character, With<Present>>,
    server: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    mut portraits: ResMut<SessionPortraits>,
) {
    for c in &people {
        // Loaded already from this picture (a portrait drawn later replaces
        // the silhouette: the path changes).
        let loaded = portraits.0.get(&c.id).map(|(from, _)| from);
        if c.persona || loaded == Some(&c.portrait) {
            continue;
        }
        let handle = match &c.portrait {
            Some(path) if crate::files::is_file(path) => server.load(crate::files::canonical(path)),
            _ => images.add(super::portrait::placeholder(&c.id, "character")),
        };
        portraits
            .0
            .insert(c.id.clone(), (c.portrait.clone(), handle));
    }
}

/// Moves the backdrop and the music on when the scene changes: the place's
/// art (`session::scenery`), or one painted from its name and mood.
fn follow_scene(
    session: Option<ResMut<ActiveSession>>,
    view: Res<SessionView>,
    mut scenery: ResMut<SessionScenery>,
    server: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    time: Res<Time>,
    mut lines: MessageWriter<DebugLine>,
) {
    let Some(mut session) = session else { return };
    if scenery.revision == view.revision && !scenery.key.is_empty() {
        return;
    }
    scenery.revision = view.revision;
    let state = &session.controller().state;
    let scene = &state.world.scene;
    let key = ["location", "mood", "time", "weather"]
        .iter()
        .map(|k| {
            scene
                .get(*k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("|");
    let number = crate::session::beats::scene_number(&state.stream);
    let beat = crate::session::beats::current(&state.campaign.beats, &state.world, number)
        .first()
        .copied();
    let cue = crate::session::scenery::music(&state.campaign, &state.world, beat);
    if cue.track != scenery.music {
        lines.write(DebugLine {
            section: "session",
            text: format!(
                "music: {} ({:?})",
                cue.track
                    .as_ref()
                    .map_or_else(|| "none".into(), |p| p.display().to_string()),
                cue.mood
            ),
        });
    }
    scenery.music = cue.track;
    scenery.tense = cue.mood == crate::session::scenery::Mood::Tension;
    if key == scenery.key {
        return;
    }
    let backdrop = crate::session::scenery::backdrop(&state.campaign, scene);
    let handle = match &backdrop.image {
        Some(path) => server.load(crate::files::canonical(path)),
        None => images.add(super::portrait::painted_backdrop(
            &backdrop.place,
            &backdrop.mood,
        )),
    };
    lines.write(DebugLine {
        section: "session",
        text: format!(
            "backdrop: {} for {}",
            backdrop
                .image
                .as_ref()
                .map_or_else(|| "painted".into(), |p| p.display().to_string()),
            backdrop.name
        ),
    });
    // The first backdrop of a session appears at once; later ones fade in.
    let first = scenery.key.is_empty();
    scenery.previous = if first { None } else { scenery.backdrop.take() };
    scenery.backdrop = Some(handle);
    scenery.changed_at = if first {
        time.elapsed_secs() - BACKDROP_FADE
    } else {
        time.elapsed_secs()
    };
    scenery.from_art = backdrop.image.is_some();
    scenery.name = backdrop.name;
    scenery.alt = backdrop.alt;
    scenery.key = key;
}

fn forward_log(
    view: Res<SessionView>,
    mut seen: Local<usize>,
    mut lines: MessageWriter<DebugLine>,
) {
    if view.log.len() < *seen {
        *seen = 0;
    }
    for line in &view.log[*seen..] {
        lines.write(DebugLine {
            section: "session",
            text: line.clone(),
        });
    }
    *seen = view.log.len();
}

fn keep_awake(
    view: Res<SessionView>,
    scenery: Res<SessionScenery>,
    time: Res<Time>,
    mut redraw: MessageWriter<RequestRedraw>,
) {
    if view.busy || !scenery.settled(time.elapsed_secs() - 0.1) {
        redraw.write(RequestRedraw);
    }
}

/// Frames to let a finished turn settle before the next scripted line or the screenshot.
const SETTLE_FRAMES: u32 = 20;
/// Give up on a turn after this many frames (a scripted model answers in a few).
const PATIENCE_FRAMES: u32 = 100_000;

fn run_script(
    script: Option<ResMut<SessionScript>>,
    view: Res<SessionView>,
    (scenery, time): (Res<SessionScenery>, Res<Time>),
    (mut reader, mut codex): (ResMut<SessionReader>, ResMut<SessionCodexView>),
    (mut skills, session): (
        ResMut<super::skills_panel::SkillsPanel>,
        Option<Res<ActiveSession>>,
    ),
    mut inputs: MessageWriter<SessionInput>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
    mut redraw: MessageWriter<RequestRedraw>,
) {
    let Some(mut script) = script else { return };
    redraw.write(RequestRedraw);
    // A script reads each turn to its end at once, or page by page at the
    // player's text speed (turning each page as soon as it is shown).
    reader.hurry = !script.read_along;
    if script.read_along && !reader.finished() {
        if reader.revealed() {
            reader.advance(false);
        }
        script.settle = 0;
        return;
    }
    if view.busy {
        script.settle = 0;
        script.waited += 1;
        if script.waited > PATIENCE_FRAMES {
            error!("the scripted session waited too long for a turn");
            exit.write(AppExit::from_code(2));
        }
        return;
    }
    script.waited = 0;
    // A backdrop still fading in is not what the screenshot is for.
    if !scenery.settled(time.elapsed_secs()) {
        script.settle = 0;
        return;
    }
    script.settle += 1;
    if script.settle < SETTLE_FRAMES {
        return;
    }
    if let Some(line) = script.lines.pop_front() {
        // Lines are the player's; a few, with a colon, press what the window offers.
        let (head, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match head {
            ":backlog" => reader.backlog = true,
            ":codex" => codex.open = true,
            // The skills panel (K), and the Skills settings screen.
            ":skills" => skills.open = true,
            ":skill-settings" => {
                skills.settings = Some(super::skills_panel::SettingsForm::open(session.as_deref()));
            }
            ":close" => {
                reader.backlog = false;
                reader.slots = None;
                codex.open = false;
                skills.open = false;
                skills.settings = None;
            }
            // "Return here" on the backlog's n-th turn.
            ":return" => reader.press_return = rest.trim().parse().ok(),
            ":shot" => {
                commands
                    .spawn(Screenshot::primary_window())
                    .observe(save_to_disk(PathBuf::from(rest.trim())));
            }
            _ => {
                inputs.write(SessionInput(line));
            }
        }
        script.settle = 0;
        return;
    }
    if let Some(path) = script.screenshot.clone()
        && !script.shot_taken
    {
        script.shot_taken = true;
        script.settle = 0;
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(path))
            .observe(
                move |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                    exit.write(AppExit::Success);
                },
            );
        return;
    }
    if script.exit && script.screenshot.is_none() {
        exit.write(AppExit::Success);
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one egui pass over the whole screen"
)]
fn session_screen(
    mut contexts: EguiContexts,
    view: Res<SessionView>,
    mut draft: ResMut<Draft>,
    mut inputs: MessageWriter<SessionInput>,
    people: Query<&Character, With<Present>>,
    clocks: Query<&ClockState>,
    relations: Query<&RelationEdge>,
    everyone: Query<&Character>,
    standing: (Query<(&Character, &Perception)>, Query<&Faction>),
    portraits: Res<SessionPortraits>,
    images: Res<Assets<Image>>,
    mut overlays: ResMut<Overlays>,
    mut next: ResMut<NextState<Screen>>,
    keys: Res<ButtonInput<KeyCode>>,
    (scenery, time, mut side, mut dice, mut codex): (
        Res<SessionScenery>,
        Res<Time>,
        ResMut<SidePanel>,
        ResMut<DiceShown>,
        ResMut<SessionCodexView>,
    ),
    (mut reader, settings, mut wheel, mut shades, window, mut targets): (
        ResMut<SessionReader>,
        Res<Settings>,
        MessageReader<MouseWheel>,
        ResMut<super::backdrop::Shades>,
        Query<&Window, With<bevy::window::PrimaryWindow>>,
        ResMut<Targets>,
    ),
) -> Result {
    let scale_factor = window.single().map_or(1.0, Window::scale_factor);
    // A new roll tumbles a moment before its faces settle.
    let rolls = view
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Roll(_)))
        .count();
    let now = time.elapsed_secs();
    if rolls < dice.rolls {
        dice.rolls = rolls;
    } else if rolls > dice.rolls {
        *dice = DiceShown { rolls, at: now };
    }
    let rolling = Some(now - dice.at).filter(|t| *t < DICE_TUMBLE && dice.rolls > 0);
    if rolling.is_some() {
        contexts.ctx_mut()?.request_repaint();
    }
    let mut present: Vec<&Character> = people.iter().filter(|c| !c.persona).collect();
    present.sort_by(|a, b| a.name.cmp(&b.name));
    let faces: Vec<(String, Option<egui::TextureId>, bool)> = present
        .iter()
        .map(|c| {
            let tex = portraits
                .0
                .get(&c.id)
                .map(|(_, h)| h)
                .filter(|h| images.contains(h.id()))
                .map(|h| contexts.add_image(EguiTextureHandle::Weak(h.id())));
            (
                c.name.clone(),
                tex,
                view.speaker.as_deref() == Some(c.id.as_str()),
            )
        })
        .collect();
    let names: BTreeMap<&str, &str> = everyone
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let ctx = contexts.ctx_mut()?.clone();
    let screen = ctx.viewport_rect();
    let mut root = root_ui(&ctx, "session", screen);
    let mut send: Option<String> = None;
    let modal = overlays.any_modal() || reader.any_open() || codex.open;
    let instant = settings.text_speed <= 0.0;
    session_reader::backlog_keys(&ctx, &keys, &mut wheel, &mut reader, modal);
    // Space and Enter read on while the text field is not being typed in.
    if !ctx.egui_wants_keyboard_input()
        && !modal
        && (keys.just_pressed(KeyCode::Space) || keys.just_pressed(KeyCode::Enter))
    {
        reader.advance(instant);
    }

    // The place behind the words is a sprite under this layer
    // (`ui::backdrop`); until its picture is there, a flat colour.
    let pictured = scenery
        .backdrop
        .as_ref()
        .is_some_and(|h| images.contains(h.id()));
    if !pictured {
        root.painter()
            .rect_filled(screen, 0.0, egui::Color32::from_rgb(14, 16, 22));
    }

    // The backdrop under egui is darkened under the panels
    // (`ui::backdrop::Shades`, at the `SHADE_*` alphas); egui draws only what is on them.
    let panel_frame = egui::Frame::new().inner_margin(egui::Margin::symmetric(18, 10));
    shades.rects.clear();
    shades.points_to_logical = ctx.pixels_per_point() / scale_factor;
    let bar = egui::Panel::top("session-bar")
        .frame(egui::Frame::new().inner_margin(egui::Margin::symmetric(8, 4)))
        .show(&mut root, |ui| {
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(&view.title).strong());
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    match super::screens::bar_buttons(ui) {
                        Some(BarPress::Title) => next.set(Screen::Title),
                        Some(BarPress::Settings) => overlays.settings = true,
                        Some(BarPress::Saves(mode)) => reader.slots = Some(mode),
                        Some(BarPress::Backlog) => reader.backlog = true,
                        None => {}
                    }
                    let label = if codex.fresh > 0 {
                        format!("Codex (C) • {} new", codex.fresh)
                    } else {
                        "Codex (C)".to_owned()
                    };
                    if ui.button(label).clicked() {
                        codex.open = !codex.open;
                    }
                    let label = if side.0 {
                        "Hide clocks and people"
                    } else {
                        "Clocks and people"
                    };
                    if ui.button(label).clicked() {
                        side.0 = !side.0;
                    }
                    ui.label(egui::RichText::new(format!("scene {}", view.scene_index)).weak());
                });
            });
        });
    shades.rects.push((bar.response.rect, SHADE_BAR));

    let mut open = side.0;
    let world_panel = egui::Panel::right("session-world")
        .exact_size(270.0)
        .frame(panel_frame)
        .show_collapsible(&mut root, &mut open, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("Clocks");
                let mut sorted: Vec<_> = clocks.iter().map(|c| &c.0).collect();
                sorted.sort_by(|a, b| a.name.cmp(&b.name));
                for clock in sorted {
                    let fraction = if clock.max > 0 {
                        clock.value as f32 / clock.max as f32
                    } else {
                        0.0
                    };
                    ui.label(&clock.name);
                    ui.add(
                        egui::ProgressBar::new(fraction.clamp(0.0, 1.0))
                            .text(format!("{} / {}", clock.value, clock.max)),
                    );
                }
                ui.add_space(12.0);
                standing_panel(ui, &standing.0, &standing.1);
                ui.add_space(12.0);
                ui.heading("Relations");
                for r in relations.iter().map(|r| &r.0) {
                    let a = names.get(r.a.as_str()).copied().unwrap_or(&r.a);
                    let b = names.get(r.b.as_str()).copied().unwrap_or(&r.b);
                    ui.label(egui::RichText::new(format!("{a} — {b}")).strong());
                    ui.label(format!(
                        "trust {:+}  tension {:+}  closeness {:+}",
                        r.trust, r.tension, r.closeness
                    ));
                }
            });
        });
    if let Some(panel) = world_panel {
        shades.rects.push((panel.response.rect, SHADE_BAR));
    }
    side.0 = open;

    let input = egui::Panel::bottom("session-input")
        .frame(panel_frame)
        .show(&mut root, |ui| {
            ui.add_space(6.0);
            if let Some(q) = &view.question {
                ui.label(
                    egui::RichText::new(format!("Before that: {q}"))
                        .italics()
                        .color(egui::Color32::from_rgb(240, 210, 140)),
                );
            }
            // The choices once the turn has been read, as in the story player.
            let read = reader.finished();
            ui.add_enabled_ui(!view.busy, |ui| {
                for (i, choice) in view.choices.iter().enumerate().filter(|_| read) {
                    let label = egui::RichText::new(format!("{}. {choice}", i + 1)).size(18.0);
                    ui.horizontal(|ui| {
                        let choice = ui.add(egui::Button::new(label).frame(false));
                        targets.note(format!("session-choice-{}", i + 1), choice.rect);
                        if choice.clicked() {
                            send = Some((i + 1).to_string());
                        }
                        if let Some(Some(mark)) = view.choice_marks.get(i) {
                            ui.label(
                                egui::RichText::new(mark)
                                    .size(14.0)
                                    .italics()
                                    .color(egui::Color32::from_rgb(214, 150, 120)),
                            );
                        }
                    });
                }
                if view.free_text {
                    ui.horizontal(|ui| {
                        let field = ui.add(
                            egui::TextEdit::singleline(&mut draft.0)
                                .hint_text(
                                    "Write what you do (or /rewind N, /end-scene, /whisper NPC …)",
                                )
                                .desired_width(ui.available_width() - 90.0),
                        );
                        targets.note("session-input", field.rect);
                        let enter =
                            field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                        let go = ui.button("Do it");
                        targets.note("do-it", go.rect);
                        if (go.clicked() || enter) && !draft.0.trim().is_empty() {
                            send = Some(std::mem::take(&mut draft.0));
                        }
                        if !field.has_focus() && !modal {
                            for (n, key) in [
                                KeyCode::Digit1,
                                KeyCode::Digit2,
                                KeyCode::Digit3,
                                KeyCode::Digit4,
                            ]
                            .iter()
                            .enumerate()
                            {
                                if !keys.just_pressed(*key) {
                                    continue;
                                }
                                if !read {
                                    reader.advance(instant);
                                } else if n < view.choices.len() {
                                    send = Some((n + 1).to_string());
                                }
                            }
                        }
                    });
                }
            });
            ui.add_space(6.0);
        });
    shades.rects.push((input.response.rect, SHADE_INPUT));

    let text_height = (screen.height() * 0.34).clamp(190.0, 420.0);
    let newest_roll = view
        .entries
        .iter()
        .rposition(|e| matches!(e, Entry::Roll(_)));
    let text = egui::Panel::bottom("session-text")
        .exact_size(text_height)
        .frame(panel_frame)
        .show(&mut root, |ui| {
            ui.add_enabled_ui(!modal, |ui| {
                session_reader::text_box(
                    ui,
                    &mut reader,
                    &view,
                    &names,
                    newest_roll,
                    rolling,
                    instant,
                    busy_words(&view),
                );
            });
        })
        .response
        .rect;
    shades.rects.push((text, SHADE_TEXT));

    egui::CentralPanel::no_frame().show(&mut root, |ui| {
        let area = ui.max_rect();
        reader.stage = area.union(text);
        // The place's name (and, for art, its description on hover).
        if !scenery.name.is_empty() {
            // Under the name, when and how it feels ("dusk · fog, hush").
            let when = scene_line(&view.scene, &["time", "mood"]);
            super::stage::caption_box(ui.ctx(), "session-place", area, |ui| {
                ui.label(
                    egui::RichText::new(&scenery.name)
                        .italics()
                        .size(17.0)
                        .color(egui::Color32::from_gray(235)),
                )
                .on_hover_text(&scenery.alt);
                if !when.is_empty() {
                    ui.label(
                        egui::RichText::new(when)
                            .size(13.0)
                            .color(egui::Color32::from_gray(190)),
                    );
                }
            });
        }
        // Who is here, along the foot of the picture.
        let portrait = egui::vec2(96.0, 120.0) * (area.height() / 360.0).clamp(0.6, 1.4);
        let mut x = area.max.x - 16.0;
        for (name, tex, speaking) in faces.iter().rev() {
            let frame = egui::Rect::from_min_size(
                egui::pos2(x - portrait.x, area.max.y - portrait.y - 26.0),
                portrait,
            );
            x -= portrait.x + 28.0;
            if frame.min.x < area.min.x {
                break;
            }
            super::portrait::paint_framed(ui, frame, *tex, name, 14.0, *speaking);
        }
    });

    if let Some(failure) = &view.failure {
        super::screens::centered_window("The turn did not happen").show(&ctx, |ui| {
            ui.label(format!(
                "The {} stage failed: {}",
                failure.stage, failure.reason
            ));
            ui.label("Nothing was saved.");
            ui.horizontal(|ui| {
                if ui.button("Retry").clicked() {
                    send = Some("/retry".into());
                }
                if ui.button("Continue with fallback narration").clicked() {
                    send = Some("/fallback".into());
                }
            });
        });
    }
    if let Some(line) = send {
        inputs.write(SessionInput(line));
    }
    Ok(())
}

/// What the model is doing, in the player's words.
fn busy_words(view: &SessionView) -> &'static str {
    match view.stage.as_deref() {
        Some("narrate") => "the narrator is writing…",
        Some("recap") => "remembering what happened…",
        Some("resolve") => "the referee weighs your move…",
        Some("extract") if !view.choices.is_empty() => {
            "keeping the books; your choices open in a moment…"
        }
        Some("lore_extract") if !view.choices.is_empty() => {
            "noting what is new; your choices open in a moment…"
        }
        Some("extract") => "keeping the books…",
        Some("npc_intent") => "the others decide what to do…",
        Some("lore_extract") => "noting what is new…",
        Some("choices") => "thinking of what you might do next…",
        _ => "thinking…",
    }
}

/// The session codex window: open or not, the entries already looked at,
/// and how many are new.
#[derive(Resource, Debug, Default)]
struct SessionCodexView {
    open: bool,
    seen: std::collections::BTreeSet<String>,
    fresh: usize,
    codex: crate::session::codex::SessionCodex,
    /// The scene the codex was read at: it changes only when the world does
    /// (a commit, rewind or load), not with every streamed token.
    scene: Option<i64>,
}

/// The codex of a session (C): the people met, with how they regard the
/// player; the places been, with their art; the lore play has established.
/// Entries not looked at yet say NEW; closing the codex marks them seen.
fn session_codex_window(
    mut contexts: EguiContexts,
    session: Option<ResMut<ActiveSession>>,
    mut view: ResMut<SessionCodexView>,
    session_view: Res<SessionView>,
    keys: Res<ButtonInput<KeyCode>>,
    server: Res<AssetServer>,
    (mut thumbnails, portraits): (
        Local<BTreeMap<PathBuf, Handle<Image>>>,
        Res<SessionPortraits>,
    ),
    images: Res<Assets<Image>>,
) -> Result {
    let Some(mut session) = session else {
        return Ok(());
    };
    if view.scene != Some(session_view.scene_index) {
        let ctl = session.controller();
        let recalled = ctl.store().recalled_lore().unwrap_or_else(|e| {
            warn!("the codex cannot show the lore come across: {e}");
            Vec::new()
        });
        view.codex = crate::session::codex::codex(&ctl.state, &recalled);
        view.scene = Some(session_view.scene_index);
        let fresh = view
            .codex
            .keys()
            .iter()
            .filter(|k| !view.seen.contains(*k))
            .count();
        view.fresh = fresh;
    }
    let ctx = contexts.ctx_mut()?.clone();
    if keys.just_pressed(KeyCode::KeyC) && !ctx.egui_wants_keyboard_input() {
        view.open = !view.open;
    }
    if !view.open {
        return Ok(());
    }
    let view = &mut *view;
    let codex = &view.codex;
    let mut textures = BTreeMap::new();
    for place in &codex.places {
        if let Some(path) = &place.image {
            let handle = thumbnails
                .entry(path.clone())
                .or_insert_with(|| server.load(crate::files::canonical(path)))
                .clone();
            if let Some(image) = images.get(handle.id()) {
                let size = image.size();
                textures.insert(
                    place.id.clone(),
                    (
                        contexts.add_image(EguiTextureHandle::Weak(handle.id())),
                        size,
                    ),
                );
            }
        }
    }
    let faces: BTreeMap<&str, egui::TextureId> = codex
        .people
        .iter()
        .filter_map(|p| {
            let (_, handle) = portraits
                .0
                .get(&p.id)
                .filter(|(_, h)| images.contains(h.id()))?;
            Some((
                p.id.as_str(),
                contexts.add_image(EguiTextureHandle::Weak(handle.id())),
            ))
        })
        .collect();
    let seen = &view.seen;
    let new_mark = |ui: &mut egui::Ui, key: &str| {
        if !seen.contains(key) {
            ui.label(
                egui::RichText::new("NEW")
                    .small()
                    .strong()
                    .color(egui::Color32::from_rgb(240, 200, 120)),
            );
        }
    };
    let mut open = true;
    egui::Window::new("Codex")
        .open(&mut open)
        .default_size([560.0, 480.0])
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .collapsible(false)
        .show(&ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("People");
                for p in &codex.people {
                    let face = faces
                        .get(p.id.as_str())
                        .map(|tex| egui::Image::new((*tex, egui::vec2(56.0, 70.0))));
                    codex_row(ui, face, &p.description, |ui| {
                        ui.label(egui::RichText::new(&p.name).strong());
                        if let Some(regard) = p.regard {
                            ui.label(egui::RichText::new(format!("({regard} toward you)")).weak());
                        }
                        if !p.here {
                            ui.label(egui::RichText::new("elsewhere").italics().weak());
                        }
                        new_mark(ui, &format!("person:{}", p.id));
                    });
                }
                ui.separator();
                ui.heading("Places");
                for p in &codex.places {
                    let art = textures.get(&p.id).map(|(tex, size)| {
                        let w = 120.0;
                        let h = w * size.y as f32 / size.x.max(1) as f32;
                        egui::Image::new((*tex, egui::vec2(w, h)))
                    });
                    codex_row(ui, art, &p.description, |ui| {
                        ui.label(egui::RichText::new(&p.name).strong());
                        if p.here {
                            ui.label(egui::RichText::new("you are here").italics().weak());
                        }
                        new_mark(ui, &format!("place:{}", p.id));
                    });
                }
                ui.separator();
                ui.heading("What you have learned");
                if codex.lore.is_empty() {
                    ui.label(egui::RichText::new("Nothing yet.").weak());
                }
                for l in &codex.lore {
                    ui.horizontal_wrapped(|ui| {
                        ui.label(l);
                        new_mark(ui, &format!("lore:{l}"));
                    });
                }
                if !codex.read.is_empty() {
                    ui.separator();
                    ui.heading("Lore come across");
                }
                for l in &codex.read {
                    ui.horizontal(|ui| {
                        ui.label(egui::RichText::new(&l.title).strong());
                        new_mark(ui, &format!("read:{}", l.id));
                    });
                    ui.label(egui::RichText::new(&l.text).italics());
                    ui.add_space(6.0);
                }
            });
        });
    if !open {
        view.open = false;
        view.seen.extend(view.codex.keys());
        view.fresh = 0;
    }
    Ok(())
}

/// One entry of the session codex: its picture, then its heading line and description.
fn codex_row(
    ui: &mut egui::Ui,
    picture: Option<egui::Image<'_>>,
    description: &str,
    heading: impl FnOnce(&mut egui::Ui),
) {
    ui.horizontal_top(|ui| {
        if let Some(picture) = picture {
            ui.add(picture);
        }
        ui.vertical(|ui| {
            ui.horizontal(heading);
            if !description.is_empty() {
                ui.label(description);
            }
        });
    });
    ui.add_space(6.0);
}

/// Seconds the newest roll tumbles before its faces settle.
const DICE_TUMBLE: f32 = 0.9;

/// Rolls seen on the screen, and when the newest appeared.
#[derive(Resource, Debug, Default)]
struct DiceShown {
    rolls: usize,
    at: f32,
}

/// "dusk · fog, hush" from the scene state's `keys`.
fn scene_line(scene: &serde_json::Map<String, serde_json::Value>, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| scene.get(*k)?.as_str())
        .map(|s| s.replace('_', " "))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Session zero on the title screen: tone, difficulty, lines and veils, then the new save opens.
#[expect(
    clippy::too_many_arguments,
    reason = "one egui window and what it starts"
)]
fn session_zero_window(
    mut contexts: EguiContexts,
    mut zero: ResMut<SessionZero>,
    campaigns: Res<Campaigns>,
    mut opens: MessageWriter<OpenSession>,
    mut toasts: ResMut<Toasts>,
    gateway: Option<Res<LlmGateway>>,
    mut commands: Commands,
    mut targets: ResMut<Targets>,
) -> Result {
    let Some(index) = zero.open else {
        return Ok(());
    };
    let Some(campaign) = campaigns.0.get(index) else {
        zero.open = None;
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?.clone();
    let mut begin = false;
    let mut cancel = false;
    super::screens::centered_window(&format!("Session zero — {}", campaign.title)).show(
        &ctx,
        |ui| {
            ui.label("Before the story starts, tell it what you want and what you don't.");
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                ui.label("Tone");
                ui.add(
                    egui::TextEdit::singleline(&mut zero.tone)
                        .hint_text("the campaign's own; or a few words"),
                );
            });
            ui.horizontal(|ui| {
                ui.label("Difficulty");
                for d in ["gentle", "standard", "hard"] {
                    if ui.selectable_label(zero.difficulty == d, d).clicked() {
                        d.clone_into(&mut zero.difficulty);
                    }
                }
            });
            ui.add_space(8.0);
            ui.label(egui::RichText::new("Content in this campaign").strong());
            egui::Grid::new("warnings").show(ui, |ui| {
                for (i, warning) in campaign.warnings.iter().enumerate() {
                    ui.label(warning);
                    for (value, label) in
                        [(0u8, "fine"), (1, "veil (off-screen)"), (2, "line (never)")]
                    {
                        if ui
                            .selectable_label(zero.choices[i] == value, label)
                            .clicked()
                        {
                            zero.choices[i] = value;
                        }
                    }
                    ui.end_row();
                }
            });
            ui.horizontal(|ui| {
                ui.label("Also never");
                ui.add(
                    egui::TextEdit::singleline(&mut zero.more_lines).hint_text("comma-separated"),
                );
            });
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                let go = ui.button("Begin");
                targets.note("begin-session", go.rect);
                begin = go.clicked();
                cancel = ui.button("Cancel").clicked();
            });
        },
    );
    if cancel {
        zero.open = None;
    }
    if begin {
        let mut calibration = Calibration {
            tone: zero.tone.trim().to_owned(),
            difficulty: zero.difficulty.clone(),
            ..Calibration::default()
        };
        for (warning, choice) in campaign.warnings.iter().zip(&zero.choices) {
            match choice {
                1 => calibration.veils.push(warning.clone()),
                2 => calibration.lines.push(warning.clone()),
                _ => {}
            }
        }
        calibration.lines.extend(
            zero.more_lines
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let new = NewSave {
            campaign: campaign.dir.clone(),
            save: None,
            scenario: None,
            seed: None,
            small_model: "local-small".into(),
            large_model: "local-large".into(),
            calibration,
        };
        zero.open = None;
        // A sparse campaign is enriched first; the save is made when that is done.
        match load_campaign(&campaign.dir) {
            Ok(c) if c.is_sparse() => {
                match gateway_or_start(gateway.as_deref(), &mut commands) {
                    Ok(g) => {
                        let handle =
                            g.call(crate::campaign::enrich::request(&c, &new.large_model, 1));
                        commands.insert_resource(Enriching {
                            handle,
                            new,
                            title: campaign.title.clone(),
                            started: bevy::platform::time::Instant::now(),
                        });
                    }
                    Err(e) => toasts.push(format!("The models cannot start: {e}")),
                }
                return Ok(());
            }
            Ok(_) => {}
            Err(e) => {
                toasts.push(format!("Cannot start: {e}"));
                return Ok(());
            }
        }
        match create_save(&new) {
            Ok((save, _)) => {
                opens.write(OpenSession {
                    save,
                    model_script: None,
                    model_pace_ms: 0,
                });
            }
            Err(e) => toasts.push(format!("Cannot start: {e}")),
        }
    }
    Ok(())
}

/// While a sparse campaign is enriched: what is happening and for how long;
/// when the model answers, the files are written and the new save opens.
fn enrichment_window(
    mut contexts: EguiContexts,
    enriching: Res<Enriching>,
    mut commands: Commands,
    mut opens: MessageWriter<OpenSession>,
    mut toasts: ResMut<Toasts>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    super::screens::centered_window(&format!("Preparing {}", enriching.title)).show(&ctx, |ui| {
        ui.label("This campaign is only a sketch. The model is writing its people, plot beats, lore and rules…");
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("{:.0} s", enriching.started.elapsed().as_secs_f64()));
        });
        ui.label(
            egui::RichText::new("The new files end in _generated; your own files are never changed.")
                .weak(),
        );
    });
    ctx.request_repaint();
    for event in enriching.handle.poll() {
        let LlmEvent::Finished(outcome) = event else {
            continue;
        };
        commands.remove_resource::<Enriching>();
        let dir = &enriching.new.campaign;
        let written = outcome
            .result
            .map_err(|e| format!("enrichment failed at stage `enrich`: {e}; nothing was written"))
            .and_then(|answer| {
                let c = load_campaign(dir).map_err(|e| e.to_string())?;
                let source = crate::campaign::enrich::Source {
                    model: format!("{} ({})", outcome.record.model_key, outcome.record.backend),
                    prompt: outcome.record.prompt_id.clone(),
                    seed: 1,
                };
                let files = crate::campaign::enrich::files(&c, &answer, &source)
                    .map_err(|e| e.to_string())?;
                crate::campaign::enrich::write(dir, &files).map_err(|e| e.to_string())
            });
        match written.and_then(|_| create_save(&enriching.new).map_err(|e| e.to_string())) {
            Ok((save, _)) => {
                opens.write(OpenSession {
                    save,
                    model_script: None,
                    model_pace_ms: 0,
                });
            }
            Err(e) => toasts.push(format!("Cannot start {}: {e}", enriching.title)),
        }
    }
    Ok(())
}

/// How people and factions regard the persona: a signed bar per NPC and faction, named in words.
fn standing_panel(
    ui: &mut egui::Ui,
    people: &Query<(&Character, &Perception)>,
    factions: &Query<&Faction>,
) {
    let mut rows: Vec<(String, f64)> = people.iter().map(|(c, p)| (c.name.clone(), p.0)).collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    if !rows.is_empty() {
        ui.heading("How they see you");
        for (name, score) in rows {
            standing_row(ui, &name, score);
        }
    }
    let mut rows: Vec<(String, f64)> = factions
        .iter()
        .map(|f| (f.name.clone(), f.reputation))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    if !rows.is_empty() {
        ui.add_space(8.0);
        ui.heading("Reputation");
        for (name, score) in rows {
            standing_row(ui, &name, score);
        }
    }
}

fn standing_row(ui: &mut egui::Ui, name: &str, score: f64) {
    let word = crate::rules::standing::label(score);
    let colour = match word {
        "devoted" | "warm" => egui::Color32::from_rgb(120, 190, 130),
        "neutral" => egui::Color32::from_rgb(170, 170, 160),
        _ => egui::Color32::from_rgb(210, 110, 100),
    };
    ui.label(format!("{name}: {word} ({score:+.0})"));
    #[expect(clippy::cast_possible_truncation, reason = "a bar fraction")]
    let fraction = ((score + 100.0) / 200.0).clamp(0.0, 1.0) as f32;
    ui.add(
        egui::ProgressBar::new(fraction)
            .fill(colour)
            .desired_height(6.0),
    );
}
