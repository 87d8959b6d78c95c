//! The model gateway: one interface to every language model Loreloom calls.
//!
//! Every LLM stage (turn pipeline, extractors, choices, authoring) goes through
//! [`Gateway`]: it renders the stage's prompt from `prompts/` ([`PromptRegistry`]),
//! sends it to the backend a model key names ([`ModelConfig`]), streams tokens back
//! over a channel (the caller polls, so the frame never blocks), validates
//! structured output against the stage's contract in `schemas/`
//! ([`Contract`]), runs seed 003's repair → retry → typed-failure policy, and
//! returns a [`CallRecord`] holding everything needed to replay the call.
//!
//! The rooms: [`call`] (what callers hold: request, events, outcome, handle),
//! [`gateway`] (the registry: prepare and dispatch to lanes), [`worker`] (the
//! native threads and the backends they open), [`policy`] (repair → retry,
//! shared with the browser), [`record`] (what a call leaves for replay).
//!
//! Backends: in-process llama.cpp ([`llama`], feature `llama`), OpenAI-compatible
//! HTTP ([`openai`], feature `http`; in the browser `fetch`, the same wire format
//! from [`chat`]) and a [`scripted`] one for tests, demos and replay. The
//! backend trait and everything here except those two modules is plain Rust
//! with no Bevy.

// These modules read what others wrote (files, saves, model and skill
// output): no unwrap, expect or indexing that could panic on it (#44); an
// invariant that truly holds says so with `#[expect(.., reason)]`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod backend;
pub mod call;
pub mod chat;
pub mod config;
pub mod contract;
#[cfg(target_family = "wasm")]
pub mod fetch;
pub mod gateway;
#[cfg(feature = "llama")]
pub mod llama;
#[cfg(feature = "http")]
pub mod openai;
pub mod policy;
pub mod prompts;
pub mod record;
pub mod scripted;
pub mod stream;
pub mod worker;

pub use backend::{
    Backend, BackendError, GenerateRequest, Generated, Message, Role, Sampling, Usage,
};
pub use call::{AnswerError, CallHandle, CallOutcome, CallRequest, Check, LlmError, LlmEvent};
pub use config::{BackendConfig, ModelConfig, ModelsConfig};
pub use contract::{Contract, ContractError};
pub use gateway::{Gateway, GatewayError};
pub use policy::REPAIR_STAGE;
pub use prompts::{PromptError, PromptRegistry, StageInfo};
pub use record::{Attempt, AttemptKind, CallRecord};
pub use scripted::{Script, ScriptError, ScriptedBackend};
pub use worker::open_backend;
