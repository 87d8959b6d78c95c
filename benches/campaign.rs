//! Benchmarks of campaigns and rules: loading, dice parsing and rolling, and state ops.
//!
//! Validate + load the rich campaign; parse a million dice expressions; roll; apply state ops.
//!
//! Targets (issue #5, seed 002 §6.2.13): `campaign validate` under 2 s for a
//! 20-file campaign (Drowned Reach has 50); dice parsing fast enough that a
//! million expressions is not worth thinking about.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use loreloom::campaign::{self, system_rulesets};
use loreloom::rules::{Dice, DiceExpr, Modifiers, OpKind, StateOp};

/// A million expressions of the shapes the seeds use, cycling through a fixed set.
const EXPRESSIONS: [&str; 8] = [
    "2d6",
    "1d20+3",
    "3d6-1",
    "2d6+mod",
    "1d20+10-shyness+chemistry",
    "2d6+stat+skill+sentiment+memory",
    "4d8+2d4-7",
    "1d100",
];

fn load_campaign(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    let rulesets = [system_rulesets()];
    let mut group = c.benchmark_group("campaign");
    group.sample_size(20);
    group.bench_function("validate+load drowned-reach (50 files)", |b| {
        b.iter(|| {
            let (loaded, report) = campaign::load(black_box(&dir), &rulesets);
            assert!(!report.has_errors());
            black_box(loaded.map(|c| c.characters.len()))
        });
    });
    group.finish();
}

fn dice(c: &mut Criterion) {
    let mut group = c.benchmark_group("dice");
    group.sample_size(10);
    group.bench_function("parse 1,000,000 expressions", |b| {
        b.iter(|| {
            let mut terms = 0usize;
            for i in 0..1_000_000 {
                let expr = DiceExpr::parse(black_box(EXPRESSIONS[i % EXPRESSIONS.len()]))
                    .expect("bench expressions parse");
                terms += expr.terms().len();
            }
            black_box(terms)
        });
    });
    let mut mods = Modifiers::new();
    mods.insert("stat".into(), 2);
    mods.insert("skill".into(), 1);
    mods.insert("sentiment".into(), -1);
    mods.insert("memory".into(), 0);
    let expr = DiceExpr::parse("2d6+stat+skill+sentiment+memory").expect("parses");
    let mut dice = Dice::seeded(7);
    group.bench_function("roll 2d6+stat+skill+sentiment+memory", |b| {
        b.iter(|| black_box(dice.roll(&expr, &mods).expect("rolls")));
    });
    group.finish();
}

fn state_ops(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    let (loaded, report) = campaign::load(&dir, &[system_rulesets()]);
    let camp = loaded.unwrap_or_else(|| panic!("{report}"));
    let mut world = camp.world.clone();
    if let Some(s) = camp.default_scenario() {
        world.scene.clone_from(&s.scene_seed);
    }
    let clock = camp.world.clocks.keys().next().expect("a clock").clone();
    let ops = [
        StateOp::new(OpKind::Set, "scene.mood", "uneasy"),
        StateOp::new(OpKind::Increment, "scene.failure_streak", 1),
        StateOp::new(OpKind::TickClock, &format!("clocks.{clock}"), 1),
        StateOp::new(OpKind::AddTag, "characters.player.tags", "soaked"),
        StateOp::new(OpKind::Set, "scene.failure_streak", 0),
    ];
    c.bench_function("apply 5 state ops (one turn's batch, validated)", |b| {
        b.iter(|| {
            let mut w = world.clone();
            black_box(w.apply(&ops, &camp.ruleset).expect("ops apply"))
        });
    });
}

criterion_group!(benches, load_campaign, dice, state_ops);
criterion_main!(benches);
