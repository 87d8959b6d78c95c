//! A session's save files: which campaign they play, where they live, the newest, a new one begun.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::ControllerError;
use super::play::opening;
use super::turn::{Calibration, SessionState};
use crate::campaign::{self, Campaign, system_rulesets};
use crate::store::{NewSession, Store};

/// Loads a campaign with the system rulesets, or explains why it cannot play.
pub fn load_campaign(dir: &Path) -> Result<Arc<Campaign>, ControllerError> {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    loaded
        .map(Arc::new)
        .ok_or_else(|| ControllerError::Campaign {
            dir: dir.to_owned(),
            report: report.to_string(),
        })
}

/// What a new save starts from (session zero's answers included).
#[derive(Clone, Debug)]
pub struct NewSave {
    pub campaign: PathBuf,
    /// Default: a new file under the data dir's `saves/`.
    pub save: Option<PathBuf>,
    pub scenario: Option<String>,
    /// Default: random.
    pub seed: Option<u64>,
    pub small_model: String,
    pub large_model: String,
    pub calibration: Calibration,
}

/// Write a new save: the opening scene of the scenario, with the calibration stored.
pub fn create_save(new: &NewSave) -> Result<(PathBuf, SessionState), ControllerError> {
    let campaign = load_campaign(&new.campaign)?;
    let dir = crate::files::canonical(&new.campaign);
    let id = dir
        .file_name()
        .map_or_else(|| "campaign".into(), |n| n.to_string_lossy().into_owned());
    let seed = new.seed.unwrap_or_else(rand::random);
    // A new session always says how many NPCs act a turn: its own choice,
    // else the campaign's, else the default.
    let mut calibration = new.calibration.clone();
    calibration.npcs_per_turn = Some(
        calibration
            .npcs_per_turn
            .or(campaign.manifest.npcs_per_turn)
            .unwrap_or(crate::campaign::format::DEFAULT_NPCS_PER_TURN),
    );
    let mut state = opening(
        campaign.clone(),
        new.scenario.as_deref(),
        &new.small_model,
        &new.large_model,
        seed,
        calibration.clone(),
    )
    .map_err(|source| ControllerError::Start {
        campaign: new.campaign.clone(),
        source,
    })?;
    // The session pins the newest prompts (its first open pins them if
    // they cannot be read now).
    match crate::llm::PromptRegistry::load(crate::files::resource_dir("prompts")) {
        Ok(prompts) => state.prompt_pins = super::pins::PromptPins::newest(&prompts),
        Err(e) => tracing::warn!("the prompts are not pinned yet: {e}"),
    }
    let path = new.save.clone().unwrap_or_else(|| free_save_path(&id));
    // The browser's storage has no folders to make.
    if !cfg!(target_family = "wasm")
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent).map_err(|source| ControllerError::Folder {
            path: parent.to_owned(),
            source,
        })?;
    }
    let mut world = state.world.clone();
    let scene = std::mem::take(&mut world.scene);
    let scenario = new
        .scenario
        .clone()
        .or_else(|| campaign.default_scenario().map(|s| s.id.clone()));
    let characters = campaign
        .characters
        .values()
        .map(|c| {
            let role = if c.kind == crate::campaign::CharacterKind::Player {
                "user_persona"
            } else {
                "npc"
            };
            (c.id.clone(), role.to_owned())
        })
        .collect();
    let session = NewSession {
        id: format!("{id}-{seed:016x}"),
        campaign_id: id,
        campaign_path: dir,
        scenario_id: scenario,
        ruleset_id: campaign.ruleset.id.clone(),
        characters,
        small_model_key: new.small_model.clone(),
        large_model_key: new.large_model.clone(),
        calibration: serde_json::to_value(&calibration).unwrap_or_default(),
        prompt_versions: state.prompt_pins.to_value(),
        seed,
        scene,
        world,
        messages: state.stream.messages.clone(),
    };
    Store::create(&path, &session)?;
    Ok((path, state))
}

/// Where saves of sessions live: `<data dir>/saves/`.
pub fn saves_dir() -> PathBuf {
    crate::files::data_dir().join("saves")
}

/// The most recently played save of a campaign folder, if any.
pub fn latest_save(campaign: &Path) -> Option<PathBuf> {
    let id = crate::files::canonical(campaign)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    crate::files::list(&saves_dir())
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{id}-")))
                && path.extension().is_some_and(|x| x == "db")
        })
        .filter_map(|path| Some((crate::files::modified(&path)?, path)))
        .max()
        .map(|(_, p)| p)
}

fn free_save_path(campaign_id: &str) -> PathBuf {
    let dir = saves_dir();
    (1..=10_000)
        .map(|n| dir.join(format!("{campaign_id}-{n}.db")))
        .find(|p| !crate::files::is_file(p))
        .unwrap_or_else(|| dir.join(format!("{campaign_id}-{}.db", unique())))
}

/// A unique suffix for action ids and file names.
pub fn unique() -> String {
    let now = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{now:x}-{:x}", rand::random::<u32>())
}
