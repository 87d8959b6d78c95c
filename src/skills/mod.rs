//! Skills (seed 002 layers 1–3): external programs a turn calls over the NDJSON tool protocol.
//!
//! Skills (seed 002 layers 1–3): external programs in any language a turn can call over the NDJSON
//! tool protocol (`protocol`), discovered from `skills/` folders (`manifest`), each invocation
//! contained (`invoke`), routed by the moves they list (`route`), planned as Plan JSON (`plan`,
//! `planner`), executed in dependency order with retries, health and the bounded replan loop
//! (`execute`); their state patches deep-merged (`merge`). Plain Rust: the ECS adapter and the
//! panels live elsewhere.

// These modules read what others wrote (files, saves, model and skill
// output): no unwrap, expect or indexing that could panic on it (#44); an
// invariant that truly holds says so with `#[expect(.., reason)]`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod assets;
pub mod config;
pub mod consent;
pub mod execute;
pub mod invoke;
pub mod manifest;
pub mod merge;
pub mod plan;
pub mod planner;
pub mod protocol;
pub mod quota;
pub mod route;
pub mod sandbox;

pub use execute::{ExecutionResult, Executor, Health, Turn, replan};
pub use manifest::{Discovery, Skill, discover};
pub use plan::Plan;
