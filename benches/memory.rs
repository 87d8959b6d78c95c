//! Memory and lore benchmark: embedding latency, recall, lore retrieval and indexing, printed.
//!
//! Memory and lore benchmark (a bench binary printing figures and ratios): `MiniLM` embedding
//! latency, recall over 1,000 and 10,000 memories, lore retrieval over a 2,000-chunk index,
//! indexing the rich campaign. `cargo bench --bench memory`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loreloom::campaign::Campaign;
use loreloom::memory::embed::MiniLm;
use loreloom::memory::recall::{LoreIndex, LoreQuery, MemoryIndex, MemoryQuery};
use loreloom::memory::{Chunk, ChunkMeta, Embedder, MemoryEvent, Significance, default_model_dir};
use loreloom::session::remember::SessionMemory;
use loreloom::session::save_files::{NewSave, create_save, load_campaign};
use loreloom::session::turn::Calibration;
use loreloom::store::Store;

fn time<T>(runs: u32, mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(f());
    }
    start.elapsed() / runs
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

const SENTENCES: [&str; 8] = [
    "The ferry lanterns burned green halfway across the Reach.",
    "Hesper Vane hauled the rope without looking up.",
    "A page was cut from the toll ledger for the spring of the Drowning.",
    "Brinny Sedge keeps a knotted reed for every soul of the marsh.",
    "I ask the ferrywoman about the night the rope broke.",
    "The Board will open the Hollow Sluice before the flood crests.",
    "Tamsin trims the wicks and will not meet anyone's eye.",
    "Ned Fallow sweats by the stove and glances at the pipe.",
];

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let model = MiniLm::load(&default_model_dir()).unwrap_or_else(|e| panic!("{e}"));
    embedding(&model);
    let query = model
        .embed(&["what happened with the toll ledger"])
        .unwrap()
        .pop()
        .unwrap();
    recall(&model, &query);
    let campaign_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    let campaign = load_campaign(&campaign_dir).unwrap();
    let chunks = loreloom::memory::campaign_chunks(&campaign);
    lore(&model, &chunks, &query);
    indexing(model, campaign_dir, &campaign, &chunks);
}

/// One sentence, and a batch of 32.
fn embedding(model: &MiniLm) {
    model.embed(&SENTENCES).unwrap();
    let one = time(50, || model.embed(&[SENTENCES[4]]).unwrap());
    let batch: Vec<&str> = SENTENCES.iter().cycle().take(32).copied().collect();
    let b32 = time(5, || model.embed(&batch).unwrap());
    println!(
        "embedding: one sentence {:.2} ms (target 20 ms: {:.2}x), a batch of 32 {:.1} ms ({:.2} ms per sentence)",
        ms(one),
        ms(one) / 20.0,
        ms(b32),
        ms(b32) / 32.0
    );
}

/// Memories: real vectors of varied sentences, repeated with noise-free copies.
fn recall(model: &MiniLm, query: &[f32]) {
    let base = model.embed(&SENTENCES).unwrap();
    for n in [1_000usize, 10_000] {
        let mut index = MemoryIndex::default();
        for i in 0..n {
            let mut v = base[i % base.len()].clone();
            // Nudge each copy so ranks differ.
            v[i % 384] += 0.01;
            index.push(
                MemoryEvent {
                    summary: format!("memory {i}"),
                    characters: vec!["player".into(), format!("npc{}", i % 7)],
                    location: format!("place{}", i % 5),
                    significance: Significance::Medium,
                    episodic: i % 50 == 0,
                    action_type: "action".into(),
                    turn: i as u64,
                    play_session: 1,
                    scene_id: format!("s{i}"),
                },
                Some(&v),
            );
        }
        let q = MemoryQuery {
            threshold: 0.35,
            ..MemoryQuery::new("x")
        };
        let plain = time(200, || index.recall(&q, Some(query), None));
        let filtered = MemoryQuery {
            location: Some("place2".into()),
            characters: vec!["npc3".into()],
            ..q.clone()
        };
        let with_filters = time(200, || index.recall(&filtered, Some(query), None));
        let with_embedding = time(20, || {
            let v = model
                .embed(&["what happened with the toll ledger"])
                .unwrap()
                .pop()
                .unwrap();
            index.recall(&q, Some(&v), None)
        });
        println!(
            "recall over {n} memories: {:.3} ms (target 10 ms: {:.3}x), with filters {:.3} ms, including the query's embedding {:.2} ms",
            ms(plain),
            ms(plain) / 10.0,
            ms(with_filters),
            ms(with_embedding)
        );
    }
}

/// Lore: 2,000 chunks (the campaign's, repeated) ranked semantic + keywords.
fn lore(model: &MiniLm, chunks: &[Chunk], query: &[f32]) {
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let vectors = model.embed(&texts).unwrap();
    let mut big = LoreIndex::default();
    for i in 0..2_000 {
        let c = &chunks[i % chunks.len()];
        big.push(
            Chunk {
                id: format!("{}~{i}", c.id),
                meta: ChunkMeta { ..c.meta.clone() },
                ..c.clone()
            },
            Some(&vectors[i % chunks.len()]),
        );
    }
    let keywords: Vec<(String, f32)> = (0..50)
        .map(|i| {
            (
                format!("{}~{i}", chunks[i % chunks.len()].id),
                50.0 - f32::from(u8::try_from(i).unwrap()),
            )
        })
        .collect();
    let lq = LoreQuery {
        location: Some("toll_house".into()),
        entities: vec!["ned_fallow".into()],
        max_tokens: 3000,
        limit: 5,
        ..LoreQuery::default()
    };
    let lore = time(100, || big.retrieve(&lq, Some(query), &keywords));
    println!(
        "lore retrieval over 2,000 chunks: {:.3} ms (ranking; FTS5 below)",
        ms(lore)
    );
}

/// Indexing the rich campaign into a save, and a whole recall as a turn does it.
fn indexing(model: MiniLm, campaign_dir: PathBuf, campaign: &Arc<Campaign>, chunks: &[Chunk]) {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("bench.db");
    create_save(&NewSave {
        campaign: campaign_dir,
        save: Some(save.clone()),
        scenario: None,
        seed: Some(1),
        small_model: "s".into(),
        large_model: "l".into(),
        calibration: Calibration::default(),
    })
    .unwrap();
    let mut store = Store::open(&save).unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(model);
    let started = Instant::now();
    let memory = SessionMemory::open(&mut store, campaign, Some(embedder.clone())).unwrap();
    let indexing = started.elapsed();
    let fts = time(100, || {
        store
            .lore_keywords("who cut the page from the toll ledger", 50)
            .unwrap()
    });
    let state = loreloom::session::save_rows::state(&store, campaign.clone()).unwrap();
    let turn = time(20, || {
        memory.recall_for(&store, &state, "I ask Ned who cut the page from the ledger")
    });
    println!(
        "indexing the Drowned Reach ({} chunks, {} tokens): {:.2} s; FTS5 keyword query {:.3} ms; a turn's whole recall (embed + FTS5 + rank) {:.2} ms",
        memory.lore.len(),
        chunks.iter().map(|c| c.token_count).sum::<usize>(),
        indexing.as_secs_f64(),
        ms(fts),
        ms(turn)
    );
}
