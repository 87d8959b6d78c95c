//! Window benchmark (a bench binary printing figures): time to the first screen, frame time at 1280×720, memory after 50 passages.
//!
//! Runs the release `loreloom` under Xvfb with Mesa's software Vulkan
//! (lavapipe), so frame times are those of a CPU renderer: a floor for real
//! GPUs. Targets (issue #3): first screen under 2 s, steady frame time under
//! 16 ms, resident memory under 400 MB after 50 passages.

use std::path::Path;
use std::process::Command;

#[path = "../tests/common/mod.rs"]
mod common;

fn measure(args: &[&str], dir: &Path) -> serde_json::Value {
    let report = dir.join("measure.json");
    let status = Command::new("xvfb-run")
        .args([
            "-a",
            "-s",
            "-screen 0 1920x1080x24",
            env!("CARGO_BIN_EXE_loreloom"),
            "play",
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

    let first = measure(
        &["--screenshot", dir.path().join("t.png").to_str().unwrap()],
        dir.path(),
    );
    println!(
        "first screen (title):        {:>8.0} ms  (target < 2000)",
        first["first_screen_ms"].as_f64().unwrap_or(0.0)
    );

    let story = common::default_story();
    let steady = measure(
        &[
            story.to_str().unwrap(),
            "--autoplay",
            "1",
            "--hold",
            "6",
            "--size",
            "1280x720",
        ],
        dir.path(),
    );
    println!(
        "frame time at 1280x720:      {:>8.1} ms mean, {:.1} ms p95 over {} frames  (target < 16)",
        steady["frame_mean_ms"].as_f64().unwrap_or(0.0),
        steady["frame_p95_ms"].as_f64().unwrap_or(0.0),
        steady["frames"]
    );

    let package = dir.path().join("long");
    std::fs::create_dir_all(&package).expect("package dir");
    let long = loreloom::story::synthetic::story(400, 20);
    std::fs::write(
        package.join("story.json"),
        serde_json::to_vec(&long).expect("encodes"),
    )
    .expect("writes");
    let fifty = vec!["1"; 50].join(",");
    let memory = measure(
        &[package.to_str().unwrap(), "--autoplay", &fifty],
        dir.path(),
    );
    println!(
        "resident memory after {} passages: {:>6.0} MB  (target < 400)",
        memory["passages"],
        memory["rss_mb"].as_f64().unwrap_or(0.0)
    );
}
