//! `graph.db`: the unified story graph in SQLite, changed only in checked, audited batches.
//!
//! Nodes are an id, a type and JSON fields; edges are typed; there is project meta and a
//! mutation audit (`types`, `store`). The graph changes only through [`Graph::apply`], which
//! checks seed 000's rules for the stage making each change and the whole graph's invariants
//! (`change`), and writes all of a batch or nothing. `order` holds the beats' orderings.

mod change;
mod order;
mod store;
mod types;

pub use order::{cycle_member, topological};
pub use store::Graph;
pub use types::{AuditRow, Edge, GraphError, Mutation, Node, Rule, strings};
