//! Enrichment of sparse campaigns: invented people, beats, lore and rules as `_generated` files.
//!
//! Seed 002 §6.2.12: from a campaign's setting and premise the model invents
//! people, plot beats, lore and world rules, and Loreloom writes them with
//! full provenance, never touching a human-authored file.
//!
//! The call is an ordinary stage (`prompts/enrich/`, contract
//! `schemas/stages/enrich.schema.json`), so the answer arrives validated;
//! [`write`] turns it into campaign files:
//!
//! | what | file |
//! |------|------|
//! | each person | `characters/npcs/<id>/profile_generated.json` |
//! | plot beats | `plot/beats_generated.json` |
//! | each lore entry | `lore/<slug>_generated.md` |
//! | world rules | `world/rules_generated.md` |
//!
//! Every file carries `generated: true` and `provenance` (source model,
//! `generated_at`, seed data, prompt, seed); the loader uses a generated file
//! only where no human-authored one exists. Files are written to temporary
//! names first and renamed once all are ready, so a failure leaves the
//! campaign as it was.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::format::{
    Beat, BeatsFile, Conditions, NpcProfile, Personality, Priority, SceneWindow, SpeechPatterns,
};
use super::{Campaign, slug};
use crate::llm::CallRequest;

/// Why enrichment wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum EnrichError {
    #[error("enrich: the model's answer is not usable: {0}")]
    Answer(String),
    #[error("enrich: cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The files a sparse campaign was seeded from (seed 002: provenance `seed_data`).
fn seed_files(c: &Campaign) -> Vec<&'static str> {
    let mut files = vec!["manifest.json"];
    if c.prose.contains_key("setting") {
        files.push("world/setting.md");
    }
    if c.prose.contains_key("premise") {
        files.push("plot/premise.md");
    }
    files
}

/// The enrichment call for `campaign` on `model`.
pub fn request(campaign: &Campaign, model: &str, seed: u32) -> CallRequest {
    let m = &campaign.manifest;
    let existing: Vec<&str> = campaign
        .characters
        .values()
        .filter(|c| c.kind == super::CharacterKind::Npc)
        .map(|c| c.name.as_str())
        .collect();
    CallRequest::new(
        "enrich",
        model,
        json!({
            "title": m.title,
            "genre": m.genre.as_deref().unwrap_or_default(),
            "tone": m.tone.as_deref().unwrap_or_default(),
            "description": m.description.as_deref().unwrap_or_default(),
            "guidance": m.hydration_guidance.as_deref().unwrap_or_default(),
            "setting": campaign.prose.get("setting").map_or("", |s| strip_frontmatter(s)),
            "premise": campaign.prose.get("premise").map_or("", |s| strip_frontmatter(s)),
            "existing": existing,
        }),
    )
    .seed(seed)
}

fn strip_frontmatter(text: &str) -> &str {
    text.strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n").map(|(_, body)| body))
        .unwrap_or(text)
        .trim()
}

/// Where a model's answer came from.
#[derive(Clone, Debug)]
pub struct Source {
    /// The model key and, when known, its file.
    pub model: String,
    /// The stage version used (`enrich@v1`).
    pub prompt: String,
    pub seed: u32,
}

fn provenance(c: &Campaign, source: &Source) -> Map<String, Value> {
    // humantime formats std's time, which the browser has no clock for: read web_time's.
    let now = std::time::UNIX_EPOCH
        + web_time::SystemTime::now()
            .duration_since(web_time::UNIX_EPOCH)
            .unwrap_or_default();
    let at = humantime::format_rfc3339_seconds(now).to_string();
    let mut p = Map::new();
    p.insert("source_model".into(), source.model.clone().into());
    p.insert("generated_at".into(), at.into());
    p.insert("seed_data".into(), seed_files(c).join(", ").into());
    p.insert("prompt".into(), source.prompt.clone().into());
    p.insert("seed".into(), source.seed.into());
    p
}

/// The enrichment stage's answer, as its contract shapes it
/// (`schemas/stages/enrich.schema.json`, which this type mirrors).
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    #[schemars(length(min = 2, max = 4))]
    pub npcs: Vec<PersonIdea>,
    #[schemars(length(min = 2, max = 4))]
    pub beats: Vec<BeatIdea>,
    #[schemars(length(min = 2, max = 4))]
    pub lore: Vec<LoreIdea>,
    #[schemars(length(min = 2, max = 5), inner(length(min = 10, max = 200)))]
    pub rules: Vec<String>,
}

/// A person the model invents.
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PersonIdea {
    #[schemars(length(min = 2, max = 40))]
    pub name: String,
    #[schemars(length(min = 3, max = 80))]
    pub role: String,
    #[schemars(length(min = 1, max = 4), inner(length(min = 2, max = 30)))]
    pub traits: Vec<String>,
    #[schemars(length(min = 3, max = 160))]
    pub motivation: String,
    #[schemars(length(max = 160))]
    pub appearance: String,
    #[schemars(length(max = 120))]
    pub speech: String,
}

/// A plot beat the model invents.
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BeatIdea {
    #[schemars(length(min = 3, max = 60))]
    pub title: String,
    #[schemars(length(min = 10, max = 300))]
    pub description: String,
    pub priority: Priority,
    #[schemars(range(min = 1, max = 8))]
    pub from_scene: u32,
    /// What the player has done or where they are when it can happen; may be empty.
    #[schemars(length(max = 120))]
    pub when: String,
}

/// A lore entry the model invents.
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoreIdea {
    #[schemars(length(min = 3, max = 60))]
    pub title: String,
    #[schemars(length(min = 20, max = 600))]
    pub text: String,
}

/// A field of the answer as prose: trimmed, and empty when it is code or
/// markup rather than words (small models leak JSON into string fields).
fn prose(field: &str) -> String {
    let t = field.trim();
    if crate::llm::contract::looks_like_prose(t) {
        t.to_owned()
    } else {
        String::new()
    }
}

/// The files an answer (checked against the stage's contract) becomes:
/// relative path → contents.
pub fn files(
    campaign: &Campaign,
    answer: &Value,
    source: &Source,
) -> Result<Vec<(PathBuf, String)>, EnrichError> {
    let answer = Answer::deserialize(answer).map_err(|e| EnrichError::Answer(e.to_string()))?;
    let prov = provenance(campaign, source);
    let mut out = people(campaign, &answer.npcs, &prov)?;
    let beats = beats(&answer.beats);
    if !beats.is_empty() && !crate::files::is_file(&campaign.root.join("plot/beats.json")) {
        let file = BeatsFile {
            beats,
            generated: true,
            provenance: Some(prov.clone()),
        };
        out.push((PathBuf::from("plot/beats_generated.json"), pretty(&file)?));
    }
    let frontmatter = |title: &str| -> Result<String, EnrichError> {
        let meta = json!({"generated": true, "provenance": prov, "keywords": [title]});
        let yaml =
            serde_norway::to_string(&meta).map_err(|e| EnrichError::Answer(e.to_string()))?;
        Ok(format!("---\n{yaml}---\n"))
    };
    for l in &answer.lore {
        let title = prose(&l.title);
        let body = prose(&l.text);
        let name = slug(&title);
        if name.is_empty() || body.is_empty() {
            continue;
        }
        let path = PathBuf::from(format!("lore/{name}_generated.md"));
        if out.iter().any(|(p, _)| p == &path) {
            continue;
        }
        out.push((
            path,
            format!("{}\n# {title}\n\n{body}\n", frontmatter(&title)?),
        ));
    }
    let rules: Vec<String> = answer
        .rules
        .iter()
        .map(|r| format!("- {}", r.trim()))
        .collect();
    if !rules.is_empty() && !crate::files::is_file(&campaign.root.join("world/rules.md")) {
        out.push((
            PathBuf::from("world/rules_generated.md"),
            format!(
                "{}\n# Rules of this world\n\n{}\n",
                frontmatter("rules")?,
                rules.join("\n")
            ),
        ));
    }
    if out.is_empty() {
        return Err(EnrichError::Answer("it holds nothing to write".into()));
    }
    Ok(out)
}

/// The people of an answer as generated NPC profiles, each under an id no
/// character of the campaign has; people without a name, role or traits
/// are left out.
fn people(
    campaign: &Campaign,
    npcs: &[PersonIdea],
    prov: &Map<String, Value>,
) -> Result<Vec<(PathBuf, String)>, EnrichError> {
    let mut out = Vec::new();
    let taken: Vec<String> = campaign.characters.keys().cloned().collect();
    let mut ids: Vec<String> = Vec::new();
    for npc in npcs {
        let name = prose(&npc.name);
        let mut id = slug(&name);
        if id.is_empty() || id == super::PLAYER || prose(&npc.role).is_empty() {
            continue;
        }
        while taken.contains(&id) || ids.contains(&id) {
            id.push_str("_2");
        }
        let traits: Vec<String> = npc
            .traits
            .iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        if traits.is_empty() {
            continue;
        }
        let speech = prose(&npc.speech);
        let appearance = prose(&npc.appearance);
        let profile = NpcProfile {
            name,
            role: prose(&npc.role),
            personality: Personality {
                traits,
                flaws: Vec::new(),
                virtues: Vec::new(),
            },
            age: None,
            motivations: vec![prose(&npc.motivation)],
            speech_patterns: (!speech.is_empty()).then(|| SpeechPatterns {
                style: speech,
                examples: Vec::new(),
            }),
            relationships: std::collections::BTreeMap::new(),
            secrets: None,
            portrait: None,
            appearance: (!appearance.is_empty()).then_some(appearance),
            background: None,
            goals: Vec::new(),
            stats: None,
            inventory: Vec::new(),
            metadata: None,
            chattiness: 0.5,
            baked: false,
            factions: Vec::new(),
            regards: std::collections::BTreeMap::new(),
            answers: std::collections::BTreeMap::new(),
            generated: true,
            provenance: Some(prov.clone()),
        };
        let path = PathBuf::from(format!("characters/npcs/{id}/profile_generated.json"));
        out.push((path, pretty(&profile)?));
        ids.push(id);
    }
    Ok(out)
}

/// The beats of an answer, each with an id from its title (`beat_<n>` when
/// the title makes none), the first of any id kept.
fn beats(ideas: &[BeatIdea]) -> Vec<Beat> {
    let mut beats = Vec::new();
    for (i, b) in ideas.iter().enumerate() {
        let title = prose(&b.title);
        let slugged = slug(&title);
        let id = if slugged.is_empty() {
            format!("beat_{i}")
        } else {
            format!("beat_{slugged}")
        };
        let when = prose(&b.when);
        beats.push(Beat {
            id,
            title,
            description: prose(&b.description),
            conditions: Conditions {
                scene_count: Some(SceneWindow {
                    min: Some(b.from_scene.max(1)),
                    max: None,
                }),
                player_state: (!when.is_empty()).then_some(when),
                ..Conditions::default()
            },
            skippable: b.priority != Priority::Critical,
            priority: b.priority,
            consequences: Vec::new(),
            mood: None,
            music: None,
            outcomes: Vec::new(),
            dialogue: Vec::new(),
            timeout: None,
        });
    }
    let mut seen = std::collections::BTreeSet::new();
    beats.retain(|b| seen.insert(b.id.clone()));
    beats
}

fn pretty(v: &impl serde::Serialize) -> Result<String, EnrichError> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| EnrichError::Answer(e.to_string()))
}

/// Write the files into the campaign: generated files may be replaced,
/// human-authored ones never; all are staged first, then renamed into place.
pub fn write(root: &Path, files: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, EnrichError> {
    let mut staged = Vec::new();
    for (rel, contents) in files {
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.contains("_generated.") {
            return Err(EnrichError::Answer(format!(
                "{} is not a generated file name",
                rel.display()
            )));
        }
        let path = root.join(rel);
        let io = |source| EnrichError::Write {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("enrich-tmp");
        if let Err(e) = std::fs::write(&tmp, contents) {
            for (t, _) in &staged {
                let _ = std::fs::remove_file(t);
            }
            return Err(io(e));
        }
        staged.push((tmp, path));
    }
    let mut written = Vec::new();
    for (tmp, path) in staged {
        std::fs::rename(&tmp, &path).map_err(|source| EnrichError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lighthouse() -> Campaign {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/minimal-lighthouse");
        let (campaign, report) = super::super::load(&root, &[super::super::system_rulesets()]);
        campaign.unwrap_or_else(|| panic!("{report}"))
    }

    fn source() -> Source {
        Source {
            model: "small".into(),
            prompt: "enrich@v1".into(),
            seed: 1,
        }
    }

    fn answer() -> Value {
        json!({
            "npcs": [
                {"name": "Morwen Tate", "role": "Keeper of the Gull Rock light", "traits": [" stubborn ", "proud"],
                 "motivation": "Keep the light burning", "appearance": "Small, weathered", "speech": ""},
                {"name": "{\"name\": 1}", "role": "Nobody", "traits": ["odd"],
                 "motivation": "None", "appearance": "", "speech": ""}
            ],
            "beats": [
                {"title": "The Letter", "description": "The player reads the letter Morwen left.",
                 "priority": "critical", "from_scene": 2, "when": ""},
                {"title": "The Letter", "description": "A second beat with the same title.",
                 "priority": "low", "from_scene": 1, "when": "at dusk"}
            ],
            "lore": [
                {"title": "The Causeway Tides", "text": "At spring tides the causeway floods in eleven minutes."},
                {"title": "{}", "text": "A title that is markup makes no file of its own."}
            ],
            "rules": ["  The causeway is crossed at low water only.  ", "Nothing supernatural happens here."]
        })
    }

    #[test]
    fn an_answer_becomes_generated_files_of_what_reads_as_prose() {
        let files = files(&lighthouse(), &answer(), &source()).unwrap();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "characters/npcs/morwen_tate/profile_generated.json",
                "plot/beats_generated.json",
                "lore/the_causeway_tides_generated.md",
                "world/rules_generated.md",
            ]
        );
        let profile: NpcProfile = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(profile.personality.traits, ["stubborn", "proud"]);
        assert!(profile.speech_patterns.is_none() && profile.generated);
        let beats: BeatsFile = serde_json::from_str(&files[1].1).unwrap();
        assert_eq!(beats.beats.len(), 1, "the first of two ids is kept");
        assert!(!beats.beats[0].skippable);
        assert!(
            files[3]
                .1
                .contains("- The causeway is crossed at low water only.\n")
        );
    }

    /// Typing the answer (issue #39): one outside the stage's contract is
    /// refused whole; before, its readable parts were written and the rest
    /// dropped. The game and the CLI only pass answers the contract accepted.
    #[test]
    fn an_answer_outside_its_contract_is_refused_whole() {
        let mut answer = answer();
        answer.as_object_mut().unwrap().remove("rules");
        let err = files(&lighthouse(), &answer, &source()).unwrap_err();
        assert!(
            matches!(&err, EnrichError::Answer(m) if m.contains("rules")),
            "{err}"
        );
    }
}
