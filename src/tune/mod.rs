//! The fine-tuning corpus (feature `tune`; no player build compiles it).
//!
//! Invented settings (`training/settings/*.json`) are rendered into the exact
//! chats the game's prompt registry asks the model, through the turn's own
//! prompt builders, with the answers we wrote (`render`); the rendered files
//! (`training/data/*.jsonl`) are read back to train on and to measure copying
//! (`examples`). Authoring chains (`training/authoring/*.json`) render the discussions before
//! DREAM and BRAINSTORM, DREAM, BRAINSTORM and SEED the same way (`authoring`). `training/README.md` documents both formats.

mod authoring;
mod examples;
mod render;
mod settings;

pub use authoring::{Chain, Discussion, Talk, load_chains, render_chains};
pub use examples::{Example, SHINGLE, Shingles, read_jsonl};
pub use render::{render, summary};
pub use settings::{
    Beat, CalibrationSpec, ChoicesCase, CorpusError, HistoryEntry, IntentAnswer, IntentCase,
    NarrateCase, Person, Setting, Split, load_settings,
};
