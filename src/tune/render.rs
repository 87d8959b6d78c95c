//! The corpus rendered: each situation of a setting through the turn's own prompt builders.
//!
//! A situation becomes the stage's typed variables (`session::turn::vars`)
//! by the constructors the turn uses, so what the model is trained on is what
//! the game sends; then the stage's newest prompt renders in the compact form
//! the built-in model keys use, and the written answer is the assistant message.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::examples::Example;
use super::settings::{
    ChoicesCase, CorpusError, IntentCase, LoreCase, NarrateCase, RecapCase, Setting,
};
use crate::llm::backend::{Message, Role};
use crate::llm::prompts::PromptRegistry;
use crate::rules::ruleset::Ruleset;
use crate::session::phrasing::{TRIED, verb_phrase};
use crate::session::turn::Calibration;
use crate::session::turn::vars::{
    BeatLine, BeatSpeech, ChoicesVars, Choosing, FactLine, HistoryLine, IntentVars, LoreLine,
    LoreVars, MemoryLine, NarrateVars, NarrateWorld, Narrating, Personality, Profile, RecapVars,
    Regard, Remembered, Speech, Who, to_value,
};
use crate::transcript::stream::{Kind, NARRATOR, StateEntry};

/// The player's id in every setting (as in every campaign).
const PLAYER: &str = crate::campaign::PLAYER;

/// A stable small number from text (FNV-1a), for choices that must not change between renders.
fn stable(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Everyone in the scene, the player first (as a scene's `present` holds ids).
fn present_ids(present: &[String]) -> Vec<String> {
    std::iter::once(PLAYER.to_owned())
        .chain(present.iter().filter(|p| *p != PLAYER).cloned())
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

/// A scene as a session's world holds it: where, when, who.
fn scene(place: &str, time: &str, present: &[String]) -> Map<String, Value> {
    let mut scene = Map::new();
    scene.insert("location".into(), json!(place));
    scene.insert("time".into(), json!(time));
    scene.insert("present".into(), json!(present));
    scene
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
        if id == PLAYER {
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

    fn who(&self, id: &str) -> Who {
        Who {
            id: id.to_owned(),
            name: self.name(id),
        }
    }

    fn calibration(&self) -> Calibration {
        let spec = &self.setting.calibration;
        Calibration {
            tone: String::new(),
            difficulty: spec.difficulty.clone(),
            lines: spec.lines.clone(),
            veils: spec.veils.clone(),
            npcs_per_turn: None,
        }
    }

    /// How each NPC present regards the player, by the setting's words.
    fn regard(&self, regard: &BTreeMap<String, String>, present: &[String]) -> Vec<Regard> {
        present
            .iter()
            .filter(|id| *id != PLAYER)
            .map(|id| {
                let attitude = regard.get(id).map_or("neutral", String::as_str);
                Regard::new(id, &self.name(id), regard_score(attitude))
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

    fn narrate_vars(&self, index: usize, case: &NarrateCase) -> Result<NarrateVars, CorpusError> {
        let present = present_ids(&case.present);
        let lore = if case.lore.is_empty() {
            Vec::new()
        } else {
            let text = self.setting.lore.get(&case.lore).ok_or_else(|| {
                self.case_error("narrate", index, format!("no lore `{}`", case.lore))
            })?;
            vec![LoreLine::new(&case.lore, text)]
        };
        let memories = if case.memory.is_empty() {
            Vec::new()
        } else {
            vec![MemoryLine::new(1, &case.memory, false)]
        };
        let outcome = if case.band.is_empty() {
            String::new()
        } else {
            self.outcome(&case.band, index)?
        };
        let beat = case.beat.as_ref().map(|b| BeatLine {
            id: "beat".into(),
            title: String::new(),
            description: b.description.clone(),
            mood: Some(String::new()),
            dialogue: if b.line.is_empty() {
                Vec::new()
            } else {
                vec![BeatSpeech {
                    speaker: self.name(&b.speaker),
                    line: b.line.clone(),
                }]
            },
        });
        let history = if case.just_before.is_empty() {
            Vec::new()
        } else {
            vec![HistoryLine {
                kind: Kind::Narration.name().to_owned(),
                owner: NARRATOR.to_owned(),
                text: case.just_before.clone(),
            }]
        };
        Ok(NarrateVars::from(Narrating {
            calibration: self.calibration(),
            tone: self.setting.tone.clone(),
            world: NarrateWorld {
                location: Some(json!(case.place)),
                location_name: self.place(&case.place),
                time: Some(json!(case.time)),
                present: present.iter().map(|id| self.name(id)).collect(),
                others: present
                    .iter()
                    .filter(|id| *id != PLAYER && **id != case.actor)
                    .map(|id| self.name(id))
                    .collect(),
                clocks: Vec::new(),
            },
            history,
            actor: self.who(&case.actor),
            player: case.actor == PLAYER,
            intention: case.action.clone(),
            whisper_to: if case.whisper_to.is_empty() {
                String::new()
            } else {
                self.name(&case.whisper_to)
            },
            outcome,
            blocked: case.blocked.clone(),
            lore,
            memories,
            regard: self.regard(&case.regard, &present),
            beat,
            earlier: Vec::new(),
            scene_lore: Value::Null,
            skills: Vec::new(),
            world_does: case.meanwhile.clone(),
            stakes: String::new(),
            avoid: String::new(),
        }))
    }

    fn choices_vars(&self, case: &ChoicesCase) -> ChoicesVars {
        let present = present_ids(&case.present);
        let memories = if case.memory_move.is_empty() {
            Vec::new()
        } else {
            let summary = format!(
                "At {}, {TRIED}{}.",
                self.place(&case.place),
                verb_phrase(&case.memory_move)
            );
            vec![MemoryLine::new(1, &summary, false)]
        };
        let beat = (!case.beat.is_empty()).then(|| BeatLine {
            id: "beat".into(),
            title: case.beat.clone(),
            description: String::new(),
            mood: Some(String::new()),
            dialogue: Vec::new(),
        });
        ChoicesVars::from(Choosing {
            calibration: self.calibration(),
            persona: self.setting.player.clone(),
            history: vec![case.just_now.clone()],
            scene: scene(&case.place, &case.time, &present),
            present: present.iter().map(|id| self.name(id)).collect(),
            lore: Vec::new(),
            memories,
            regard: self.regard(&case.regard, &present),
            reputation: Vec::new(),
            beat,
        })
    }

    fn intent_vars(&self, case: &IntentCase) -> IntentVars {
        let present = present_ids(&case.present);
        let profile = self
            .setting
            .people
            .get(&case.npc)
            .map(|p| Profile {
                role: p.role.clone(),
                personality: Some(Personality {
                    traits: p.personality.split(", ").map(str::to_owned).collect(),
                    ..Personality::default()
                }),
                motivations: vec![p.motivations.clone()],
                speech: Some(Speech {
                    style: p.speech.clone(),
                    ..Speech::default()
                }),
            })
            .unwrap_or_default();
        let count = case.memories.len();
        let memories = case
            .memories
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let rank = f64::from(u32::try_from(i).unwrap_or(u32::MAX));
                let all = f64::from(u32::try_from(count.max(1)).unwrap_or(1));
                Remembered::new(m, 0.9 - 0.5 * rank / all)
            })
            .collect();
        IntentVars {
            calibration: self.calibration(),
            name: self.name(&case.npc),
            profile,
            states: case
                .states
                .iter()
                .map(|(name, value)| StateEntry {
                    name: name.clone(),
                    value: value.clone(),
                    level: crate::transcript::stream::MANIFEST_LEVEL,
                })
                .collect(),
            history: case
                .history
                .iter()
                .map(|h| HistoryLine {
                    kind: h.kind.clone(),
                    owner: case.npc.clone(),
                    text: h.text.clone(),
                })
                .collect(),
            memories,
            scene: scene(&case.place, &case.time, &present),
            regard: Some(Regard::new(
                &case.npc,
                &self.name(&case.npc),
                regard_score(&case.regard),
            )),
            persona: self.setting.player.clone(),
        }
    }

    fn recap_vars(&self, case: &RecapCase) -> RecapVars {
        RecapVars {
            calibration: self.calibration(),
            persona: self.setting.player.clone(),
            summaries: case.summaries.clone(),
            events: case.events.clone(),
        }
    }

    fn lore_vars(&self, case: &LoreCase) -> LoreVars {
        LoreVars {
            narration: case.narration.clone(),
            known: case
                .known
                .iter()
                .map(|f| FactLine {
                    subject: f.subject.clone(),
                    predicate: f.predicate.clone(),
                    object: Value::String(f.object.clone()),
                })
                .collect(),
            calibration: self.calibration(),
        }
    }
}

/// The stage's newest prompt for `vars`, in the compact form the built-in
/// model keys ask for (the gateway sets `compact` the same way), then `answer`.
pub(super) fn chat(
    registry: &PromptRegistry,
    stage: &str,
    vars: Value,
    answer: String,
) -> Result<Vec<Message>, String> {
    let mut vars = vars;
    if let Value::Object(map) = &mut vars {
        map.insert("compact".into(), Value::Bool(true));
    }
    let mut messages = registry
        .render(stage, None, &vars)
        .map_err(|e| e.to_string())?
        .messages;
    messages.push(Message::new(Role::Assistant, answer));
    Ok(messages)
}

/// A structured answer as the model should write it (its serde form).
fn answer_json(answer: &impl serde::Serialize) -> String {
    serde_json::to_string(answer).unwrap_or_default()
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
        // One example: the stage's prompt for `vars`, then the written answer.
        let example = |stage: &'static str, index: usize, vars: Value, answer: String| {
            chat(registry, stage, vars, answer)
                .map(|messages| Example {
                    stage: stage.to_owned(),
                    setting: setting.id.clone(),
                    index,
                    messages,
                })
                .map_err(|m| ctx.case_error(stage, index, m))
        };
        for (i, case) in setting.narrate.iter().enumerate() {
            let vars = to_value(&ctx.narrate_vars(i, case)?);
            out.push(example("narrate", i, vars, case.answer.trim().to_owned())?);
        }
        for (i, case) in setting.choices.iter().enumerate() {
            let answer = answer_json(&json!({"choices": case.answer}));
            out.push(example(
                "choices",
                i,
                to_value(&ctx.choices_vars(case)),
                answer,
            )?);
        }
        for (i, case) in setting.npc_intent.iter().enumerate() {
            let answer = answer_json(&case.answer);
            out.push(example(
                "npc_intent",
                i,
                to_value(&ctx.intent_vars(case)),
                answer,
            )?);
        }
        for (i, case) in setting.recap.iter().enumerate() {
            let answer = case.answer.trim().to_owned();
            out.push(example(
                "recap",
                i,
                to_value(&ctx.recap_vars(case)),
                answer,
            )?);
        }
        for (i, case) in setting.lore_extract.iter().enumerate() {
            let answer = answer_json(&case.answer);
            out.push(example(
                "lore_extract",
                i,
                to_value(&ctx.lore_vars(case)),
                answer,
            )?);
        }
    }
    Ok(out)
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
