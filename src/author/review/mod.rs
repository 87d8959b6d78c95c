//! The author's views of the graph at a gate: `exports/graph.yaml` and `exports/graph.md`.
//!
//! `graph.yaml` holds every node and edge, to read or edit and re-apply (`yaml`); `graph.md`
//! is a readable summary with what the stage under review changed (`summary`).

mod summary;
mod yaml;

pub use summary::markdown;
pub use yaml::{ReviewError, changes, document, yaml};
