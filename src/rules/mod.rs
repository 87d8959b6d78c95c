//! Rules: rulesets, the seeded dice, typed state operations on the world, standing.
//!
//! Rulesets hold rulebook text, stat and scene schemas, checks and bands.
//! Plain Rust with no Bevy, SQLite or model dependency: the session pipeline
//! (#6) asks the model which checks to make, rolls them here, and applies the
//! resulting state operations through [`WorldState::apply`].
//!
//! The rooms, bottom up (each imports only those above it): [`dice`], [`op`]
//! (the op vocabulary), [`refusal`] (why ops are refused), [`ruleset`],
//! [`state`] (the world), [`apply`] (ops applied to the world), [`standing`]
//! (reputation and perception), [`offer`] (ops the extractors may offer).

pub mod apply;
pub mod dice;
pub mod offer;
pub mod op;
pub mod refusal;
pub mod ruleset;
pub mod standing;
pub mod state;

pub use apply::told;
pub use dice::{Dice, DiceError, DiceExpr, Modifiers, Roll};
pub use op::{Change, OpKind, StateOp, Target};
pub use refusal::{Refusal, StateOpError};
pub use ruleset::{Band, Check, CheckOutcome, EscalationStep, Ruleset, RulesetError, Tier};
pub use state::{BeatStatus, Consequence, WorldState};
