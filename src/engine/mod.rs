//! Engine plugins: thin Bevy ECS adapters around the plain-Rust core, runnable headless.

pub mod llm;
#[cfg(feature = "store")]
pub mod session;
pub mod story_player;

use bevy::app::{App, Plugin};
use bevy::prelude::MinimalPlugins;

use crate::story::StoryPackage;

/// Everything the engine needs without a window: add it to a windowed app or to a headless one.
#[derive(Debug, Default)]
pub struct CorePlugin;

impl Plugin for CorePlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins((story_player::plugin, llm::plugin));
        #[cfg(feature = "store")]
        app.add_plugins(session::plugin);
    }
}

/// A headless engine playing `package`, for the terminal player and tests.
/// Drive it with [`App::update`]; it has no runner loop of its own.
pub fn headless_app(package: StoryPackage) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(CorePlugin)
        .insert_resource(story_player::ActiveStory::new(package));
    app.finish();
    app.cleanup();
    app
}
