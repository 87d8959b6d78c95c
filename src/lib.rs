//! Loreloom: a Bevy engine for interactive fiction, authored story graphs and open-ended sessions with a local model.
//!
//! The story graph ([`story`]) is plain Rust; [`engine`] adapts it to Bevy's ECS
//! so the same engine runs headless (terminal player, tests) and, later, windowed.

pub mod cli;
pub mod engine;
pub mod llm;
pub mod saves;
pub mod story;
#[cfg(feature = "gui")]
pub mod ui;
