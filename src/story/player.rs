//! The story player: a state machine over held codewords, visited passages and history, with undo and saves.

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
    #[error("the save is inconsistent: {0}")]
    Inconsistent(String),
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
                label: story.passage(self.passage).choices[index].label.clone(),
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
            let frame = self.history.pop().expect("checked above");
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
                    choice: story.passage(f.from).choices[f.choice].label.clone(),
                    to: id(f.to),
                    granted: words(&f.granted),
                    first_visit: f.first_visit,
                })
                .collect(),
        }
    }

    /// Rebuild a playthrough from a save, or say exactly what no longer fits.
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
        let mut missing_passages = Vec::new();
        let mut missing_codewords = Vec::new();
        let mut passage = |id: &str| {
            story.passage_ix(id).unwrap_or_else(|| {
                if !missing_passages.iter().any(|m| m == id) {
                    missing_passages.push(id.to_owned());
                }
                PassageIx::from_index(0)
            })
        };
        let current = passage(&doc.passage);
        let visited_ix: Vec<PassageIx> = doc.visited.iter().map(|v| passage(v)).collect();
        let mut history_ix = Vec::with_capacity(doc.history.len());
        for step in &doc.history {
            history_ix.push((passage(&step.from), passage(&step.to)));
        }
        let mut codewords = |ids: &[String]| {
            let mut set = story.no_codewords();
            for id in ids {
                match story.codeword_ix(id) {
                    Some(c) => set.insert(c),
                    None if !missing_codewords.contains(id) => missing_codewords.push(id.clone()),
                    None => {}
                }
            }
            set
        };
        let held = codewords(&doc.codewords);
        let granted: Vec<CodewordSet> = doc.history.iter().map(|s| codewords(&s.granted)).collect();
        if !missing_passages.is_empty() || !missing_codewords.is_empty() {
            return Err(SaveError::StoryChanged {
                missing_passages,
                missing_codewords,
            });
        }

        let mut visited = FixedBitSet::with_capacity(story.passage_count());
        for p in visited_ix {
            visited.insert(p.index());
        }
        let mut history = Vec::with_capacity(doc.history.len());
        for ((step, (from, to)), granted) in doc.history.iter().zip(history_ix).zip(granted) {
            let labels = &story.passage(from).choices;
            let choice = labels
                .iter()
                .position(|c| c.label == step.choice && story.passage_ix(&c.to) == Some(to))
                .or_else(|| {
                    labels
                        .iter()
                        .position(|c| story.passage_ix(&c.to) == Some(to))
                })
                .ok_or_else(|| {
                    SaveError::Inconsistent(format!(
                        "no choice leads from `{}` to `{}` any more",
                        step.from, step.to
                    ))
                })?;
            history.push(Frame {
                from,
                choice,
                to,
                granted,
                first_visit: step.first_visit,
            });
        }
        if let Some(last) = history.last()
            && last.to != current
        {
            return Err(SaveError::Inconsistent(format!(
                "history ends at `{}` but the save is at `{}`",
                story.passage(last.to).id,
                doc.passage
            )));
        }
        visited.insert(current.index());
        Ok(Self {
            passage: current,
            held,
            visited,
            history,
            story,
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
