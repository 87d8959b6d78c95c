//! Rendered training examples (`training/data/*.jsonl`), and copying measured against them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::CorpusError;
use crate::llm::backend::Message;

/// One rendered training example: the chat, the answer last.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Example {
    pub stage: String,
    pub setting: String,
    /// Which situation of the setting's stage list (for finding it again).
    pub index: usize,
    pub messages: Vec<Message>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::backend::Role;

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
