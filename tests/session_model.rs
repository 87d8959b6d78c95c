//! Smoke test: three turns of the Drowned Reach with the real default model, into a real save.
//!
//! The model is SmolLM2-135M in-process; every stage goes through its real prompt and contract, and
//! every turn is committed to the save.
//!
//! `./run.sh test` installs the model first; run alone, this looks in
//! `$LORELOOM_DATA_DIR/models/` (or the user's data dir).
#![cfg(all(feature = "llama", feature = "store"))]

use std::path::{Path, PathBuf};
use std::time::Instant;

use loreloom::llm::Gateway;
use loreloom::llm::config::DEFAULT_MODEL_FILE;
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::play::{Progress, run_turn};
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::{Calibration, TurnResult};
use loreloom::store::Store;

#[test]
fn three_turns_with_the_default_model_commit_whole_turns() {
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    assert!(
        model.is_file(),
        "the default model is not installed at {}: run `./run.sh test` (it fetches it)",
        model.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("smoke.db");
    create_smoke_save(&save);
    let gateway = Gateway::open().expect("the gateway starts with the shipped prompts");
    let mut ctl = Controller::open(&save).unwrap();
    let lines = [
        "I pole the punt toward the sluice gate and look for the record room.",
        "1",
        "I ask Tamsin what she knows about the drowned bell.",
    ];
    for line in lines {
        let mut step = ctl.handle(line);
        // A clarification question is part of the game: answer it once with the same intention.
        for _ in 0..2 {
            let Step::Run(input) = step else {
                panic!("`{line}` did not start a turn: {step:?}");
            };
            let started = Instant::now();
            let mut first_token = None;
            let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |p| {
                if let Progress::Token(_) = p {
                    first_token.get_or_insert_with(|| started.elapsed());
                }
            });
            let calls = result.as_ref().map_or(0, |r| r.records.len());
            let report = ctl.finish(&input, result);
            eprintln!(
                "turn `{line}`: {:.1} s, first narration token after {:?}, {calls} model calls",
                started.elapsed().as_secs_f64(),
                first_token
            );
            match report {
                Report::Committed { result, .. } => {
                    check_committed(&gateway, &result);
                    break;
                }
                Report::Question(q) => {
                    eprintln!("  question: {q}");
                    step = ctl.handle(line);
                }
                other => panic!("the turn `{line}` did not commit: {other:?}"),
            }
        }
    }
    ctl.close();
    let store = Store::open(&save).unwrap();
    let info = store.session().unwrap();
    assert_eq!(info.scene_index, 3, "three turns committed");
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let calls = store
        .query_i64("SELECT count(*) FROM turn_events WHERE event_type = 'model_output'")
        .unwrap();
    assert!(calls >= 12, "every stage's call is recorded: {calls}");
}

/// A save of the Drowned Reach's low-water crossing, on the local model keys.
fn create_smoke_save(save: &Path) {
    create_save(&NewSave {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        save: Some(save.to_owned()),
        scenario: Some("low_water_crossing".into()),
        seed: Some(2026),
        small_model: "local-small".into(),
        large_model: "local-large".into(),
        calibration: Calibration {
            tone: "tense".into(),
            difficulty: "standard".into(),
            lines: vec!["harm to children shown".into()],
            veils: Vec::new(),
            npcs_per_turn: None,
        },
    })
    .unwrap();
}

/// A committed turn: choices for the player, a narration, and the drafts the model key asks for.
fn check_committed(gateway: &Gateway, result: &TurnResult) {
    let narration = loreloom::transcript::stream::narrations(&result.messages);
    eprintln!(
        "  narration: {narration:?}\n  choices{}: {:?}\n  refused: {:?}",
        if result.generic_choices {
            " (generic)"
        } else {
            ""
        },
        result.choices,
        result.refused
    );
    // Generated or, when the model offered nothing pickable, the generic ones.
    assert!(!result.choices.is_empty(), "the player has choices");
    assert!(
        narration.iter().any(|n| !n.trim().is_empty()),
        "the narrator wrote something"
    );
    // The built-in keys write the player's narration in
    // drafts (unless the data dir's models.ron says otherwise).
    let drafts = gateway.drafts_for("local-large");
    if drafts > 1 {
        let [choice] = result.drafts.as_slice() else {
            panic!("one drafted narration: {:?}", result.drafts)
        };
        eprintln!("  {}", choice.note);
        assert_eq!(choice.verdicts.len(), drafts as usize, "{}", choice.note);
    } else {
        assert!(result.drafts.is_empty(), "{:?}", result.drafts);
    }
}

/// The evaluation harness on the real default model: a short unattended
/// playthrough reports its metrics, and its save replays exactly, rendered
/// prompts, NPC activation and all (#40).
#[test]
fn an_unattended_playthrough_with_the_default_model_reports_and_replays_exactly() {
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    assert!(
        model.is_file(),
        "the default model is not installed at {}",
        model.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::open().expect("the gateway starts with the shipped prompts");
    let options = loreloom::eval::play::PlayOptions {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        scenario: None,
        turns: 2,
        runs: 1,
        moves: vec!["I ask Tamsin what she saw on the water.".into()],
        model: None,
        seed: 40,
        invalid_every: 2,
        saves: dir.path().join("saves"),
        embedder: None,
    };
    let report = loreloom::eval::play::play(&gateway, &options).unwrap();
    let turns = &report.runs[0].turns;
    assert_eq!(turns.len(), 2);
    assert_eq!(report.metrics.invalid_moves, 1, "{:?}", report.metrics);
    eprintln!(
        "{}",
        loreloom::eval::report::metrics_table(&report.metrics, None)
    );
    let played: Vec<_> = turns.iter().filter(|t| t.failed.is_none()).collect();
    assert!(!played.is_empty(), "a turn committed: {turns:?}");
    assert!(report.metrics.in_voice.is_some());
    let save = &report.runs[0].save;
    let last = Store::open(save).unwrap().session().unwrap().scene_index;
    let replay = loreloom::eval::replay::replay(
        save,
        1,
        last,
        &loreloom::session::replay::Overrides::default(),
    )
    .unwrap();
    assert_eq!(replay.differing(), 0, "{}", replay.markdown());
}
