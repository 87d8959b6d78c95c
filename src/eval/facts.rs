//! What one played turn shows, measured by engine code: move, outcome, words, cost.

use serde::{Deserialize, Serialize};

use super::player::Move;
use crate::campaign::Campaign;
use crate::rules::WorldState;
use crate::session::continuity::{self as checks, Hit, Outcome};
use crate::session::turn::{PERSONA, SessionState, TurnResult};
use crate::transcript::Kind;

/// One narration of a turn and how it reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Narration {
    /// Whose intention it narrates (the persona's first).
    pub owner: String,
    pub text: String,
    /// Written by the engine (a blocked move, a consequence left untold), not a model.
    #[serde(default)]
    pub by_engine: bool,
    pub words: usize,
    pub in_voice: bool,
    pub grounded: bool,
    /// A sentence said twice in it, or said in an earlier turn of the run.
    pub repeated_sentences: usize,
    /// Six-word runs found verbatim in the narrator corpus, of all its runs.
    pub copied_runs: usize,
    pub runs: usize,
}

/// Where the turn's time and tokens went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub first_words_ms: Option<f64>,
    pub choices_ms: Option<f64>,
    /// The commit, as the controller wrote it.
    pub commit_ms: f64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cached_tokens: u64,
    pub model_calls: usize,
}

/// Lore this turn was shown (seed 001 v1 metrics).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lore {
    pub retrieved: usize,
    /// Chunks that name the scene's place, someone present, or a word of the move.
    pub relevant: usize,
    /// The scene's lore brief came from the cache.
    pub cached: bool,
}

/// Everything measured of one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnFacts {
    pub turn: usize,
    pub scene_index: i64,
    #[serde(rename = "move")]
    pub mv: Move,
    /// What the engine decided for the move; `None` when the turn failed.
    pub outcome: Option<Outcome>,
    /// The referee asked one question before the turn could go on.
    pub clarified: bool,
    /// The turn failed (a stage's answer never came right): the fallback narrated it.
    pub failed: Option<String>,
    pub narrations: Vec<Narration>,
    pub contradictions: Vec<Hit>,
    /// A failed or ruled-out move told as done.
    pub outcome_honoured: bool,
    pub choices: Vec<String>,
    pub generic_choices: bool,
    pub ops_proposed: usize,
    pub ops_refused: usize,
    pub cost: Cost,
    pub lore: Lore,
    /// Where the scene is after the turn, and the NPCs there.
    pub place: String,
    pub present: Vec<String>,
    /// Clocks that moved (id, before, after) and triggers that fired.
    pub clocks: Vec<(String, i64, i64)>,
    pub fired: Vec<String>,
    /// Consequences of `fired` a narration of the turn tells (`tells`).
    #[serde(default)]
    pub fired_narrated: usize,
    /// Consequences the engine told itself, the narration having left them out.
    #[serde(default)]
    pub appended: usize,
    /// Narrations told again live because they contradicted the world
    /// (`session::turn::retell`), and of those, how many kept the second telling.
    #[serde(default)]
    pub retold: usize,
    #[serde(default)]
    pub retold_kept_second: usize,
    /// People, items, places and threads the turn brought into the world: (id, kind, name).
    #[serde(default)]
    pub introduced: Vec<(String, String, String)>,
    /// What the player holds after the turn (item ids).
    #[serde(default)]
    pub held: Vec<String>,
    /// Threads by status after the turn, and beats triggered so far.
    pub threads: Vec<(String, String)>,
    pub beats: Vec<String>,
}

impl TurnFacts {
    /// A planted invalid move the engine let happen (not ruled out, no question).
    pub fn accepted_invalid(&self) -> Option<bool> {
        self.mv.invalid?;
        Some(!self.clarified && !matches!(self.outcome, Some(Outcome::Blocked) | None))
    }
}

/// How many of the turn's continuity notes end with `end`.
fn ending(result: &TurnResult, end: &str) -> usize {
    result
        .continuity
        .iter()
        .filter(|c| c.ends_with(end))
        .count()
}

/// What the engine decided for the persona's move in `result`.
pub fn outcome(result: &TurnResult) -> Outcome {
    if result.blocked.is_some() {
        return Outcome::Blocked;
    }
    let ruled_out = result.records.iter().any(|r| {
        r.stage == "resolve"
            && r.output
                .as_ref()
                .and_then(|o| o.get("possible"))
                .and_then(serde_json::Value::as_bool)
                == Some(false)
    });
    if ruled_out {
        return Outcome::Blocked;
    }
    result
        .rolls
        .iter()
        .find(|r| r.actor == PERSONA && r.against.is_none())
        .map_or(Outcome::Unrolled, |r| Outcome::of_band(&r.band))
}

/// What a turn brought into the world: (id, kind, name) of each person,
/// item, place and thread `world` has that `before` had not.
fn introduced_by(before: &WorldState, world: &WorldState) -> Vec<(String, String, String)> {
    let kind_word = |k: crate::rules::op::NewKind| {
        serde_json::to_value(k)
            .ok()
            .and_then(|k| k.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    world
        .introduced
        .iter()
        .filter(|(id, _)| !before.introduced.contains_key(*id))
        .map(|(id, i)| (id.clone(), kind_word(i.kind), i.name.clone()))
        .chain(
            world
                .threads
                .iter()
                .filter(|(id, _)| !before.threads.contains_key(*id))
                .map(|(id, t)| (id.clone(), "thread".to_owned(), t.title.clone())),
        )
        .collect()
}

/// The six-word runs of `text`, lower-cased.
pub fn runs(text: &str) -> Vec<String> {
    let ws: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    ws.windows(6).map(|w| w.join(" ")).collect()
}

/// What the turn's measures read, besides the turn itself.
pub struct Context<'a> {
    pub campaign: &'a Campaign,
    /// The state the turn began from.
    pub before: &'a SessionState,
    /// Six-word runs of the narrator corpus's answers (empty: not installed).
    pub corpus: &'a std::collections::HashSet<String>,
    /// Sentences narrated earlier in the run, lower-cased.
    pub said: &'a mut std::collections::HashSet<String>,
}

/// The narrations of `result` and how each reads.
fn narrations(result: &TurnResult, ctx: &mut Context<'_>) -> Vec<Narration> {
    // The narrator's prompts name who and what it may ground the story in.
    let names: Vec<String> = result
        .records
        .iter()
        .filter(|r| r.stage == "narrate")
        .filter_map(|r| r.attempts.first())
        .filter_map(|a| a.messages.last())
        .flat_map(|m| crate::session::voice::prompt_names(&m.content))
        .collect();
    let mut owner = PERSONA.to_owned();
    let mut out = Vec::new();
    for m in &result.messages {
        if m.kind == Kind::Intention {
            owner.clone_from(&m.owner);
            continue;
        }
        if m.kind != Kind::Narration {
            continue;
        }
        let check = crate::session::voice::check_narration(&m.content, owner == PERSONA, &names);
        let sentences = crate::memory::chunk::sentences(&m.content);
        let repeated = sentences
            .iter()
            .filter(|s| s.split_whitespace().count() >= 3)
            .filter(|s| !ctx.said.insert(s.to_lowercase()))
            .count();
        let runs = runs(&m.content);
        let copied = runs.iter().filter(|r| ctx.corpus.contains(*r)).count();
        out.push(Narration {
            owner: owner.clone(),
            by_engine: m.owner == crate::transcript::stream::ENGINE,
            text: m.content.clone(),
            words: check.words,
            in_voice: check.in_voice,
            grounded: check.grounded,
            repeated_sentences: repeated,
            copied_runs: copied,
            runs: runs.len(),
        });
    }
    out
}

/// The lore `result` was shown, and how much of it the scene bears out.
fn lore(result: &TurnResult, mv: &str, campaign: &Campaign, world: &WorldState) -> Lore {
    let mut anchors: Vec<String> = world
        .present()
        .iter()
        .filter_map(|id| campaign.characters.get(id))
        .map(|c| c.name.to_lowercase())
        .collect();
    if let Some(place) = world
        .scene
        .get("location")
        .and_then(serde_json::Value::as_str)
        .and_then(|id| campaign.locations.get(id))
    {
        anchors.push(place.name.to_lowercase());
    }
    anchors.extend(
        mv.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 4)
            .map(str::to_lowercase),
    );
    let retrieved = result.recalled.lore.len();
    let relevant = result
        .recalled
        .lore
        .iter()
        .filter(|h| {
            let text = h.text.to_lowercase();
            anchors.iter().any(|a| text.contains(a.as_str()))
        })
        .count();
    Lore {
        retrieved,
        relevant,
        cached: result.recalled.scene_cached,
    }
}

/// The facts of a committed turn.
pub fn of_turn(
    turn: usize,
    scene_index: i64,
    mv: Move,
    clarified: bool,
    result: &TurnResult,
    commit_ms: f64,
    ctx: &mut Context<'_>,
) -> TurnFacts {
    let outcome = outcome(result);
    let narrations = narrations(result, ctx);
    let scene = checks::Scene::of(ctx.campaign, &result.world);
    // The engine's own lines (a blocked move, a consequence) are read out of
    // the world itself ("Ned Fallow has it"): only the models' are checked.
    let contradictions = narrations
        .iter()
        .filter(|n| !n.by_engine)
        .flat_map(|n| checks::contradictions(&n.text, &scene))
        .collect();
    let persona_narration = narrations
        .iter()
        .filter(|n| n.owner == PERSONA)
        .map(|n| n.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let outcome_honoured = checks::honours(outcome, &mv.text, &persona_narration);
    let usage = result
        .records
        .iter()
        .flat_map(|r| &r.attempts)
        .map(|a| &a.usage);
    let cost = Cost {
        first_words_ms: result.budget.first_narration_ms,
        choices_ms: result.budget.choices_ms,
        commit_ms,
        tokens_in: usage.clone().map(|u| u64::from(u.tokens_in)).sum(),
        tokens_out: usage.clone().map(|u| u64::from(u.tokens_out)).sum(),
        cached_tokens: usage.map(|u| u64::from(u.cached_tokens)).sum(),
        model_calls: result.records.len(),
    };
    let world = &result.world;
    let before = &ctx.before.world;
    let clocks = world
        .clocks
        .iter()
        .filter_map(|(id, c)| {
            let was = before.clocks.get(id).map_or(0, |b| b.value);
            (was != c.value).then(|| (id.clone(), was, c.value))
        })
        .collect();
    let fired = result.fired.clone();
    let fired_narrated = fired
        .iter()
        .filter(|f| {
            narrations
                .iter()
                .any(|n: &Narration| crate::session::turn::tells(&n.text, f))
        })
        .count();
    TurnFacts {
        turn,
        scene_index,
        lore: lore(result, &mv.text, ctx.campaign, world),
        mv,
        outcome: Some(outcome),
        clarified,
        failed: None,
        narrations,
        contradictions,
        outcome_honoured,
        choices: result.choices.clone(),
        generic_choices: result.generic_choices,
        ops_proposed: result.ops_proposed,
        ops_refused: result.ops_refused,
        cost,
        place: world
            .scene
            .get("location")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        present: world.present(),
        clocks,
        fired,
        fired_narrated,
        appended: result.appended.len(),
        retold: ending(result, crate::session::turn::ASKED_AGAIN),
        retold_kept_second: ending(result, crate::session::turn::KEPT_SECOND),
        introduced: introduced_by(before, world),
        held: world
            .inventory
            .get(PERSONA)
            .map(|h| h.keys().cloned().collect())
            .unwrap_or_default(),
        threads: world
            .threads
            .values()
            .map(|t| (t.id.clone(), t.status.clone()))
            .collect(),
        beats: world
            .beats
            .iter()
            .filter(|(_, b)| matches!(b, crate::rules::BeatStatus::Triggered { .. }))
            .map(|(id, _)| id.clone())
            .collect(),
    }
}
