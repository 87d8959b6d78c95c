//! Benchmarks of open-ended sessions: engine time per turn, and commit time, on a large save.
//!
//! Engine time per turn (the scripted model answers instantly) and commit time, on a save holding
//! 10,000 observations and 1,000 facts.
//!
//! Targets (issue #6): engine time per turn under 5 ms; commit under 2 ms.
//! Model time is measured separately (the llm bench); here the scripted
//! backend answers at once, so what is timed is prompt building, rendering,
//! contract validation, the rules, state ops and the channel hops.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use loreloom::campaign::{self, system_rulesets};
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::rules::state::{Fact, Visibility};
use loreloom::session::play::{opening, run_turn};
use loreloom::session::turn::{Calibration, PlayerInput, SessionState};
use loreloom::store::{NewSession, SceneKind, Store};
use loreloom::transcript::Observation;
use serde_json::json;

#[path = "../tests/common/mod.rs"]
mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Replies for one turn with up to four NPCs.
fn replies() -> Script {
    Script {
        replies: common::scripted::turn_replies(0),
    }
}

/// Drowned Reach with 1,000 facts and 10,000 observations.
fn big_state() -> SessionState {
    let (c, report) = campaign::load(
        &root().join("campaigns/drowned-reach"),
        &[system_rulesets()],
    );
    let c = Arc::new(c.unwrap_or_else(|| panic!("{report}")));
    let mut state = opening(c, None, "small", "large", 1, Calibration::default()).expect("opens");
    for i in 0..1_000 {
        state.world.facts.push(Fact {
            subject: format!("subject_{}", i / 10),
            predicate: format!("predicate_{i}"),
            object: json!(format!("a remembered detail number {i}")),
            visibility: Visibility::default(),
        });
    }
    let ids: Vec<String> = state.campaign.characters.keys().cloned().collect();
    for i in 0..10_000u32 {
        let who = &ids[i as usize % ids.len()];
        state
            .observations
            .entry(who.clone())
            .or_default()
            .push(Observation {
                character_id: who.clone(),
                content: format!("observation {i}: something seen on the ferry"),
                importance: u8::try_from(i % 5 + 1).unwrap_or(1),
                reinforcement_count: i % 4,
                created_minute: f64::from(i) * 0.1,
            });
    }
    state.play_minutes = 1_000.0;
    state
}

fn input(n: u64) -> PlayerInput {
    PlayerInput {
        text: "I step aboard and grab the rail.".into(),
        whisper_to: None,
        action_id: format!("bench-{n}"),
        clarified: false,
        ruling: None,
    }
}

fn engine_turn(c: &mut Criterion) {
    let data = tempfile::tempdir().expect("temp dir");
    let prompts = PromptRegistry::load(root().join("prompts")).expect("prompts load");
    let gateway = Gateway::new(
        prompts,
        root().join("schemas"),
        ModelsConfig::default(),
        data.path(),
    );
    let state = big_state();
    let mut n = 0;
    let mut group = c.benchmark_group("session");
    group.sample_size(30);
    group.bench_function(
        "engine time per turn (scripted model, 10k observations, 1k facts)",
        |b| {
            b.iter_batched(
                || {
                    let backend = ScriptedBackend::new(replies());
                    gateway.register_script("small", backend.clone());
                    gateway.register_script("large", backend);
                    n += 1;
                    (state.clone(), input(n))
                },
                |(s, i)| black_box(run_turn(&gateway, s, i, |_| {}).expect("the turn runs")),
                BatchSize::LargeInput,
            );
        },
    );

    // Commit: a save that already holds 10,000 observations and 1,000 facts.
    let save = data.path().join("big.db");
    let mut world = state.world.clone();
    let scene = std::mem::take(&mut world.scene);
    let mut store = Store::create(
        &save,
        &NewSession {
            id: "bench".into(),
            campaign_id: "drowned-reach".into(),
            campaign_path: root().join("campaigns/drowned-reach"),
            scenario_id: None,
            ruleset_id: "default-2d6".into(),
            characters: state
                .campaign
                .characters
                .keys()
                .map(|k| (k.clone(), "npc".into()))
                .collect(),
            small_model_key: "small".into(),
            large_model_key: "large".into(),
            calibration: json!({}),
            prompt_versions: json!({}),
            seed: 1,
            scene,
            world,
            messages: state.stream.messages.clone(),
        },
    )
    .expect("save created");
    let backend = ScriptedBackend::new(replies());
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
    let template = run_turn(&gateway, state.clone(), input(0), |_| {}).expect("a turn");
    // Fill the save with the observations, 100 per turn.
    let all: Vec<Observation> = state.observations.values().flatten().cloned().collect();
    for (k, chunk) in all.chunks(100).enumerate() {
        let expected = store.session().expect("session").current_scene_id;
        let mut commit = loreloom::session::save_rows::turn_commit(
            &template,
            &input(1_000_000 + k as u64),
            &expected,
            SceneKind::Play,
        );
        commit.observations = chunk.to_vec();
        commit.messages.clear();
        store.commit_turn(&commit).expect("fill");
    }
    let mut k = 0u64;
    group.bench_function(
        "commit one turn (save with 10k observations, 1k facts)",
        |b| {
            b.iter_custom(|iters| {
                let mut timed = std::time::Duration::ZERO;
                for _ in 0..iters {
                    k += 1;
                    let expected = store.session().expect("session").current_scene_id;
                    let mut commit = loreloom::session::save_rows::turn_commit(
                        &template,
                        &input(2_000_000 + k),
                        &expected,
                        SceneKind::Play,
                    );
                    commit.messages.clear(); // turn ids would repeat; messages are a few rows
                    let start = std::time::Instant::now();
                    black_box(store.commit_turn(&commit).expect("commits"));
                    timed += start.elapsed();
                }
                timed
            });
        },
    );
    group.finish();
}

criterion_group!(benches, engine_turn);
criterion_main!(benches);
