//! What a caller of the gateway holds: the request, its events, its outcome and its handle.
//!
//! A [`CallRequest`] names a stage, a model key and the template's variables;
//! [`Gateway::call`](super::Gateway::call) answers with a [`CallHandle`] whose
//! channel carries [`LlmEvent`]s, the last of them the [`CallOutcome`]: the
//! accepted output (or the typed [`LlmError`]) and the [`CallRecord`] that
//! replays it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::Receiver;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::backend::SamplingOverride;
use super::contract::{Contract, KEEP};
use super::record::{AttemptKind, CallRecord};

/// Extra validation a caller adds on top of the schema (e.g. "character ids exist").
pub type Check = Arc<dyn Fn(&Value) -> Result<(), Vec<String>> + Send + Sync>;

/// One call of a stage.
#[derive(Clone)]
pub struct CallRequest {
    pub stage: String,
    /// The pinned prompt version (the newest when `None`).
    pub version: Option<String>,
    /// The template's variables.
    pub vars: Value,
    pub model_key: String,
    /// Per-call sampling (seed, max tokens …) over the model's and stage's defaults.
    pub sampling: SamplingOverride,
    /// KV-cache slot (default: the stage name).
    pub cache_slot: Option<String>,
    /// An output contract instead of the stage's own.
    pub contract: Option<Contract>,
    /// Extra validation after the schema.
    pub check: Option<Check>,
    /// Narrow parts of the stage's contract for this call: the subschema at each
    /// JSON pointer into the instance (`/check`, `/items/stat`, `/state_ops/items`)
    /// is replaced by the one given (its `description` kept), so constrained
    /// decoding can only produce what fits it (`/check` → the ruleset's check ids).
    pub narrowing: Vec<(String, Value)>,
    /// Sample a prose stage in as many drafts as the model's `drafts` says and
    /// answer with all of them (a JSON array of strings, in seed order) when
    /// that is more than one; the caller keeps the best. Drafts never stream.
    pub drafts: bool,
    /// Bookkeeping (extractors, the lore keeper): run on the key's second lane
    /// when it has one (`lanes` in models.ron), beside what the player waits for.
    pub background: bool,
    /// The answer's opening, written by the engine (#42): a model whose key
    /// says `continues_answers` is asked to continue it, and the answer is
    /// the opening and what the model wrote after it (streamed in that order).
    /// Others ignore it. Empty: the model writes the whole answer.
    pub answer_start: String,
}

impl std::fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRequest")
            .field("stage", &self.stage)
            .field("version", &self.version)
            .field("model_key", &self.model_key)
            .finish_non_exhaustive()
    }
}

impl CallRequest {
    pub fn new(stage: impl Into<String>, model_key: impl Into<String>, vars: Value) -> Self {
        Self {
            stage: stage.into(),
            version: None,
            vars,
            model_key: model_key.into(),
            sampling: SamplingOverride::default(),
            cache_slot: None,
            contract: None,
            check: None,
            narrowing: Vec::new(),
            background: false,
            drafts: false,
            answer_start: String::new(),
        }
    }

    /// Open the answer with `start` (see [`CallRequest::answer_start`]).
    #[must_use]
    pub fn starting_with(mut self, start: impl Into<String>) -> Self {
        self.answer_start = start.into();
        self
    }

    /// Ask for the model's drafts (see [`CallRequest::drafts`]).
    pub fn drafted(mut self) -> Self {
        self.drafts = true;
        self
    }

    /// Allow only `values` at `pointer` (see [`CallRequest::narrowing`]).
    pub fn allow(self, pointer: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        let values: Vec<Value> = values.into_iter().map(Into::into).collect();
        self.narrow(pointer, serde_json::json!({ "enum": values }))
    }

    /// Run on the key's background lane (see [`CallRequest::background`]).
    #[must_use]
    pub fn in_background(mut self) -> Self {
        self.background = true;
        self
    }

    /// Replace the contract's subschema at `pointer` with `schema` for this call
    /// (see [`CallRequest::narrowing`]).
    pub fn narrow(mut self, pointer: &str, schema: Value) -> Self {
        self.narrowing.push((pointer.to_owned(), schema));
        self
    }

    /// Set `keywords` on the contract's subschema at `pointer` for this call,
    /// keeping the rest of it (`minItems` on a list).
    pub fn tighten(mut self, pointer: &str, keywords: Value) -> Self {
        let mut keywords = keywords;
        if let Some(obj) = keywords.as_object_mut() {
            obj.insert(KEEP.to_owned(), Value::Bool(true));
        }
        self.narrowing.push((pointer.to_owned(), keywords));
        self
    }

    pub fn seed(mut self, seed: u32) -> Self {
        self.sampling.seed = Some(seed);
        self
    }

    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
}

/// Why a call produced no accepted output.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LlmError {
    #[error("stage `{stage}`: {message}")]
    Setup { stage: String, message: String },
    #[error("stage `{stage}` on model `{model_key}` failed: {reason}")]
    Backend {
        stage: String,
        model_key: String,
        reason: String,
        /// The backend called it temporary (a timeout, a refused connection, a 5xx).
        transient: bool,
    },
    #[error(
        "stage `{stage}` on model `{model_key}` gave invalid output after a repair and a retry: {reason}"
    )]
    InvalidOutput {
        stage: String,
        model_key: String,
        reason: String,
    },
    #[error("stage `{stage}` was cancelled")]
    Cancelled { stage: String },
}

impl LlmError {
    /// Whether trying the same call again may succeed (seed 003: transient model errors).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Backend {
                transient: true,
                ..
            }
        )
    }
}

/// Why a call's answer could not be read as the type its caller expects.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The call itself produced no accepted output.
    #[error(transparent)]
    Call(#[from] LlmError),
    /// The output passed its contract but does not fit the caller's type
    /// (the contract and the type disagree).
    #[error("stage `{stage}` answered in a shape its reader does not take: {source}")]
    Shape {
        stage: String,
        #[source]
        source: serde_json::Error,
    },
}

/// A call's result and its record.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    pub result: Result<Value, LlmError>,
    pub record: CallRecord,
}

impl CallOutcome {
    /// The outcome of a call that failed before its first attempt (a prompt
    /// that does not render, a model key that names nothing, a worker gone).
    pub fn setup_failed(stage: &str, model_key: &str, message: String, started_at: f64) -> Self {
        Self {
            result: Err(LlmError::Setup {
                stage: stage.to_owned(),
                message: message.clone(),
            }),
            record: CallRecord::unstarted(stage, model_key, message, started_at),
        }
    }

    /// The accepted output as a typed value (a stage's answer type, checked
    /// against the same contract the output passed).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, AnswerError> {
        let value = self
            .result
            .as_ref()
            .map_err(|e| AnswerError::Call(e.clone()))?;
        T::deserialize(value).map_err(|source| AnswerError::Shape {
            stage: self.record.stage.clone(),
            source,
        })
    }
}

/// What a call reports while it runs.
#[derive(Clone, Debug)]
pub enum LlmEvent {
    /// An attempt began (the UI clears its streamed text on a repair or retry).
    AttemptStarted(AttemptKind),
    /// Streamed text.
    Token(String),
    /// The call ended.
    Finished(Box<CallOutcome>),
}

/// The caller's end of a call: poll it (the frame never blocks) or wait on it.
#[derive(Debug)]
pub struct CallHandle {
    pub id: u64,
    pub stage: String,
    rx: Receiver<LlmEvent>,
    cancel: Arc<AtomicBool>,
}

impl CallHandle {
    /// The handle of call `id`, whose events arrive on `rx` and which stops
    /// at the next token once `cancel` is set.
    pub(super) fn new(
        id: u64,
        stage: String,
        rx: Receiver<LlmEvent>,
        cancel: Arc<AtomicBool>,
    ) -> Self {
        Self {
            id,
            stage,
            rx,
            cancel,
        }
    }

    /// Events that have arrived, without blocking.
    pub fn poll(&self) -> Vec<LlmEvent> {
        self.rx.try_iter().collect()
    }

    /// Asks the worker to stop this call at the next token.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Blocks until the call ends, passing streamed text to `on_token`.
    pub fn wait_streaming(self, mut on_token: impl FnMut(&str)) -> CallOutcome {
        for event in &self.rx {
            match event {
                LlmEvent::Token(t) => on_token(&t),
                LlmEvent::AttemptStarted(_) => {}
                LlmEvent::Finished(outcome) => return *outcome,
            }
        }
        self.stopped()
    }

    /// The channel the call's events arrive on (to wait on several calls at
    /// once with `crossbeam_channel::Select`).
    pub fn events(&self) -> &Receiver<LlmEvent> {
        &self.rx
    }

    /// The outcome of a call whose worker went away before it finished.
    pub fn stopped(&self) -> CallOutcome {
        CallOutcome::setup_failed(
            &self.stage,
            "",
            "the model worker stopped unexpectedly".into(),
            0.0,
        )
    }

    /// Blocks until the call ends.
    pub fn wait(self) -> CallOutcome {
        self.wait_streaming(|_| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Answer {
        possible: bool,
        check: String,
    }

    fn outcome(result: Result<Value, LlmError>) -> CallOutcome {
        CallOutcome {
            result,
            record: CallRecord::unstarted("resolve", "small", String::new(), 0.0),
        }
    }

    #[test]
    fn an_accepted_answer_parses_into_its_type() {
        let ok = outcome(Ok(serde_json::json!({"possible": true, "check": "sway"})));
        assert_eq!(
            ok.parse::<Answer>().unwrap(),
            Answer {
                possible: true,
                check: "sway".into()
            }
        );
    }

    #[test]
    fn a_failed_call_or_a_foreign_shape_is_a_typed_error() {
        let failed = outcome(Err(LlmError::Cancelled {
            stage: "resolve".into(),
        }));
        assert!(matches!(
            failed.parse::<Answer>(),
            Err(AnswerError::Call(LlmError::Cancelled { .. }))
        ));
        let odd = outcome(Ok(serde_json::json!({"possible": "maybe"})));
        let err = odd.parse::<Answer>().unwrap_err();
        assert!(matches!(&err, AnswerError::Shape { stage, .. } if stage == "resolve"));
        assert!(err.to_string().contains("resolve"), "{err}");
    }

    #[test]
    fn a_stopped_call_says_so_in_its_result_and_record() {
        let (_tx, rx) = crossbeam_channel::unbounded();
        let handle = CallHandle::new(7, "narrate".into(), rx, Arc::default());
        let out = handle.stopped();
        assert_eq!(
            out.result,
            Err(LlmError::Setup {
                stage: "narrate".into(),
                message: "the model worker stopped unexpectedly".into()
            })
        );
        assert_eq!(
            out.record.error.as_deref(),
            Some("the model worker stopped unexpectedly")
        );
        assert!(out.record.attempts.is_empty());
    }
}
