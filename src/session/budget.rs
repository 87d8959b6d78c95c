//! A turn's time budget (#21): submit → first token → choices → commit, read from its calls.
//!
//! Tokens in and out, the cached-prefix share, and a timeline of every model
//! call, all read from the turn's call records.

use serde::{Deserialize, Serialize};

use crate::llm::CallRecord;

/// One model call on the turn's timeline, in milliseconds after the submit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub stage: String,
    /// When the model began the call (a call waits while another runs).
    pub start_ms: f64,
    /// Its first token.
    pub first_token_ms: f64,
    pub end_ms: f64,
    pub tokens_in: u32,
    pub cached_tokens: u32,
    pub tokens_out: u32,
}

/// Where a turn's time went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnBudget {
    /// Submit → the first token of the player's narration.
    pub first_narration_ms: Option<f64>,
    /// Submit → the next choices are known.
    pub choices_ms: Option<f64>,
    /// Submit → every call answered and the turn handed to the commit.
    pub ready_ms: f64,
    /// Every call, in the order they started.
    pub spans: Vec<Span>,
}

impl TurnBudget {
    /// The budget of a turn submitted at `submitted_at` (seconds since the
    /// Unix epoch) that made `records`, finished `ready_ms` after the submit.
    pub fn of(submitted_at: f64, records: &[CallRecord], ready_ms: f64) -> Self {
        let mut spans: Vec<Span> = records
            .iter()
            .map(|r| {
                let start_ms = ((r.started_at - submitted_at) * 1000.0).max(0.0);
                let first = r
                    .attempts
                    .first()
                    .map_or(0.0, |a| a.usage.time_to_first_token.as_secs_f64() * 1000.0);
                Span {
                    stage: r.stage.clone(),
                    start_ms,
                    first_token_ms: start_ms + first,
                    end_ms: start_ms + r.total.as_secs_f64() * 1000.0,
                    tokens_in: r.attempts.iter().map(|a| a.usage.tokens_in).sum(),
                    cached_tokens: r.attempts.iter().map(|a| a.usage.cached_tokens).sum(),
                    tokens_out: r.attempts.iter().map(|a| a.usage.tokens_out).sum(),
                }
            })
            .collect();
        spans.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        // The player's narration is the first narration sent.
        let first_narration_ms = spans
            .iter()
            .find(|s| s.stage == "narrate")
            .map(|s| s.first_token_ms);
        let choices_ms = spans
            .iter()
            .rev()
            .find(|s| s.stage == "choices")
            .map(|s| s.end_ms);
        Self {
            first_narration_ms,
            choices_ms,
            ready_ms,
            spans,
        }
    }

    /// Model calls this turn.
    pub fn calls(&self) -> usize {
        self.spans.len()
    }

    /// Prompt tokens this turn.
    pub fn tokens_in(&self) -> u64 {
        self.spans.iter().map(|s| u64::from(s.tokens_in)).sum()
    }

    /// Generated tokens this turn.
    pub fn tokens_out(&self) -> u64 {
        self.spans.iter().map(|s| u64::from(s.tokens_out)).sum()
    }

    /// Prompt tokens the model found already evaluated (a slot's shared prefix).
    pub fn cached_tokens(&self) -> u64 {
        self.spans.iter().map(|s| u64::from(s.cached_tokens)).sum()
    }

    /// The share of prompt tokens that came from the cache, 0–1.
    pub fn cached_share(&self) -> f64 {
        let all = self.tokens_in();
        if all == 0 {
            return 0.0;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts of one turn are far below 2^52"
        )]
        let share = self.cached_tokens() as f64 / all as f64;
        share
    }

    /// One line for the log and the terminal: `first words 1.9 s · choices 8.2 s · …`.
    pub fn summary(&self) -> String {
        let secs =
            |ms: Option<f64>| ms.map_or_else(|| "—".to_owned(), |m| format!("{:.1} s", m / 1000.0));
        format!(
            "first words {} · choices {} · done {} · {} calls · {} tokens in ({:.0}% cached), {} out",
            secs(self.first_narration_ms),
            secs(self.choices_ms),
            secs(Some(self.ready_ms)),
            self.calls(),
            self.tokens_in(),
            self.cached_share() * 100.0,
            self.tokens_out()
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::llm::record::{Attempt, AttemptKind};

    fn record(stage: &str, started_at: f64, first: u64, total: u64, cached: u32) -> CallRecord {
        CallRecord {
            stage: stage.into(),
            prompt_id: format!("{stage}@v1"),
            prompt_version: "v1".into(),
            model_key: "small".into(),
            backend: "test".into(),
            contract: None,
            attempts: vec![Attempt {
                kind: AttemptKind::First,
                prompt_id: format!("{stage}@v1"),
                messages: Vec::new(),
                sampling: crate::llm::Sampling::default(),
                raw_output: String::new(),
                finish: None,
                errors: Vec::new(),
                usage: crate::llm::Usage {
                    tokens_in: 100,
                    tokens_out: 20,
                    cached_tokens: cached,
                    time_to_first_token: Duration::from_millis(first),
                    total: Duration::from_millis(total),
                },
            }],
            output: None,
            error: None,
            started_at,
            total: Duration::from_millis(total),
        }
    }

    #[test]
    fn the_budget_reads_the_timeline_from_the_records() {
        let records = [
            record("resolve", 100.0, 300, 1000, 0),
            record("narrate", 101.0, 500, 2000, 50),
            record("extract", 103.0, 100, 500, 100),
            record("narrate", 103.5, 400, 900, 0),
            record("choices", 104.5, 200, 1500, 50),
        ];
        let b = TurnBudget::of(100.0, &records, 6100.0);
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-6);
        assert!(near(b.first_narration_ms, 1500.0), "{b:?}");
        assert!(near(b.choices_ms, 6000.0), "{b:?}");
        assert_eq!(
            (b.calls(), b.tokens_in(), b.tokens_out(), b.cached_tokens()),
            (5, 500, 100, 200)
        );
        assert!((b.cached_share() - 0.4).abs() < 1e-9);
        assert_eq!(b.spans[2].stage, "extract");
        assert!(near(Some(b.spans[2].start_ms), 3000.0));
        let line = b.summary();
        assert!(
            line.starts_with("first words 1.5 s · choices 6.0 s · done 6.1 s · 5 calls"),
            "{line}"
        );
        assert!(line.contains("(40% cached)"), "{line}");
    }

    #[test]
    fn a_turn_without_calls_has_an_empty_budget() {
        let b = TurnBudget::of(0.0, &[], 2.0);
        assert_eq!(
            (b.first_narration_ms, b.choices_ms, b.calls()),
            (None, None, 0)
        );
        assert!(b.cached_share().abs() < f64::EPSILON);
    }
}
