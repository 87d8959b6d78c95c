//! What a session says and who noticed it: the message stream, its scene markers, observations.
//!
//! Ground floor, plain data and pure functions over it (serde only): the store
//! persists these types, the session's turn runner builds prompts from
//! [`stream::view`] and [`observation::recall`].

pub mod marker;
pub mod observation;
pub mod stream;

pub use observation::{DEFAULT_LAMBDA, Observation, recall};
pub use stream::{
    Kind, Message, MessageId, Stage, StateEntry, Stream, player_view, states_for, view,
};
