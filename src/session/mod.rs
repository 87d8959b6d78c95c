//! Open-ended sessions (seeds 001, 003, 004): the message stream and its visibility matrix, observations with decay.
//!
//! Plain Rust: the turn pipeline (ECS systems in `engine/`) builds each stage's
//! prompt from [`stream::view`] and [`observation::recall`], and the store
//! (`store/`) persists what a turn commits.

pub mod beats;
pub mod budget;
pub mod codex;
#[cfg(feature = "store")]
pub mod controller;
pub mod drafts;
pub mod people;
pub mod play;
pub mod recalled;
#[cfg(feature = "store")]
pub mod remember;
#[cfg(feature = "store")]
pub mod save;
pub mod scenery;
pub mod skills;
pub mod turn;

// Shims: the stream and observations moved down to `transcript/` (#39).
pub use crate::transcript::{
    DEFAULT_LAMBDA, Kind, Message, MessageId, Observation, Stage, StateEntry, Stream, observation,
    player_view, recall, states_for, stream, view,
};
