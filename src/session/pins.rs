//! The prompt version a session pins per stage (seed 001: regression replay with pinned versions).
//!
//! A new session pins the newest version of every session stage with a digest
//! of what it renders from ([`PromptRegistry::digest`]); each of its calls
//! renders the pinned version ([`crate::llm::CallRequest::version`]), so adding
//! `v5` leaves old saves on `v4`. Opening a save [reconciles](PromptPins::reconcile)
//! the pins with the prompts installed: a stage pinned to a version that was
//! edited or removed since is named, so the player (and replay) know its
//! turns now render differently. A bench or the harness overrides a pin with
//! [`crate::llm::Gateway::pin_version`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::PromptRegistry;

/// One stage's pin: the version and the digest it had when pinned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub version: String,
    /// Empty for pins written before digests were kept.
    #[serde(default)]
    pub digest: String,
}

/// Every session stage's pin, by stage name (the save's `prompt_versions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PromptPins(BTreeMap<String, Pin>);

/// What opening a save found about a pinned stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinChange {
    /// The pinned version's files were edited since: it renders differently.
    Edited { stage: String, version: String },
    /// The pinned version is gone: the stage now renders `now`.
    Gone {
        stage: String,
        version: String,
        now: String,
    },
}

impl std::fmt::Display for PinChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Edited { stage, version } => write!(
                f,
                "the `{stage}` prompt ({version}) was edited since this save pinned it: \
                 its turns now render differently"
            ),
            Self::Gone {
                stage,
                version,
                now,
            } => write!(
                f,
                "the `{stage}` prompt {version} this save pinned is gone: it now renders {now}"
            ),
        }
    }
}

/// Stages a session calls (the authoring pipeline's are not pinned by saves).
fn session_stage(stage: &str) -> bool {
    !stage.starts_with("author/")
}

impl PromptPins {
    /// The newest version of every session stage, with its digest: what a new session pins.
    pub fn newest(prompts: &PromptRegistry) -> Self {
        let mut pins = Self::default();
        for (stage, version) in prompts.latest_pins() {
            if session_stage(&stage) {
                let digest = prompts.digest(&stage, &version).unwrap_or_default();
                pins.set(&stage, &version, digest);
            }
        }
        pins
    }

    /// The pins a save holds. Saves from before pins were kept hold `{}`
    /// (nothing pinned); a bare `{"narrate": "v4"}` pins without a digest;
    /// anything else that does not read pins nothing.
    pub fn read(value: &Value) -> Self {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Bare(String),
            Full(Pin),
        }
        let Ok(map) = serde_json::from_value::<BTreeMap<String, Stored>>(value.clone()) else {
            return Self::default();
        };
        Self(
            map.into_iter()
                .map(|(stage, pin)| {
                    let pin = match pin {
                        Stored::Bare(version) => Pin {
                            version,
                            digest: String::new(),
                        },
                        Stored::Full(pin) => pin,
                    };
                    (stage, pin)
                })
                .collect(),
        )
    }

    /// As the save stores them.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(serde_json::Map::new()))
    }

    /// The version `stage` is pinned to.
    pub fn version(&self, stage: &str) -> Option<&str> {
        self.0.get(stage).map(|p| p.version.as_str())
    }

    /// Pins `stage` to `version`.
    pub fn set(&mut self, stage: &str, version: &str, digest: &str) {
        self.0.insert(
            stage.to_owned(),
            Pin {
                version: version.to_owned(),
                digest: digest.to_owned(),
            },
        );
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every pin, by stage.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Pin)> {
        self.0.iter().map(|(s, p)| (s.as_str(), p))
    }

    /// Brings the pins in line with the prompts installed, and says what
    /// changed under them: a stage with no pin (a save from before pins, or
    /// a stage added since) pins the newest version silently; a pin whose
    /// version was edited takes the new digest and is named; a pin whose
    /// version is gone moves to the newest and is named. Returns whether
    /// anything was written, and the changes to tell.
    pub fn reconcile(&mut self, prompts: &PromptRegistry) -> (bool, Vec<PinChange>) {
        let mut changed = false;
        let mut told = Vec::new();
        for (stage, newest) in prompts.latest_pins() {
            if !session_stage(&stage) {
                continue;
            }
            let newest_digest = prompts.digest(&stage, &newest).unwrap_or_default();
            match self.0.get(&stage).cloned() {
                None => {
                    self.set(&stage, &newest, newest_digest);
                    changed = true;
                }
                Some(pin) => match prompts.digest(&stage, &pin.version) {
                    None => {
                        told.push(PinChange::Gone {
                            stage: stage.clone(),
                            version: pin.version.clone(),
                            now: newest.clone(),
                        });
                        self.set(&stage, &newest, newest_digest);
                        changed = true;
                    }
                    Some(digest) if digest != pin.digest => {
                        // A pin without a digest (written before digests)
                        // takes one silently: nothing says it was edited.
                        if !pin.digest.is_empty() {
                            told.push(PinChange::Edited {
                                stage: stage.clone(),
                                version: pin.version.clone(),
                            });
                        }
                        self.set(&stage, &pin.version, digest);
                        changed = true;
                    }
                    Some(_) => {}
                },
            }
        }
        (changed, told)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(dir: &std::path::Path, narrate_v2: &str) -> PromptRegistry {
        let stage = r#"(description: "narrates", tier: large, variables: {"move": "the move"})"#;
        let narrate = dir.join("narrate");
        std::fs::create_dir_all(&narrate).unwrap();
        std::fs::write(narrate.join("stage.ron"), stage).unwrap();
        std::fs::write(
            narrate.join("v1.jinja"),
            "{% block user %}{{ move }}{% endblock %}",
        )
        .unwrap();
        if !narrate_v2.is_empty() {
            std::fs::write(narrate.join("v2.jinja"), narrate_v2).unwrap();
        }
        PromptRegistry::load(dir).unwrap()
    }

    #[test]
    fn a_new_version_leaves_the_pin_and_an_edit_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        let v2 = "{% block user %}Now: {{ move }}{% endblock %}";
        let mut pins = PromptPins::newest(&registry(dir.path(), v2));
        assert_eq!(pins.version("narrate"), Some("v2"));
        let stored = pins.to_value();
        assert_eq!(PromptPins::read(&stored), pins);

        // A v3 is added: the save stays on v2, and nothing is told.
        std::fs::write(dir.path().join("narrate/v3.jinja"), v2).unwrap();
        let prompts = PromptRegistry::load(dir.path()).unwrap();
        assert_eq!(pins.reconcile(&prompts), (false, Vec::new()));
        assert_eq!(pins.version("narrate"), Some("v2"));

        // v2 is edited in place: told once, then pinned with its new digest.
        let prompts = registry(dir.path(), "{% block user %}Then: {{ move }}{% endblock %}");
        let (changed, told) = pins.reconcile(&prompts);
        assert!(changed);
        assert_eq!(
            told,
            vec![PinChange::Edited {
                stage: "narrate".into(),
                version: "v2".into()
            }]
        );
        assert_eq!(pins.reconcile(&prompts), (false, Vec::new()));
    }

    #[test]
    fn a_removed_version_moves_to_the_newest_and_old_saves_pin_silently() {
        let dir = tempfile::tempdir().unwrap();
        let prompts = registry(dir.path(), "");
        let mut pins = PromptPins::read(&serde_json::json!({"narrate": "v7"}));
        let (_, told) = pins.reconcile(&prompts);
        assert_eq!(
            told,
            vec![PinChange::Gone {
                stage: "narrate".into(),
                version: "v7".into(),
                now: "v1".into()
            }]
        );
        let mut old = PromptPins::read(&serde_json::json!({}));
        assert_eq!(old.reconcile(&prompts).1, Vec::new());
        assert_eq!(old.version("narrate"), Some("v1"));
        assert!(PromptPins::read(&serde_json::json!([1, 2])).is_empty());
    }
}
