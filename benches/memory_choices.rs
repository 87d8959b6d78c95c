//! Seed 002 SC-034: the share of a real model's offered choices that match a stored memory.
//!
//! Seed 002 SC-034, memory-driven choices: a 30-turn Drowned Reach session whose choices come from
//! the real default model (every other stage scripted), measuring the share of offered choices that
//! match a stored memory (`MiniLM` cosine ≥ 0.7, and at lower bars). `cargo bench --bench
//! memory_choices`; the choices prompt is rendered in the compact form the default model gets
//! (`FORM=full` for the long one).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loreloom::llm::backend::Backend;
use loreloom::llm::open_backend;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::play::run_turn;
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::Calibration;

#[allow(dead_code)]
#[path = "../tests/common/scripted.rs"]
mod scripted;

#[path = "common/router.rs"]
mod router;
use router::Router;

const ACTIONS: [&str; 10] = [
    "I ask Hesper why the lanterns burn green",
    "I search the toll house ledgers for the spring of the Drowning",
    "I ask Tamsin where she gets the lamp oil",
    "I watch the crowd on the quay as the Patience sets out",
    "I ask Ned Fallow about the page cut from the ledger",
    "I follow Aldous Crane to the Sluice Board hall",
    "I look at Osric's rope-axe in the winch-house",
    "I ask Brinny Sedge about the forty-one names",
    "I check the height of the Sallow on the brass gauge",
    "I tell Hesper what I found in the ledger",
];

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let turns: usize = std::env::var("TURNS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir().expect("a temp dir");
    let save = new_save(dir.path());
    let gateway = router_gateway(turns);
    let mut ctl = Controller::open(&save).expect("the save opens");
    assert!(
        ctl.memory.has_embedder(),
        "./run.sh test installs the embedder"
    );
    let bars = [0.7_f32, 0.5, 0.35];
    let mut hits = [0usize; 3];
    let mut offered = 0usize;
    let mut failed = 0usize;
    let mut best_sum = 0.0f32;
    let mut choice_time = Duration::ZERO;
    let mut generic = 0;
    println!("turn | choices | best memory match per choice");
    for n in 0..turns {
        let line = ACTIONS[n % ACTIONS.len()];
        let Step::Run(input) = ctl.handle(line) else {
            failed += 1;
            continue;
        };
        let started = Instant::now();
        let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {});
        let Ok(result) = result else {
            failed += 1;
            let _ = ctl.finish(&input, result);
            continue;
        };
        choice_time += result
            .records
            .iter()
            .filter(|r| r.stage == "choices")
            .map(|r| r.total)
            .sum::<Duration>();
        let _ = started;
        // Memories stored before this turn (the turn's own is written at commit).
        // Generic choices (the stage failed or offered nothing pickable) are not generated ones.
        generic += usize::from(result.generic_choices);
        let scores: Vec<f32> = if ctl.memory.memories.is_empty() || result.generic_choices {
            Vec::new()
        } else {
            result
                .choices
                .iter()
                .map(|c| ctl.memory.support(c))
                .collect()
        };
        println!(
            "{n:>4} | {} | {}",
            result.choices.len(),
            result
                .choices
                .iter()
                .zip(&scores)
                .map(|(c, s)| format!("{s:.2} {c:?}"))
                .collect::<Vec<_>>()
                .join("; ")
        );
        for s in &scores {
            offered += 1;
            best_sum += s;
            for (i, bar) in bars.iter().enumerate() {
                if s >= bar {
                    hits[i] += 1;
                }
            }
        }
        if !matches!(ctl.finish(&input, Ok(result)), Report::Committed { .. }) {
            failed += 1;
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "counts")]
    let share = |h: usize| h as f64 / offered.max(1) as f64;
    #[expect(clippy::cast_precision_loss, reason = "counts")]
    let (mean_best, per_turn) = (
        best_sum / offered.max(1) as f32,
        choice_time.as_secs_f64() / turns as f64,
    );
    println!(
        "SC-034: {offered} choices scored over {turns} turns ({failed} turns failed, {generic} offered the generic choices instead); share matching a stored memory: {:.1}% at cosine >= 0.7 (target 80%), {:.1}% at >= 0.5, {:.1}% at >= 0.35; mean best match {:.3}; choices stage {:.1} s per turn",
        100.0 * share(hits[0]),
        100.0 * share(hits[1]),
        100.0 * share(hits[2]),
        mean_best,
        per_turn
    );
}

/// A fresh Drowned Reach save (the green night, seed 34) in `dir`.
fn new_save(dir: &Path) -> PathBuf {
    let save = dir.join("choices.db");
    create_save(&NewSave {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        save: Some(save.clone()),
        scenario: Some("green_night".into()),
        seed: Some(34),
        small_model: "router".into(),
        large_model: "router".into(),
        calibration: Calibration::default(),
    })
    .expect("the save is created");
    save
}

/// A gateway whose model `router` sends the choices stage to the real
/// default model and answers every other stage from a script of `turns` turns.
fn router_gateway(turns: usize) -> Gateway {
    let standard = Gateway::open().expect("the gateway starts");
    let data = standard.data_dir().to_path_buf();
    let mut router = standard
        .models()
        .get("local-small", &data)
        .expect("models.ron has local-small")
        .clone();
    router.compact_prompts = std::env::var("FORM").map_or(true, |f| f != "full");
    let spec = router.backend.clone();
    let mut models = ModelsConfig::default();
    models.models.insert("router".into(), router);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let gateway = Gateway::new(
        PromptRegistry::load(root.join("prompts")).expect("prompts load"),
        root.join("schemas"),
        models,
        &data,
    );
    let replies = (0..turns).flat_map(scripted::turn_replies).collect();
    gateway.register_backend("router", move || {
        Ok(Box::new(Router {
            real: open_backend(&spec, &data)?,
            script: ScriptedBackend::new(Script { replies }),
            // The choices stage on the real model, every other stage scripted.
            to_real: Box::new(|request| request.stage == "choices"),
        }) as Box<dyn Backend>)
    });
    gateway
}
