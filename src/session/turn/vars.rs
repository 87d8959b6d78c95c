//! What each turn stage's prompt is given: one typed value per stage, built one way.
//!
//! The turn runner builds these from the session, and the corpus renderer
//! (`tune`) from an invented setting, through the same constructors, so the
//! tuned model is trained on the prompts the game sends. Each struct's fields
//! are the variables its `prompts/<stage>/stage.ron` documents (`tests/schema.rs`
//! holds them equal; `compact` is set by the gateway). What a prompt derives
//! (a move as a verb phrase, an outcome without dice, a lore chunk's brief)
//! is derived here and nowhere else.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::types::Calibration;
use crate::rules::standing;
use crate::session::phrasing::{brief, remembered_move, verb_phrase, without_roll};
use crate::transcript::stream::{Kind, Message, StateEntry};

/// Someone a prompt names.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Who {
    pub id: String,
    pub name: String,
}

/// One message of the story as a stage is shown it.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct HistoryLine {
    /// The message's kind, as `Kind::name` gives it.
    pub kind: String,
    pub owner: String,
    pub text: String,
}

impl HistoryLine {
    pub fn of(message: &Message) -> Self {
        Self {
            kind: message.kind.name().to_owned(),
            owner: message.owner.clone(),
            text: message.content.clone(),
        }
    }

    fn is_narration(&self) -> bool {
        self.kind == Kind::Narration.name()
    }
}

/// A retrieved lore chunk: where it comes from, what it says, and its first
/// two sentences for compact prompts.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct LoreLine {
    pub source: String,
    pub text: String,
    pub brief: String,
}

impl LoreLine {
    pub fn new(source: &str, text: &str) -> Self {
        Self {
            source: source.to_owned(),
            text: text.to_owned(),
            brief: brief(text, 2, 240),
        }
    }
}

/// A recalled memory: what happened, when, whether it was a turning point;
/// its first sentence, and the player's move then as a choice could offer it.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct MemoryLine {
    pub turn: u64,
    pub summary: String,
    pub recap: String,
    #[serde(rename = "move")]
    pub move_again: String,
    pub episodic: bool,
}

impl MemoryLine {
    pub fn new(turn: u64, summary: &str, episodic: bool) -> Self {
        Self {
            turn,
            summary: summary.to_owned(),
            recap: brief(summary, 1, 240),
            move_again: remembered_move(summary),
            episodic,
        }
    }
}

/// How an NPC regards the player (seed 002 §4.2.3).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Regard {
    pub id: String,
    pub name: String,
    pub score: f64,
    pub attitude: &'static str,
    pub modifier: i64,
}

impl Regard {
    /// NPC `id`, called `name`, at perception `score`.
    pub fn new(id: &str, name: &str, score: f64) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            score: score.round(),
            attitude: standing::label(score),
            modifier: standing::modifier(score),
        }
    }
}

/// The player's standing with a faction (seed 002 §4.1.4).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Reputation {
    pub id: String,
    pub name: String,
    pub score: f64,
    pub attitude: &'static str,
}

impl Reputation {
    pub fn new(id: &str, name: &str, score: f64) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            score: score.round(),
            attitude: standing::label(score),
        }
    }
}

/// The plot beat a scene steers toward (seed 002 §7.5).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct BeatLine {
    pub id: String,
    pub title: String,
    pub description: String,
    pub mood: Option<String>,
    pub dialogue: Vec<BeatSpeech>,
}

/// A line a beat may put in someone's mouth.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct BeatSpeech {
    pub speaker: String,
    pub line: String,
}

/// A known fact, as prompts list them.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct FactLine {
    pub subject: String,
    pub predicate: String,
    pub object: Value,
}

/// A clock the narrator may see filling.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct ClockLine {
    pub name: String,
    pub value: i64,
    pub max: i64,
}

/// Where and when a narration happens, and who is there.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct NarrateWorld {
    /// The scene's location id (as the scene holds it).
    pub location: Option<Value>,
    pub location_name: String,
    pub time: Option<Value>,
    /// Everyone present, by name.
    pub present: Vec<String>,
    /// Those present but the player and the actor, by name.
    pub others: Vec<String>,
    pub clocks: Vec<ClockLine>,
}

/// What the narrator is told about one intention, before the prompt's derived lines.
#[derive(Clone, Debug)]
pub struct Narrating {
    pub calibration: Calibration,
    pub tone: String,
    pub world: NarrateWorld,
    /// Scene markers and narrations the narrator saw, oldest first.
    pub history: Vec<HistoryLine>,
    pub actor: Who,
    /// The actor is the player.
    pub player: bool,
    pub intention: String,
    pub whisper_to: String,
    /// The check's result in words, with its roll; empty when nothing was rolled.
    pub outcome: String,
    pub blocked: String,
    pub lore: Vec<LoreLine>,
    pub memories: Vec<MemoryLine>,
    pub regard: Vec<Regard>,
    pub beat: Option<BeatLine>,
    pub earlier: Vec<String>,
    pub scene_lore: Value,
    /// What the skills did this turn (the player's narration only).
    pub skills: Vec<String>,
    /// Consequences that fired and are not yet told (#41).
    pub world_does: Vec<String>,
    /// The scene's danger tier in the ruleset's words, or empty.
    pub stakes: String,
    /// What a narration asked for again must keep out (a line or veil it crossed), or empty.
    pub avoid: String,
}

/// `narrate`'s variables (`prompts/narrate/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct NarrateVars {
    pub calibration: Calibration,
    pub tone: String,
    pub world: NarrateWorld,
    pub history: Vec<HistoryLine>,
    pub actor: Who,
    pub intention: String,
    pub whisper_to: String,
    pub outcome: String,
    pub blocked: String,
    pub lore: Vec<LoreLine>,
    pub memories: Vec<MemoryLine>,
    pub regard: Vec<Regard>,
    pub beat: Option<BeatLine>,
    pub earlier: Vec<String>,
    pub scene_lore: Value,
    pub you_do: String,
    pub just_before: String,
    pub outcome_words: String,
    pub skills: Vec<String>,
    pub world_does: Vec<String>,
    pub stakes: String,
    pub avoid: String,
}

impl From<Narrating> for NarrateVars {
    fn from(n: Narrating) -> Self {
        let just_before = n
            .history
            .iter()
            .rev()
            .find(|m| m.is_narration())
            .map(|m| brief(&m.text, 2, 300))
            .filter(|t| reads_as_story(t))
            .unwrap_or_default();
        Self {
            you_do: if n.player {
                verb_phrase(&n.intention)
            } else {
                String::new()
            },
            outcome_words: without_roll(&n.outcome),
            skills: if n.player { n.skills } else { Vec::new() },
            just_before,
            calibration: n.calibration,
            tone: n.tone,
            world: n.world,
            history: n.history,
            actor: n.actor,
            intention: n.intention,
            whisper_to: n.whisper_to,
            outcome: n.outcome,
            blocked: n.blocked,
            lore: n.lore,
            memories: n.memories,
            regard: n.regard,
            beat: n.beat,
            earlier: n.earlier,
            scene_lore: n.scene_lore,
            world_does: n.world_does,
            stakes: n.stakes,
            avoid: n.avoid,
        }
    }
}

/// Whether a narration reads as a story to show again: prose (no markup,
/// no JSON), its dialogue allowed. (`looks_like_prose` alone refuses any
/// quotation mark, which dropped every "Just before" with speech in it: the
/// tuned model was trained on those lines, the game never sent them.)
fn reads_as_story(text: &str) -> bool {
    crate::llm::contract::looks_like_prose(&text.replace('"', ""))
}

/// What the choice stage is told, before the prompt's derived lines.
#[derive(Clone, Debug)]
pub struct Choosing {
    pub calibration: Calibration,
    pub persona: String,
    /// The last narrations, oldest first.
    pub history: Vec<String>,
    pub scene: Map<String, Value>,
    /// Everyone present, the player too, by name.
    pub present: Vec<String>,
    pub lore: Vec<LoreLine>,
    pub memories: Vec<MemoryLine>,
    pub regard: Vec<Regard>,
    pub reputation: Vec<Reputation>,
    pub beat: Option<BeatLine>,
}

/// `choices`' variables (`prompts/choices/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct ChoicesVars {
    pub calibration: Calibration,
    pub persona: String,
    pub history: Vec<String>,
    pub scene: Map<String, Value>,
    pub present: Vec<String>,
    pub lore: Vec<LoreLine>,
    pub memories: Vec<MemoryLine>,
    pub regard: Vec<Regard>,
    pub reputation: Vec<Reputation>,
    pub beat: Option<BeatLine>,
    pub just_now: String,
}

impl From<Choosing> for ChoicesVars {
    fn from(c: Choosing) -> Self {
        Self {
            just_now: c
                .history
                .last()
                .map(|t| brief(t, 2, 240))
                .unwrap_or_default(),
            calibration: c.calibration,
            persona: c.persona,
            history: c.history,
            scene: c.scene,
            present: c.present,
            lore: c.lore,
            memories: c.memories,
            regard: c.regard,
            reputation: c.reputation,
            beat: c.beat,
        }
    }
}

/// Who an NPC is, as its intent prompt shows it (empty parts left out).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Profile {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub role: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personality: Option<Personality>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub motivations: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speech: Option<Speech>,
}

#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Personality {
    pub traits: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flaws: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub virtues: Vec<String>,
}

#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Speech {
    pub style: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// One of an NPC's own observations, with how strongly it recalls it now.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct Remembered {
    pub memory: String,
    pub priority: f64,
}

impl Remembered {
    /// `priority` is shown to two decimals.
    pub fn new(memory: &str, priority: f64) -> Self {
        Self {
            memory: memory.to_owned(),
            priority: (priority * 100.0).round() / 100.0,
        }
    }
}

/// `npc_intent`'s variables (`prompts/npc_intent/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct IntentVars {
    pub calibration: Calibration,
    pub name: String,
    pub profile: Profile,
    pub states: Vec<StateEntry>,
    pub history: Vec<HistoryLine>,
    pub memories: Vec<Remembered>,
    pub scene: Map<String, Value>,
    pub regard: Option<Regard>,
    pub persona: String,
}

/// A check of the ruleset as the referee is shown it.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct CheckLine {
    pub id: String,
    pub when: String,
    pub binds_stat: bool,
    pub stats: Vec<String>,
    pub modifiers: Vec<ModifierLine>,
}

#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct ModifierLine {
    pub name: String,
    pub min: i64,
    pub max: i64,
    pub meaning: String,
}

/// `resolve`'s variables (`prompts/resolve/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct ResolveVars {
    pub place: String,
    pub calibration: Calibration,
    pub rulebook_text: String,
    pub checks: Vec<CheckLine>,
    pub scene: Map<String, Value>,
    pub actor: Who,
    pub intention: String,
    pub stats: Map<String, Value>,
    pub present: Vec<Who>,
    pub inventory: BTreeMap<String, u32>,
    pub facts: Vec<FactLine>,
}

/// `extract`'s variables (`prompts/extract/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct ExtractVars {
    pub calibration: Calibration,
    pub owner: Who,
    pub intention: String,
    pub thoughts: Vec<String>,
    pub history: Vec<String>,
    pub states: Vec<StateEntry>,
    pub stats: Map<String, Value>,
    pub paths: String,
    pub present: Vec<String>,
}

/// `lore_extract`'s variables (`prompts/lore_extract/stage.ron`).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct LoreVars {
    pub narration: String,
    pub known: Vec<FactLine>,
    pub calibration: Calibration,
}

/// `recap`'s variables (`prompts/recap/stage.ron`): a sitting's "Previously…"
/// or a compression of old turns.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct RecapVars {
    pub calibration: Calibration,
    pub persona: String,
    /// Earlier summaries, oldest first.
    pub summaries: Vec<String>,
    /// The narrations (and scene markers) to sum up, oldest first.
    pub events: Vec<String>,
}

/// A stage's variables as the gateway takes them. Serialising these plain
/// structs cannot fail (every map is keyed by strings).
pub fn to_value(vars: &impl Serialize) -> Value {
    serde_json::to_value(vars).unwrap_or_else(|e| {
        tracing::error!("prompt variables did not serialise: {e}");
        Value::Null
    })
}

#[cfg(test)]
mod tests {
    use super::{Calibration, HistoryLine, NarrateVars, NarrateWorld, Narrating, Who};

    fn narrating(just_before: &str) -> Narrating {
        Narrating {
            calibration: Calibration::default(),
            tone: String::new(),
            world: NarrateWorld::default(),
            history: vec![HistoryLine {
                kind: "narration".into(),
                owner: "narrator".into(),
                text: just_before.into(),
            }],
            actor: Who::default(),
            player: true,
            intention: "I ask Hesper about my letter.".into(),
            whisper_to: String::new(),
            outcome: "Failure (6 on 2d6+stat). It does not work.".into(),
            blocked: String::new(),
            lore: Vec::new(),
            memories: Vec::new(),
            regard: Vec::new(),
            beat: None,
            earlier: Vec::new(),
            scene_lore: serde_json::Value::Null,
            skills: vec!["weather: fog".into()],
            world_does: Vec::new(),
            stakes: String::new(),
            avoid: String::new(),
        }
    }

    #[test]
    fn a_narration_with_speech_is_shown_again_and_markup_is_not() {
        let said = NarrateVars::from(narrating(
            "Hesper turns the ledger to the lamp. \"Not here,\" she says. The fog thickens.",
        ));
        assert_eq!(
            said.just_before,
            "Hesper turns the ledger to the lamp. \"Not here,\" she says."
        );
        let garbled = NarrateVars::from(narrating("{\"narration\": \"The fog.\"}"));
        assert_eq!(garbled.just_before, "");
    }

    #[test]
    fn the_derived_lines_are_made_from_the_raw_ones() {
        let vars = NarrateVars::from(narrating("The fog thickens."));
        assert_eq!(vars.you_do, "ask Hesper about your letter");
        assert_eq!(vars.outcome_words, "Failure. It does not work.");
        assert_eq!(vars.skills, ["weather: fog"]);
        let npc = NarrateVars::from(Narrating {
            player: false,
            ..narrating("The fog thickens.")
        });
        assert!(npc.you_do.is_empty() && npc.skills.is_empty());
    }
}
