//! Scripted sessions through the controller, and the save and gateway they play on.
//!
//! A new save of a campaign, a gateway on the shipped prompts, one turn played with a fresh script.

use std::path::{Path, PathBuf};

use loreloom::llm::scripted::Reply;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::play::run_turn;
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::{Calibration, TurnResult};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A new save of `campaign` (under `campaigns/`) at `dir/<name>.db`, on the model keys `small` and `large`.
pub fn new_save(dir: &Path, campaign: &str, scenario: Option<&str>, seed: u64) -> PathBuf {
    let save = dir.join(format!("{campaign}-{seed}.db"));
    let folder = if Path::new(campaign).is_absolute() {
        PathBuf::from(campaign)
    } else {
        root().join("campaigns").join(campaign)
    };
    create_save(&NewSave {
        campaign: folder,
        save: Some(save.clone()),
        scenario: scenario.map(str::to_owned),
        seed: Some(seed),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration: Calibration::default(),
    })
    .unwrap();
    save
}

/// A gateway on the shipped prompts and schemas, data under `dir`.
pub fn gateway(dir: &Path) -> Gateway {
    Gateway::new(
        PromptRegistry::load(root().join("prompts")).unwrap(),
        root().join("schemas"),
        ModelsConfig::default(),
        dir,
    )
}

/// As [`gateway`], with both tiers (`small`, `large`) asking for compact
/// prompts, as the default small model does.
pub fn compact_gateway(dir: &Path) -> Gateway {
    let mut models = ModelsConfig::default();
    let mut tier = models.models["local-large"].clone();
    tier.compact_prompts = true;
    models.models.insert("small".into(), tier.clone());
    models.models.insert("large".into(), tier);
    Gateway::new(
        PromptRegistry::load(root().join("prompts")).unwrap(),
        root().join("schemas"),
        models,
        dir,
    )
}

/// Serve both tiers from `replies` (a fresh script: nothing left over from before).
pub fn script(gateway: &Gateway, replies: Vec<Reply>) {
    let backend = ScriptedBackend::new(Script { replies });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
}

/// One turn of `line` through the controller on `replies`, committed; the
/// result and the first narrator prompt as one string.
pub fn turn(
    ctl: &mut Controller,
    gateway: &Gateway,
    line: &str,
    replies: Vec<Reply>,
) -> (TurnResult, String) {
    script(gateway, replies);
    let Step::Run(input) = ctl.handle(line) else {
        panic!("`{line}` did not run a turn")
    };
    let result = run_turn(gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
    let prompt: String = result
        .records
        .iter()
        .find(|r| r.stage == "narrate")
        .and_then(|r| r.first())
        .map(|a| a.messages.iter().map(|m| m.content.clone()).collect())
        .unwrap_or_default();
    assert!(matches!(
        ctl.finish(&input, Ok(result.clone())),
        Report::Committed { .. }
    ));
    (result, prompt)
}
