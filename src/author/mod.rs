//! The authoring pipeline (seed 000): a project's unified graph in `graph.db` with the seed's ownership rules enforced by the store, pre-stage snapshots, human gates, review exports and the model-driven stages.

pub mod dress;
pub mod dress_stage;
pub mod export;
pub mod fill;
pub mod fill_stage;
pub mod graph;
pub mod grow;
pub mod grow_stage;
pub mod illustrate;
pub mod model;
pub mod project;
pub mod review;
pub mod stages;

pub use graph::{Edge, Graph, GraphError, Mutation, Node, Rule};
pub use model::{EdgeType, NodeType, Stage};
pub use project::{Gate, Project, ProjectError, Scope};
