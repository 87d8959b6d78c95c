//! Whole turns with the real default model (SmolLM2-135M in-process), release build: wall time per turn and time from submitting an action to the first narration token. `cargo bench --bench session_model`.

use std::path::PathBuf;
use std::time::Instant;

use loreloom::llm::Gateway;
use loreloom::session::controller::{Controller, NewSave, Report, Step, create_save};
use loreloom::session::play::{Progress, run_turn};
use loreloom::session::turn::Calibration;

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let save = dir.path().join("bench.db");
    create_save(&NewSave {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        save: Some(save.clone()),
        scenario: Some("low_water_crossing".into()),
        seed: Some(2026),
        small_model: "local-small".into(),
        large_model: "local-large".into(),
        calibration: Calibration::default(),
    })
    .expect("the save is created");
    let gateway = Gateway::standard().expect("the gateway starts");
    let mut ctl = Controller::open(&save).expect("the save opens");
    let lines = [
        "I pole the punt toward the sluice gate.",
        "I ask Tamsin what she knows about the drowned bell.",
        "I climb down into the bell pit with the lantern.",
        "I read the gate records by lantern light.",
    ];
    println!("turn | wall s | first narration token s | model calls | NPCs acted | tokens out");
    let mut walls = Vec::new();
    let mut firsts = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let mut step = ctl.handle(line);
        let started = Instant::now();
        let mut first = None;
        let mut calls = 0;
        let mut acted = 0;
        let mut tokens = 0;
        let mut committed = false;
        for _ in 0..2 {
            let Step::Run(input) = step else { break };
            let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |p| {
                if let Progress::Token(_) = p {
                    first.get_or_insert_with(|| started.elapsed());
                }
            });
            if let Ok(r) = &result {
                calls += r.records.len();
                acted = r.acted.len();
                tokens += r
                    .records
                    .iter()
                    .flat_map(|c| &c.attempts)
                    .map(|a| a.tokens_out)
                    .sum::<u32>();
            }
            match ctl.finish(&input, result) {
                Report::Question(_) => step = ctl.handle(line),
                Report::Committed { .. } => {
                    committed = true;
                    break;
                }
                other => {
                    println!("turn {n}: {other:?}");
                    break;
                }
            }
        }
        let wall = started.elapsed().as_secs_f64();
        let first = first.map_or(f64::NAN, |d| d.as_secs_f64());
        println!("{n:>4} | {wall:>6.1} | {first:>23.2} | {calls:>11} | {acted:>10} | {tokens:>10}");
        // Only committed turns count towards the means; a failed turn is reported above.
        if committed {
            walls.push(wall);
            firsts.push(first);
        }
    }
    println!("{} of {} turns committed", walls.len(), lines.len());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / f64::from(u32::try_from(v.len()).unwrap_or(1));
    println!(
        "mean: {:.1} s per turn (target 5 s: {:.1}x), {:.2} s to the first narration token (target 1 s: {:.1}x)",
        mean(&walls),
        mean(&walls) / 5.0,
        mean(&firsts),
        mean(&firsts)
    );
}
