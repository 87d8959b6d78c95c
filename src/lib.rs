//! Loreloom: a Bevy engine for interactive fiction, authored story graphs and open-ended sessions with a local model.
//!
//! The story graph ([`story`]) is plain Rust; [`engine`] adapts it to Bevy's ECS
//! so the same engine runs headless (terminal player, tests) and windowed, natively or in the browser.

#[cfg(feature = "store")]
pub mod author;
pub mod campaign;
pub mod cli;
pub mod engine;
pub mod files;
pub mod llm;
pub mod memory;
pub mod rules;
pub mod saves;
pub mod session;
pub mod ship;
pub mod skills;
#[cfg(feature = "store")]
pub mod store;
pub mod story;
#[cfg(feature = "tune")]
pub mod tune;
#[cfg(feature = "gui")]
pub mod ui;

/// A folder shipped with Loreloom (`prompts`, `schemas`, `campaigns`): relative to
/// the working directory when it is there, else in the source tree the binary was built from.
/// In the browser the path is the name itself: the page's bundle holds it there.
pub fn resource_dir(name: &str) -> std::path::PathBuf {
    if cfg!(target_family = "wasm") {
        return std::path::PathBuf::from(name);
    }
    let here = std::path::PathBuf::from(name);
    if crate::files::is_dir(&here) {
        here
    } else {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
    }
}
