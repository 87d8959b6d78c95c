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
pub mod observation;
pub mod people;
pub mod play;
#[cfg(feature = "store")]
pub mod remember;
pub mod scenery;
pub mod skills;
pub mod stream;
pub mod turn;

pub use observation::{DEFAULT_LAMBDA, Observation, recall};
pub use stream::{
    Kind, Message, MessageId, Stage, StateEntry, Stream, player_view, states_for, view,
};
