//! Seed 001's six metrics and ours, summed over the turns of a report, each with its definition.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::facts::TurnFacts;
use crate::session::continuity::Contradiction;

/// Min, mean and max.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

/// The 50th and 90th percentiles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub n: usize,
}

/// Every metric of a set of turns. Rates are shares of 0..=1; `None` when
/// the denominator is zero (nothing to measure).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub turns: usize,
    /// Turns with at least one contradiction / turns (seed 001).
    pub contradiction_rate: Option<f64>,
    /// Contradictions found, by kind.
    pub contradictions: BTreeMap<String, usize>,
    /// Planted invalid moves the engine let happen / planted invalid moves (seed 001).
    pub invalid_action_acceptance: Option<f64>,
    pub invalid_moves: usize,
    /// Consequences a narration of their turn tells / consequences fired (#41).
    #[serde(default)]
    pub consequences_told: Option<f64>,
    #[serde(default)]
    pub consequences_fired: usize,
    /// Of those told, how many the engine told itself (the narration left them out).
    #[serde(default)]
    pub consequences_appended: usize,
    /// Narrations told again because they contradicted the world, and how
    /// many of those kept the second telling (#41, `session::turn::retell`).
    #[serde(default)]
    pub retold: usize,
    #[serde(default)]
    pub retold_kept_second: usize,
    /// Narrations the engine wrote (blocked moves, consequences), left out of the prose metrics.
    #[serde(default)]
    pub engine_narrations: usize,
    /// People, items, places and threads play introduced, and those met
    /// again in a later turn of the same run (present, held, visited, named
    /// in a narration, or a thread moved on).
    #[serde(default)]
    pub introduced: usize,
    #[serde(default)]
    pub introduced_met: usize,
    /// Turns that asked a question first / turns (seed 001).
    pub clarification_rate: Option<f64>,
    pub clarifications: usize,
    /// Words per narration: min, mean, max (seed 001 `length_stats`).
    pub length_stats: Spread,
    /// Retrieved lore chunks the scene bears out / retrieved (seed 001 v1).
    pub lore_relevance_rate: Option<f64>,
    /// Turns shown the scene's lore from the cache / turns (seed 001 v1).
    pub lore_cache_hit_rate: Option<f64>,
    /// Narrations in voice / narrations.
    pub in_voice: Option<f64>,
    /// Narrations that name someone or something of their prompt / narrations.
    pub grounded: Option<f64>,
    /// Turns whose failed or ruled-out move is not told as done / such turns.
    pub outcome_honoured: Option<f64>,
    pub failed_or_blocked: usize,
    /// Sentences said twice (in a narration, or again later in the run).
    pub repeated_sentences: usize,
    /// Six-word runs found in the narrator corpus / six-word runs.
    pub copied_runs: Option<f64>,
    /// State ops the rules refused / ops the models proposed.
    pub refused_ops: Option<f64>,
    pub ops_proposed: usize,
    /// Turns offered the generic fallback choices / turns.
    pub generic_choices: Option<f64>,
    /// Turns that failed and were narrated by the fallback.
    pub failed_turns: usize,
    pub first_words_ms: Percentiles,
    pub choices_ms: Percentiles,
    pub commit_ms: Percentiles,
    pub tokens_in_per_turn: f64,
    pub tokens_out_per_turn: f64,
    /// Prompt tokens read from the model's cache / prompt tokens.
    pub cached_share: Option<f64>,
}

/// What a campaign's author sees covered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub places_visited: BTreeSet<String>,
    pub people_met: BTreeSet<String>,
    pub clocks_advanced: BTreeSet<String>,
    pub triggers_fired: BTreeSet<String>,
    pub threads_opened: BTreeSet<String>,
    pub threads_resolved: BTreeSet<String>,
    pub beats_reached: BTreeSet<String>,
}

/// How many things play introduced, and how many of them came up again in a
/// later turn of the same run (a run starts again where the turn number does).
fn introduced_and_met(turns: &[&TurnFacts]) -> (usize, usize) {
    let mut runs: Vec<Vec<&TurnFacts>> = Vec::new();
    for t in turns {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|l| l.turn < t.turn) => run.push(t),
            _ => runs.push(vec![t]),
        }
    }
    let (mut introduced, mut met) = (0, 0);
    for run in &runs {
        for (at, t) in run.iter().enumerate() {
            for (id, kind, name) in &t.introduced {
                introduced += 1;
                let lower = name.to_lowercase();
                let again = run[at + 1..].iter().any(|later| {
                    later.present.contains(id)
                        || later.place == *id
                        || later.held.contains(id)
                        || (kind == "thread"
                            && later
                                .threads
                                .iter()
                                .any(|(tid, s)| tid == id && s != "open"))
                        || later
                            .narrations
                            .iter()
                            .any(|n| n.text.to_lowercase().contains(&lower))
                });
                met += usize::from(again);
            }
        }
    }
    (introduced, met)
}

fn share(part: usize, whole: usize) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "counts of turns")]
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The `q`-quantile of `values` (nearest rank; NaN when there are none).
pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let i = ((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    sorted[i]
}

fn percentiles(values: &[f64]) -> Percentiles {
    // An empty report reads 0 rather than NaN (JSON has no NaN).
    let at = |q| {
        if values.is_empty() {
            0.0
        } else {
            percentile(values, q)
        }
    };
    Percentiles {
        p50: at(0.5),
        p90: at(0.9),
        n: values.len(),
    }
}

impl Metrics {
    /// The metrics of `turns`.
    #[expect(clippy::cast_precision_loss, reason = "counts and sums in a report")]
    pub fn of(turns: &[&TurnFacts]) -> Self {
        let n = turns.len();
        let mut m = Self {
            turns: n,
            ..Self::default()
        };
        for t in turns {
            for hit in &t.contradictions {
                *m.contradictions
                    .entry(contradiction_key(hit.kind).to_owned())
                    .or_default() += 1;
            }
        }
        m.contradiction_rate = share(
            turns
                .iter()
                .filter(|t| !t.contradictions.is_empty())
                .count(),
            n,
        );
        let invalid: Vec<bool> = turns.iter().filter_map(|t| t.accepted_invalid()).collect();
        m.invalid_moves = invalid.len();
        m.invalid_action_acceptance = share(invalid.iter().filter(|a| **a).count(), invalid.len());
        m.count_the_world(turns);
        m.clarifications = turns.iter().filter(|t| t.clarified).count();
        m.clarification_rate = share(m.clarifications, n);
        // The model's words: what the engine wrote itself is not judged as prose.
        let narrations: Vec<_> = turns
            .iter()
            .flat_map(|t| &t.narrations)
            .filter(|x| !x.by_engine)
            .collect();
        let lengths: Vec<f64> = narrations.iter().map(|x| x.words as f64).collect();
        if !lengths.is_empty() {
            m.length_stats = Spread {
                min: lengths.iter().copied().fold(f64::INFINITY, f64::min),
                mean: lengths.iter().sum::<f64>() / lengths.len() as f64,
                max: lengths.iter().copied().fold(0.0, f64::max),
            };
        }
        let retrieved: usize = turns.iter().map(|t| t.lore.retrieved).sum();
        let relevant: usize = turns.iter().map(|t| t.lore.relevant).sum();
        m.lore_relevance_rate = share(relevant, retrieved);
        m.lore_cache_hit_rate = share(turns.iter().filter(|t| t.lore.cached).count(), n);
        m.in_voice = share(
            narrations.iter().filter(|x| x.in_voice).count(),
            narrations.len(),
        );
        m.grounded = share(
            narrations.iter().filter(|x| x.grounded).count(),
            narrations.len(),
        );
        let judged: Vec<bool> = turns
            .iter()
            .filter(|t| {
                matches!(
                    t.outcome,
                    Some(
                        crate::session::continuity::Outcome::Blocked
                            | crate::session::continuity::Outcome::Failure
                    )
                )
            })
            .map(|t| t.outcome_honoured)
            .collect();
        m.failed_or_blocked = judged.len();
        m.outcome_honoured = share(judged.iter().filter(|h| **h).count(), judged.len());
        m.repeated_sentences = narrations.iter().map(|x| x.repeated_sentences).sum();
        m.copied_runs = share(
            narrations.iter().map(|x| x.copied_runs).sum(),
            narrations.iter().map(|x| x.runs).sum(),
        );
        m.ops_proposed = turns.iter().map(|t| t.ops_proposed).sum();
        m.refused_ops = share(turns.iter().map(|t| t.ops_refused).sum(), m.ops_proposed);
        m.generic_choices = share(turns.iter().filter(|t| t.generic_choices).count(), n);
        m.failed_turns = turns.iter().filter(|t| t.failed.is_some()).count();
        m.first_words_ms = percentiles(
            &turns
                .iter()
                .filter_map(|t| t.cost.first_words_ms)
                .collect::<Vec<_>>(),
        );
        m.choices_ms = percentiles(
            &turns
                .iter()
                .filter_map(|t| t.cost.choices_ms)
                .collect::<Vec<_>>(),
        );
        m.commit_ms = percentiles(&turns.iter().map(|t| t.cost.commit_ms).collect::<Vec<_>>());
        let tokens_in: u64 = turns.iter().map(|t| t.cost.tokens_in).sum();
        let tokens_out: u64 = turns.iter().map(|t| t.cost.tokens_out).sum();
        let cached: u64 = turns.iter().map(|t| t.cost.cached_tokens).sum();
        if n > 0 {
            m.tokens_in_per_turn = tokens_in as f64 / n as f64;
            m.tokens_out_per_turn = tokens_out as f64 / n as f64;
        }
        m.cached_share = (tokens_in > 0).then(|| cached as f64 / tokens_in as f64);
        m
    }

    /// #41: consequences fired and told, what the engine wrote itself, and
    /// what play introduced and met again.
    fn count_the_world(&mut self, turns: &[&TurnFacts]) {
        self.consequences_fired = turns.iter().map(|t| t.fired.len()).sum();
        self.consequences_told = share(
            turns.iter().map(|t| t.fired_narrated).sum(),
            self.consequences_fired,
        );
        self.consequences_appended = turns.iter().map(|t| t.appended).sum();
        self.retold = turns.iter().map(|t| t.retold).sum();
        self.retold_kept_second = turns.iter().map(|t| t.retold_kept_second).sum();
        self.engine_narrations = turns
            .iter()
            .flat_map(|t| &t.narrations)
            .filter(|x| x.by_engine)
            .count();
        (self.introduced, self.introduced_met) = introduced_and_met(turns);
    }

    /// Each metric that has a better direction, as (name, value, higher is better).
    pub fn directed(&self) -> Vec<(&'static str, Option<f64>, bool)> {
        vec![
            ("contradiction_rate", self.contradiction_rate, false),
            (
                "invalid_action_acceptance",
                self.invalid_action_acceptance,
                false,
            ),
            ("consequences_told", self.consequences_told, true),
            ("clarification_rate", self.clarification_rate, false),
            ("lore_relevance_rate", self.lore_relevance_rate, true),
            ("lore_cache_hit_rate", self.lore_cache_hit_rate, true),
            ("in_voice", self.in_voice, true),
            ("grounded", self.grounded, true),
            ("outcome_honoured", self.outcome_honoured, true),
            ("copied_runs", self.copied_runs, false),
            ("refused_ops", self.refused_ops, false),
            ("generic_choices", self.generic_choices, false),
            ("first_words_ms_p50", Some(self.first_words_ms.p50), false),
            ("first_words_ms_p90", Some(self.first_words_ms.p90), false),
            ("choices_ms_p50", Some(self.choices_ms.p50), false),
            ("commit_ms_p90", Some(self.commit_ms.p90), false),
            ("cached_share", self.cached_share, true),
        ]
    }
}

/// The report key of a contradiction kind.
pub fn contradiction_key(kind: Contradiction) -> &'static str {
    match kind {
        Contradiction::AbsentActs => "absent_acts",
        Contradiction::GoneAppears => "gone_appears",
        Contradiction::ItemNotHeld => "item_not_held",
        Contradiction::WrongPlace => "wrong_place",
        Contradiction::FalseFact => "false_fact",
    }
}

impl Coverage {
    /// What `turns` covered.
    pub fn of(turns: &[&TurnFacts]) -> Self {
        let mut c = Self::default();
        let mut seen_open = BTreeSet::new();
        for t in turns {
            if !t.place.is_empty() {
                c.places_visited.insert(t.place.clone());
            }
            c.people_met.extend(t.present.iter().cloned());
            c.clocks_advanced
                .extend(t.clocks.iter().map(|(id, _, _)| id.clone()));
            c.triggers_fired.extend(t.fired.iter().cloned());
            for (id, status) in &t.threads {
                if status == "open" {
                    seen_open.insert(id.clone());
                } else if status == "resolved" || status == "closed" {
                    c.threads_resolved.insert(id.clone());
                }
            }
            c.beats_reached.extend(t.beats.iter().cloned());
        }
        c.threads_opened = seen_open;
        c
    }
}

/// The definitions printed with every report.
pub const DEFINITIONS: &[(&str, &str)] = &[
    (
        "contradiction_rate",
        "turns with a contradiction / turns. A contradiction, checked by engine word rules against the world state after the turn: a person not present speaks or acts (named as subject, beside a speech or action verb, or in a sentence with dialogue); a dead or departed person (tagged dead/departed/gone) appears; the persona uses an item it does not hold; the persona is put in a place the scene is not; a fact marked false is asserted. Each hit is listed with its sentence. Only the models' narrations are read: the engine's own lines (blocked moves, consequences it told) are written from the world state.",
    ),
    (
        "invalid_action_acceptance",
        "planted invalid moves the engine let happen / planted invalid moves. Accepted: neither the engine's move check nor the referee blocked the move, and nothing was asked.",
    ),
    (
        "consequences_told",
        "consequences fired in a turn (clock triggers, failure streaks, ruleset effects) that a narration of the same turn tells (the model's, or the engine's own line for a clock's consequence the model left out: counted apart as consequences_appended) / consequences fired. Told: the narration has two or more of the consequence's words of five letters or more, by their first five letters, and at least a third of them (up to six).",
    ),
    (
        "retold",
        "narrations the turn's own continuity check (the same word rules as contradiction_rate, against the world as it stood when the narration was written, and for the player's narration the decided outcome) found contradicting, and asked for once more with what to keep to; retold_kept_second: those where the second telling had fewer contradictions and was kept. contradiction_rate reads the narrations kept.",
    ),
    (
        "clarification_rate",
        "turns where the referee asked one question first / turns.",
    ),
    (
        "length_stats",
        "words per narration (every narration of every turn): min, mean, max.",
    ),
    (
        "lore_relevance_rate",
        "retrieved lore chunks that name the scene's place, someone present, or a word (over four letters) of the move / retrieved chunks.",
    ),
    (
        "lore_cache_hit_rate",
        "turns shown the scene lore brief from the cache (made by an earlier turn of the same scene and place) / turns.",
    ),
    (
        "in_voice",
        "narrations that read as prose, with no assistant or script talk, no first-person narrator, and the player's in the second person / narrations (session::voice).",
    ),
    (
        "grounded",
        "narrations that name a person, place or thing their prompt named / narrations.",
    ),
    (
        "outcome_honoured",
        "turns whose move failed or was ruled out and whose narration does not tell it as done (a second-person sentence with the move's verb and object, unnegated, without a word of failing) / such turns.",
    ),
    (
        "repeated_sentences",
        "sentences of three words or more said twice: in one narration, or again in a later turn of the same run.",
    ),
    (
        "copied_runs",
        "six-word runs of the narrations found verbatim in the narrator corpus's answers (training/data/train.jsonl) / six-word runs.",
    ),
    (
        "refused_ops",
        "state operations the rules refused / operations the models proposed.",
    ),
    (
        "generic_choices",
        "turns offered the generic fallback choices (Continue, Look around, Wait) / turns.",
    ),
    (
        "latency",
        "submit → first words of the player's narration, submit → choices known, and the commit, in ms: 50th and 90th percentiles.",
    ),
    (
        "tokens",
        "prompt and generated tokens per turn over every call and attempt; cached share: prompt tokens the backend read from its cache / prompt tokens.",
    ),
];
