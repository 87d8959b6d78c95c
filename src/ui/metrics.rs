//! Measurements for the window benchmark (`--measure FILE`): first screen, frame times, memory.
//!
//! Time to the title screen, frame times on the story stage and on a session's
//! while a turn streams and types out (mean, p95 and the slowest), resident memory.

use std::path::PathBuf;
use std::time::Duration;

use bevy::platform::time::Instant;
use bevy::prelude::*;
use serde::Serialize;

use super::options::GuiOptions;
use super::screens::Screen;
use super::session::reader::SessionReader;
use super::stage::Stage;
use crate::engine::session::{SceneView, TurnProgress};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Startup, start_measuring).add_systems(
        Last,
        (record_frame, write_on_exit)
            .chain()
            .run_if(resource_exists::<Metrics>),
    );
}

/// What the benchmark reads.
#[derive(Serialize, Debug, Default)]
struct Report {
    /// From process start to the first frame with the title screen (or the story) up.
    first_screen_ms: f64,
    /// Frame times on the play screen, excluding the first second after each passage change.
    frames: usize,
    frame_mean_ms: f64,
    frame_p95_ms: f64,
    passages: u64,
    /// Frame times on a session's screen while a turn is under way or its
    /// text is typing out (streaming narration, the typewriter, the dice).
    session_frames: usize,
    session_frame_mean_ms: f64,
    session_frame_p95_ms: f64,
    /// The slowest of those frames (a turn's commit lands in one of them).
    session_frame_max_ms: f64,
    /// The scene a session stood at on exit (turns committed, rewinds included).
    session_scene: i64,
    /// Resident set size at exit (Linux).
    rss_mb: f64,
}

#[derive(Resource, Debug)]
struct Metrics {
    path: PathBuf,
    started: Instant,
    first_screen: Option<Duration>,
    frames_ms: Vec<f64>,
    session_frames_ms: Vec<f64>,
    since_change: f32,
    last_presentations: u64,
    session_scene: i64,
}

fn start_measuring(mut commands: Commands, options: Res<GuiOptions>) {
    if let Some(path) = &options.measure {
        commands.insert_resource(Metrics {
            path: path.clone(),
            started: options.started,
            first_screen: None,
            frames_ms: Vec::new(),
            session_frames_ms: Vec::new(),
            since_change: 0.0,
            last_presentations: 0,
            session_scene: 0,
        });
    }
}

fn record_frame(
    mut metrics: ResMut<Metrics>,
    time: Res<Time<Real>>,
    screen: Res<State<Screen>>,
    stage: Res<Stage>,
    session: (Res<TurnProgress>, Res<SceneView>, Res<SessionReader>),
) {
    if metrics.first_screen.is_none()
        && matches!(
            screen.get(),
            Screen::Title | Screen::Playing | Screen::Session
        )
    {
        metrics.first_screen = Some(metrics.started.elapsed());
    }
    if *screen.get() == Screen::Session {
        let (progress, scene, reader) = session;
        if progress.busy || !reader.finished() {
            metrics
                .session_frames_ms
                .push(time.delta_secs_f64() * 1000.0);
        }
        metrics.session_scene = scene.scene_index;
        return;
    }
    if *screen.get() != Screen::Playing {
        return;
    }
    if stage.presentations != metrics.last_presentations {
        metrics.last_presentations = stage.presentations;
        metrics.since_change = 0.0;
        return;
    }
    metrics.since_change += time.delta_secs();
    if metrics.since_change > 1.0 {
        metrics.frames_ms.push(time.delta_secs_f64() * 1000.0);
    }
}

/// Count, mean and 95th percentile of frame times.
fn summary(frames_ms: &[f64]) -> (usize, f64, f64) {
    let mut sorted = frames_ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    let count = sorted.len();
    let mean = if count == 0 {
        0.0
    } else {
        sorted.iter().sum::<f64>() / count as f64
    };
    (
        count,
        mean,
        sorted.get(count * 95 / 100).copied().unwrap_or(0.0),
    )
}

fn resident_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn write_on_exit(mut exits: MessageReader<AppExit>, metrics: Res<Metrics>) {
    if exits.read().next().is_none() {
        return;
    }
    let (frames, frame_mean_ms, frame_p95_ms) = summary(&metrics.frames_ms);
    let (session_frames, session_frame_mean_ms, session_frame_p95_ms) =
        summary(&metrics.session_frames_ms);
    let session_frame_max_ms = metrics
        .session_frames_ms
        .iter()
        .copied()
        .fold(0.0, f64::max);
    let report = Report {
        first_screen_ms: metrics.first_screen.unwrap_or_default().as_secs_f64() * 1000.0,
        frames,
        frame_mean_ms,
        frame_p95_ms,
        passages: metrics.last_presentations,
        session_frames,
        session_frame_mean_ms,
        session_frame_p95_ms,
        session_frame_max_ms,
        session_scene: metrics.session_scene,
        rss_mb: resident_mb(),
    };
    match serde_json::to_vec_pretty(&report) {
        Ok(bytes) => {
            if let Err(err) = std::fs::write(&metrics.path, bytes) {
                error!(
                    "{}: could not write measurements: {err}",
                    metrics.path.display()
                );
            }
        }
        Err(err) => error!("could not encode measurements: {err}"),
    }
}
