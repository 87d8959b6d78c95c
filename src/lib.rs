//! Loreloom: a Bevy engine for interactive fiction, authored story graphs and local-model sessions.
//!
//! The story graph ([`story`]) is plain Rust; [`engine`] adapts it to Bevy's ECS
//! so the same engine runs headless (terminal player, tests) and windowed, natively or in the browser.

#[cfg(feature = "store")]
pub mod author;
pub mod campaign;
pub mod cli;
pub mod engine;
#[cfg(all(feature = "store", not(target_family = "wasm")))]
pub mod eval;
pub mod files;
pub mod llm;
pub mod memory;
pub mod rules;
pub mod session;
pub mod ship;
pub mod skills;
#[cfg(feature = "store")]
pub mod store;
pub mod story;
pub mod transcript;
#[cfg(feature = "tune")]
pub mod tune;
#[cfg(feature = "gui")]
pub mod ui;
