//! Counts of a story graph, as `loreloom stats --json` prints them.

use serde::Serialize;

use super::graph::Story;
use super::reach::Walk;

/// Sizes of a story and how much of it a player can reach.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    pub passages: usize,
    pub choices: usize,
    pub endings: usize,
    pub codewords: usize,
    pub entities: usize,
    pub codex_entries: usize,
    pub illustrations: usize,
    pub reachable_passages: usize,
    pub reachable_endings: usize,
}

impl Stats {
    /// Count a compiled story, with reachability from its validation walk.
    pub fn of(story: &Story, walk: &Walk) -> Self {
        let file = story.file();
        Self {
            passages: story.passage_count(),
            choices: story.choice_count(),
            endings: story.passages().filter(|&p| story.is_ending(p)).count(),
            codewords: story.codeword_count(),
            entities: file.entities.len(),
            codex_entries: file.codex.len(),
            illustrations: file.illustrations.len(),
            reachable_passages: walk.reachable.count_ones(..),
            reachable_endings: walk
                .reachable
                .ones()
                .filter(|&p| story.is_ending(super::graph::PassageIx::from_index(p)))
                .count(),
        }
    }
}
