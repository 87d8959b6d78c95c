//! Rules: rulesets (rulebook text, stat and scene schemas, checks and bands), the seeded dice tool, typed state operations, reputation and perception.
//!
//! Plain Rust with no Bevy, SQLite or model dependency: the session pipeline
//! (#6) asks the model which checks to make, rolls them here, and applies the
//! resulting state operations through [`state::WorldState::apply`].

pub mod dice;
pub mod offer;
pub mod ruleset;
pub mod standing;
pub mod state;

pub use dice::{Dice, DiceError, DiceExpr, Modifiers, Roll};
pub use ruleset::{Band, Check, CheckOutcome, Ruleset, RulesetError, Tier};
pub use state::{BeatStatus, Change, OpKind, StateOp, StateOpError, Target, WorldState};
