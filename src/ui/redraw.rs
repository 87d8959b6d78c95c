//! Frames only when something moves: the window sleeps while the player reads.
//!
//! It wakes for typing, loading, toasts, scripts and the frame after a click's command.

use bevy::prelude::*;
use bevy::window::RequestRedraw;
use bevy::winit::WinitSettings;
use bevy_egui::{EguiInput, EguiPreUpdateSet, egui};

use super::options::GuiOptions;
use super::screens::{Screen, StartStory, Toasts};
use super::settings::Settings;
use super::stage::Stage;
use crate::engine::story_player::StoryCommand;

pub(super) fn plugin(app: &mut App) {
    // Input, window events and egui animations wake the app by themselves (bevy_egui asks for redraws).
    app.insert_resource(WinitSettings::desktop_app())
        .add_systems(Last, keep_awake)
        .add_systems(
            PreUpdate,
            drop_unchanged_modifiers
                .after(EguiPreUpdateSet::ProcessInput)
                .before(EguiPreUpdateSet::BeginPass),
        );
}

/// Ask for another frame while something on screen changes by the frame.
fn keep_awake(
    options: Res<GuiOptions>,
    screen: Res<State<Screen>>,
    stage: Res<Stage>,
    toasts: Res<Toasts>,
    settings: Res<Settings>,
    mut story_commands: MessageReader<StoryCommand>,
    mut starts: MessageReader<StartStory>,
    mut redraw: MessageWriter<RequestRedraw>,
) {
    // A click's command (a choice, Begin, Continue) is written in the egui pass
    // and carried out in the next frame's Update: ask for that frame, or it waits
    // for the next input (up to a minute while the window is unfocused).
    let acted = story_commands.read().count() > 0 || starts.read().count() > 0;
    let scripted = options.autoplay.is_some()
        || options.screenshot.is_some()
        || options.screenshot_each.is_some()
        || options.measure.is_some()
        || options.hold > 0.0;
    let typing = *screen.get() == Screen::Playing && !stage.revealed();
    let waiting_to_advance =
        *screen.get() == Screen::Playing && settings.auto_advance && stage.revealed();
    if scripted
        || acted
        || typing
        || waiting_to_advance
        || *screen.get() == Screen::Loading
        || !toasts.0.is_empty()
    {
        redraw.write(RequestRedraw);
    }
}

/// `bevy_egui` reports the modifier keys every frame, and egui repaints on any
/// event, so the window never slept. Pass the report on only when it changed.
fn drop_unchanged_modifiers(
    mut inputs: Query<&mut EguiInput>,
    mut last: Local<Option<egui::Modifiers>>,
) {
    for mut input in &mut inputs {
        input.0.events.retain(|event| match event {
            egui::Event::ModifiersChanged(modifiers) => {
                let changed = *last != Some(*modifiers);
                *last = Some(*modifiers);
                changed
            }
            _ => true,
        });
    }
}
