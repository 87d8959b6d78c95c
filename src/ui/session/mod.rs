//! A session in the window: launching it, session zero, the play screen and its panels.
//!
//! A feature folder in `bevy_new_2d`'s form: each file is a plugin, and this
//! one only adds them. `standing` is a helper of the play screen's side panel.

mod backdrop;
mod codex_window;
pub(super) mod launch;
pub(super) mod reader;
pub(super) mod scenery;
mod screen;
mod script;
mod skills_panel;
mod slots;
mod standing;
pub(super) mod zero;

use bevy::prelude::*;

pub(super) fn plugin(app: &mut App) {
    app.add_plugins((
        launch::plugin,
        zero::plugin,
        screen::plugin,
        reader::plugin,
        codex_window::plugin,
        scenery::plugin,
        backdrop::plugin,
        script::plugin,
        skills_panel::plugin,
        slots::plugin,
    ));
}
