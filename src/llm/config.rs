//! Model keys: which backend, model and parameters a key such as `local-small` names.
//!
//! The table lives in `models.ron` in Loreloom's data dir, which players edit to
//! add models; without that file the built-in defaults below apply. Sessions store
//! a key per tier (`small_model_key`, `large_model_key`, seed 003), never a path.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::backend::SamplingOverride;

/// The default model's file name, in `<data dir>/models/`.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Its sha256, as the README's commands check it.
pub const DEFAULT_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// Drafts of the player's narration the default local model writes (see
/// [`ModelConfig::drafts`]). One, streamed: with the narrator adapter one
/// draft is in voice for 96% of held-out prompts, where the base model's best
/// of three was for 33% (`benches/tuned.rs`).
pub const LOCAL_DRAFTS: u32 = 1;
/// Lanes of the built-in local keys (see [`ModelConfig::lanes`]): the
/// bookkeeping runs beside the narration (`benches/session_model.rs`).
pub const LOCAL_LANES: u32 = 2;
/// The narrator adapter the built-in local keys load over the default model: a
/// `LoRA` fine-tuned on Loreloom's own corpus (`training/`, `tools/tune/`),
/// shipped in `assets/models/` and installed beside the model by `run.sh`.
pub const DEFAULT_ADAPTER_FILE: &str = "loreloom-narrator-lora.gguf";
/// The file (in the data dir) that maps model keys to backends.
pub const MODELS_FILE: &str = "models.ron";

/// How a model key is served.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BackendConfig {
    /// A GGUF file run in-process by llama.cpp. A relative `file` is looked up
    /// in `<data dir>/models/`.
    Llama {
        file: PathBuf,
        /// Context length in tokens.
        #[serde(default = "default_context")]
        context: u32,
        /// Inference threads; default: half the cores (1 on a 2-core machine,
        /// which leaves the render thread its core and measured fastest).
        #[serde(default)]
        threads: Option<u32>,
        /// Prompt-prefix caches kept per lane (one per stage or character;
        /// each a context only as long as its calls need). Eight hold a turn's
        /// stages and the NPCs of a scene; four made the NPCs' intents evict
        /// each other every turn (`benches/session_model.rs`).
        #[serde(default = "default_slots")]
        slots: u32,
        /// A `LoRA` adapter (GGUF, from llama.cpp's `convert_lora_to_gguf.py`)
        /// applied over the model; a relative path is looked up in
        /// `<data dir>/models/`. One that is missing or does not fit the model
        /// is reported, naming the file, and the base model answers alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lora: Option<PathBuf>,
        /// The stages (`narrate`, `choices` …) the adapter is applied for; the
        /// others get the base model. Every stage when absent, as the built-in
        /// keys: the shipped adapter was tuned on `narrate`, `choices` and
        /// `npc_intent` only, yet it also keeps the structured stages terse
        /// (measured in #20: without it there, turns wrote 2.5 times the tokens
        /// and the lorebook filled with repeated sentences).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lora_stages: Option<Vec<String>>,
    },
    /// An OpenAI-compatible server (`/v1/chat/completions`): llama.cpp's
    /// llama-server, Ollama, vLLM or a hosted endpoint.
    OpenAi {
        /// Base URL up to and including `/v1`.
        url: String,
        model: String,
        /// The environment variable holding the API key, if the server needs one.
        #[serde(default)]
        api_key_env: Option<String>,
        #[serde(default = "default_timeout")]
        timeout_secs: u64,
        /// Attempts for transient failures (connection refused, 429, 5xx), with backoff.
        #[serde(default = "default_retries")]
        retries: u32,
    },
    /// Replies from a script file (tests, demos, replay).
    Scripted { file: PathBuf },
}

fn default_context() -> u32 {
    4096
}
fn default_slots() -> u32 {
    8
}
fn default_timeout() -> u64 {
    120
}
fn default_retries() -> u32 {
    3
}

/// Inference threads when a model does not say: half the cores, at least 1, at most 8.
pub fn default_threads() -> u32 {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    u32::try_from((cores / 2).clamp(1, 8)).unwrap_or(1)
}

/// One model key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub backend: BackendConfig,
    /// Sampling defaults for this model (under each stage's and call's own).
    #[serde(default)]
    pub sampling: SamplingOverride,
    #[serde(default)]
    pub description: String,
    /// Render prompts in their compact form (stages that have one): a short
    /// instruction and only the most relevant background, right before the
    /// question. Models under ~1B parameters (the default SmolLM2-135M) lose the
    /// thread in a long prompt and start reciting it; larger models write
    /// better with the full one.
    #[serde(default)]
    pub compact_prompts: bool,
    /// How many drafts a call that asks for them (the player's narration) is
    /// sampled in, with seeds `seed`, `seed + 1` …; the caller keeps the one
    /// that reads best (`session::drafts`). A tiny model's samples vary widely,
    /// so a few drafts buy some of what a bigger model would; each costs one
    /// generation (the prompt is evaluated once, through the prefix cache), and
    /// a drafted narration appears whole instead of streaming. 1 streams the one
    /// sample.
    #[serde(default = "one_draft")]
    pub drafts: u32,
    /// How many calls run at once. With 2, the turn's bookkeeping (the
    /// extractors and the lore keeper) runs on a second lane beside the calls
    /// the player waits for instead of after them: for an in-process model a
    /// second set of contexts over the same loaded weights, on its own
    /// threads; for a server a second request in flight. 1 runs every call in
    /// turn.
    #[serde(default = "one_lane")]
    pub lanes: u32,
    /// Continue an answer the engine has opened (the outcome clause of the
    /// player's narration, #42) instead of writing it whole: the opening is
    /// sent as the start of the assistant's turn. For backends that continue
    /// a final assistant message (llama.cpp in-process, llama-server); a
    /// server that does not would answer after it instead.
    #[serde(default)]
    pub continues_answers: bool,
}

fn one_lane() -> u32 {
    1
}

fn one_draft() -> u32 {
    1
}

/// The whole `models.ron`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsConfig {
    /// The key new sessions use for the small tier.
    pub small: String,
    /// The key new sessions use for the large tier.
    pub large: String,
    pub models: IndexMap<String, ModelConfig>,
}

/// Where the browser build's built-in keys find the default model: the
/// page's own `/v1`, answered inside the page by the narrator model running
/// in WebAssembly (`web/model.js`, #45); a `models.ron` in the page's storage
/// (which the page's "Narrator model…" setting writes) points them at a server.
pub const BROWSER_MODEL_SERVER: &str = "/v1";

impl Default for ModelsConfig {
    fn default() -> Self {
        #[cfg(not(target_family = "wasm"))]
        let backend = BackendConfig::Llama {
            file: PathBuf::from(DEFAULT_MODEL_FILE),
            context: default_context(),
            threads: None,
            slots: default_slots(),
            lora: Some(PathBuf::from(DEFAULT_ADAPTER_FILE)),
            lora_stages: None,
        };
        #[cfg(target_family = "wasm")]
        let backend = BackendConfig::OpenAi {
            url: BROWSER_MODEL_SERVER.to_owned(),
            model: "default".to_owned(),
            api_key_env: None,
            timeout_secs: default_timeout(),
            retries: default_retries(),
        };
        let local = |description: &str| ModelConfig {
            backend: backend.clone(),
            sampling: SamplingOverride::default(),
            description: description.to_owned(),
            compact_prompts: true,
            drafts: LOCAL_DRAFTS,
            lanes: LOCAL_LANES,
            continues_answers: true,
        };
        let mut models = IndexMap::new();
        models.insert(
            "local-small".to_owned(),
            local("SmolLM2-135M-Instruct, in-process (the default model)"),
        );
        models.insert(
            "local-large".to_owned(),
            local("the narrator's model; point it at a bigger GGUF for better prose"),
        );
        models.insert(
            "server-default".to_owned(),
            ModelConfig {
                backend: BackendConfig::OpenAi {
                    url: "http://127.0.0.1:8080/v1".to_owned(),
                    model: "default".to_owned(),
                    api_key_env: Some("LORELOOM_API_KEY".to_owned()),
                    timeout_secs: default_timeout(),
                    retries: default_retries(),
                },
                sampling: SamplingOverride::default(),
                description:
                    "an OpenAI-compatible server on this machine (llama-server, Ollama, vLLM)"
                        .to_owned(),
                compact_prompts: false,
                lanes: 1,
                drafts: 1,
                continues_answers: false,
            },
        );
        Self {
            small: "local-small".to_owned(),
            large: "local-large".to_owned(),
            models,
        }
    }
}

/// Why the text of a `models.ron` is not a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ModelsTextError {
    #[error(transparent)]
    Ron(Box<ron::error::SpannedError>),
    #[error("`{tier}` is named as a tier but has no entry under `models`")]
    UnknownTier { tier: String },
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}; fix the file or delete it to get the defaults back", path.display())]
    Parse {
        path: PathBuf,
        source: ModelsTextError,
    },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no model key `{key}` (known: {known}); add it to {}", path.display())]
    UnknownKey {
        key: String,
        known: String,
        path: PathBuf,
    },
}

impl ModelsConfig {
    /// `<data dir>/models.ron`.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(MODELS_FILE)
    }

    /// Reads `<data dir>/models.ron`, or the defaults when there is none.
    pub fn load(data_dir: &Path) -> Result<Self, ConfigError> {
        let path = Self::path(data_dir);
        match crate::files::read_to_string(&path) {
            Ok(text) => Self::parse(&text).map_err(|source| ConfigError::Parse { path, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(ConfigError::Io { path, source }),
        }
    }

    pub fn parse(text: &str) -> Result<Self, ModelsTextError> {
        let config: Self = ron::from_str(text).map_err(|e| ModelsTextError::Ron(Box::new(e)))?;
        for tier in [&config.small, &config.large] {
            if !config.models.contains_key(tier) {
                return Err(ModelsTextError::UnknownTier { tier: tier.clone() });
            }
        }
        Ok(config)
    }

    /// The file text of this configuration, commented for editing.
    pub fn to_ron(&self) -> String {
        let pretty = ron::ser::PrettyConfig::new().struct_names(false);
        ron::ser::to_string_pretty(self, pretty).unwrap_or_default()
    }

    pub fn get(&self, key: &str, data_dir: &Path) -> Result<&ModelConfig, ConfigError> {
        self.models.get(key).ok_or_else(|| ConfigError::UnknownKey {
            key: key.to_owned(),
            known: self.models.keys().cloned().collect::<Vec<_>>().join(", "),
            path: Self::path(data_dir),
        })
    }
}

impl BackendConfig {
    /// The GGUF path a llama model resolves to.
    pub fn model_path(&self, data_dir: &Path) -> Option<PathBuf> {
        match self {
            BackendConfig::Llama { file, .. } if file.is_absolute() => Some(file.clone()),
            BackendConfig::Llama { file, .. } => Some(data_dir.join("models").join(file)),
            _ => None,
        }
    }

    /// The `LoRA` adapter path a llama model key names, if any.
    pub fn adapter_path(&self, data_dir: &Path) -> Option<PathBuf> {
        match self {
            BackendConfig::Llama {
                lora: Some(file), ..
            } if file.is_absolute() => Some(file.clone()),
            BackendConfig::Llama {
                lora: Some(file), ..
            } => Some(data_dir.join("models").join(file)),
            _ => None,
        }
    }

    /// A short description: backend and model.
    pub fn describe(&self, data_dir: &Path) -> String {
        match self {
            BackendConfig::Llama { .. } => {
                let path = self.model_path(data_dir).unwrap_or_default();
                let state = if path.is_file() {
                    "installed"
                } else {
                    "MISSING"
                };
                let adapter = self.adapter_path(data_dir).map_or_else(String::new, |a| {
                    let state = if a.is_file() { "installed" } else { "MISSING" };
                    let stages = match self {
                        BackendConfig::Llama {
                            lora_stages: Some(stages),
                            ..
                        } => format!(" for {}", stages.join(", ")),
                        _ => String::new(),
                    };
                    format!(" + LoRA {} ({state}){stages}", a.display())
                });
                format!(
                    "llama.cpp in-process · {} ({state}){adapter}",
                    path.display()
                )
            }
            BackendConfig::OpenAi { url, model, .. } => {
                format!("OpenAI-compatible · {url} · model {model}")
            }
            BackendConfig::Scripted { file } => format!("scripted · {}", file.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_round_trip_through_the_file_format() {
        let config = ModelsConfig::default();
        let text = config.to_ron();
        assert_eq!(ModelsConfig::parse(&text).unwrap(), config);
        assert!(text.contains("local-small"), "{text}");
    }

    #[test]
    fn no_file_means_defaults_and_a_broken_file_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            ModelsConfig::load(dir.path()).unwrap(),
            ModelsConfig::default()
        );
        std::fs::write(dir.path().join(MODELS_FILE), "(small: \"x\"").unwrap();
        let err = ModelsConfig::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("models.ron"), "{err}");
    }

    #[test]
    fn a_tier_must_name_a_known_key() {
        let err = ModelsConfig::parse(r#"(small: "a", large: "a", models: {})"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`a`"), "{err}");
    }

    #[test]
    fn relative_model_files_live_in_the_data_dir() {
        let data = Path::new("/data");
        let config = ModelsConfig::default();
        let small = config.get("local-small", data).unwrap();
        assert_eq!(
            small.backend.model_path(data).unwrap(),
            Path::new("/data/models").join(DEFAULT_MODEL_FILE)
        );
        let err = config.get("huge", data).unwrap_err().to_string();
        assert!(
            err.contains("known: local-small, local-large, server-default"),
            "{err}"
        );
    }

    #[test]
    fn threads_default_to_half_the_cores() {
        let t = default_threads();
        assert!((1..=8).contains(&t));
    }
}
