//! Open-ended sessions (seeds 001, 003, 004): turns, their orchestration, memory and the save.
//!
//! Plain Rust. [`turn`] is one turn as a sans-IO state machine; [`controller`]
//! runs turns over a save (commands, commits, rewinds, slots) for the terminal
//! and the window; [`remember`] recalls memory and lore for a turn; [`play`]
//! opens a session and drives a turn on the calling thread. The stream a
//! stage sees is `transcript::view`; the engine's ECS adapter is `engine/session`.

pub mod beats;
pub mod budget;
pub mod codex;
pub mod commands;
pub mod continuity;
#[cfg(feature = "store")]
pub mod controller;
pub mod drafts;
#[cfg(feature = "store")]
pub mod error;
pub mod lines;
#[cfg(test)]
mod moves_strategy;
pub mod people;
pub mod phrasing;
pub mod pins;
pub mod play;
pub mod recalled;
#[cfg(feature = "store")]
pub mod remember;
#[cfg(feature = "store")]
pub mod replay;
#[cfg(feature = "store")]
pub mod save_files;
#[cfg(feature = "store")]
pub mod save_rows;
pub mod scenery;
pub mod skills;
#[cfg(feature = "store")]
pub mod summaries;
pub mod turn;
pub mod voice;
