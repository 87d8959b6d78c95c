//! DRESS's built-in illustrator: one brief's picture per category, drawn and stored.
//!
//! Drawing is rasterising and PNG-encoding; storing is content-addressed; each picture's size
//! is printed.
//!
//! Target (issue #24): a picture well under a second on the CPU, so a
//! story of a hundred passages dresses in under a minute without an image
//! model.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use loreloom::author::dress::{BriefText, Direction, Figure, image_prompt};
use loreloom::author::illustrate::{Illustrator, Sketch, store};

fn sketches(c: &mut Criterion) {
    let mut group = c.benchmark_group("dress");
    group.sample_size(20);
    let direction = Direction {
        style: "ink wash".into(),
        medium: "brush and grey wash".into(),
        palette: vec![
            "storm grey".into(),
            "deep sea green".into(),
            "lamplight amber".into(),
        ],
        composition_notes: "low horizons".into(),
        negative_defaults: "photorealism".into(),
        aspect_ratio: "16:9".into(),
    };
    let figures = vec![
        Figure {
            entity: "mara".into(),
            kind: "character".into(),
            colours: vec!["oilskin yellow".into()],
            fragment: "Mara, a lean keeper in a yellow oilskin".into(),
        },
        Figure {
            entity: "lighthouse".into(),
            kind: "location".into(),
            colours: vec!["slate".into()],
            fragment: "Gannet Light, a squat stone tower".into(),
        },
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    for category in ["scene", "portrait", "vista", "item_detail"] {
        let brief = BriefText {
            category: category.into(),
            subject: "Mara at the lamp as the storm comes in".into(),
            composition: "low angle".into(),
            mood: "tense, cold".into(),
            negative: String::new(),
        };
        let prompt = image_prompt("brief::x", &direction, &brief, figures.clone());
        let png = Sketch.draw(&prompt).expect("drawn");
        println!("{category}: {} KiB", png.len() / 1024);
        group.bench_function(format!("draw a {category}"), |b| {
            b.iter(|| black_box(Sketch.draw(black_box(&prompt)).expect("drawn")));
        });
        group.bench_function(format!("draw and store a {category}"), |b| {
            b.iter(|| {
                let png = Sketch.draw(black_box(&prompt)).expect("drawn");
                black_box(store(dir.path(), &png).expect("stored"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, sketches);
criterion_main!(benches);
