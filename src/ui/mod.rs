//! The windowed visual-novel presentation (feature `gui`): screens, stage, panels, audio, overlays.
//!
//! Only this module imports `bevy_egui`, `bevy_kira_audio` and render types. It
//! reacts to the engine's messages (`PresentPassage`, `CodexUnlocked`,
//! `StoryNotice`) and sends `StoryCommand`s; the story itself lives in
//! `engine::story_player::ActiveStory`.
//!
//! Each file is a plugin (`pub(super) fn plugin`) except the helpers
//! `widgets`, `markdown`, `portrait`, `fonts` and `options`; `session/` is a
//! feature folder whose `mod.rs` only adds its children's plugins. Within
//! `Update` the screens run in `screens::UiSystems` order, after the engine's sets.

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
mod backlog;
pub mod fonts;
mod library;
mod markdown;
mod metrics;
mod options;
mod overlay;
#[cfg(target_family = "wasm")]
mod page;
mod portrait;
mod preview;
mod redraw;
mod saves_panel;
mod screens;
mod session;
mod settings;
mod stage;
mod story_codex;
mod title;
mod widgets;

use std::process::ExitCode;

use bevy::asset::{AssetMetaCheck, AssetPlugin, UnapprovedPathMode};
use bevy::diagnostic::FrameTimeDiagnosticsPlugin;
use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;

use crate::engine::CorePlugin;

pub use options::{GuiOptions, SessionLaunch, StartPanels};

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
        story_codex::plugin,
        backlog::plugin,
        saves_panel::plugin,
        audio::plugin,
        overlay::plugin,
        preview::plugin,
        autoplay::plugin,
        metrics::plugin,
        redraw::plugin,
    ))
    .add_plugins(session::plugin);
    #[cfg(target_family = "wasm")]
    app.add_plugins(page::plugin);
}
