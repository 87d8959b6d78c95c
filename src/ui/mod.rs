//! The windowed visual-novel presentation (feature `gui`): screens, stage, panels, audio and overlays.
//!
//! Only this module imports `bevy_egui`, `bevy_kira_audio` and render types. It
//! reacts to the engine's messages (`PresentPassage`, `CodexUnlocked`,
//! `StoryNotice`) and sends `StoryCommand`s; the story itself lives in
//! `engine::story_player::ActiveStory`.

#![expect(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "pixel and layout arithmetic on small, non-negative values"
)]
#![expect(
    clippy::struct_excessive_bools,
    reason = "settings and panel toggles are independent on/off switches"
)]

mod assets;
mod audio;
mod autoplay;
mod backdrop;
mod backlog;
mod codex;
pub mod fonts;
mod library;
mod markdown;
mod metrics;
mod overlay;
#[cfg(target_family = "wasm")]
mod page;
mod portrait;
mod preview;
mod redraw;
mod saves_panel;
mod screens;
mod session_reader;
mod session_screen;
mod settings;
mod skills_panel;
mod stage;
mod title;

use std::path::PathBuf;
use std::process::ExitCode;

use bevy::asset::{AssetMetaCheck, AssetPlugin, UnapprovedPathMode};
use bevy::diagnostic::FrameTimeDiagnosticsPlugin;
use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;

use crate::engine::CorePlugin;

/// What the command line asked of the window.
#[derive(Resource, Debug, Clone)]
pub struct GuiOptions {
    /// Folders to list stories from (each story package inside), plus single story paths.
    pub library: Vec<PathBuf>,
    /// Open this story at once instead of showing the title screen.
    pub open: Option<PathBuf>,
    /// Play these choice numbers, then stop (scripted mode).
    pub autoplay: Option<Vec<usize>>,
    /// Save a screenshot of the last passage shown.
    pub screenshot: Option<PathBuf>,
    /// Save a screenshot of every passage shown into this folder.
    pub screenshot_each: Option<PathBuf>,
    /// Quit when the script is done.
    pub exit: bool,
    /// Show the author sidebar.
    pub preview: bool,
    /// Window size in logical pixels.
    pub window: (u32, u32),
    /// Panels open from the start.
    pub show: StartPanels,
    /// Write measurements (time to first screen, frame times, memory) here at exit.
    pub measure: Option<PathBuf>,
    /// Seconds to stay on screen after scripted play before quitting.
    pub hold: f32,
    /// When the process started, for the measurements.
    pub started: bevy::platform::time::Instant,
    /// Open this session save at once (maybe scripted).
    pub session: Option<SessionLaunch>,
}

pub use session_screen::SessionLaunch;

/// Panels to open at start (for streamers who always want the overlay, and for screenshots).
#[derive(Debug, Clone, Copy, Default)]
pub struct StartPanels {
    pub codex: bool,
    pub backlog: bool,
    pub debug: bool,
    pub settings: bool,
}

/// Open the window and run until the player quits.
pub fn run(options: GuiOptions) -> ExitCode {
    let (width, height) = options.window;
    let mut app = App::new();
    let plugins = DefaultPlugins.build();
    // Natively `main` already routes logs through tracing; in the browser
    // Bevy's own sends them (and panics) to the console.
    #[cfg(not(target_family = "wasm"))]
    let plugins = plugins.disable::<bevy::log::LogPlugin>();
    app.add_plugins(
        plugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "Loreloom".into(),
                    resolution: WindowResolution::new(width, height),
                    // The page's canvas, sized by the page (web build).
                    canvas: Some("#loreloom".into()),
                    fit_canvas_to_parent: true,
                    ..default()
                }),
                ..default()
            })
            .set(AssetPlugin {
                // Story packages live anywhere on disk; their files load by absolute path.
                unapproved_path_mode: UnapprovedPathMode::Allow,
                meta_check: AssetMetaCheck::Never,
                ..default()
            }),
    )
    .add_plugins((
        EguiPlugin::default(),
        bevy_kira_audio::AudioPlugin,
        FrameTimeDiagnosticsPlugin::default(),
        CorePlugin,
    ))
    .insert_resource(options)
    .add_plugins(plugin);
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(code) => ExitCode::from(code.get()),
    }
}

/// Every presentation plugin.
fn plugin(app: &mut App) {
    app.add_plugins((
        screens::plugin,
        settings::plugin,
        library::plugin,
        assets::plugin,
        title::plugin,
        stage::plugin,
        codex::plugin,
        backlog::plugin,
        saves_panel::plugin,
        audio::plugin,
        overlay::plugin,
        preview::plugin,
        autoplay::plugin,
        metrics::plugin,
        redraw::plugin,
    ))
    .add_plugins((
        session_screen::plugin,
        session_reader::plugin,
        skills_panel::plugin,
        backdrop::plugin,
    ));
    #[cfg(target_family = "wasm")]
    app.add_plugins(page::plugin);
}

/// Engine assets shipped with Loreloom (sound effects), resolved at run time.
#[cfg(not(target_family = "wasm"))]
fn engine_asset(relative: &str) -> PathBuf {
    let here = PathBuf::from("assets").join(relative);
    if here.exists() {
        return std::fs::canonicalize(&here).unwrap_or(here);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(relative)
}

/// In the browser: beneath the asset server's `assets/`, fetched from the page's own origin.
#[cfg(target_family = "wasm")]
fn engine_asset(relative: &str) -> PathBuf {
    PathBuf::from(relative)
}
