//! The corpus's setting files (`training/settings/*.json`): invented worlds and situations.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One invented setting with its situations.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub id: String,
    pub title: String,
    pub genre: String,
    pub tone: String,
    pub ruleset: String,
    pub calibration: CalibrationSpec,
    pub player: String,
    pub people: IndexMap<String, Person>,
    pub places: IndexMap<String, String>,
    pub lore: IndexMap<String, String>,
    #[serde(default)]
    pub narrate: Vec<NarrateCase>,
    #[serde(default)]
    pub choices: Vec<ChoicesCase>,
    #[serde(default)]
    pub npc_intent: Vec<IntentCase>,
    #[serde(default)]
    pub recap: Vec<RecapCase>,
    #[serde(default)]
    pub lore_extract: Vec<LoreCase>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationSpec {
    #[serde(default)]
    pub difficulty: String,
    #[serde(default)]
    pub lines: Vec<String>,
    #[serde(default)]
    pub veils: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub role: String,
    pub personality: String,
    pub motivations: String,
    pub speech: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Beat {
    pub description: String,
    #[serde(default)]
    pub speaker: String,
    #[serde(default)]
    pub line: String,
}

/// One narration: the player's move (or an NPC's intention) and its outcome.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NarrateCase {
    pub place: String,
    #[serde(default)]
    pub time: String,
    #[serde(default)]
    pub present: Vec<String>,
    pub actor: String,
    #[serde(rename = "move")]
    pub action: String,
    #[serde(default)]
    pub whisper_to: String,
    #[serde(default)]
    pub band: String,
    #[serde(default)]
    pub blocked: String,
    #[serde(default)]
    pub lore: String,
    #[serde(default)]
    pub memory: String,
    #[serde(default)]
    pub regard: BTreeMap<String, String>,
    #[serde(default)]
    pub beat: Option<Beat>,
    #[serde(default)]
    pub just_before: String,
    /// Consequences that fire this turn and must be told (the prompt's `world_does`).
    #[serde(default)]
    pub meanwhile: Vec<String>,
    pub answer: String,
}

/// The player's next three choices.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoicesCase {
    pub place: String,
    #[serde(default)]
    pub time: String,
    #[serde(default)]
    pub present: Vec<String>,
    pub just_now: String,
    #[serde(default)]
    pub memory_move: String,
    #[serde(default)]
    pub beat: String,
    #[serde(default)]
    pub regard: BTreeMap<String, String>,
    pub answer: Vec<String>,
}

/// What an NPC does next.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentCase {
    pub npc: String,
    pub place: String,
    #[serde(default)]
    pub time: String,
    #[serde(default)]
    pub present: Vec<String>,
    #[serde(default)]
    pub states: BTreeMap<String, Value>,
    #[serde(default)]
    pub memories: Vec<String>,
    #[serde(default)]
    pub history: Vec<HistoryEntry>,
    pub regard: String,
    pub answer: IntentAnswer,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryEntry {
    pub kind: String,
    pub text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentAnswer {
    pub thought: String,
    pub intention: String,
}

/// A "Previously…": the summaries of earlier sittings and the narrations
/// since, summed up (the `recap` stage).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecapCase {
    #[serde(default)]
    pub summaries: Vec<String>,
    pub events: Vec<String>,
    pub answer: String,
}

/// The world facts one narration establishes or changes (the `lore_extract` stage).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoreCase {
    pub narration: String,
    /// Facts already known, newest first (the prompt's `known`).
    #[serde(default)]
    pub known: Vec<Fact>,
    pub answer: LoreAnswer,
}

/// One fact: `subject` `predicate` `object` (subject and predicate in `snake_case`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoreAnswer {
    pub facts: Vec<Fact>,
}

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{setting}: {stage}[{index}]: {message}")]
    Case {
        setting: String,
        stage: &'static str,
        index: usize,
        message: String,
    },
}

/// Reads every `*.json` setting in `dir`, sorted by file name.
pub fn load_settings(dir: &Path) -> Result<Vec<Setting>, CorpusError> {
    let file_error = |path: &Path, message: String| CorpusError::File {
        path: path.to_owned(),
        message,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| file_error(dir, e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| file_error(path, e.to_string()))?;
            let de = &mut serde_json::Deserializer::from_str(&text);
            let setting: Setting = serde_path_to_error::deserialize(de)
                .map_err(|e| file_error(path, format!("{} at {}", e.inner(), e.path())))?;
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            if setting.id != stem {
                return Err(file_error(
                    path,
                    format!("its id `{}` must match the file name `{stem}`", setting.id),
                ));
            }
            Ok(setting)
        })
        .collect()
}

/// Which settings are held out of training, whole (`training/split.json`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    pub heldout: Vec<String>,
}
