//! The record every model call leaves: enough to show it, audit it and replay it exactly.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::backend::{FinishReason, Message, Sampling, millis};

/// Why an attempt was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptKind {
    /// The stage's own prompt.
    First,
    /// The repair prompt: the invalid output and what was wrong with it.
    Repair,
    /// The stage's prompt again, with the next seed.
    Retry,
    /// One of several samples of the same prompt (seeds `seed`, `seed + 1` …)
    /// the caller chooses among ([`super::config::ModelConfig::drafts`]); not
    /// streamed.
    Draft,
}

/// One generation within a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub kind: AttemptKind,
    /// `stage@version` of the prompt sent (the repair prompt's id for repairs).
    pub prompt_id: String,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    /// The model's text as it came (empty when the backend failed).
    pub raw_output: String,
    pub finish: Option<FinishReason>,
    /// Why the output was refused, if it was.
    pub errors: Vec<String>,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub cached_tokens: u32,
    #[serde(with = "millis")]
    pub time_to_first_token: Duration,
    #[serde(with = "millis")]
    pub total: Duration,
}

/// Now, in seconds since the Unix epoch (as [`CallRecord::started_at`]).
pub fn now_seconds() -> f64 {
    web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// Everything about one gateway call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub stage: String,
    pub prompt_id: String,
    pub prompt_version: String,
    pub model_key: String,
    pub backend: String,
    /// The output contract (a file under `schemas/`), for structured calls.
    pub contract: Option<String>,
    pub attempts: Vec<Attempt>,
    /// The accepted output: validated JSON for structured calls, a string otherwise.
    pub output: Option<Value>,
    /// Why the call failed, if it did.
    pub error: Option<String>,
    /// Seconds since the Unix epoch when the call started.
    pub started_at: f64,
    #[serde(with = "millis")]
    pub total: Duration,
}

impl CallRecord {
    /// The first attempt (the rendered stage prompt).
    pub fn first(&self) -> Option<&Attempt> {
        self.attempts.first()
    }

    /// The attempt whose output was accepted.
    pub fn accepted(&self) -> Option<&Attempt> {
        self.output.as_ref()?;
        self.attempts.last()
    }

    pub fn tokens_in(&self) -> u32 {
        self.attempts.iter().map(|a| a.tokens_in).sum()
    }

    pub fn tokens_out(&self) -> u32 {
        self.attempts.iter().map(|a| a.tokens_out).sum()
    }

    pub fn cached_tokens(&self) -> u32 {
        self.attempts.iter().map(|a| a.cached_tokens).sum()
    }

    /// Time to first token of the first attempt.
    pub fn time_to_first_token(&self) -> Duration {
        self.attempts
            .first()
            .map(|a| a.time_to_first_token)
            .unwrap_or_default()
    }

    /// Generation speed over all attempts, in tokens per second.
    pub fn tokens_per_second(&self) -> f64 {
        let secs: f64 = self
            .attempts
            .iter()
            .map(|a| a.total.saturating_sub(a.time_to_first_token).as_secs_f64())
            .sum();
        let out: u32 = self
            .attempts
            .iter()
            .map(|a| a.tokens_out.saturating_sub(1))
            .sum();
        if secs > 0.0 {
            f64::from(out) / secs
        } else {
            0.0
        }
    }

    /// One line for logs and the debug overlay.
    pub fn summary(&self) -> String {
        let outcome = match (&self.output, &self.error) {
            (Some(_), _) => "ok".to_owned(),
            (None, Some(e)) => format!("failed: {e}"),
            (None, None) => "pending".to_owned(),
        };
        format!(
            "{} via {}/{} · {} attempt(s) · in {} (cached {}) out {} · ttft {:.0} ms · {:.1} tok/s · {}",
            self.prompt_id,
            self.model_key,
            self.backend,
            self.attempts.len(),
            self.tokens_in(),
            self.cached_tokens(),
            self.tokens_out(),
            self.time_to_first_token().as_secs_f64() * 1000.0,
            self.tokens_per_second(),
            outcome
        )
    }
}
