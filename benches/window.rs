//! The window benchmark (a bench binary printing figures): first screen, frame times, memory.
//!
//! Time to the first screen, frame time at 1280×720, memory after 50 passages;
//! on a session's screen, frame time while narration streams and types out
//! (mean, p95, and the slowest frame, where a turn's commit lands), and memory
//! after 50 turns.
//!
//! Runs the release `loreloom` under Xvfb with Mesa's software Vulkan
//! (lavapipe), so frame times are those of a CPU renderer: a floor for real
//! GPUs. Targets (issue #3): first screen under 2 s, steady frame time under
//! 16 ms, resident memory under 400 MB after 50 passages; (issue #22) frame
//! time under 16 ms at 720p while a session's narration streams.

use std::path::Path;
use std::process::Command;

#[path = "../tests/common/mod.rs"]
mod common;

/// `session play` of a new Drowned Reach save in the window: `turns` typed
/// moves answered by the scripted model, `pace_ms` between its words, read
/// along at the default text speed or shown at once.
fn measure_session(turns: usize, pace_ms: u64, read_along: bool, dir: &Path) -> serde_json::Value {
    let save = dir.join(format!("session-{turns}.db"));
    common::new_drowned_reach_save(&save, 3);
    let replies: Vec<_> = (1..=turns)
        .flat_map(common::scripted::turn_replies)
        .collect();
    let model = dir.join(format!("replies-{turns}.json"));
    std::fs::write(
        &model,
        serde_json::to_vec(&loreloom::llm::Script { replies }).expect("encodes"),
    )
    .expect("writes");
    let lines: Vec<String> = (1..=turns)
        .map(|n| format!("I walk the quay and look at lantern {n}."))
        .collect();
    let script = dir.join(format!("lines-{turns}.txt"));
    std::fs::write(&script, lines.join("\n") + "\n").expect("writes");
    let pace = pace_ms.to_string();
    let mut args = vec![
        "play",
        save.to_str().expect("UTF-8 temp path"),
        "--window",
        "--size",
        "1280x720",
        "--script",
        script.to_str().expect("UTF-8 temp path"),
        "--model-script",
        model.to_str().expect("UTF-8 temp path"),
        "--model-pace",
        &pace,
    ];
    if read_along {
        args.push("--read-along");
    }
    measure("session", &args, dir)
}

/// `loreloom COMMAND ARGS --exit --measure FILE` under Xvfb; the measurements.
fn measure(command: &str, args: &[&str], dir: &Path) -> serde_json::Value {
    let report = dir.join("measure.json");
    let status = Command::new("xvfb-run")
        .args([
            "-a",
            "-s",
            "-screen 0 1920x1080x24",
            env!("CARGO_BIN_EXE_loreloom"),
            command,
        ])
        .args(args)
        .args([
            "--exit",
            "--measure",
            report.to_str().expect("UTF-8 temp path"),
        ])
        .env("LORELOOM_DATA_DIR", dir)
        .status()
        .expect("xvfb-run starts (install xvfb, xauth, mesa-vulkan-drivers, libvulkan1)");
    assert!(status.success(), "loreloom failed: {status}");
    serde_json::from_str(&std::fs::read_to_string(&report).expect("measurements written"))
        .expect("measurements are JSON")
}

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("window benchmark: run with `cargo bench --bench window`");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    // `cargo bench --bench window -- session` measures only the session screen.
    let only_sessions = std::env::args().any(|a| a == "session");
    if !only_sessions {
        stories(dir.path());
    }
    sessions(dir.path());
}

/// The story player: first screen, frame time, memory after 50 passages.
fn stories(dir: &Path) {
    let first = measure(
        "play",
        &["--screenshot", dir.join("t.png").to_str().unwrap()],
        dir,
    );
    println!(
        "first screen (title):        {:>8.0} ms  (target < 2000)",
        first["first_screen_ms"].as_f64().unwrap_or(0.0)
    );

    let story = common::default_story();
    let steady = measure(
        "play",
        &[
            story.to_str().unwrap(),
            "--autoplay",
            "1",
            "--hold",
            "6",
            "--size",
            "1280x720",
        ],
        dir,
    );
    println!(
        "frame time at 1280x720:      {:>8.1} ms mean, {:.1} ms p95 over {} frames  (target < 16)",
        steady["frame_mean_ms"].as_f64().unwrap_or(0.0),
        steady["frame_p95_ms"].as_f64().unwrap_or(0.0),
        steady["frames"]
    );

    let package = dir.join("long");
    std::fs::create_dir_all(&package).expect("package dir");
    let long = loreloom::story::synthetic::story(400, 20);
    std::fs::write(
        package.join("story.json"),
        serde_json::to_vec(&long).expect("encodes"),
    )
    .expect("writes");
    let fifty = vec!["1"; 50].join(",");
    let memory = measure(
        "play",
        &[package.to_str().unwrap(), "--autoplay", &fifty],
        dir,
    );
    println!(
        "resident memory after {} passages: {:>6.0} MB  (target < 400)",
        memory["passages"],
        memory["rss_mb"].as_f64().unwrap_or(0.0)
    );
}

/// The session screen: frame time while narration streams, memory after 50 turns.
fn sessions(dir: &Path) {
    // A session: three turns whose narration streams at ~16 words a second
    // (SmolLM2-135M's pace here) and types out at the default text speed.
    let streaming = measure_session(3, 60, true, dir);
    println!(
        "session, while a turn streams: {:>6.1} ms mean, {:.1} ms p95, {:.1} ms max over {} frames  (target < 16)",
        streaming["session_frame_mean_ms"].as_f64().unwrap_or(0.0),
        streaming["session_frame_p95_ms"].as_f64().unwrap_or(0.0),
        streaming["session_frame_max_ms"].as_f64().unwrap_or(0.0),
        streaming["session_frames"]
    );
    let long = measure_session(50, 0, false, dir);
    println!(
        "session, memory after {} turns: {:>6.0} MB  (target < 400)",
        long["session_scene"],
        long["rss_mb"].as_f64().unwrap_or(0.0)
    );
}
