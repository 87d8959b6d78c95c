//! Benchmarks of the story graph: load, validate and stats at scale, and one `choose` step.
//!
//! Load + validate + stats at 10,000 passages and on the fixtures.
//!
//! Targets (issue #2): 10k-passage load+validate under 500 ms; a `choose` step,
//! with entity-state and codex recomputation, under 50 µs.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use loreloom::story::{Player, Stats, Story, load_file, synthetic, validate, validate_file};

#[path = "../tests/common/mod.rs"]
mod common;

fn load_validate_stats(c: &mut Criterion) {
    let json =
        serde_json::to_string(&synthetic::story(10_000, 200)).expect("synthetic story serialises");
    let mut group = c.benchmark_group("load+validate+stats");
    group.sample_size(10);
    group.bench_function("synthetic 10k passages, 200 codewords", |b| {
        b.iter(|| {
            let file = serde_json::from_str(black_box(&json)).expect("synthetic story parses");
            let (story, report) = validate_file(file);
            let story = story.expect("synthetic story compiles");
            assert_eq!(report.errors(), 0);
            black_box(Stats::of(&story, report.walk.as_ref().expect("walked")))
        });
    });
    for name in ["keepers-bargain.json", "small-kindnesses.json"] {
        let path = common::fixture(name);
        group.bench_function(name, |b| {
            b.iter(|| {
                let loaded = load_file(&path).expect("fixture loads");
                let (story, report) = validate_file(loaded.file);
                black_box((story.map(|s| s.passage_count()), report.errors()))
            });
        });
    }
    group.finish();
}

fn choose_step(c: &mut Criterion) {
    let story =
        Arc::new(Story::compile(synthetic::story(10_000, 200)).expect("synthetic story compiles"));
    assert_eq!(validate(&story).errors(), 0);
    // A player some way in, holding a few codewords.
    let mut player = Player::new(story.clone());
    for _ in 0..200 {
        player
            .choose_number(1)
            .expect("the left road is always open");
    }
    c.bench_function("choose + entity state + codex (10k graph)", |b| {
        b.iter_batched_ref(
            || player.clone(),
            |p| {
                let step = p.choose_number(1).expect("open");
                let mut details = 0;
                for e in story.entities() {
                    details += p.entity_state(e).len();
                }
                black_box((step, details, p.codex().len()))
            },
            BatchSize::SmallInput,
        );
    });
}

criterion_group!(benches, load_validate_stats, choose_step);
criterion_main!(benches);
