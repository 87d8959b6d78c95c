//! Benchmarks of SHIP on a 10,000-passage synthetic story, to every format SHIP writes.
//!
//! Each format is timed writing alone, and with the validation SHIP runs first, and the files to
//! disk.
//!
//! Target (issue #24): a 10,000-passage story to every format under 5 s.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use loreloom::ship::Format;

const FORMATS: [Format; 7] = [
    Format::Package,
    Format::Questfoundry,
    Format::Html,
    Format::Ink,
    Format::Markdown,
    Format::Epub,
    Format::Twee,
];

fn ship(c: &mut Criterion) {
    let file = loreloom::story::synthetic::story(10_000, 40);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut group = c.benchmark_group("ship");
    group.sample_size(10);
    for format in FORMATS {
        group.bench_function(format!("10000 passages to {format:?}"), |b| {
            b.iter(|| {
                black_box(
                    format
                        .write(black_box(&file), dir.path())
                        .expect("written")
                        .0
                        .len(),
                )
            });
        });
    }
    group.bench_function("10000 passages: validate, then every format to disk", |b| {
        b.iter(|| {
            let (_, report) = loreloom::story::validate_file(file.clone());
            assert_eq!(report.errors(), 0);
            for format in FORMATS {
                loreloom::ship::ship(&file, dir.path(), format, dir.path()).expect("written");
            }
        });
    });
    group.finish();
}

criterion_group!(benches, ship);
criterion_main!(benches);
