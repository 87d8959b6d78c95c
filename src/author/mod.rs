//! The authoring pipeline (seed 000): a story graph built stage by stage, a human gate after each.
//!
//! A project's unified graph lives in `graph.db` (`graph`), with the seed's ownership rules
//! (`ontology`) enforced by the store; `project` keeps its snapshots and gates, `review` its
//! exports for the author. The deterministic cores are `brainstorm`, `seed`, `grow`, `fill` and
//! `dress` (with `diegetic`); the model-driven parts are `stages` (with `discuss`), `grow_stage`, `fill_stage`
//! and `dress_stage`, which ask the model through `ask` and read its answers as `answers`.

pub mod answers;
pub mod ask;
pub mod brainstorm;
pub mod diegetic;
pub mod discuss;
pub mod dress;
pub mod dress_stage;
pub mod export;
pub mod fields;
pub mod fill;
pub mod fill_stage;
pub mod graph;
pub mod grow;
pub mod grow_stage;
pub mod illustrate;
pub mod ontology;
pub mod project;
pub mod reading;
pub mod review;
pub mod seed;
pub mod stages;

pub use ask::StageError;
pub use graph::{Edge, Graph, GraphError, Mutation, Node, Rule};
pub use ontology::{EdgeType, NodeType, Stage};
pub use project::{Gate, Project, ProjectError, Scope};
