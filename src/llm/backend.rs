//! The backend trait every model runs behind, and the request/response types it speaks.
//!
//! A backend is synchronous: the gateway owns one worker thread per backend and
//! calls [`Backend::generate`] there, so a backend may block on inference or I/O.
//! The gateway's call policy awaits [`Generate`] instead, so the browser's
//! `fetch` backend, which cannot block the page, runs the same policy as a
//! task of the page; a native backend is driven through [`Blocking`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Who speaks a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One chat message of a rendered prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
}

/// Sampling options. `None` leaves a value at the backend's default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sampling {
    /// 0 samples greedily.
    pub temperature: f32,
    pub top_p: Option<f32>,
    pub top_k: Option<u32>,
    pub repeat_penalty: Option<f32>,
    /// DRY ("don't repeat yourself"): how hard a token that would extend a
    /// repeat of earlier text is pushed down (0 or `None`: off). Unlike the
    /// repeat penalty it spares single words (names, "the") and bites on
    /// repeated phrases, the loop a small model falls into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_multiplier: Option<f32>,
    pub max_tokens: u32,
    /// Generation stops before the first of these strings (which is not returned).
    pub stop: Vec<String>,
    pub seed: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.7,
            top_p: Some(0.9),
            top_k: Some(40),
            repeat_penalty: Some(1.1),
            dry_multiplier: None,
            max_tokens: 256,
            stop: Vec::new(),
            seed: 0,
        }
    }
}

impl Sampling {
    /// Overlays the values `other` sets on top of `self` (stage defaults under call options).
    pub fn merged(&self, other: &SamplingOverride) -> Self {
        Self {
            temperature: other.temperature.unwrap_or(self.temperature),
            top_p: other.top_p.or(self.top_p),
            top_k: other.top_k.or(self.top_k),
            repeat_penalty: other.repeat_penalty.or(self.repeat_penalty),
            dry_multiplier: other.dry_multiplier.or(self.dry_multiplier),
            max_tokens: other.max_tokens.unwrap_or(self.max_tokens),
            stop: other.stop.clone().unwrap_or_else(|| self.stop.clone()),
            seed: other.seed.unwrap_or(self.seed),
        }
    }
}

/// Partial sampling options, as written in a stage's `stage.ron` or a model's config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SamplingOverride {
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<u32>,
    pub repeat_penalty: Option<f32>,
    pub dry_multiplier: Option<f32>,
    pub max_tokens: Option<u32>,
    pub stop: Option<Vec<String>>,
    pub seed: Option<u32>,
}

impl SamplingOverride {
    /// `self` with the values of `over` written on top.
    pub fn then(&self, over: &SamplingOverride) -> Self {
        Self {
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            top_k: over.top_k.or(self.top_k),
            repeat_penalty: over.repeat_penalty.or(self.repeat_penalty),
            dry_multiplier: over.dry_multiplier.or(self.dry_multiplier),
            max_tokens: over.max_tokens.or(self.max_tokens),
            stop: over.stop.clone().or_else(|| self.stop.clone()),
            seed: over.seed.or(self.seed),
        }
    }
}

/// What a backend is asked to generate.
#[derive(Clone, Debug)]
pub struct GenerateRequest {
    /// The stage asking (for scripted matching, cache slots and errors).
    pub stage: String,
    /// `stage@version` of the prompt.
    pub prompt_id: String,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    /// Constrain output to this JSON Schema (grammar-constrained where the backend can).
    pub json_schema: Option<serde_json::Value>,
    /// KV-cache slot whose evaluated prefix this call may reuse (default: the stage).
    pub cache_slot: String,
}

/// Why generation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its turn.
    Stop,
    /// A stop string was reached.
    StopString,
    /// `max_tokens` was reached.
    Length,
    /// The caller cancelled.
    Cancelled,
}

/// The figures one generation leaves: tokens in, out and cached, and its timing.
///
/// [`Generated`] and the call record's `Attempt` (`llm/record.rs`)
/// both carry it flattened, so their serialised form is the flat one it
/// always was (recorded calls in old saves still read and replay).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (including the cached prefix).
    pub tokens_in: u32,
    pub tokens_out: u32,
    /// Prompt tokens reused from the KV cache instead of evaluated.
    pub cached_tokens: u32,
    #[serde(with = "millis")]
    pub time_to_first_token: Duration,
    #[serde(with = "millis")]
    pub total: Duration,
}

/// What a backend generated, with the figures a call record keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generated {
    pub text: String,
    pub finish: FinishReason,
    #[serde(flatten)]
    pub usage: Usage,
}

/// A backend failure. Transient ones are worth retrying; the others are not.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum BackendError {
    #[error("{0} (temporary; retrying may help)")]
    Transient(String),
    #[error("{0}")]
    Fatal(String),
    #[error("cancelled")]
    Cancelled,
}

/// A model behind the gateway. Runs on the gateway's worker thread.
pub trait Backend: Send {
    /// A short name for records (`llama.cpp`, `openai`, `scripted`).
    fn name(&self) -> &'static str;

    /// Generates a reply, calling `on_token` with each piece of text as it is produced.
    /// `on_token` returns `false` to cancel.
    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError>;

    /// Reads `request`'s prompt into its cache slot and writes nothing, so a
    /// later call that starts alike evaluates only what differs (the gateway's
    /// [`prime`](super::Gateway::prime)). Backends without a prompt cache of
    /// their own do nothing.
    fn prefill(&mut self, request: &GenerateRequest) -> Result<(), BackendError> {
        let _ = request;
        Ok(())
    }
}

/// A backend as the gateway's call policy drives it: awaited. Native backends
/// block and are wrapped in [`Blocking`]; the browser's `fetch` backend yields
/// to the page while it waits for the server.
pub(crate) trait Generate {
    fn name(&self) -> &'static str;

    async fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError>;
}

/// A blocking [`Backend`] as a [`Generate`]: its future is ready when first polled.
#[cfg(not(target_family = "wasm"))]
pub(crate) struct Blocking<'a>(pub &'a mut dyn Backend);

#[cfg(not(target_family = "wasm"))]
impl Generate for Blocking<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    async fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        self.0.generate(request, on_token)
    }
}

/// Serialises durations as fractional milliseconds.
pub(crate) mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0))
    }
}
