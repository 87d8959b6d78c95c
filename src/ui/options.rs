//! What the command line asked of the window: the options `ui::run` starts it with.

use std::path::PathBuf;

use bevy::prelude::*;

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

/// Panels to open at start (for streamers who always want the overlay, and for screenshots).
#[derive(Debug, Clone, Copy, Default)]
pub struct StartPanels {
    pub codex: bool,
    pub backlog: bool,
    pub debug: bool,
    pub settings: bool,
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
