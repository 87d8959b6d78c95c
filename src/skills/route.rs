//! Routing a move to skills (#25, #42): the words a skill names, then its moves by meaning.
//!
//! Routing a move to skills (#25): a skill may list moves that call for it (`moves` in its
//! manifest); the player's move is embedded and compared with them, and the skills it comes close
//! to are the ones the planner must use, those it does not are left out of the turn. The planner
//! model then only writes their input: a 135M model cannot tell from a description when a tool is
//! wanted, sentence embeddings can. A skill may also name words that call for it wherever they
//! stand (`triggers`, #42: "a game of bones" calls the dice however the sentence goes); a move
//! holding one fits without a model or an embedder. Skills with neither are left to the planner,
//! and without an embedder every skill with no trigger in the move is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::manifest::Discovery;
use crate::memory::{EmbedError, Embedder, dot};

/// How close (cosine, all-MiniLM-L6-v2) a move must come to one of a
/// skill's moves to call for it. Chosen on the development set of
/// `benches/skill_routing.rs` (#42; 60 labelled moves, the bundled skills'
/// widened lists): 95% routed right at 0.5, 93% at 0.45, 0.55 and the 0.6 it was.
pub const MATCH: f32 = 0.5;

/// Just under the threshold (at most this far below it), a move still fits
/// its closest skill where it stands [`CLEAR`] or more ahead of every other:
/// "put fifty bucks on Lucky Lou" is 0.41 from a wager but 0.2 from anything
/// else. Chosen with [`TRIGGER_FLOOR`] on the development set (#42, 90 moves:
/// 90% → 94%), the smallest change among the settings that measured best.
pub const NEAR: f32 = 0.05;

/// How far ahead of the next skill a near move must stand (see [`NEAR`]).
pub const CLEAR: f32 = 0.15;

/// A skill's trigger calls it only where the move also comes this close to
/// one of the skill's moves, when the skill lists any and an embedder is at
/// hand: "I bet the butler knows more" names a bet and is nothing like one
/// (0.27), "I take the old portrait off the wall" names a portrait (#42).
pub const TRIGGER_FLOOR: f32 = 0.3;

/// A skill the move comes close to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub skill: String,
    /// The skill's move it came closest to.
    pub cue: String,
    pub score: f32,
}

/// What the router made of one move (recorded with the turn's recall, so a
/// replay routes as the turn did without embedding again).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    /// Skills the move calls for, closest first.
    pub fits: Vec<Fit>,
    /// Skills with moves of their own that this move is not close to: not
    /// offered to the planner this turn.
    pub passed: Vec<String>,
}

impl Routing {
    /// Whether the move calls for `skill`.
    pub fn calls_for(&self, skill: &str) -> bool {
        self.fits.iter().any(|f| f.skill == skill)
    }

    /// Whether `skill` lists moves and this one is not close to any.
    pub fn passes_over(&self, skill: &str) -> bool {
        self.passed.iter().any(|p| p == skill)
    }
}

/// A move's words, lowercase, one space apart (punctuation aside).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The first of `triggers` that `text` holds as whole words (a last word
/// ending in `*` matches any word it begins).
pub fn triggered<'a>(text: &str, triggers: &'a [String]) -> Option<&'a str> {
    holds(&words(text), triggers)
}

/// The first of `triggers` that the words `said` hold (see [`triggered`]).
fn holds<'a>(said: &[String], triggers: &'a [String]) -> Option<&'a str> {
    triggers
        .iter()
        .find(|t| {
            let prefix = t.trim_end().ends_with('*');
            let wanted = words(t);
            if wanted.is_empty() || said.len() < wanted.len() {
                return false;
            }
            said.windows(wanted.len()).any(|w| {
                w.iter().zip(&wanted).enumerate().all(|(i, (s, t))| {
                    if prefix && i + 1 == wanted.len() {
                        s.starts_with(t.as_str())
                    } else {
                        s == t
                    }
                })
            })
        })
        .map(String::as_str)
}

/// `routing` with the skills whose triggers `text` holds fitted first
/// (score 1: a rule, not a likeness), and no longer passed over. With
/// `likeness` (every listing skill's closest move), a trigger of a skill that
/// lists moves counts only at [`TRIGGER_FLOOR`] or closer.
fn with_triggers(
    mut routing: Routing,
    found: &Discovery,
    text: &str,
    likeness: Option<&[Fit]>,
) -> Routing {
    let said = words(text);
    let like =
        |name: &str| likeness.and_then(|all| all.iter().find(|f| f.skill == name).map(|f| f.score));
    let mut triggered: Vec<(&String, &str, Option<f32>)> = found
        .skills
        .iter()
        .filter_map(|s| {
            let name = &s.manifest.name;
            holds(&said, &s.manifest.triggers).map(|t| (name, t, like(name)))
        })
        .filter(|(_, _, score)| score.is_none_or(|s| s >= TRIGGER_FLOOR))
        .collect();
    // Two skills' words in one move ("does it look like snow?"): the likelier first.
    triggered.sort_by(|a, b| b.2.unwrap_or(1.0).total_cmp(&a.2.unwrap_or(1.0)));
    for (name, trigger, _) in triggered {
        routing.fits.retain(|f| f.skill != *name);
        routing.passed.retain(|p| p != name);
        routing.fits.push(Fit {
            skill: name.clone(),
            cue: format!("the words \"{trigger}\""),
            score: 1.0,
        });
    }
    routing.fits.sort_by(|a, b| b.score.total_cmp(&a.score));
    routing
}

/// Each skill of `cues` (skill, move, vector) with its move closest to
/// `vector` (a move's) and their likeness, closest first.
pub fn likeness(cues: &[(String, String, Vec<f32>)], vector: &[f32]) -> Vec<Fit> {
    let mut best: Vec<Fit> = Vec::new();
    for (skill, cue, v) in cues {
        let score = dot(v, vector);
        match best.iter_mut().find(|f| f.skill == *skill) {
            Some(f) if f.score >= score => {}
            Some(f) => {
                f.cue.clone_from(cue);
                f.score = score;
            }
            None => best.push(Fit {
                skill: skill.clone(),
                cue: cue.clone(),
                score,
            }),
        }
    }
    best.sort_by(|a, b| b.score.total_cmp(&a.score));
    best
}

/// Which skills of `likeness` (closest first) a move fits at `threshold`:
/// every one at it or above, and the closest one [`NEAR`] below it where it
/// stands [`CLEAR`] ahead of the next.
pub fn decide(likeness: &[Fit], threshold: f32) -> Routing {
    let near = match likeness {
        [first, rest @ ..] => {
            first.score < threshold
                && first.score >= threshold - NEAR
                && rest
                    .first()
                    .is_none_or(|next| first.score - next.score >= CLEAR)
        }
        [] => false,
    };
    let mut routing = Routing::default();
    for (i, f) in likeness.iter().enumerate() {
        if f.score >= threshold || (near && i == 0) {
            routing.fits.push(f.clone());
        } else {
            routing.passed.push(f.skill.clone());
        }
    }
    routing
}

/// The router of a play session: an embedder and the vectors of the skills'
/// moves made so far (a skill folder changed on disk brings new ones).
#[derive(Clone)]
pub struct Router {
    embedder: Arc<dyn Embedder>,
    cache: Arc<Mutex<HashMap<String, Vec<f32>>>>,
    pub threshold: f32,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("embedder", &self.embedder.key())
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl Router {
    pub fn new(embedder: Arc<dyn Embedder>) -> Self {
        Self {
            embedder,
            cache: Arc::default(),
            threshold: MATCH,
        }
    }

    /// Route `text` among the skills of `found` that list moves (none list
    /// any: an empty routing, nothing embedded).
    pub fn route(&self, found: &Discovery, text: &str) -> Result<Routing, EmbedError> {
        let listed: Vec<(&str, &str)> = found
            .skills
            .iter()
            .flat_map(|s| {
                s.manifest
                    .moves
                    .iter()
                    .map(|m| (s.manifest.name.as_str(), m.as_str()))
            })
            .collect();
        if listed.is_empty() {
            return Ok(with_triggers(Routing::default(), found, text, None));
        }
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut missing: Vec<&str> = listed
            .iter()
            .map(|(_, m)| *m)
            .filter(|m| !cache.contains_key(*m))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing.push(text);
        let mut vectors = self.embedder.embed(&missing)?;
        let Some(vector) = vectors.pop() else {
            return Err(EmbedError::Run("no vector for the move".into()));
        };
        for (m, v) in missing.iter().zip(vectors) {
            cache.insert((*m).to_owned(), v);
        }
        let cues: Vec<(String, String, Vec<f32>)> = listed
            .iter()
            .filter_map(|(skill, m)| {
                cache
                    .get(*m)
                    .map(|v| ((*skill).to_owned(), (*m).to_owned(), v.clone()))
            })
            .collect();
        let all = likeness(&cues, &vector);
        Ok(with_triggers(
            decide(&all, self.threshold),
            found,
            text,
            Some(&all),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(x: f32, y: f32) -> Vec<f32> {
        let n = (x * x + y * y).sqrt();
        vec![x / n, y / n]
    }

    #[test]
    fn a_trigger_is_whole_words_in_order_and_a_star_ends_a_word_prefix() {
        let t: Vec<String> = ["game of bones", "gambl*", "bet", "dice"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(
            triggered("I challenge the ferryman to a Game of Bones!", &t),
            Some("game of bones")
        );
        assert_eq!(triggered("We go gambling at the stern", &t), Some("gambl*"));
        assert_eq!(triggered("I'll bet you can't", &t), Some("bet"));
        assert_eq!(triggered("Roll the dice.", &t), Some("dice"));
        // Whole words only, and in order.
        assert_eq!(triggered("I better go", &t), None);
        assert_eq!(triggered("the bones of a game", &t), None);
        assert_eq!(triggered("", &t), None);
        assert_eq!(triggered("dice", &[String::new(), "*".into()]), None);
    }

    #[test]
    fn a_skill_scores_its_closest_move_and_fits_at_the_threshold() {
        let cues = vec![
            ("dice".to_owned(), "I roll".into(), unit(1.0, 0.0)),
            ("dice".to_owned(), "I toss a coin".into(), unit(1.0, 0.3)),
            ("weather".to_owned(), "I wait".into(), unit(0.0, 1.0)),
        ];
        let r = decide(&likeness(&cues, &unit(1.0, 0.35)), 0.6);
        assert_eq!(r.fits.len(), 1);
        assert_eq!(r.fits[0].skill, "dice");
        assert_eq!(r.fits[0].cue, "I toss a coin");
        assert!(r.fits[0].score > 0.99);
        assert_eq!(r.passed, vec!["weather".to_owned()]);
        assert!(r.calls_for("dice") && r.passes_over("weather") && !r.passes_over("dice"));

        // Between both: each fits, the closer first.
        let r = decide(&likeness(&cues, &unit(0.7, 1.0)), 0.6);
        assert_eq!(
            r.fits.iter().map(|f| f.skill.as_str()).collect::<Vec<_>>(),
            ["weather", "dice"]
        );
        assert!(r.passed.is_empty());
    }

    fn fit(skill: &str, score: f32) -> Fit {
        Fit {
            skill: skill.to_owned(),
            cue: String::new(),
            score,
        }
    }

    #[test]
    fn just_under_the_threshold_only_a_move_clear_of_the_rest_fits() {
        let skills = |r: &Routing| r.fits.iter().map(|f| f.skill.clone()).collect::<Vec<_>>();
        // 0.47: near, and 0.2 ahead of the next: it fits.
        let r = decide(&[fit("dice", 0.47), fit("weather", 0.27)], 0.5);
        assert_eq!(skills(&r), ["dice"]);
        assert_eq!(r.passed, ["weather"]);
        // Near but not clear of the next: neither fits.
        let r = decide(&[fit("dice", 0.47), fit("weather", 0.4)], 0.5);
        assert!(r.fits.is_empty(), "{r:?}");
        // Clear but too far under: no fit.
        let r = decide(&[fit("dice", 0.44), fit("weather", 0.1)], 0.5);
        assert!(r.fits.is_empty(), "{r:?}");
        // A lone skill just under fits; at the threshold every one that reaches it does.
        assert_eq!(skills(&decide(&[fit("dice", 0.46)], 0.5)), ["dice"]);
        let r = decide(
            &[
                fit("dice", 0.6),
                fit("weather", 0.55),
                fit("portraits", 0.2),
            ],
            0.5,
        );
        assert_eq!(skills(&r), ["dice", "weather"]);
        assert!(decide(&[], 0.5).fits.is_empty());
    }

    #[test]
    fn a_trigger_counts_only_where_the_move_is_also_like_the_skill() {
        // The bundled dice roller lists moves and names "bet" among its triggers.
        let found = super::super::manifest::discover(&[crate::files::resource_dir("skills")]);
        let dice = found.get("dice-roller").expect("the bundled dice roller");
        assert!(
            !dice.manifest.moves.is_empty() && dice.manifest.triggers.iter().any(|t| t == "bet")
        );
        let text = "I bet the butler is lying";
        // Like enough: the trigger calls the skill, first.
        let r = with_triggers(
            Routing::default(),
            &found,
            text,
            Some(&[fit("dice-roller", 0.31)]),
        );
        assert!(r.calls_for("dice-roller"));
        assert_eq!(r.fits[0].cue, "the words \"bet\"");
        // Nothing like it: the words alone call nothing.
        let r = with_triggers(
            Routing::default(),
            &found,
            text,
            Some(&[fit("dice-roller", 0.27)]),
        );
        assert!(!r.calls_for("dice-roller"), "{r:?}");
        // No embedder to ask: the trigger is the rule.
        assert!(with_triggers(Routing::default(), &found, text, None).calls_for("dice-roller"));
    }
}
