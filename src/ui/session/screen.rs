//! The play screen of a session: the place behind the words, who is here, text box, dice, choices.
//!
//! The panels share one root `Ui` (so they come from one system,
//! [`session_screen`]), each drawn by a widget function: the bar, the side
//! panel (clocks, how people see you, relations; folded away at first), the
//! input (choices and the free-text field), the text box, and the stage
//! between them (the place's caption and the portraits of who is present).
//! The dice's tumble and the failed-turn dialog are systems of their own.

use std::collections::BTreeMap;

use bevy::ecs::system::SystemParam;
use bevy::input::mouse::MouseWheel;
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, RequestRedraw};
use bevy::winit::{UpdateMode, WinitSettings};
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::backdrop::Shades;
use super::codex_window::{SessionCodexView, session_codex_window};
use super::reader::{SessionReader, backlog_keys, text_box};
use super::scenery::{SessionPortraits, SessionScenery};
use super::standing::standing_panel;
use crate::engine::session::{
    Character, ClockState, DebugLog, Entry, Faction, Perception, Present, RelationEdge, SceneView,
    SessionInput, Transcript, TurnProgress, TurnPrompt,
};
use crate::ui::overlay::DebugLine;
use crate::ui::screens::{BarPress, Overlays, Screen, Targets, UiSystems, bar_buttons, root_ui};
use crate::ui::settings::Settings;
use crate::ui::widgets::{caption_box, centered_window, paint_framed};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Draft>()
        .init_resource::<SidePanel>()
        .init_resource::<DiceShown>()
        .add_systems(
            Update,
            (
                forward_log.in_set(UiSystems::Receive),
                keep_awake.in_set(UiSystems::Present),
            )
                .run_if(in_state(Screen::Session)),
        )
        .add_systems(OnExit(Screen::Session), sleep_again)
        .add_systems(
            EguiPrimaryContextPass,
            (tumble_dice, session_screen, failure_dialog, not_kept_banner)
                .chain()
                .before(session_codex_window)
                .run_if(in_state(Screen::Session)),
        );
}

/// The free-text field's contents.
#[derive(Resource, Debug, Default)]
struct Draft(String);

/// Whether the side panel (clocks, how people see you, relations) is open; it
/// starts folded away so the stage takes the width.
#[derive(Resource, Debug, Default)]
struct SidePanel(bool);

/// How dark the shades under the panels are (alpha of `backdrop`'s shade
/// colour): the bar and side panel, the input, the text box over the picture.
const SHADE_BAR: u8 = 235;
const SHADE_INPUT: u8 = 240;
const SHADE_TEXT: u8 = 215;

/// Seconds the newest roll tumbles before its faces settle.
const DICE_TUMBLE: f32 = 0.9;

/// Rolls seen on the screen, and when the newest appeared.
#[derive(Resource, Debug, Default)]
struct DiceShown {
    rolls: usize,
    at: f32,
}

impl DiceShown {
    /// Seconds into the newest roll's tumble, while it tumbles.
    fn rolling(&self, now: f32) -> Option<f32> {
        Some(now - self.at).filter(|t| *t < DICE_TUMBLE && self.rolls > 0)
    }
}

/// What the screen shows of the session.
#[derive(SystemParam)]
struct Shown<'w> {
    transcript: Res<'w, Transcript>,
    prompt: Res<'w, TurnPrompt>,
    progress: Res<'w, TurnProgress>,
    scene: Res<'w, SceneView>,
}

/// The session's people and world, as entities.
#[derive(SystemParam)]
struct People<'w, 's> {
    present: Query<'w, 's, &'static Character, With<Present>>,
    everyone: Query<'w, 's, &'static Character>,
    clocks: Query<'w, 's, &'static ClockState>,
    relations: Query<'w, 's, &'static RelationEdge>,
    perceptions: Query<'w, 's, (&'static Character, &'static Perception)>,
    factions: Query<'w, 's, &'static Faction>,
}

/// What the screen's buttons and keys work: the panels they open and shut,
/// the text being typed, and where the controls were drawn.
#[derive(SystemParam)]
struct Controls<'w, 's> {
    overlays: ResMut<'w, Overlays>,
    next: ResMut<'w, NextState<Screen>>,
    side: ResMut<'w, SidePanel>,
    codex: ResMut<'w, SessionCodexView>,
    reader: ResMut<'w, SessionReader>,
    draft: ResMut<'w, Draft>,
    targets: ResMut<'w, Targets>,
    keys: Res<'w, ButtonInput<KeyCode>>,
    wheel: MessageReader<'w, 's, MouseWheel>,
}

impl Controls<'_, '_> {
    /// Whether a panel covers the stage (so the stage's keys stay quiet).
    fn modal(&self) -> bool {
        self.overlays.any_modal() || self.reader.any_open() || self.codex.open
    }
}

/// The pictures: the portraits and the backdrop, the images they are, and
/// the shades the backdrop is darkened by under the panels.
#[derive(SystemParam)]
struct Pictures<'w> {
    portraits: Res<'w, SessionPortraits>,
    scenery: Res<'w, SessionScenery>,
    images: Res<'w, Assets<Image>>,
    shades: ResMut<'w, Shades>,
}

/// A portrait on the stage: the name, the texture once loaded, whether they speak now.
type Face = (String, Option<egui::TextureId>, bool);

/// How the screen takes keys and shows text this frame.
#[derive(Debug, Clone, Copy)]
struct Modes {
    /// A panel covers the stage: its keys stay quiet, the text box is greyed.
    modal: bool,
    /// Text shows whole at once (no typewriter).
    instant: bool,
}

/// The session's log lines into the debug overlay.
fn forward_log(log: Res<DebugLog>, mut seen: Local<usize>, mut lines: MessageWriter<DebugLine>) {
    if log.lines.len() < *seen {
        *seen = 0;
    }
    for line in &log.lines[*seen..] {
        lines.write(DebugLine {
            section: "session",
            text: line.clone(),
        });
    }
    *seen = log.lines.len();
}

/// How often the screen looks for a turn's news while the model works and
/// nothing on it moves. Drawing frames that show nothing new took a two-core
/// machine's CPU from the model in the page (#45): a software-rendered frame
/// costs a core a third of a second.
const WAITING_TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// Frames keep coming while text is typed out, the dice tumble or a backdrop
/// fades in; while a turn runs and nothing moves, a frame every
/// [`WAITING_TICK`] shows its news (a token starts the typewriter again).
fn keep_awake(
    progress: Res<TurnProgress>,
    scenery: Res<SessionScenery>,
    reader: Res<SessionReader>,
    time: Res<Time>,
    mut winit: ResMut<WinitSettings>,
    mut redraw: MessageWriter<RequestRedraw>,
) {
    if !reader.revealed() || !scenery.settled(time.elapsed_secs() - 0.1) {
        redraw.write(RequestRedraw);
    }
    let mode = if progress.busy {
        UpdateMode::reactive(WAITING_TICK)
    } else {
        WinitSettings::desktop_app().focused_mode
    };
    set_update_mode(&mut winit, mode);
}

/// Leaving the session: the window sleeps as every other screen's does.
fn sleep_again(mut winit: ResMut<WinitSettings>) {
    set_update_mode(&mut winit, WinitSettings::desktop_app().focused_mode);
}

/// Sets how the window wakes, focused or not (a player who looks away from a
/// running turn still gets its words), touching the resource only on a change.
fn set_update_mode(winit: &mut ResMut<WinitSettings>, focused: UpdateMode) {
    let unfocused = if focused == WinitSettings::desktop_app().focused_mode {
        WinitSettings::desktop_app().unfocused_mode
    } else {
        focused
    };
    if winit.focused_mode != focused || winit.unfocused_mode != unfocused {
        winit.focused_mode = focused;
        winit.unfocused_mode = unfocused;
    }
}

/// A new roll tumbles a moment before its faces settle.
fn tumble_dice(transcript: Res<Transcript>, time: Res<Time>, mut dice: ResMut<DiceShown>) {
    let rolls = transcript
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Roll(_)))
        .count();
    if rolls < dice.rolls {
        dice.rolls = rolls;
    } else if rolls > dice.rolls {
        *dice = DiceShown {
            rolls,
            at: time.elapsed_secs(),
        };
    }
}

/// The screen's panels in one root, laid out in order; what the player
/// chose or typed goes to the session.
fn session_screen(
    mut contexts: EguiContexts,
    shown: Shown,
    people: People,
    mut controls: Controls,
    mut pictures: Pictures,
    (settings, dice, time): (Res<Settings>, Res<DiceShown>, Res<Time>),
    window: Query<&Window, With<PrimaryWindow>>,
    mut inputs: MessageWriter<SessionInput>,
) -> Result {
    let scale_factor = window.single().map_or(1.0, Window::scale_factor);
    let rolling = dice.rolling(time.elapsed_secs());
    if rolling.is_some() {
        contexts.ctx_mut()?.request_repaint();
    }
    let faces = faces(
        &mut contexts,
        &people,
        &pictures,
        shown.transcript.speaker.as_deref(),
    );
    let names: BTreeMap<&str, &str> = people
        .everyone
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let ctx = contexts.ctx_mut()?.clone();
    let screen = ctx.viewport_rect();
    let mut root = root_ui(&ctx, "session", screen);
    let modes = Modes {
        modal: controls.modal(),
        instant: settings.text_speed <= 0.0,
    };
    read_keys(&ctx, &mut controls, modes);

    // The place behind the words is a sprite under this layer
    // (`backdrop`); until its picture is there, a flat colour.
    let backdrop_shown = pictures
        .scenery
        .backdrop
        .as_ref()
        .is_some_and(|h| pictures.images.contains(h.id()));
    if !backdrop_shown {
        root.painter()
            .rect_filled(screen, 0.0, egui::Color32::from_rgb(14, 16, 22));
    }

    // The backdrop under egui is darkened under the panels (`backdrop::Shades`,
    // at the `SHADE_*` alphas); egui draws only what is on them.
    let panel_frame = egui::Frame::new().inner_margin(egui::Margin::symmetric(18, 10));
    let shades = &mut pictures.shades;
    shades.rects.clear();
    shades.points_to_logical = ctx.pixels_per_point() / scale_factor;
    let bar = top_bar(&mut root, &shown.scene, &mut controls);
    shades.rects.push((bar, SHADE_BAR));
    if let Some(panel) = side_panel(&mut root, panel_frame, &people, &names, &mut controls.side) {
        shades.rects.push((panel, SHADE_BAR));
    }
    let (input, send) = input_panel(&mut root, panel_frame, &shown, &mut controls, modes);
    shades.rects.push((input, SHADE_INPUT));
    let text_height = (screen.height() * 0.34).clamp(190.0, 420.0);
    let text = text_panel(
        &mut root,
        panel_frame,
        text_height,
        &shown,
        &mut controls.reader,
        (&names, rolling),
        modes,
    );
    shades.rects.push((text, SHADE_TEXT));
    stage(
        &mut root,
        text,
        &shown.scene,
        &pictures.scenery,
        &faces,
        &mut controls.reader,
    );
    if let Some(line) = send {
        inputs.write(SessionInput(line));
    }
    Ok(())
}

/// The portraits of who is present (the persona aside), by name, the one speaking lit.
fn faces(
    contexts: &mut EguiContexts,
    people: &People,
    pictures: &Pictures,
    speaker: Option<&str>,
) -> Vec<Face> {
    let mut present: Vec<&Character> = people.present.iter().filter(|c| !c.persona).collect();
    present.sort_by(|a, b| a.name.cmp(&b.name));
    present
        .iter()
        .map(|c| {
            let tex = pictures
                .portraits
                .0
                .get(&c.id)
                .map(|(_, h)| h)
                .filter(|h| pictures.images.contains(h.id()))
                .map(|h| contexts.add_image(EguiTextureHandle::Weak(h.id())));
            (c.name.clone(), tex, speaker == Some(c.id.as_str()))
        })
        .collect()
}

/// H and the wheel open the backlog; Space and Enter read on while the text
/// field is not being typed in.
fn read_keys(ctx: &egui::Context, controls: &mut Controls, modes: Modes) {
    let keys = &controls.keys;
    backlog_keys(
        ctx,
        keys,
        &mut controls.wheel,
        &mut controls.reader,
        modes.modal,
    );
    if !ctx.egui_wants_keyboard_input()
        && !modes.modal
        && (keys.just_pressed(KeyCode::Space) || keys.just_pressed(KeyCode::Enter))
    {
        controls.reader.advance(modes.instant);
    }
}

/// The bar: the session's title, the play screens' buttons, the codex (with
/// how many entries are new), the side panel's button and the scene.
fn top_bar(root: &mut egui::Ui, scene: &SceneView, controls: &mut Controls) -> egui::Rect {
    egui::Panel::top("session-bar")
        .frame(egui::Frame::new().inner_margin(egui::Margin::symmetric(8, 4)))
        .show(root, |ui| {
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(&scene.title).strong());
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    match bar_buttons(ui) {
                        Some(BarPress::Title) => controls.next.set(Screen::Title),
                        Some(BarPress::Settings) => controls.overlays.settings = true,
                        Some(BarPress::Saves(mode)) => controls.reader.slots = Some(mode),
                        Some(BarPress::Backlog) => controls.reader.backlog = true,
                        None => {}
                    }
                    let label = if controls.codex.fresh > 0 {
                        format!("Codex (C) • {} new", controls.codex.fresh)
                    } else {
                        "Codex (C)".to_owned()
                    };
                    if ui.button(label).clicked() {
                        controls.codex.open = !controls.codex.open;
                    }
                    let label = if controls.side.0 {
                        "Hide clocks and people"
                    } else {
                        "Clocks and people"
                    };
                    if ui.button(label).clicked() {
                        controls.side.0 = !controls.side.0;
                    }
                    ui.label(egui::RichText::new(format!("scene {}", scene.scene_index)).weak());
                });
            });
        })
        .response
        .rect
}

/// The side panel, when open: clocks, how people see you, relations.
fn side_panel(
    root: &mut egui::Ui,
    frame: egui::Frame,
    people: &People,
    names: &BTreeMap<&str, &str>,
    side: &mut SidePanel,
) -> Option<egui::Rect> {
    let mut open = side.0;
    let panel = egui::Panel::right("session-world")
        .exact_size(270.0)
        .frame(frame)
        .show_collapsible(root, &mut open, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("Clocks");
                let mut sorted: Vec<_> = people.clocks.iter().map(|c| &c.0).collect();
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
                standing_panel(ui, &people.perceptions, &people.factions);
                ui.add_space(12.0);
                ui.heading("Relations");
                for r in people.relations.iter().map(|r| &r.0) {
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
    side.0 = open;
    panel.map(|p| p.response.rect)
}

/// The input: a question asked, the choices once the turn has been read
/// (as in the story player), the free-text field; what was chosen or typed.
fn input_panel(
    root: &mut egui::Ui,
    frame: egui::Frame,
    shown: &Shown,
    controls: &mut Controls,
    modes: Modes,
) -> (egui::Rect, Option<String>) {
    let prompt = &shown.prompt;
    let mut send = None;
    let rect = egui::Panel::bottom("session-input")
        .frame(frame)
        .show(root, |ui| {
            ui.add_space(6.0);
            if let Some(q) = &prompt.question {
                ui.label(
                    egui::RichText::new(format!("Before that: {q}"))
                        .italics()
                        .color(egui::Color32::from_rgb(240, 210, 140)),
                );
            }
            let read = controls.reader.finished();
            ui.add_enabled_ui(!shown.progress.busy, |ui| {
                if read {
                    send = choice_rows(ui, prompt, &mut controls.targets);
                }
                if prompt.free_text {
                    let typed = free_text(ui, prompt, controls, read, modes);
                    send = typed.or(send.take());
                }
            });
            ui.add_space(6.0);
        })
        .response
        .rect;
    (rect, send)
}

/// The choices, numbered, each with its difficulty mark; the one clicked.
fn choice_rows(ui: &mut egui::Ui, prompt: &TurnPrompt, targets: &mut Targets) -> Option<String> {
    let mut send = None;
    for (i, choice) in prompt.choices.iter().enumerate() {
        let label = egui::RichText::new(format!("{}. {choice}", i + 1)).size(18.0);
        ui.horizontal(|ui| {
            let choice = ui.add(egui::Button::new(label).frame(false));
            targets.note(format!("session-choice-{}", i + 1), choice.rect);
            if choice.clicked() {
                send = Some((i + 1).to_string());
            }
            if let Some(Some(mark)) = prompt.choice_marks.get(i) {
                ui.label(
                    egui::RichText::new(mark)
                        .size(14.0)
                        .italics()
                        .color(egui::Color32::from_rgb(214, 150, 120)),
                );
            }
        });
    }
    send
}

/// The free-text field and "Do it"; the digits 1–4 pick a choice (or read
/// on, while the turn is still being read) when the field is not typed in.
fn free_text(
    ui: &mut egui::Ui,
    prompt: &TurnPrompt,
    controls: &mut Controls,
    read: bool,
    modes: Modes,
) -> Option<String> {
    let mut send = None;
    ui.horizontal(|ui| {
        let field = ui.add(
            egui::TextEdit::singleline(&mut controls.draft.0)
                .hint_text("Write what you do (or /rewind N, /end-scene, /whisper NPC …)")
                .desired_width(ui.available_width() - 90.0),
        );
        controls.targets.note("session-input", field.rect);
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        let go = ui.button("Do it");
        controls.targets.note("do-it", go.rect);
        if (go.clicked() || enter) && !controls.draft.0.trim().is_empty() {
            send = Some(std::mem::take(&mut controls.draft.0));
        }
        if field.has_focus() || modes.modal {
            return;
        }
        let digits = [
            KeyCode::Digit1,
            KeyCode::Digit2,
            KeyCode::Digit3,
            KeyCode::Digit4,
        ];
        for (n, key) in digits.iter().enumerate() {
            if !controls.keys.just_pressed(*key) {
                continue;
            }
            if !read {
                controls.reader.advance(modes.instant);
            } else if n < prompt.choices.len() {
                send = Some((n + 1).to_string());
            }
        }
    });
    send
}

/// The text box over the foot of the picture (`height` points tall), with
/// what the model is doing; `rolling`, how far into its tumble the newest roll is.
fn text_panel(
    root: &mut egui::Ui,
    frame: egui::Frame,
    height: f32,
    shown: &Shown,
    reader: &mut SessionReader,
    (names, rolling): (&BTreeMap<&str, &str>, Option<f32>),
    modes: Modes,
) -> egui::Rect {
    let entries = &shown.transcript.entries;
    let newest_roll = entries.iter().rposition(|e| matches!(e, Entry::Roll(_)));
    let busy = shown.progress.busy.then(|| {
        busy_words(
            shown.progress.stage.as_deref(),
            !shown.prompt.choices.is_empty(),
        )
    });
    egui::Panel::bottom("session-text")
        .exact_size(height)
        .frame(frame)
        .show(root, |ui| {
            ui.add_enabled_ui(!modes.modal, |ui| {
                text_box(
                    ui,
                    reader,
                    entries,
                    names,
                    (newest_roll, rolling),
                    modes.instant,
                    busy,
                );
            });
        })
        .response
        .rect
}

/// The stage between the panels: the place's name (and, for art, its
/// description on hover), when and how it feels, and who is here along the
/// foot of the picture.
fn stage(
    root: &mut egui::Ui,
    text: egui::Rect,
    scene: &SceneView,
    scenery: &SessionScenery,
    faces: &[Face],
    reader: &mut SessionReader,
) {
    egui::CentralPanel::no_frame().show(root, |ui| {
        let area = ui.max_rect();
        reader.stage = area.union(text);
        if !scenery.name.is_empty() {
            // Under the name, when and how it feels ("dusk · fog, hush").
            let when = scene_line(&scene.scene, &["time", "mood"]);
            caption_box(ui.ctx(), "session-place", area, |ui| {
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
            paint_framed(ui, frame, *tex, name, 14.0, *speaking);
        }
    });
}

/// A failed turn: Retry, or go on with fallback narration (nothing was saved).
fn failure_dialog(
    mut contexts: EguiContexts,
    prompt: Res<TurnPrompt>,
    mut inputs: MessageWriter<SessionInput>,
) -> Result {
    let Some(failure) = &prompt.failure else {
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?;
    let mut send = None;
    centered_window("The turn did not happen").show(ctx, |ui| {
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
    if let Some(line) = send {
        inputs.write(SessionInput(line));
    }
    Ok(())
}

/// The browser did not keep the save (#43): said at the top of the screen
/// until a snapshot is kept again (the store tries each frame).
fn not_kept_banner(mut contexts: EguiContexts, prompt: Res<TurnPrompt>) -> Result {
    let Some(why) = &prompt.not_kept else {
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?;
    // Below the top bar, opaque: it must be read, not glimpsed.
    egui::Area::new(egui::Id::new("not-kept"))
        .anchor(egui::Align2::CENTER_TOP, [0.0, 52.0])
        .show(ctx, |ui| {
            let fill = ui.style().visuals.window_fill.to_opaque();
            egui::Frame::popup(ui.style()).fill(fill).show(ui, |ui| {
                ui.colored_label(
                    egui::Color32::from_rgb(235, 110, 100),
                    "⚠ This turn was not kept",
                );
                ui.weak(why.strip_prefix("this turn was not kept: ").unwrap_or(why));
            });
        });
    Ok(())
}

/// What the model is doing (the stage running, and whether the next choices
/// are written already), in the player's words.
fn busy_words(stage: Option<&str>, choices: bool) -> &'static str {
    match stage {
        Some("narrate") => "the narrator is writing…",
        Some("recap") => "remembering what happened…",
        Some("resolve") => "the referee weighs your move…",
        Some("extract") if choices => "keeping the books; your choices open in a moment…",
        Some("lore_extract") if choices => "noting what is new; your choices open in a moment…",
        Some("extract") => "keeping the books…",
        Some("npc_intent") => "the others decide what to do…",
        Some("lore_extract") => "noting what is new…",
        Some("choices") => "thinking of what you might do next…",
        _ => "thinking…",
    }
}

/// "dusk · fog, hush" from the scene state's `keys`.
fn scene_line(scene: &serde_json::Map<String, serde_json::Value>, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| scene.get(*k)?.as_str())
        .map(|s| s.replace('_', " "))
        .collect::<Vec<_>>()
        .join(" · ")
}
