//! Scripted play of a story for tests and demos: `--autoplay 1,2,1`, screenshots, `--exit`.
//!
//! Each passage is shown in full (text revealed, art loaded, a few frames
//! settled) before it is photographed and the next choice is taken.

use std::collections::VecDeque;
use std::path::PathBuf;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};

use super::options::GuiOptions;
use super::screens::{Screen, UiSystems};
use super::stage::Stage;
use crate::engine::story_player::{StoryCommand, StoryNotice};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Startup, make_script).add_systems(
        Update,
        run_script
            .in_set(UiSystems::Present)
            .run_if(resource_exists::<Script>),
    );
}

/// Frames to let a fully shown passage settle (egui registers textures a frame late).
const SETTLE_FRAMES: u32 = 12;
/// Give up after this many frames in one phase.
const PATIENCE_FRAMES: u32 = 3_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Waiting for the next passage to be presented.
    AwaitPassage,
    Settling(u32),
    /// A screenshot is being captured; `last` when the script ends after it.
    Capturing {
        last: bool,
    },
    /// The script is done; stay on screen this many more seconds, then finish.
    Holding(f32),
    Finished,
}

/// The scripted run.
#[derive(Resource, Debug)]
struct Script {
    choices: VecDeque<usize>,
    each: Option<PathBuf>,
    last: Option<PathBuf>,
    exit: bool,
    phase: Phase,
    shots: usize,
    waited: u32,
    /// `Stage::presentations` when the current passage was first seen.
    seen: u64,
    /// Photograph the title screen (no story was opened).
    on_title: bool,
    /// Seconds to stay after the script before quitting.
    hold: f32,
}

/// Set by the screenshot observer.
#[derive(Resource, Debug, Default)]
struct Captured(bool);

fn make_script(mut commands: Commands, options: Res<GuiOptions>) {
    if options.autoplay.is_none()
        && options.screenshot.is_none()
        && options.screenshot_each.is_none()
    {
        return;
    }
    if let Some(dir) = &options.screenshot_each
        && let Err(err) = std::fs::create_dir_all(dir)
    {
        error!(
            "{}: cannot create the screenshot folder: {err}",
            dir.display()
        );
    }
    commands.insert_resource(Captured::default());
    commands.insert_resource(Script {
        choices: options.autoplay.clone().unwrap_or_default().into(),
        each: options.screenshot_each.clone(),
        last: options.screenshot.clone(),
        exit: options.exit,
        phase: Phase::AwaitPassage,
        shots: 0,
        waited: 0,
        seen: 0,
        on_title: options.open.is_none(),
        hold: options.hold,
    });
}

fn shoot(commands: &mut Commands, path: PathBuf) {
    info!("screenshot → {}", path.display());
    commands
        .spawn(Screenshot::primary_window())
        .observe(save_to_disk(path))
        .observe(|_: On<ScreenshotCaptured>, mut captured: ResMut<Captured>| captured.0 = true);
}

fn run_script(
    time: Res<Time<Real>>,
    mut commands: Commands,
    mut script: ResMut<Script>,
    mut captured: ResMut<Captured>,
    mut stage: ResMut<Stage>,
    screen: Res<State<Screen>>,
    mut notices: MessageReader<StoryNotice>,
    mut story: MessageWriter<StoryCommand>,
    mut exit: MessageWriter<AppExit>,
) {
    if let Some(StoryNotice(text)) = notices.read().last() {
        error!("autoplay stopped: {text}");
        exit.write(AppExit::from_code(2));
        script.phase = Phase::Finished;
        return;
    }
    let here = if script.on_title {
        Screen::Title
    } else {
        Screen::Playing
    };
    if *screen.get() != here || script.phase == Phase::Finished {
        return;
    }
    script.waited += 1;
    if script.waited > PATIENCE_FRAMES {
        error!(
            "autoplay stopped: nothing happened for {PATIENCE_FRAMES} frames in {:?}",
            script.phase
        );
        exit.write(AppExit::error());
        script.phase = Phase::Finished;
        return;
    }
    stage.show_everything();
    match script.phase {
        Phase::AwaitPassage => {
            if script.on_title || stage.presentations != script.seen {
                script.seen = stage.presentations;
                script.phase = Phase::Settling(SETTLE_FRAMES);
                script.waited = 0;
            }
        }
        Phase::Settling(0) => {
            script.waited = 0;
            let last = script.choices.is_empty();
            if let Some(dir) = script.each.clone() {
                script.shots += 1;
                shoot(&mut commands, dir.join(format!("{:03}.png", script.shots)));
                captured.0 = false;
                script.phase = Phase::Capturing { last };
            } else if let (true, Some(path)) = (last, script.last.clone()) {
                shoot(&mut commands, path);
                captured.0 = false;
                script.phase = Phase::Capturing { last: true };
            } else {
                advance(&mut script, &mut story, &mut exit);
            }
        }
        Phase::Settling(n) => script.phase = Phase::Settling(n - 1),
        Phase::Capturing { last } => {
            if !captured.0 {
                return;
            }
            captured.0 = false;
            script.waited = 0;
            if last && let Some(path) = script.last.take() {
                // The last passage also goes to the single --screenshot file.
                if script.each.is_some() {
                    shoot(&mut commands, path);
                    return;
                }
            }
            advance(&mut script, &mut story, &mut exit);
        }
        Phase::Holding(left) => {
            script.waited = 0;
            if left <= 0.0 {
                finish(&mut script, &mut exit);
            } else {
                script.phase = Phase::Holding(left - time.delta_secs());
            }
        }
        Phase::Finished => {}
    }
}

fn finish(script: &mut Script, exit: &mut MessageWriter<AppExit>) {
    script.phase = Phase::Finished;
    if script.exit {
        exit.write(AppExit::Success);
    }
}

/// Take the next scripted choice, or finish.
fn advance(
    script: &mut Script,
    story: &mut MessageWriter<StoryCommand>,
    exit: &mut MessageWriter<AppExit>,
) {
    if let Some(n) = script.choices.pop_front() {
        story.write(StoryCommand::Choose(n));
        script.phase = Phase::AwaitPassage;
    } else if script.hold > 0.0 {
        script.phase = Phase::Holding(script.hold);
    } else {
        finish(script, exit);
    }
}
