//! Unattended playthroughs: the automatic player plays N turns, R times, each run a real save.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::facts::{self, Context, TurnFacts};
use super::player::{Move, Player};
use super::report::{PlayReport, Run, Setup};
use crate::llm::Gateway;
use crate::memory::Embedder;
use crate::session::controller::{Controller, Report, Step};
use crate::session::save_files::{NewSave, create_save, load_campaign};
use crate::session::turn::Calibration;

/// What to play.
#[derive(Clone)]
pub struct PlayOptions {
    pub campaign: PathBuf,
    pub scenario: Option<String>,
    pub turns: usize,
    pub runs: usize,
    /// Typed moves, in order (then the player makes its own).
    pub moves: Vec<String>,
    /// The model key every call goes to (both tiers); `None`: the defaults.
    pub model: Option<String>,
    /// Run `r` plays with seed `seed + r`.
    pub seed: u64,
    /// Every `invalid_every`-th move is planted invalid (0: none).
    pub invalid_every: usize,
    /// Where the runs' saves go.
    pub saves: PathBuf,
    /// The sentence embedder for lore and memory (`None`: keywords and recency).
    pub embedder: Option<Arc<dyn Embedder>>,
}

/// Why a playthrough could not be played (a failed turn is a finding, not this).
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error(transparent)]
    Session(#[from] crate::session::error::ControllerError),
    #[error("cannot make the folder {}: {source}", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The model keys a playthrough's saves use.
fn keys(options: &PlayOptions) -> (String, String) {
    options.model.clone().map_or_else(
        || ("local-small".to_owned(), "local-large".to_owned()),
        |k| (k.clone(), k),
    )
}

/// Six-word runs of the narrator corpus's answers, when it is installed.
fn corpus_runs() -> HashSet<String> {
    let path = crate::files::resource_dir("training").join("data/train.jsonl");
    let Ok(text) = crate::files::read_to_string(&path) else {
        return HashSet::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("stage").and_then(serde_json::Value::as_str) == Some("narrate"))
        .filter_map(|v| {
            v.get("messages")?
                .as_array()?
                .last()?
                .get("content")?
                .as_str()
                .map(facts::runs)
        })
        .flatten()
        .collect()
}

/// Plays `options.runs` runs of `options.turns` turns each through `gateway`.
pub fn play(gateway: &Gateway, options: &PlayOptions) -> Result<PlayReport, PlayError> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.saves).map_err(|source| PlayError::Folder {
        path: options.saves.clone(),
        source,
    })?;
    let campaign = load_campaign(&options.campaign)?;
    let corpus = corpus_runs();
    let (small, large) = keys(options);
    let mut runs = Vec::new();
    for r in 0..options.runs {
        let seed = options.seed + r as u64;
        let save = options.saves.join(format!("run-{}.db", r + 1));
        if save.exists() {
            std::fs::remove_file(&save).map_err(|source| PlayError::Folder {
                path: save.clone(),
                source,
            })?;
        }
        let run_started = Instant::now();
        let new = NewSave {
            campaign: options.campaign.clone(),
            save: Some(save.clone()),
            scenario: options.scenario.clone(),
            seed: Some(seed),
            small_model: small.clone(),
            large_model: large.clone(),
            calibration: Calibration::default(),
        };
        create_save(&new)?;
        let mut ctl = Controller::open_with(&save, options.embedder.clone())?;
        let mut player = Player::new(seed, options.moves.clone(), options.invalid_every);
        let mut said = HashSet::new();
        let mut turns = Vec::new();
        for turn in 1..=options.turns {
            let mv = player.next(&ctl.choices, &campaign, &ctl.state.world);
            let facts = play_turn(gateway, &mut ctl, turn, mv, &corpus, &mut said);
            if facts.outcome == Some(crate::session::continuity::Outcome::Blocked) {
                player.ruled_out(&facts.mv.text);
            }
            turns.push(facts);
        }
        ctl.close();
        runs.push(Run {
            save,
            seed,
            seconds: run_started.elapsed().as_secs_f64(),
            turns,
        });
    }
    let setup = Setup {
        campaign: campaign.manifest.title.clone(),
        // Absolute, so a sheet written from another folder names the
        // campaign's people and places.
        campaign_path: std::path::absolute(&options.campaign)
            .unwrap_or_else(|_| options.campaign.clone()),
        scenario: options.scenario.clone(),
        model: options.model.clone(),
        weights: super::report::weights_of(&[small.as_str(), large.as_str()]),
        seed: options.seed,
        turns: options.turns,
        invalid_every: options.invalid_every,
    };
    Ok(PlayReport::new(
        setup,
        runs,
        started.elapsed().as_secs_f64(),
    ))
}

/// One turn of the automatic player: the move, the referee's question
/// answered if it asks one, a failed turn narrated by the fallback.
fn play_turn(
    gateway: &Gateway,
    ctl: &mut Controller,
    turn: usize,
    mv: Move,
    corpus: &HashSet<String>,
    said: &mut HashSet<String>,
) -> TurnFacts {
    let before = ctl.state.clone();
    let mut clarified = false;
    let line = mv.text.clone();
    for _ in 0..2 {
        let Step::Run(input) = ctl.handle(&line) else {
            break;
        };
        let outcome =
            crate::session::play::run_turn(gateway, ctl.state.clone(), input.clone(), |_| {});
        let commit_started = Instant::now();
        let report = ctl.finish(&input, outcome);
        let commit_ms = commit_started.elapsed().as_secs_f64() * 1000.0;
        match report {
            Report::Question(_) if !clarified => {
                // Seed 001: one question at most; the player answers it by
                // saying again what they do (the turn then goes on).
                clarified = true;
            }
            Report::Committed {
                result,
                scene_index,
                ..
            } => {
                let facts = {
                    let mut ctx = Context {
                        campaign: &before.campaign,
                        before: &before,
                        corpus,
                        said,
                    };
                    facts::of_turn(
                        turn,
                        scene_index,
                        mv,
                        clarified,
                        &result,
                        commit_ms,
                        &mut ctx,
                    )
                };
                ctl.compress_with(gateway);
                return facts;
            }
            Report::Failed(e) => return failed(turn, ctl, mv, clarified, &e.to_string()),
            other => return failed(turn, ctl, mv, clarified, &format!("{other:?}")),
        }
    }
    failed(turn, ctl, mv, clarified, "the move was not played")
}

/// A turn that failed: the fallback narrates it so the run goes on.
fn failed(turn: usize, ctl: &mut Controller, mv: Move, clarified: bool, why: &str) -> TurnFacts {
    let scene_index = match ctl.handle("/fallback") {
        Step::Report(Report::Committed { scene_index, .. }) => scene_index,
        _ => ctl.scene_index(),
    };
    TurnFacts {
        turn,
        scene_index,
        mv,
        outcome: None,
        clarified,
        failed: Some(why.to_owned()),
        narrations: Vec::new(),
        contradictions: Vec::new(),
        outcome_honoured: true,
        choices: ctl.choices.clone(),
        generic_choices: false,
        ops_proposed: 0,
        ops_refused: 0,
        cost: facts::Cost::default(),
        lore: facts::Lore::default(),
        place: String::new(),
        present: Vec::new(),
        clocks: Vec::new(),
        fired: Vec::new(),
        fired_narrated: 0,
        appended: 0,
        retold: 0,
        retold_kept_second: 0,
        introduced: Vec::new(),
        held: Vec::new(),
        threads: Vec::new(),
        beats: Vec::new(),
    }
}

/// The saves of a report folder (`DIR/saves`).
pub fn saves_dir(out: &Path) -> PathBuf {
    out.join("saves")
}
