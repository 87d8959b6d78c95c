//! The fine-tuning corpus: invented settings (`training/settings/*.json`) rendered into the exact chats our prompt registry asks the model, with the answers we wrote.
//!
//! A setting file holds people, places, lore and a ruleset, and situations for
//! three stages (`narrate`, `choices`, `npc_intent`) with the answer we want.
//! [`render`] builds for each situation the variables a session's turn would
//! pass (`session::turn`'s own helpers: [`verb_phrase`], [`brief`],
//! [`without_roll`], [`remembered_move`]; the ruleset's band label and meaning
//! as `apply_check` words them) and renders the stage's newest prompt in the
//! compact form the built-in model keys use. The answer becomes the assistant
//! message. `training/README.md` documents the file format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::llm::backend::{Message, Role};
use crate::llm::prompts::PromptRegistry;
use crate::rules::ruleset::Ruleset;
use crate::session::turn::{brief, remembered_move, verb_phrase, without_roll};

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

/// One rendered training example: the chat, the answer last.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Example {
    pub stage: String,
    pub setting: String,
    /// Which situation of the setting's stage list (for finding it again).
    pub index: usize,
    pub messages: Vec<Message>,
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

/// A stable small number from text (FNV-1a), for choices that must not change between renders.
fn stable(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Everyone in the scene, the player first (as a scene's `present` holds ids).
fn present_ids(present: &[String]) -> Vec<String> {
    std::iter::once("player".to_owned())
        .chain(present.iter().filter(|p| *p != "player").cloned())
        .collect()
}

/// The score a regard word stands for (the middle of `standing::label`'s range).
fn regard_score(attitude: &str) -> f64 {
    match attitude {
        "devoted" => 75.0,
        "warm" => 45.0,
        "cold" => -45.0,
        "hostile" => -75.0,
        _ => 0.0,
    }
}

struct Ctx<'a> {
    setting: &'a Setting,
    ruleset: &'a Ruleset,
}

impl Ctx<'_> {
    fn case_error(&self, stage: &'static str, index: usize, message: String) -> CorpusError {
        CorpusError::Case {
            setting: self.setting.id.clone(),
            stage,
            index,
            message,
        }
    }

    fn name(&self, id: &str) -> String {
        if id == "player" {
            return self.setting.player.clone();
        }
        self.setting
            .people
            .get(id)
            .map_or_else(|| id.to_owned(), |p| p.name.clone())
    }

    fn place(&self, id: &str) -> String {
        self.setting
            .places
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_owned())
    }

    fn calibration(&self) -> Value {
        json!({
            "tone": "",
            "difficulty": self.setting.calibration.difficulty,
            "lines": self.setting.calibration.lines,
            "veils": self.setting.calibration.veils,
        })
    }

    fn regard_vars(&self, regard: &BTreeMap<String, String>, present: &[String]) -> Vec<Value> {
        present
            .iter()
            .filter(|id| *id != "player")
            .map(|id| {
                let attitude = regard.get(id).map_or("neutral", String::as_str);
                let score = regard_score(attitude);
                json!({
                    "id": id,
                    "name": self.name(id),
                    "score": score,
                    "attitude": attitude,
                    "modifier": crate::rules::standing::modifier(score),
                })
            })
            .collect()
    }

    /// The outcome as the turn words it: `"<label> (<total> on <expression>). <meaning>"`.
    fn outcome(&self, band_id: &str, index: usize) -> Result<String, CorpusError> {
        for check in &self.ruleset.mechanics_guidance.checks {
            if let Some(band) = check.bands.iter().find(|b| b.id == band_id) {
                let low = band.min.unwrap_or(band.max.unwrap_or(2) - 4).max(1);
                let high = band.max.unwrap_or(low + 4);
                let span = u64::try_from((high - low + 1).max(1)).unwrap_or(1);
                let pick = stable(&format!("{}{index}", self.setting.id)) % span;
                let total = low + i64::try_from(pick).unwrap_or(0);
                return Ok(format!(
                    "{} ({total} on {}). {}",
                    band.label, check.expression, band.meaning
                ));
            }
        }
        Err(self.case_error(
            "narrate",
            index,
            format!("no band `{band_id}` in ruleset `{}`", self.setting.ruleset),
        ))
    }

    fn narrate_vars(&self, index: usize, case: &NarrateCase) -> Result<Value, CorpusError> {
        let present = present_ids(&case.present);
        let is_player = case.actor == "player";
        let lore: Vec<Value> = if case.lore.is_empty() {
            Vec::new()
        } else {
            let text = self.setting.lore.get(&case.lore).ok_or_else(|| {
                self.case_error("narrate", index, format!("no lore `{}`", case.lore))
            })?;
            vec![json!({"source": case.lore, "text": text, "brief": brief(text, 2, 240)})]
        };
        let memories: Vec<Value> = if case.memory.is_empty() {
            Vec::new()
        } else {
            vec![json!({
                "turn": 1,
                "summary": case.memory,
                "recap": brief(&case.memory, 1, 240),
                "move": remembered_move(&case.memory),
                "episodic": false,
            })]
        };
        let outcome = if case.band.is_empty() {
            String::new()
        } else {
            self.outcome(&case.band, index)?
        };
        let beat = case.beat.as_ref().map_or(Value::Null, |b| {
            let dialogue: Vec<Value> = if b.line.is_empty() {
                Vec::new()
            } else {
                vec![json!({"speaker": self.name(&b.speaker), "line": b.line})]
            };
            json!({"id": "beat", "title": "", "description": b.description, "mood": "", "dialogue": dialogue})
        });
        let history: Vec<Value> = if case.just_before.is_empty() {
            Vec::new()
        } else {
            vec![json!({"kind": "narration", "owner": "player", "text": case.just_before})]
        };
        Ok(json!({
            "compact": true,
            "calibration": self.calibration(),
            "tone": self.setting.tone,
            "world": {
                "location": case.place,
                "location_name": self.place(&case.place),
                "time": case.time,
                "present": present.iter().map(|id| self.name(id)).collect::<Vec<_>>(),
                "others": present.iter().filter(|id| *id != "player" && **id != case.actor).map(|id| self.name(id)).collect::<Vec<_>>(),
                "clocks": [],
            },
            "history": history,
            "actor": {"id": case.actor, "name": self.name(&case.actor)},
            "intention": case.action,
            "whisper_to": if case.whisper_to.is_empty() { String::new() } else { self.name(&case.whisper_to) },
            "outcome": outcome,
            "blocked": case.blocked,
            "lore": lore,
            "memories": memories,
            "regard": self.regard_vars(&case.regard, &present),
            "beat": beat,
            "earlier": [],
            "scene_lore": null,
            "you_do": if is_player { verb_phrase(&case.action) } else { String::new() },
            "just_before": if case.just_before.is_empty() { String::new() } else { brief(&case.just_before, 2, 300) },
            "outcome_words": without_roll(&outcome),
        }))
    }

    fn choices_vars(&self, case: &ChoicesCase) -> Value {
        let present = present_ids(&case.present);
        let memories: Vec<Value> = if case.memory_move.is_empty() {
            Vec::new()
        } else {
            let summary = format!(
                "At {}, {}{}.",
                self.place(&case.place),
                crate::session::turn::TRIED,
                verb_phrase(&case.memory_move)
            );
            vec![json!({
                "turn": 1,
                "recap": brief(&summary, 1, 240),
                "move": remembered_move(&summary),
                "summary": summary,
                "episodic": false,
            })]
        };
        let beat = if case.beat.is_empty() {
            Value::Null
        } else {
            json!({"id": "beat", "title": case.beat, "description": "", "mood": "", "dialogue": []})
        };
        json!({
            "compact": true,
            "calibration": self.calibration(),
            "persona": self.setting.player,
            "history": [case.just_now],
            "scene": {"location": case.place, "time": case.time, "present": present},
            "present": present.iter().map(|id| self.name(id)).collect::<Vec<_>>(),
            "lore": [],
            "memories": memories,
            "beat": beat,
            "regard": self.regard_vars(&case.regard, &present),
            "reputation": [],
            "just_now": brief(&case.just_now, 2, 240),
        })
    }

    fn intent_vars(&self, case: &IntentCase) -> Value {
        let present = present_ids(&case.present);
        let person = self.setting.people.get(&case.npc);
        let profile = person.map_or(json!({}), |p| {
            json!({
                "role": p.role,
                "personality": {"traits": p.personality.split(", ").collect::<Vec<_>>()},
                "motivations": [p.motivations],
                "speech": {"style": p.speech},
            })
        });
        let states: Vec<Value> = case
            .states
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value, "level": 6}))
            .collect();
        let count = case.memories.len();
        let memories: Vec<Value> = case
            .memories
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let rank = f64::from(u32::try_from(i).unwrap_or(u32::MAX));
                let all = f64::from(u32::try_from(count.max(1)).unwrap_or(1));
                let priority = 0.9 - 0.5 * rank / all;
                json!({"memory": m, "priority": (priority * 100.0).round() / 100.0})
            })
            .collect();
        let history: Vec<Value> = case
            .history
            .iter()
            .map(|h| json!({"kind": h.kind, "owner": case.npc, "text": h.text}))
            .collect();
        let score = regard_score(&case.regard);
        json!({
            "calibration": self.calibration(),
            "name": self.name(&case.npc),
            "profile": profile,
            "states": states,
            "history": history,
            "memories": memories,
            "scene": {"location": case.place, "time": case.time, "present": present},
            "regard": {
                "id": "player",
                "name": self.setting.player,
                "score": score,
                "attitude": case.regard,
                "modifier": crate::rules::standing::modifier(score),
            },
            "persona": self.setting.player,
        })
    }
}

fn chat(
    registry: &PromptRegistry,
    stage: &str,
    vars: &Value,
    answer: String,
) -> Result<Vec<Message>, String> {
    let mut messages = registry
        .render(stage, None, vars)
        .map_err(|e| e.to_string())?
        .messages;
    messages.push(Message::new(Role::Assistant, answer));
    Ok(messages)
}

/// Every example of every setting, rendered with the newest prompt versions.
pub fn render(
    settings: &[Setting],
    registry: &PromptRegistry,
    ruleset_dirs: &[PathBuf],
) -> Result<Vec<Example>, CorpusError> {
    let mut out = Vec::new();
    for setting in settings {
        let ruleset =
            Ruleset::find(&setting.ruleset, ruleset_dirs).map_err(|e| CorpusError::File {
                path: PathBuf::from(format!("{}.json", setting.id)),
                message: e.to_string(),
            })?;
        let ctx = Ctx {
            setting,
            ruleset: &ruleset,
        };
        let example =
            |stage: &'static str, index: usize, messages: Result<Vec<Message>, String>| {
                messages
                    .map(|messages| Example {
                        stage: stage.to_owned(),
                        setting: setting.id.clone(),
                        index,
                        messages,
                    })
                    .map_err(|m| ctx.case_error(stage, index, m))
            };
        for (i, case) in setting.narrate.iter().enumerate() {
            let vars = ctx.narrate_vars(i, case)?;
            out.push(example(
                "narrate",
                i,
                chat(registry, "narrate", &vars, case.answer.trim().to_owned()),
            )?);
        }
        for (i, case) in setting.choices.iter().enumerate() {
            let answer =
                serde_json::to_string(&json!({"choices": case.answer})).unwrap_or_default();
            out.push(example(
                "choices",
                i,
                chat(registry, "choices", &ctx.choices_vars(case), answer),
            )?);
        }
        for (i, case) in setting.npc_intent.iter().enumerate() {
            let answer = serde_json::to_string(&case.answer).unwrap_or_default();
            out.push(example(
                "npc_intent",
                i,
                chat(registry, "npc_intent", &ctx.intent_vars(case), answer),
            )?);
        }
    }
    Ok(out)
}

/// Which settings are held out of training, whole (`training/split.json`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    pub heldout: Vec<String>,
}

/// Counts per stage and split, for the command's summary.
pub fn summary(train: &[&Example], heldout: &[&Example]) -> String {
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (split, set) in [("train", train), ("heldout", heldout)] {
        for e in set {
            *counts.entry((e.stage.as_str(), split)).or_default() += 1;
        }
    }
    let mut out = String::new();
    let stages: std::collections::BTreeSet<&str> = counts.keys().map(|(s, _)| *s).collect();
    for stage in stages {
        let _ = writeln!(
            out,
            "{stage}: {} train, {} held out",
            counts.get(&(stage, "train")).unwrap_or(&0),
            counts.get(&(stage, "heldout")).unwrap_or(&0)
        );
    }
    out
}

/// How one generated narration reads, by the checks the narrator corpus is
/// written to (`training/README.md`) and the draft judge uses.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent findings about one narration, reported as they are"
)]
pub struct NarrationCheck {
    /// Prose, no assistant/meta/script talk, no first-person narrator outside
    /// quotes, and for the player's narration the second person.
    pub in_voice: bool,
    pub prose: bool,
    pub assistant: bool,
    pub first_person: bool,
    pub second_person: bool,
    /// Names a person, place or thing the prompt named.
    pub grounded: bool,
    /// 12 to 90 words.
    pub length_ok: bool,
    /// A sentence said twice.
    pub repeats: bool,
    pub words: usize,
}

/// Judges a narration written for a prompt that named `names`.
pub fn check_narration(text: &str, player: bool, names: &[String]) -> NarrationCheck {
    use crate::session::drafts::{first_person, off_voice, reads_as_prose};
    let words = text.split_whitespace().count();
    let second_person = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "you" | "your" | "you're" | "yourself"
            )
        });
    let sentences = crate::memory::chunk::sentences(text);
    let mut seen = std::collections::HashSet::new();
    let repeats = sentences
        .iter()
        .any(|s| s.split_whitespace().count() >= 3 && !seen.insert(s.to_lowercase()));
    let prose = reads_as_prose(text);
    let assistant = off_voice(text);
    let first = first_person(text);
    NarrationCheck {
        in_voice: prose && !assistant && !first && (!player || second_person),
        prose,
        assistant,
        first_person: first,
        second_person,
        grounded: mentions(text, names),
        length_ok: (12..=90).contains(&words),
        repeats,
        words,
    }
}

/// The proper names a narrate prompt shows: the place, the people present, the
/// acting character, those whose regard it states, and the capitalised words
/// inside its other lines (not a sentence's first word, which any sentence
/// capitalises). Names of three letters count (`Pim`, `Fen`).
pub fn prompt_names(user_prompt: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in user_prompt.lines() {
        // `Vera Lisle is warm toward you.`: the line opens with a name.
        let mut first = !line.trim_end_matches('.').ends_with(" toward you");
        for raw in line.split_whitespace() {
            let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            let w = w.trim_end_matches("'s");
            if raw.ends_with(':') {
                // `Place:`, `Also here:`, `Now:` and `… tries:` are followed by
                // names; other labels by sentences.
                first = !matches!(w, "Place" | "here" | "Now" | "tries");
                continue;
            }
            if !first && w.chars().next().is_some_and(char::is_uppercase) && w.chars().count() >= 3
            {
                names.push(w.to_owned());
            }
            first = raw.ends_with(['.', '!', '?']);
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Whether `text` says one of `names` (a whole word, as capitalised, or its
/// possessive).
pub fn mentions(text: &str, names: &[String]) -> bool {
    let said: std::collections::HashSet<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .map(|w| w.trim_matches('\'').trim_end_matches("'s"))
        .collect();
    names.iter().any(|n| said.contains(n.as_str()))
}

/// Six-word runs of the corpus's answers, to measure copying: the share of a
/// generated text's runs found verbatim in the corpus.
#[derive(Clone, Debug, Default)]
pub struct Shingles {
    runs: std::collections::HashSet<String>,
}

/// The run length copying is measured in.
pub const SHINGLE: usize = 6;

fn runs_of(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(SHINGLE).map(|w| w.join(" ")).collect()
}

impl Shingles {
    /// The runs of every answer in `examples`.
    pub fn of(examples: &[Example]) -> Self {
        let runs = examples
            .iter()
            .filter_map(|e| e.messages.last())
            .flat_map(|m| runs_of(&m.content))
            .collect();
        Self { runs }
    }

    /// (runs of `text` found in the corpus, all runs of `text`).
    pub fn copied(&self, text: &str) -> (usize, usize) {
        let runs = runs_of(text);
        let found = runs.iter().filter(|r| self.runs.contains(*r)).count();
        (found, runs.len())
    }
}

/// Reads a `train.jsonl`/`heldout.jsonl` file.
pub fn read_jsonl(path: &Path) -> Result<Vec<Example>, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|e| CorpusError::File {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| CorpusError::File {
                path: path.to_owned(),
                message: format!("line {}: {e}", i + 1),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narration_checks_tell_voice_and_grounding() {
        let names = vec!["Hesper".to_owned(), "Reedmere".to_owned()];
        let good = check_narration(
            "Hesper Vane looks at the green lantern and shrugs. \"Ask the Reeve,\" she says, and you feel the deck tilt.",
            true,
            &names,
        );
        assert!(
            good.in_voice && good.grounded && good.length_ok && !good.repeats,
            "{good:?}"
        );
        let bad = check_narration(
            "I hope this helps! The story continues with a dragon. The story continues with a dragon.",
            true,
            &names,
        );
        assert!(
            !bad.in_voice && bad.assistant && bad.first_person && bad.repeats && !bad.grounded,
            "{bad:?}"
        );
        let npc = check_narration(
            "Hesper Vane hauls on the chain until the ferry groans.",
            false,
            &names,
        );
        assert!(npc.in_voice, "an NPC's narration need not say you: {npc:?}");
    }

    #[test]
    fn prompt_names_are_the_capitalised_words_inside_lines() {
        let names = prompt_names(
            "Place: Reedmere Quay, dusk. Also here: Hesper Vane.\nNow: you ask Hesper about the Patience.",
        );
        for n in ["Reedmere", "Quay", "Hesper", "Vane", "Patience"] {
            assert!(names.contains(&n.to_owned()), "{n} in {names:?}");
        }
        assert!(!names.contains(&"Also".to_owned()) && !names.contains(&"Place".to_owned()));
        let npc = prompt_names(
            "Vera Lisle is warm toward you.\nNow: Tommy Baird tries: Pim tries to cut the rag.\nThe rain falls.",
        );
        for n in ["Vera", "Lisle", "Tommy", "Baird", "Pim"] {
            assert!(npc.contains(&n.to_owned()), "{n} in {npc:?}");
        }
        assert!(!npc.contains(&"The".to_owned()), "{npc:?}");
    }

    #[test]
    fn mentions_match_whole_names_and_possessives() {
        let names = vec!["Pim".to_owned(), "Hesper".to_owned()];
        assert!(mentions("You hand Pim's knife back.", &names));
        assert!(mentions("'Hesper,' you say.", &names));
        assert!(!mentions(
            "A pimple of rust; hesper is not said as a name.",
            &names
        ));
    }

    #[test]
    fn copying_counts_six_word_runs() {
        let e = Example {
            stage: "narrate".into(),
            setting: "x".into(),
            index: 0,
            messages: vec![Message::new(
                Role::Assistant,
                "The rungs are slick with ash-water and grey grit.",
            )],
        };
        let s = Shingles::of(&[e]);
        assert_eq!(
            s.copied("You see the rungs are slick with ash-water, friend."),
            (1, 4)
        );
        assert_eq!(
            s.copied("Nothing here matches at all, not one run."),
            (0, 3)
        );
    }
}
