//! Whole turns with the real default model: latency, tokens and calls per turn, before #21 and now.
//!
//! Whole turns with the real default model (SmolLM2-135M in-process with its narrator adapter),
//! release build: submit → first narration token, → choices, → commit, tokens, cached share and
//! calls per turn, p50 and p90, in one run: as before #21 (every NPC acts, the referee rules picked
//! choices too, resolve's v1 prompt with the whole rulebook, one lane, four prompt caches), with
//! the diet of #21 on one lane (`npcs_per_turn` 2, picked choices roll their ruling at once,
//! resolve v2, the bookkeeping after the choices), on two lanes (the bookkeeping on the model's
//! second lane), and now (eight prompt caches a lane, and the next turn's prompts primed between
//! turns).
//!
//! `cargo bench --bench session_model` (`TURNS=n`, default 5; `ONLY=now` skips the earlier runs;
//! `REFUSALS=1` prints each turn's state changes, and what the rules refused and why; `SPANS=1`
//! each call's start, first token, end, tokens and cached prefix; `PROMPTS=dir` writes every call's
//! prompt and reply there, to see where consecutive prompts part).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loreloom::eval::metrics::percentile as pct;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry};
use loreloom::session::budget::TurnBudget;
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::play::{Progress, run_turn};
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::{Calibration, TurnResult};

/// The player's lines: free text and picked choices, mixed.
const LINES: [&str; 5] = [
    "I ask Hesper Vane why the lanterns burn green.",
    "1",
    "I follow Tamsin to the lantern store.",
    "2",
    "I read the ferry's ledger by lantern light.",
];

#[derive(Default)]
struct Figures {
    first: Vec<f64>,
    choices: Vec<f64>,
    commit: Vec<f64>,
    tokens_in: Vec<f64>,
    tokens_out: Vec<f64>,
    cached: Vec<f64>,
    calls: Vec<f64>,
    acted: Vec<f64>,
    /// Model-proposed state ops, and those the rules refused.
    ops: (usize, usize),
    failed: usize,
}

impl Figures {
    /// Turn `n`'s row printed (and with `SPANS=1` each call's span), its figures kept.
    fn record(
        &mut self,
        n: usize,
        line: &str,
        first: Option<Duration>,
        commit: f64,
        b: &TurnBudget,
        acted: usize,
        ops: (usize, usize),
    ) {
        if std::env::var_os("SPANS").is_some() {
            for s in &b.spans {
                println!(
                    "     {:>6.1}–{:>6.1} s (first token {:>6.1}) {:<22} in {:>5} (cached {:>5}) out {:>4}",
                    s.start_ms / 1000.0,
                    s.end_ms / 1000.0,
                    s.first_token_ms / 1000.0,
                    s.stage,
                    s.tokens_in,
                    s.cached_tokens,
                    s.tokens_out
                );
            }
        }
        let first = first.map_or(f64::NAN, |d| d.as_secs_f64());
        let choices = b.choices_ms.map_or(f64::NAN, |ms| ms / 1000.0);
        println!(
            "{:>4} | {first:>13.1} | {choices:>9.1} | {commit:>8.1} | {:>5} | {acted:>4} | {:>9} ({:>3.0}%) | {:>3} | {line}",
            n + 1,
            b.calls(),
            b.tokens_in(),
            b.cached_share() * 100.0,
            b.tokens_out()
        );
        self.first.push(first);
        self.choices.push(choices);
        self.commit.push(commit);
        #[expect(clippy::cast_precision_loss, reason = "token counts of one turn")]
        {
            self.tokens_in.push(b.tokens_in() as f64);
            self.tokens_out.push(b.tokens_out() as f64);
            self.calls.push(b.calls() as f64);
            self.acted.push(acted as f64);
        }
        self.cached.push(b.cached_share());
        self.ops.0 += ops.0;
        self.ops.1 += ops.1;
    }
}

fn mean(v: &[f64]) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "a handful of turns")]
    let n = v.len().max(1) as f64;
    v.iter().sum::<f64>() / n
}

/// How the turns are played: as before #21, as at its second stop (one lane:
/// the bookkeeping after the choices), or now (the bookkeeping on a second lane).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Before,
    OneLane,
    /// Two lanes with four prompt caches each (#21's third stop).
    FourSlots,
    Now,
}

/// The standard gateway, with every model key on one lane unless `mode` is `Now`.
fn gateway(mode: Mode) -> Gateway {
    let data_dir = loreloom::files::data_dir();
    let mut models = ModelsConfig::load(&data_dir).expect("models.ron reads");
    for m in models.models.values_mut() {
        if matches!(mode, Mode::Before | Mode::OneLane) {
            m.lanes = 1;
        }
        if mode != Mode::Now
            && let loreloom::llm::BackendConfig::Llama { slots, .. } = &mut m.backend
        {
            *slots = 4;
        }
    }
    let prompts =
        PromptRegistry::load(loreloom::files::resource_dir("prompts")).expect("prompts load");
    Gateway::new(
        prompts,
        loreloom::files::resource_dir("schemas"),
        models,
        data_dir,
    )
}

fn play(label: &str, mode: Mode, turns: usize) -> Figures {
    let dir = tempfile::tempdir().expect("a temp dir");
    let save = dir.path().join("bench.db");
    create_bench_save(&save);
    let gateway = gateway(mode);
    let mut ctl = Controller::open(&save).expect("the save opens");
    if mode == Mode::Before {
        gateway.pin_version("resolve", "v1");
        // A save from before the setting: every activated NPC acts, in the old order.
        ctl.state.calibration.npcs_per_turn = None;
    }
    let mut f = Figures::default();
    println!("\n{label}");
    // Now: the next turn's prompts are read in while the player reads (here:
    // waited for, as a player reading the last narration would).
    let prime = |ctl: &Controller| {
        if mode == Mode::Now {
            let started = Instant::now();
            for done in loreloom::session::play::prime(&gateway, &ctl.state) {
                let _ = done.recv();
            }
            println!("     primed in {:.1} s", started.elapsed().as_secs_f64());
        }
    };
    prime(&ctl);
    println!(
        "turn | first words s | choices s | commit s | calls | NPCs | tokens in (cached) | out | line"
    );
    for (n, line) in LINES.iter().cycle().take(turns).enumerate() {
        let mut step = ctl.handle(line);
        let started = Instant::now();
        let mut first = None;
        let mut committed = None;
        for _ in 0..2 {
            let Step::Run(mut input) = step else { break };
            if mode == Mode::Before {
                // Before #21 the referee ruled every move, picked or typed.
                input.ruling = None;
            }
            let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |p| {
                if let Progress::Token(_) = p {
                    first.get_or_insert_with(|| started.elapsed());
                }
            });
            let budget = result.as_ref().ok().map(|r| {
                (
                    r.budget.clone(),
                    r.acted.len(),
                    (r.ops_proposed, r.ops_refused),
                )
            });
            if let Ok(r) = &result {
                trace(n, r);
            }
            match ctl.finish(&input, result) {
                // A question: answered by saying the move again.
                Report::Question(_) => step = ctl.handle(line),
                Report::Committed { .. } => {
                    committed = budget;
                    break;
                }
                other => {
                    println!("turn {}: {other:?}", n + 1);
                    break;
                }
            }
        }
        let commit = started.elapsed().as_secs_f64();
        if committed.is_some() {
            prime(&ctl);
        }
        let Some((b, acted, ops)) = committed else {
            f.failed += 1;
            continue;
        };
        f.record(n, line, first, commit, &b, acted, ops);
    }
    f
}

/// A Drowned Reach save on the green night with two NPCs acting a turn, on the local model keys.
fn create_bench_save(save: &Path) {
    create_save(&NewSave {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        save: Some(save.to_owned()),
        scenario: Some("green_night".into()),
        seed: Some(2026),
        small_model: "local-small".into(),
        large_model: "local-large".into(),
        calibration: Calibration {
            npcs_per_turn: Some(2),
            ..Calibration::default()
        },
    })
    .expect("the save is created");
}

/// `PROMPTS=dir` writes every call's prompt and reply of turn `n` there; `REFUSALS=1` prints
/// the turn's state changes and what the rules refused.
fn trace(n: usize, r: &TurnResult) {
    if let Some(dir) = std::env::var_os("PROMPTS") {
        for (i, record) in r.records.iter().enumerate() {
            let Some(attempt) = record.attempts.first() else {
                continue;
            };
            let mut text = String::new();
            for m in &attempt.messages {
                let _ = writeln!(text, "<{}>\n{}", m.role.as_str(), m.content);
            }
            let _ = writeln!(text, "<reply>\n{}", attempt.raw_output);
            let file = PathBuf::from(&dir).join(format!("t{}-{i:02}-{}.txt", n + 1, record.stage));
            std::fs::write(file, text).expect("the prompt dump is written");
        }
    }
    if std::env::var_os("REFUSALS").is_some() {
        for why in &r.refused {
            println!("     refused: {why}");
        }
        for c in &r.changes {
            println!("     changed: {} ({} → {})", c.op, c.before, c.after);
        }
    }
}

fn report(label: &str, f: &Figures) {
    println!(
        "{label:28} first words p50 {:>5.1} s p90 {:>5.1} s | choices p50 {:>5.1} s p90 {:>5.1} s | commit p50 {:>5.1} s p90 {:>5.1} s | {:>5.0} tokens in ({:>3.0}% cached), {:>4.0} out, {:>4.1} calls, {:.1} NPCs per turn | refused state ops {}/{} | {} failed",
        pct(&f.first, 0.5),
        pct(&f.first, 0.9),
        pct(&f.choices, 0.5),
        pct(&f.choices, 0.9),
        pct(&f.commit, 0.5),
        pct(&f.commit, 0.9),
        mean(&f.tokens_in),
        mean(&f.cached) * 100.0,
        mean(&f.tokens_out),
        mean(&f.calls),
        mean(&f.acted),
        f.ops.1,
        f.ops.0,
        f.failed
    );
}

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let turns: usize = std::env::var("TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LINES.len());
    // `ONLY=now` skips the earlier runs (say, to measure another models.ron
    // through `LORELOOM_DATA_DIR`).
    let only_now = std::env::var("ONLY").is_ok_and(|v| v == "now");
    let runs = [
        (
            "before #21",
            "before #21: every NPC acts, the referee rules every move (resolve v1)",
            Mode::Before,
        ),
        (
            "one lane",
            "one lane: npcs_per_turn 2, picked choices roll at once, resolve v2, the bookkeeping after the choices",
            Mode::OneLane,
        ),
        (
            "two lanes, four caches",
            "two lanes: as one lane, and the bookkeeping on the model's second lane (four prompt caches a lane)",
            Mode::FourSlots,
        ),
        (
            "now",
            "now: two lanes, eight prompt caches a lane, each context as long as its calls need, the next turn's prompts primed while the player reads",
            Mode::Now,
        ),
    ];
    let figures: Vec<(&str, Figures)> = runs
        .iter()
        .map(|(short, label, mode)| {
            let skipped = only_now && *mode != Mode::Now;
            let f = if skipped {
                Figures::default()
            } else {
                play(label, *mode, turns)
            };
            (*short, f)
        })
        .collect();
    println!("\ntargets: first words p50 ≤ 2 s, choices p50 ≤ 10 s, commit p50 ≤ 20 s");
    for (short, f) in &figures {
        report(short, f);
    }
}
