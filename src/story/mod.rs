//! The story graph (plain Rust, no Bevy): format, compilation, player, slots, validation, import.

// These modules read what others wrote (files, saves, model and skill
// output): no unwrap, expect or indexing that could panic on it (#44); an
// invariant that truly holds says so with `#[expect(.., reason)]`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod diagnostic;
pub mod graph;
pub mod load;
pub mod model;
pub mod player;
pub mod questfoundry;
pub mod reach;
pub mod slots;
pub mod stats;
pub mod synthetic;
#[cfg(test)]
pub(crate) mod testing;
pub mod validate;

pub use diagnostic::{Diagnostic, Rule, Severity, Subject};
pub use graph::{CodewordIx, CodewordSet, CodexIx, EntityIx, PassageIx, SharedStory, Story};
pub use load::{LoadError, SourceFormat, StoryPackage, load_file, open};
pub use player::{Availability, Player, PlayerError, SaveDocument, SaveError, Step};
pub use stats::Stats;
pub use validate::{Report, validate, validate_file};
