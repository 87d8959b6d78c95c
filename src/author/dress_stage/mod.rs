//! DRESS on a project's graph (seed 000 Stage 6): art direction, briefs and codex, pictures.
//!
//! The art direction and each shown entity's visual profile (`art`, gate 1); an illustration
//! brief per passage with the hybrid priority score (`briefs`) and each entity's codex tiers
//! (`codex`; gate 2, where the author sets the image budget); the sample illustration (its
//! own gate), then the rest, through an `Illustrator`, each picture a content-addressed asset
//! (`draw`). DRESS reads the story and decorates it: it never changes prose, passages,
//! choices or entities. The deterministic rules are `super::dress`'s.

mod art;
mod briefs;
mod codex;
mod draw;
mod read;
mod report;

pub use art::art;
pub use briefs::briefs;
pub use codex::CODEX_RETRIES;
pub use draw::draw;
pub use report::Report;
