//! Scripted play of a session (`--script`, for Xvfb tests and the window bench).
//!
//! The player's lines go in one by one, a photograph comes out. The story
//! player's counterpart is `ui::autoplay`.

use std::collections::VecDeque;
use std::path::PathBuf;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::RequestRedraw;

use super::codex_window::SessionCodexView;
use super::reader::SessionReader;
use super::scenery::SessionScenery;
use super::skills_panel::{SettingsForm, SkillsPanel};
use crate::engine::session::{ActiveSession, SessionInput, TurnProgress};
use crate::ui::options::GuiOptions;
use crate::ui::screens::{Screen, UiSystems};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Startup, make_script).add_systems(
        Update,
        run_script
            .in_set(UiSystems::Present)
            .run_if(in_state(Screen::Session)),
    );
}

/// Scripted play of a session.
#[derive(Resource, Debug)]
pub struct SessionScript {
    lines: VecDeque<String>,
    /// Read each turn at the player's pace instead of all at once.
    read_along: bool,
    screenshot: Option<PathBuf>,
    /// Quit when the script is done.
    pub exit: bool,
    settle: u32,
    shot_taken: bool,
    waited: u32,
}

/// The command line's script (its lines, or none for a screenshot alone).
fn make_script(options: Res<GuiOptions>, mut commands: Commands) {
    let Some(launch) = &options.session else {
        return;
    };
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

/// Frames to let a finished turn settle before the next scripted line or the screenshot.
const SETTLE_FRAMES: u32 = 20;
/// Give up on a turn after this many frames (a scripted model answers in a few).
const PATIENCE_FRAMES: u32 = 100_000;

/// The panels a script may press open and shut.
#[derive(SystemParam)]
struct Panels<'w> {
    reader: ResMut<'w, SessionReader>,
    codex: ResMut<'w, SessionCodexView>,
    skills: ResMut<'w, SkillsPanel>,
}

/// Each line once the last turn has been read and the screen has settled;
/// at the end, the photograph and the exit.
fn run_script(
    script: Option<ResMut<SessionScript>>,
    progress: Res<TurnProgress>,
    (scenery, time): (Res<SessionScenery>, Res<Time>),
    mut panels: Panels,
    session: Option<Res<ActiveSession>>,
    mut inputs: MessageWriter<SessionInput>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
    mut redraw: MessageWriter<RequestRedraw>,
) {
    let Some(mut script) = script else { return };
    redraw.write(RequestRedraw);
    // A script reads each turn to its end at once, or page by page at the
    // player's text speed (turning each page as soon as it is shown).
    let reader = &mut panels.reader;
    reader.hurry = !script.read_along;
    if script.read_along && !reader.finished() {
        if reader.revealed() {
            reader.advance(false);
        }
        script.settle = 0;
        return;
    }
    if progress.busy {
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
        if let Some(line) = press(&line, &mut panels, session.as_deref(), &mut commands) {
            inputs.write(SessionInput(line));
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

/// A line of the script: the player's (returned, to be sent), or, with a
/// colon, a press of what the window offers.
fn press(
    line: &str,
    panels: &mut Panels,
    session: Option<&ActiveSession>,
    commands: &mut Commands,
) -> Option<String> {
    let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
    match head {
        ":backlog" => panels.reader.backlog = true,
        ":codex" => panels.codex.open = true,
        // The skills panel (K), and the Skills settings screen.
        ":skills" => panels.skills.open = true,
        ":skill-settings" => panels.skills.settings = Some(SettingsForm::open(session)),
        ":close" => {
            panels.reader.backlog = false;
            panels.reader.slots = None;
            panels.codex.open = false;
            panels.skills.open = false;
            panels.skills.settings = None;
        }
        // "Return here" on the backlog's n-th turn.
        ":return" => panels.reader.press_return = rest.trim().parse().ok(),
        ":shot" => {
            commands
                .spawn(Screenshot::primary_window())
                .observe(save_to_disk(PathBuf::from(rest.trim())));
        }
        _ => return Some(line.to_owned()),
    }
    None
}
