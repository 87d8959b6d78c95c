//! Top-level screens as states, the overlays on top of them, how the stage area is shared.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiStartupSet, egui};

use crate::engine::session::SessionSystems;
use crate::engine::story_player::{ActiveStory, StorySystems};

pub(super) fn plugin(app: &mut App) {
    app.init_state::<Screen>()
        .init_resource::<Overlays>()
        .init_resource::<UiLayout>()
        .init_resource::<Toasts>()
        .init_resource::<Targets>()
        .add_message::<StartStory>()
        .configure_sets(
            Update,
            (UiSystems::Receive, UiSystems::Present)
                .chain()
                .after(StorySystems::ApplyCommands)
                .after(SessionSystems::Sync),
        )
        .add_systems(
            PreStartup,
            spawn_camera.before(EguiStartupSet::InitContexts),
        )
        .add_systems(Startup, open_start_panels)
        .add_systems(First, forget_targets)
        .add_systems(Update, (start_story, tick_toasts))
        .add_systems(EguiPrimaryContextPass, show_toasts)
        .add_systems(OnEnter(Screen::Title), close_overlays);
}

/// The presentation's order in `Update`, after the engine's: take in what
/// the story or the session did this frame, then present it.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiSystems {
    /// The engine's messages and view resources into the screen's own state
    /// (passages received, pages laid out, the scenery followed).
    Receive,
    /// What follows from it: typewriters, auto-advance, scripted play.
    Present,
}

/// Which screen is showing.
#[derive(States, Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Screen {
    #[default]
    Title,
    /// The asset server is loading what the story needs.
    Loading,
    Playing,
    /// An open-ended session (`session::screen`).
    Session,
}

/// Whether a saves panel saves or loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavesMode {
    Save,
    Load,
}

/// Panels that open over the current screen.
#[derive(Resource, Debug, Default)]
pub struct Overlays {
    pub codex: bool,
    pub backlog: bool,
    pub saves: Option<SavesMode>,
    pub settings: bool,
    pub debug: bool,
}

impl Overlays {
    /// Whether any panel covers the stage (so stage keys stay quiet).
    pub fn any_modal(&self) -> bool {
        self.codex || self.backlog || self.saves.is_some() || self.settings
    }
}

/// Where the main controls are this frame, by name (`begin`, `continue`,
/// `choice-2`, `more`, `codex`, `to-title`), in egui points. The browser build
/// publishes them to the page, so its tests click what a player clicks.
#[derive(Resource, Debug, Default)]
pub struct Targets(pub Vec<(String, egui::Rect)>);

impl Targets {
    pub fn note(&mut self, name: impl Into<String>, rect: egui::Rect) {
        self.0.push((name.into(), rect));
    }
}

/// Each frame's controls are noted afresh.
fn forget_targets(mut targets: ResMut<Targets>) {
    targets.0.clear();
}

/// Screen strips taken by side panels (author sidebar, docked debug overlay), in logical pixels.
#[derive(Resource, Debug, Default)]
pub struct UiLayout {
    pub left: f32,
    pub right: f32,
}

impl UiLayout {
    /// Change the right strip only when it differs, so change detection stays quiet.
    pub fn set_if_neq_right(&mut self, right: f32) {
        if (self.right - right).abs() > f32::EPSILON {
            self.right = right;
        }
    }

    /// The part of the window left for the stage.
    pub fn stage_rect(&self, viewport: egui::Rect) -> egui::Rect {
        egui::Rect::from_min_max(
            egui::pos2(viewport.min.x + self.left, viewport.min.y),
            egui::pos2(viewport.max.x - self.right, viewport.max.y),
        )
    }
}

/// A background-layer `Ui` covering `rect`, for panels laid out within one strip of the window.
/// (`bevy_egui` hands out a context, not a root `Ui`; panels in one root must come from one system.)
pub fn root_ui(ctx: &egui::Context, id: &str, rect: egui::Rect) -> egui::Ui {
    egui::Ui::new(
        ctx.clone(),
        egui::Id::new(id),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(rect),
    )
}

/// What a play screen's bar was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarPress {
    Title,
    Settings,
    Saves(SavesMode),
    Backlog,
}

/// The buttons every play screen's bar has, right to left: Title, Settings,
/// Load, Save, Backlog (H). Call inside a right-to-left layout.
pub fn bar_buttons(ui: &mut egui::Ui) -> Option<BarPress> {
    let mut pressed = None;
    for (label, press) in [
        ("Title", BarPress::Title),
        ("Settings", BarPress::Settings),
        ("Load", BarPress::Saves(SavesMode::Load)),
        ("Save", BarPress::Saves(SavesMode::Save)),
        ("Backlog (H)", BarPress::Backlog),
    ] {
        if ui.button(label).clicked() {
            pressed = Some(press);
        }
    }
    pressed
}

/// Short messages shown for a few seconds ("Saved", "New in the codex").
#[derive(Resource, Debug, Default)]
pub struct Toasts(pub Vec<(String, f32)>);

impl Toasts {
    pub fn push(&mut self, text: impl Into<String>) {
        self.0.push((text.into(), 4.0));
    }
}

/// Begin a story, fresh or from a save.
#[derive(Message, Debug, Clone)]
pub struct StartStory {
    pub package: crate::story::StoryPackage,
    pub restore: Option<Box<crate::story::SaveDocument>>,
}

fn open_start_panels(options: Res<super::options::GuiOptions>, mut overlays: ResMut<Overlays>) {
    let show = options.show;
    overlays.codex = show.codex;
    overlays.backlog = show.backlog;
    overlays.debug = show.debug;
    overlays.settings = show.settings;
}

fn spawn_camera(mut commands: Commands) {
    // The stage is egui and flat images: multisampling would only cost frame time.
    commands.spawn((Camera2d, Msaa::Off));
}

fn close_overlays(mut overlays: ResMut<Overlays>) {
    // Story panels have nothing to show on the title screen.
    overlays.codex = false;
    overlays.backlog = false;
    overlays.saves = None;
}

fn start_story(
    mut starts: MessageReader<StartStory>,
    mut commands: Commands,
    mut next: ResMut<NextState<Screen>>,
    mut toasts: ResMut<Toasts>,
) {
    let Some(start) = starts.read().last() else {
        return;
    };
    let mut active = ActiveStory::new(start.package.clone());
    if let Some(doc) = &start.restore {
        match crate::story::Player::restore(start.package.story.clone(), doc) {
            Ok(player) => active.player = player,
            Err(err) => {
                toasts.push(format!("Could not load the save: {err}"));
                return;
            }
        }
    }
    commands.insert_resource(active);
    next.set(Screen::Loading);
}

fn tick_toasts(time: Res<Time>, mut toasts: ResMut<Toasts>) {
    for toast in &mut toasts.0 {
        toast.1 -= time.delta_secs();
    }
    toasts.0.retain(|t| t.1 > 0.0);
}

fn show_toasts(mut contexts: EguiContexts, toasts: Res<Toasts>) -> Result {
    if toasts.0.is_empty() {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    egui::Area::new(egui::Id::new("toasts"))
        .anchor(egui::Align2::CENTER_TOP, [0.0, 48.0])
        .order(egui::Order::Foreground)
        .show(ctx, |ui| {
            for (text, _) in &toasts.0 {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.label(egui::RichText::new(text).size(18.0));
                });
            }
        });
    Ok(())
}
