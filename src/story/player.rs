//! The story player: a state machine over held codewords, visited passages and history.
//!
//! Steps can be undone, and the state saved to a document and restored from it.

use fixedbitset::FixedBitSet;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::graph::{CodewordIx, CodewordSet, CodexIx, EntityIx, PassageIx, SharedStory, Story};
use super::model::Choice;

/// Why the player refused a move.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlayerError {
    #[error("the story has ended; undo or start again")]
    Ended,
    #[error("there is no choice {number}; pick 1 to {count}")]
    NoSuchChoice { number: usize, count: usize },
    #[error("\"{label}\" is hidden: it needs {}", missing.join(", "))]
    ChoiceHidden { label: String, missing: Vec<String> },
    #[error("cannot undo {requested} steps; only {available} taken")]
    CannotUndo { requested: usize, available: usize },
}

/// Why a save could not be restored. Nothing is changed when this happens.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SaveError {
    #[error("not a Loreloom save (format is {found:?}, expected \"{SAVE_FORMAT}\")")]
    NotASave { found: String },
    #[error(
        "save version {0} is newer than this Loreloom reads ({SAVE_FORMAT_VERSION}); update Loreloom"
    )]
    UnsupportedVersion(u32),
    #[error("this save belongs to story `{save}`, not `{story}`")]
    WrongStory { save: String, story: String },
    #[error(
        "the story changed since this save: {}; play from the start or load an older copy of the story",
        describe_missing(missing_passages, missing_codewords)
    )]
    StoryChanged {
        missing_passages: Vec<String>,
        missing_codewords: Vec<String>,
    },
    #[error(
        "step {step} of the save (from `{from}` to `{to}`) is not possible in this story; it changed, or the save was edited"
    )]
    StepNotPossible {
        step: usize,
        from: String,
        to: String,
    },
    #[error("the save's history ends at `{history_ends}` but it says it is at `{saved_at}`")]
    EndsElsewhere {
        history_ends: String,
        saved_at: String,
    },
    #[error(
        "the save holds codewords [{}] but its history grants [{}]; the story changed, or the save was edited",
        saved.join(", "),
        replayed.join(", ")
    )]
    CodewordsDiffer {
        saved: Vec<String>,
        replayed: Vec<String>,
    },
}

fn describe_missing(passages: &[String], codewords: &[String]) -> String {
    let mut parts = Vec::new();
    if !passages.is_empty() {
        parts.push(format!("passages {} are gone", passages.join(", ")));
    }
    if !codewords.is_empty() {
        parts.push(format!("codewords {} are gone", codewords.join(", ")));
    }
    parts.join(" and ")
}

/// The `format` tag of a save document.
pub const SAVE_FORMAT: &str = "loreloom-save";
/// The save version this build writes and reads.
pub const SAVE_FORMAT_VERSION: u32 = 1;

/// A small, story-keyed snapshot of a playthrough (stable ids only).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SaveDocument {
    pub format: String,
    pub version: u32,
    /// Id of the story this save belongs to.
    pub story: String,
    /// The story's title when saved, for save-slot lists.
    pub story_title: String,
    /// The current passage.
    pub passage: String,
    pub codewords: Vec<String>,
    pub visited: Vec<String>,
    /// Every step taken, oldest first.
    pub history: Vec<SavedStep>,
}

/// One step of a saved history.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SavedStep {
    pub from: String,
    /// The label of the choice taken, for the backlog.
    pub choice: String,
    pub to: String,
    /// Codewords this step newly granted (so undo can take them back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub granted: Vec<String>,
    /// Whether this step was the first visit of `to`.
    pub first_visit: bool,
}

/// One step taken: what undo needs to reverse it exactly.
#[derive(Clone, Debug)]
pub struct Frame {
    pub from: PassageIx,
    /// Index of the choice among `from`'s choices.
    pub choice: usize,
    pub to: PassageIx,
    /// Codewords held because of this step and not before it.
    pub granted: CodewordSet,
    pub first_visit: bool,
}

/// Whether a choice is offered, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    Open,
    /// Hidden from players; `missing` are the required codewords not held.
    Hidden {
        missing: Vec<CodewordIx>,
    },
}

/// A choice of the current passage as the player sees it.
#[derive(Clone, Debug)]
pub struct ChoiceView<'a> {
    /// Index among the passage's choices.
    pub index: usize,
    pub choice: &'a Choice,
    pub availability: Availability,
}

/// What one `choose` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: PassageIx,
    pub to: PassageIx,
    pub choice: usize,
    /// Codewords newly held.
    pub granted: Vec<CodewordIx>,
    /// Codex tiers newly unlocked.
    pub unlocked: Vec<CodexIx>,
    /// Whether `to` is an ending.
    pub ended: bool,
}

/// An entity's unlocked codex tiers, by rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodexPage {
    pub entity: EntityIx,
    pub tiers: Vec<CodexIx>,
}

/// A playthrough of one story.
#[derive(Clone, Debug)]
pub struct Player {
    story: SharedStory,
    passage: PassageIx,
    held: CodewordSet,
    visited: FixedBitSet,
    history: Vec<Frame>,
}

impl Player {
    /// A new playthrough at the start passage, holding nothing.
    pub fn new(story: SharedStory) -> Self {
        let mut visited = FixedBitSet::with_capacity(story.passage_count());
        visited.insert(story.start().index());
        Self {
            passage: story.start(),
            held: story.no_codewords(),
            visited,
            history: Vec::new(),
            story,
        }
    }

    pub fn story(&self) -> &Story {
        &self.story
    }

    pub fn shared_story(&self) -> &SharedStory {
        &self.story
    }

    pub fn current(&self) -> PassageIx {
        self.passage
    }

    pub fn held(&self) -> &CodewordSet {
        &self.held
    }

    pub fn has_visited(&self, p: PassageIx) -> bool {
        self.visited.contains(p.index())
    }

    pub fn visited_count(&self) -> usize {
        self.visited.count_ones(..)
    }

    /// Steps taken, oldest first.
    pub fn history(&self) -> &[Frame] {
        &self.history
    }

    pub fn is_ended(&self) -> bool {
        self.story.is_ending(self.passage)
    }

    /// Every choice of the current passage, with why hidden ones are hidden.
    pub fn choices(&self) -> Vec<ChoiceView<'_>> {
        let passage = self.story.passage(self.passage);
        self.story
            .choices(self.passage)
            .iter()
            .zip(&passage.choices)
            .enumerate()
            .map(|(index, (node, choice))| {
                let missing = node.requires.difference(&self.held);
                let availability = if missing.is_empty() {
                    Availability::Open
                } else {
                    Availability::Hidden {
                        missing: missing.iter().collect(),
                    }
                };
                ChoiceView {
                    index,
                    choice,
                    availability,
                }
            })
            .collect()
    }

    /// The choices a player is offered, in order; the n-th of these is choice number n+1.
    pub fn open_choices(&self) -> impl Iterator<Item = (usize, &Choice)> + '_ {
        let passage = self.story.passage(self.passage);
        self.story
            .choices(self.passage)
            .iter()
            .zip(&passage.choices)
            .enumerate()
            .filter(|(_, (node, _))| node.requires.is_subset(&self.held))
            .map(|(i, (_, choice))| (i, choice))
    }

    /// Take the `number`-th offered choice (1-based, as players count).
    pub fn choose_number(&mut self, number: usize) -> Result<Step, PlayerError> {
        if self.is_ended() {
            return Err(PlayerError::Ended);
        }
        let open: Vec<usize> = self.open_choices().map(|(i, _)| i).collect();
        match number.checked_sub(1).and_then(|n| open.get(n)) {
            Some(&index) => self.choose(index),
            None => Err(PlayerError::NoSuchChoice {
                number,
                count: open.len(),
            }),
        }
    }

    /// Take the choice at `index` among the passage's choices.
    pub fn choose(&mut self, index: usize) -> Result<Step, PlayerError> {
        if self.is_ended() {
            return Err(PlayerError::Ended);
        }
        let story = &*self.story;
        let Some(node) = story.choices(self.passage).get(index) else {
            return Err(PlayerError::NoSuchChoice {
                number: index + 1,
                count: story.choices(self.passage).len(),
            });
        };
        let missing = node.requires.difference(&self.held);
        if !missing.is_empty() {
            return Err(PlayerError::ChoiceHidden {
                label: story
                    .passage(self.passage)
                    .choices
                    .get(index)
                    .map(|c| c.label.clone())
                    .unwrap_or_default(),
                missing: missing
                    .iter()
                    .map(|c| story.codeword_id(c).to_owned())
                    .collect(),
            });
        }
        let granted = node.grants.difference(&self.held);
        let before = self.held.clone();
        self.held.union_with(&granted);
        let unlocked = newly_unlocked(story, &before, &self.held);
        let to = node.to;
        let first_visit = !self.visited.put(to.index());
        self.history.push(Frame {
            from: self.passage,
            choice: index,
            to,
            granted: granted.clone(),
            first_visit,
        });
        let step = Step {
            from: self.passage,
            to,
            choice: index,
            granted: granted.iter().collect(),
            unlocked,
            ended: story.is_ending(to),
        };
        self.passage = to;
        Ok(step)
    }

    /// Roll back `steps` choices, restoring codewords and visits exactly.
    pub fn undo(&mut self, steps: usize) -> Result<(), PlayerError> {
        if steps > self.history.len() {
            return Err(PlayerError::CannotUndo {
                requested: steps,
                available: self.history.len(),
            });
        }
        for _ in 0..steps {
            let Some(frame) = self.history.pop() else {
                break;
            };
            for c in frame.granted.iter() {
                self.held.remove(c);
            }
            if frame.first_visit {
                self.visited.set(frame.to.index(), false);
            }
            self.passage = frame.from;
        }
        Ok(())
    }

    /// Author preview: stand at any passage, keeping the codewords held.
    /// Clears the history, since no choice led here.
    pub fn jump_to(&mut self, p: PassageIx) {
        self.passage = p;
        self.visited.insert(p.index());
        self.history.clear();
    }

    /// Author preview: hold or drop a codeword directly. Clears the history.
    pub fn set_codeword(&mut self, c: CodewordIx, held: bool) {
        if held {
            self.held.insert(c);
        } else {
            self.held.remove(c);
        }
        self.history.clear();
    }

    /// An entity's details now (base + applicable overlays).
    pub fn entity_state(&self, e: EntityIx) -> IndexMap<&str, &str> {
        self.story.entity_state(e, &self.held)
    }

    /// Whether a codex tier is unlocked now.
    pub fn is_unlocked(&self, c: CodexIx) -> bool {
        self.story.codex_gate(c).is_subset(&self.held)
    }

    /// Every entity with at least one unlocked tier, its tiers cumulative by rank.
    pub fn codex(&self) -> Vec<CodexPage> {
        self.story
            .entities()
            .filter_map(|entity| {
                let tiers: Vec<CodexIx> = self
                    .story
                    .codex_tiers(entity)
                    .iter()
                    .copied()
                    .filter(|&c| self.is_unlocked(c))
                    .collect();
                (!tiers.is_empty()).then_some(CodexPage { entity, tiers })
            })
            .collect()
    }

    /// The playthrough as a save document.
    pub fn save(&self) -> SaveDocument {
        let story = &*self.story;
        let id = |p: PassageIx| story.passage(p).id.clone();
        let words = |set: &CodewordSet| {
            set.iter()
                .map(|c| story.codeword_id(c).to_owned())
                .collect()
        };
        SaveDocument {
            format: SAVE_FORMAT.to_owned(),
            version: SAVE_FORMAT_VERSION,
            story: story.file().meta.id.clone(),
            story_title: story.title().to_owned(),
            passage: id(self.passage),
            codewords: words(&self.held),
            visited: self
                .visited
                .ones()
                .map(|p| id(PassageIx::from_index(p)))
                .collect(),
            history: self
                .history
                .iter()
                .map(|f| SavedStep {
                    from: id(f.from),
                    choice: story
                        .passage(f.from)
                        .choices
                        .get(f.choice)
                        .map(|c| c.label.clone())
                        .unwrap_or_default(),
                    to: id(f.to),
                    granted: words(&f.granted),
                    first_visit: f.first_visit,
                })
                .collect(),
        }
    }

    /// Rebuild a playthrough from a save by replaying its steps, or say exactly what no longer fits.
    pub fn restore(story: SharedStory, doc: &SaveDocument) -> Result<Self, SaveError> {
        if doc.format != SAVE_FORMAT {
            return Err(SaveError::NotASave {
                found: doc.format.clone(),
            });
        }
        if doc.version > SAVE_FORMAT_VERSION {
            return Err(SaveError::UnsupportedVersion(doc.version));
        }
        if doc.story != story.file().meta.id {
            return Err(SaveError::WrongStory {
                save: doc.story.clone(),
                story: story.file().meta.id.clone(),
            });
        }
        check_ids_exist(&story, doc)?;

        // Replaying keeps every invariant of a live playthrough: each step starts
        // where the last ended, each gate was open, codewords are what was granted.
        let mut player = Self::new(story);
        for (number, step) in doc.history.iter().enumerate() {
            let step_error = || SaveError::StepNotPossible {
                step: number + 1,
                from: step.from.clone(),
                to: step.to.clone(),
            };
            if player.story.passage(player.passage).id != step.from {
                return Err(step_error());
            }
            let open: Vec<(usize, &Choice)> = player
                .open_choices()
                .filter(|(_, c)| c.to == step.to)
                .collect();
            let index = open
                .iter()
                .find(|(_, c)| c.label == step.choice)
                .or_else(|| open.first())
                .map(|(i, _)| *i)
                .ok_or_else(step_error)?;
            player.choose(index).map_err(|_| step_error())?;
        }
        let at = &player.story.passage(player.passage).id;
        if *at != doc.passage {
            return Err(SaveError::EndsElsewhere {
                history_ends: at.clone(),
                saved_at: doc.passage.clone(),
            });
        }
        let mut replayed: Vec<&str> = player
            .held
            .iter()
            .map(|c| player.story.codeword_id(c))
            .collect();
        let mut saved: Vec<&str> = doc.codewords.iter().map(String::as_str).collect();
        replayed.sort_unstable();
        saved.sort_unstable();
        if replayed != saved {
            return Err(SaveError::CodewordsDiffer {
                saved: saved.into_iter().map(str::to_owned).collect(),
                replayed: replayed.into_iter().map(str::to_owned).collect(),
            });
        }
        Ok(player)
    }
}

/// Every passage and codeword a save names must still exist.
fn check_ids_exist(story: &Story, doc: &SaveDocument) -> Result<(), SaveError> {
    let mut missing_passages: Vec<String> = Vec::new();
    let passages = std::iter::once(&doc.passage)
        .chain(&doc.visited)
        .chain(doc.history.iter().flat_map(|s| [&s.from, &s.to]));
    for id in passages {
        if story.passage_ix(id).is_none() && !missing_passages.contains(id) {
            missing_passages.push(id.clone());
        }
    }
    let mut missing_codewords: Vec<String> = Vec::new();
    let codewords = doc
        .codewords
        .iter()
        .chain(doc.history.iter().flat_map(|s| &s.granted));
    for id in codewords {
        if story.codeword_ix(id).is_none() && !missing_codewords.contains(id) {
            missing_codewords.push(id.clone());
        }
    }
    if missing_passages.is_empty() && missing_codewords.is_empty() {
        Ok(())
    } else {
        Err(SaveError::StoryChanged {
            missing_passages,
            missing_codewords,
        })
    }
}

fn newly_unlocked(story: &Story, before: &CodewordSet, after: &CodewordSet) -> Vec<CodexIx> {
    if before == after {
        return Vec::new();
    }
    (0..story.file().codex.len())
        .map(CodexIx::from_index)
        .filter(|&c| {
            let gate = story.codex_gate(c);
            gate.is_subset(after) && !gate.is_subset(before)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::story::testing::{codewords, passage, story};

    /// start → (trust: grants a | doubt: grants b) → hub → gated/ungated → endings.
    fn sample() -> SharedStory {
        Arc::new(story(json!({
            "start": "start",
            "codewords": codewords(&["a", "b", "c"]),
            "passages": [
                passage("start", &[("Trust her", "hub", &[], &["a"]), ("Doubt her", "hub", &[], &["b"])]),
                passage("hub", &[
                    ("Ask for the key", "key", &["a"], &["c"]),
                    ("Accuse her", "accuse", &["b"], &[]),
                    ("Leave by the river", "river", &[], &[]),
                ]),
                passage("key", &[("Open the door", "door", &["a", "c"], &[]), ("Go back", "hub", &[], &["a"])]),
                passage("accuse", &[("Walk out", "river", &[], &[])]),
                {"id": "door", "title": "The Open Door", "prose": "It opens."},
                {"id": "river", "prose": "The river takes you."},
            ],
            "entities": [{
                "id": "ada", "type": "character", "name": "Ada",
                "base": {"eyes": "grey", "mood": "guarded"},
                "overlays": [
                    {"when": ["a"], "details": {"mood": "open"}},
                    {"when": ["a", "c"], "details": {"mood": "fond"}},
                    {"when": ["b"], "details": {"mood": "cold"}},
                    {"when": ["c"], "details": {"eyes": "bright"}},
                ]
            }],
            "codex": [
                {"id": "ada-3", "entity": "ada", "rank": 3, "visible_when": ["a", "c"], "content": "Deep."},
                {"id": "ada-1", "entity": "ada", "rank": 1, "content": "Basic."},
                {"id": "ada-2", "entity": "ada", "rank": 2, "visible_when": ["a"], "content": "More."},
            ],
        })))
    }

    fn at(player: &Player) -> &str {
        &player.story().passage(player.current()).id
    }

    #[test]
    fn choosing_grants_codewords_and_moves_on() {
        let mut player = Player::new(sample());
        assert_eq!(at(&player), "start");
        let step = player.choose_number(1).unwrap();
        assert_eq!(at(&player), "hub");
        let story = player.story();
        assert_eq!(step.granted, vec![story.codeword_ix("a").unwrap()]);
        assert!(!step.ended);
        assert!(player.held().contains(story.codeword_ix("a").unwrap()));
        assert!(player.has_visited(story.passage_ix("hub").unwrap()));
    }

    #[test]
    fn hidden_choices_are_skipped_in_numbering_and_say_why() {
        let mut player = Player::new(sample());
        player.choose_number(1).unwrap(); // holds a
        let labels: Vec<&str> = player
            .open_choices()
            .map(|(_, c)| c.label.as_str())
            .collect();
        assert_eq!(labels, ["Ask for the key", "Leave by the river"]);
        let views = player.choices();
        let b = player.story().codeword_ix("b").unwrap();
        assert_eq!(
            views[1].availability,
            Availability::Hidden { missing: vec![b] }
        );
        assert_eq!(views[0].availability, Availability::Open);
        // Number 2 is the river, not the hidden accusation.
        player.choose_number(2).unwrap();
        assert_eq!(at(&player), "river");
    }

    #[test]
    fn a_hidden_choice_cannot_be_taken_by_index() {
        let mut player = Player::new(sample());
        player.choose_number(1).unwrap();
        let err = player.choose(1).unwrap_err();
        assert_eq!(
            err,
            PlayerError::ChoiceHidden {
                label: "Accuse her".into(),
                missing: vec!["b".into()]
            }
        );
        assert_eq!(at(&player), "hub", "a refused move changes nothing");
    }

    #[test]
    fn out_of_range_numbers_are_refused() {
        let mut player = Player::new(sample());
        assert_eq!(
            player.choose_number(3),
            Err(PlayerError::NoSuchChoice {
                number: 3,
                count: 2
            })
        );
        assert_eq!(
            player.choose_number(0),
            Err(PlayerError::NoSuchChoice {
                number: 0,
                count: 2
            })
        );
    }

    #[test]
    fn endings_end() {
        let mut player = Player::new(sample());
        player.choose_number(1).unwrap();
        player.choose_number(1).unwrap(); // key, grants c
        let step = player.choose_number(1).unwrap(); // door needs a+c
        assert!(step.ended);
        assert!(player.is_ended());
        assert_eq!(player.choose_number(1), Err(PlayerError::Ended));
    }

    #[test]
    fn undo_restores_codewords_and_visits_exactly() {
        let story = sample();
        let mut player = Player::new(story.clone());
        player.choose_number(1).unwrap(); // a
        player.choose_number(1).unwrap(); // key, c
        player.choose_number(2).unwrap(); // back to hub, grants a again (already held)
        let a = story.codeword_ix("a").unwrap();
        let c = story.codeword_ix("c").unwrap();
        let key = story.passage_ix("key").unwrap();
        player.undo(1).unwrap();
        assert_eq!(at(&player), "key");
        assert!(
            player.held().contains(a),
            "a was held before the undone step"
        );
        player.undo(1).unwrap();
        assert_eq!(at(&player), "hub");
        assert!(!player.held().contains(c));
        assert!(!player.has_visited(key));
        assert_eq!(
            player.undo(2),
            Err(PlayerError::CannotUndo {
                requested: 2,
                available: 1
            })
        );
        player.undo(1).unwrap();
        assert_eq!(at(&player), "start");
        assert!(player.held().is_empty());
        assert_eq!(player.visited_count(), 1);
    }

    #[test]
    fn author_jumps_and_codeword_toggles_change_what_is_offered() {
        let story = sample();
        let mut player = Player::new(story.clone());
        player.jump_to(story.passage_ix("hub").unwrap());
        assert_eq!(
            player.open_choices().count(),
            1,
            "only the river without codewords"
        );
        player.set_codeword(story.codeword_ix("b").unwrap(), true);
        let labels: Vec<&str> = player
            .open_choices()
            .map(|(_, c)| c.label.as_str())
            .collect();
        assert_eq!(labels, ["Accuse her", "Leave by the river"]);
        player.set_codeword(story.codeword_ix("b").unwrap(), false);
        assert_eq!(player.open_choices().count(), 1);
        assert!(player.history().is_empty());
    }

    #[test]
    fn entity_state_most_specific_then_later_overlay_wins() {
        let story = sample();
        let ada = story.entity_ix("ada").unwrap();
        let state = |ids: &[&str]| -> Vec<(String, String)> {
            let held = story.codeword_set(ids.iter().copied()).unwrap();
            story
                .entity_state(ada, &held)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        };
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(state(&[]), pairs(&[("eyes", "grey"), ("mood", "guarded")]));
        assert_eq!(state(&["a"]), pairs(&[("eyes", "grey"), ("mood", "open")]));
        // Most specific ([a, c]) beats [a] and the later [c] for mood; [c] still sets eyes.
        assert_eq!(
            state(&["a", "c"]),
            pairs(&[("eyes", "bright"), ("mood", "fond")])
        );
        // Tie between [a] and [b]: the later one, [b], wins.
        assert_eq!(
            state(&["a", "b"]),
            pairs(&[("eyes", "grey"), ("mood", "cold")])
        );
    }

    #[test]
    fn codex_is_cumulative_by_rank_and_reports_unlocks() {
        let story = sample();
        let mut player = Player::new(story.clone());
        let tiers = |p: &Player| -> Vec<String> {
            p.codex()
                .iter()
                .flat_map(|page| page.tiers.iter().map(|&c| story.codex_entry(c).id.clone()))
                .collect()
        };
        assert_eq!(tiers(&player), ["ada-1"]);
        let step = player.choose_number(1).unwrap();
        assert_eq!(step.unlocked, vec![CodexIx::from_index(2)]);
        player.choose_number(1).unwrap();
        assert_eq!(tiers(&player), ["ada-1", "ada-2", "ada-3"]);
    }

    #[test]
    fn save_and_restore_round_trip() {
        let story = sample();
        let mut player = Player::new(story.clone());
        player.choose_number(1).unwrap();
        player.choose_number(1).unwrap();
        let doc = player.save();
        assert_eq!(doc.passage, "key");
        assert_eq!(doc.codewords, ["a", "c"]);
        let text = serde_json::to_string(&doc).unwrap();
        let back: SaveDocument = serde_json::from_str(&text).unwrap();
        let mut restored = Player::restore(story, &back).unwrap();
        assert_eq!(restored.save(), doc);
        restored.undo(2).unwrap();
        assert_eq!(at(&restored), "start");
        assert!(restored.held().is_empty());
    }

    #[test]
    fn restoring_into_a_changed_story_names_what_is_gone() {
        let mut player = Player::new(sample());
        player.choose_number(2).unwrap(); // doubt: b
        player.choose_number(1).unwrap(); // accuse
        let doc = player.save();
        let changed = Arc::new(story(json!({
            "start": "start",
            "codewords": codewords(&["a"]),
            "passages": [
                passage("start", &[("Go", "hub", &[], &["a"])]),
                passage("hub", &[("End", "river", &[], &[])]),
                {"id": "river", "prose": "End."},
            ],
        })));
        let err = Player::restore(changed, &doc).unwrap_err();
        assert_eq!(
            err,
            SaveError::StoryChanged {
                missing_passages: vec!["accuse".into()],
                missing_codewords: vec!["b".into()],
            }
        );
        assert!(err.to_string().contains("passages accuse are gone"));
    }

    #[test]
    fn restore_rejects_foreign_and_future_saves() {
        let story = sample();
        let mut doc = Player::new(story.clone()).save();
        doc.story = "another".into();
        assert!(matches!(
            Player::restore(story.clone(), &doc),
            Err(SaveError::WrongStory { .. })
        ));
        doc.story = "test".into();
        doc.version = 99;
        assert_eq!(
            Player::restore(story.clone(), &doc).unwrap_err(),
            SaveError::UnsupportedVersion(99)
        );
        doc.version = 1;
        doc.format = "something-else".into();
        assert!(matches!(
            Player::restore(story, &doc),
            Err(SaveError::NotASave { .. })
        ));
    }

    #[test]
    fn restore_rejects_histories_that_could_not_have_happened() {
        let story = sample();
        let mut player = Player::new(story.clone());
        player.choose_number(1).unwrap();
        let mut doc = player.save();
        doc.passage = "river".into();
        assert!(matches!(
            Player::restore(story.clone(), &doc),
            Err(SaveError::EndsElsewhere { .. })
        ));
        let mut doc = player.save();
        doc.history[0].from = "hub".into();
        assert!(matches!(
            Player::restore(story.clone(), &doc),
            Err(SaveError::StepNotPossible { step: 1, .. })
        ));
        let mut doc = player.save();
        doc.codewords.push("c".into());
        assert!(matches!(
            Player::restore(story.clone(), &doc),
            Err(SaveError::CodewordsDiffer { .. })
        ));
        // A gated step the history could not have taken.
        let mut doc = player.save();
        doc.history.push(SavedStep {
            from: "hub".into(),
            choice: "Accuse her".into(),
            to: "accuse".into(),
            granted: vec![],
            first_visit: true,
        });
        doc.passage = "accuse".into();
        assert!(matches!(
            Player::restore(story, &doc),
            Err(SaveError::StepNotPossible { step: 2, .. })
        ));
    }
}
