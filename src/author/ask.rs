//! How the stages ask the model: the `Ask` seam, typed answers, and `StageError`.
//!
//! Every model-driven stage gets its answers through an [`Ask`]: a prompt name and its
//! variables in, the contract-checked answer out (the gateway in the CLI, a script in the
//! tests). [`answer`] reads that answer as the contract's type (`super::answers`), so an
//! answer that does not fit is a failed call, never a default. [`StageError`] says why a
//! stage could not go on, one variant per failure a caller can act on.

use std::path::PathBuf;

use serde_json::Value;

use super::answers::Answer;
use super::dress::BudgetError;
use super::graph::GraphError;
use super::grow::GrowError;
use crate::llm::LlmError;

/// A model call: prompt name and variables in, the contract-checked answer out.
pub type Ask<'a> = dyn FnMut(&str, Value) -> Result<Value, LlmError> + 'a;

/// Why a model-driven stage stopped (nothing of its unfinished batch is written).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The graph refused a batch (a seed rule) or could not be read.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A model call failed (the gateway says which stage and why).
    #[error(transparent)]
    Call(#[from] LlmError),
    /// An answer that does not fit its contract's type.
    #[error("`{prompt}` answered outside its contract: {source}")]
    Answer {
        prompt: &'static str,
        source: serde_json::Error,
    },
    /// GROW's deterministic core cannot weave what SEED left.
    #[error(transparent)]
    Grow(#[from] GrowError),
    #[error("SEED left no beats to grow")]
    NoBeats,
    #[error("dilemma `{dilemma}` marks {count} answers canonical; exactly one must be")]
    Canonical { dilemma: String, count: usize },
    #[error(
        "answer id `{given}` of `{dilemma}` is already used, and so is `{renamed}`; answer ids are unique across the story"
    )]
    AnswerIdTaken {
        given: String,
        dilemma: String,
        renamed: String,
    },
    #[error(
        "FILL has no voice document: run FILL from its start (`loreloom author rollback DIR fill`)"
    )]
    NoVoice,
    #[error("the graph has no art direction: DRESS's first run writes it")]
    NoArtDirection,
    /// The art direction node does not read as one (an author's edit broke it).
    #[error("the art direction: {0}")]
    ArtDirection(#[source] serde_json::Error),
    /// A brief node does not read as one (an author's edit broke it).
    #[error("{brief}: {source}")]
    Brief {
        brief: String,
        source: serde_json::Error,
    },
    #[error(
        "no image budget: the author sets it at DRESS's gate 2 (`loreloom author approve DIR --render …`)"
    )]
    NoBudget,
    #[error(transparent)]
    Budget(#[from] BudgetError),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Asks the model for `T`'s prompt and reads the answer as `T`.
pub fn answer<T: Answer>(ask: &mut Ask, vars: Value) -> Result<T, StageError> {
    let value = ask(T::PROMPT, vars)?;
    read(value)
}

/// A contract-checked answer read as `T` (one that does not fit is the call's failure).
pub fn read<T: Answer>(value: Value) -> Result<T, StageError> {
    serde_json::from_value(value).map_err(|source| StageError::Answer {
        prompt: T::PROMPT,
        source,
    })
}

/// A batch's reason, with what the engine dropped or mended.
pub fn with_notes(why: &str, notes: &[String]) -> String {
    if notes.is_empty() {
        why.to_owned()
    } else {
        format!("{why}; {}", notes.join("; "))
    }
}
