//! The record every model call leaves: enough to show it, audit it and replay it exactly.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::backend::{FinishReason, Message, Sampling, Usage, millis};

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
    /// Tokens and timing (zero when the backend failed); serialised flat.
    #[serde(flatten)]
    pub usage: Usage,
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
    /// The record of a call that ended before its first attempt, and `error` why.
    pub fn unstarted(stage: &str, model_key: &str, error: String, started_at: f64) -> Self {
        Self {
            stage: stage.to_owned(),
            prompt_id: String::new(),
            prompt_version: String::new(),
            model_key: model_key.to_owned(),
            backend: String::new(),
            contract: None,
            attempts: Vec::new(),
            output: None,
            error: Some(error),
            started_at,
            total: Duration::ZERO,
        }
    }

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
        self.attempts.iter().map(|a| a.usage.tokens_in).sum()
    }

    pub fn tokens_out(&self) -> u32 {
        self.attempts.iter().map(|a| a.usage.tokens_out).sum()
    }

    pub fn cached_tokens(&self) -> u32 {
        self.attempts.iter().map(|a| a.usage.cached_tokens).sum()
    }

    /// Time to first token of the first attempt.
    pub fn time_to_first_token(&self) -> Duration {
        self.attempts
            .first()
            .map(|a| a.usage.time_to_first_token)
            .unwrap_or_default()
    }

    /// Generation speed over all attempts, in tokens per second.
    pub fn tokens_per_second(&self) -> f64 {
        let secs: f64 = self
            .attempts
            .iter()
            .map(|a| {
                a.usage
                    .total
                    .saturating_sub(a.usage.time_to_first_token)
                    .as_secs_f64()
            })
            .sum();
        let out: u32 = self
            .attempts
            .iter()
            .map(|a| a.usage.tokens_out.saturating_sub(1))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An attempt as saves recorded it before [`Usage`] existed: flat figures.
    const RECORDED: &str = r#"{"kind":"retry","prompt_id":"narrate@v4","messages":[{"role":"user","content":"Go on."}],"sampling":{"temperature":0.5,"top_p":null,"top_k":40,"repeat_penalty":null,"max_tokens":64,"stop":["\n\n"],"seed":8},"raw_output":"The tide turns.","finish":"stop","errors":["not JSON"],"tokens_in":120,"tokens_out":5,"cached_tokens":96,"time_to_first_token":12.5,"total":80.0}"#;

    #[test]
    fn attempts_in_old_saves_read_and_write_back_unchanged() {
        let attempt: Attempt = serde_json::from_str(RECORDED).unwrap();
        assert_eq!(attempt.kind, AttemptKind::Retry);
        assert_eq!(attempt.errors, ["not JSON"]);
        assert_eq!(
            attempt.usage,
            Usage {
                tokens_in: 120,
                tokens_out: 5,
                cached_tokens: 96,
                time_to_first_token: Duration::from_micros(12_500),
                total: Duration::from_millis(80),
            }
        );
        assert_eq!(serde_json::to_string(&attempt).unwrap(), RECORDED);
    }

    #[test]
    fn a_record_sums_its_attempts_figures() {
        let attempt: Attempt = serde_json::from_str(RECORDED).unwrap();
        let mut record = CallRecord::unstarted("narrate", "small", "x".into(), 0.0);
        record.attempts = vec![attempt.clone(), attempt];
        assert_eq!(
            (
                record.tokens_in(),
                record.tokens_out(),
                record.cached_tokens()
            ),
            (240, 10, 192)
        );
        assert_eq!(record.time_to_first_token(), Duration::from_micros(12_500));
    }
}
