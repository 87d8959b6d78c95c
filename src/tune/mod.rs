//! The fine-tuning corpus (feature `tune`; no player build compiles it).
//!
//! Invented settings (`training/settings/*.json`) are rendered into the exact
//! chats the game's prompt registry asks the model, through the turn's own
//! prompt builders, with the answers we wrote (`render`); the rendered files
//! (`training/data/*.jsonl`) are read back to train on and to measure copying
//! (`examples`). `training/README.md` documents the setting format.

mod examples;
mod render;
mod settings;

pub use examples::{Example, SHINGLE, Shingles, read_jsonl};
pub use render::{render, summary};
pub use settings::{
    Beat, CalibrationSpec, ChoicesCase, CorpusError, HistoryEntry, IntentAnswer, IntentCase,
    NarrateCase, Person, Setting, Split, load_settings,
};
