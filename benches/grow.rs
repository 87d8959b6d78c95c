//! GROW's deterministic phases on synthetic SEED graphs, and the player's validation of them.
//!
//! The phases: weave, arcs, worlds, passages, codewords, choices.
//!
//! Targets (issue #23): a medium story (80–100 beats, 6 dilemmas) under
//! 200 ms; 500 beats under 2 s.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use loreloom::author::grow::{grow, synthetic, to_story};

fn grow_phases(c: &mut Criterion) {
    let mut group = c.benchmark_group("grow");
    group.sample_size(10);
    // 6 dilemmas × (3 shared + 2 × 6 own) + an opening = 91 beats, 64 arcs.
    // 6 dilemmas × (12 shared + 2 × 35 own) + an opening = 493 beats.
    for (name, shared, own) in [
        ("medium: 91 beats, 6 dilemmas", 3, 6),
        ("493 beats, 6 dilemmas", 12, 35),
    ] {
        let seeded = synthetic(6, shared, own);
        assert!(seeded.beats.len() > 80);
        group.bench_function(name, |b| {
            b.iter(|| black_box(grow(black_box(&seeded)).expect("grows")));
        });
        let grown = grow(&seeded).expect("grows");
        println!(
            "{name}: {} arcs, {} passages, {} choices, {} codewords",
            grown.arcs.len(),
            grown.passages.len(),
            grown.choices.len(),
            grown.codewords.len()
        );
        group.bench_function(format!("{name}, then the player's validation"), |b| {
            b.iter(|| {
                let grown = grow(&seeded).expect("grows");
                let (story, report) = loreloom::story::validate_file(to_story(&grown, &seeded));
                assert!(story.is_some());
                black_box(report.errors())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, grow_phases);
criterion_main!(benches);
