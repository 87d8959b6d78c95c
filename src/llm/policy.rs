//! Seed 003's call policy: repair → retry → typed failure, for native workers and the browser.
//!
//! Structured stages: invalid output → one repair prompt (`prompts/repair/`)
//! with the invalid output and the validation errors → one full retry with the
//! next seed → [`LlmError::InvalidOutput`] naming stage, model key and reason.
//! A repair the backend refuses for good (its prompt outgrew the context) goes on to the retry.
//! Prose stages that ask for drafts sample the prompt once per draft instead.
//! The policy awaits a [`Generate`]: a native worker drives a blocking backend
//! through it, the browser a `fetch` one as a task of the page.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::Sender;
use serde_json::{Value, json};
use web_time::Instant;

use super::backend::{BackendError, Generate, GenerateRequest, Message, Sampling};
use super::call::{CallOutcome, Check, LlmError, LlmEvent};
use super::contract::Contract;
use super::prompts::PromptRegistry;
use super::record::{Attempt, AttemptKind, CallRecord, now_seconds};

/// The stage whose prompt repairs invalid structured output.
pub const REPAIR_STAGE: &str = "repair";

/// A call made ready to run: its prompt rendered, its contract narrowed, its
/// sampling merged, and the channel its caller listens on.
pub(super) struct Job {
    pub id: u64,
    pub model_key: String,
    /// Runs on the key's background lane (see [`CallRequest::background`]);
    /// in the browser the server schedules.
    ///
    /// [`CallRequest::background`]: super::CallRequest::background
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    pub background: bool,
    pub stage: String,
    pub version: String,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    pub cache_slot: String,
    pub contract: Option<Contract>,
    pub check: Option<Check>,
    /// Samples to answer with (more than one only for prose stages that asked).
    pub drafts: u32,
    /// The answer's opening the model continues (`CallRequest::answer_start`,
    /// kept only for keys that continue answers); empty when it writes it whole.
    pub answer_start: String,
    pub prompts: Arc<PromptRegistry>,
    pub events: Sender<LlmEvent>,
    pub cancel: Arc<AtomicBool>,
}

impl Job {
    /// `stage@version` of the job's prompt.
    pub fn prompt_id(&self) -> String {
        format!("{}@{}", self.stage, self.version)
    }

    /// What the backend is asked: `messages` under `sampling`, decoded to the
    /// job's contract, in `cache_slot`.
    pub fn request(
        &self,
        prompt_id: String,
        messages: Vec<Message>,
        sampling: Sampling,
        cache_slot: &str,
    ) -> GenerateRequest {
        GenerateRequest {
            stage: self.stage.clone(),
            prompt_id,
            messages,
            sampling,
            json_schema: self.contract.as_ref().map(|c| c.schema().clone()),
            cache_slot: cache_slot.to_owned(),
        }
    }

    /// Tells the caller the call failed before its first attempt (a native
    /// worker whose model did not load; in the browser a call fails earlier).
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    pub fn fail_early(&self, message: String) {
        let outcome =
            CallOutcome::setup_failed(&self.stage, &self.model_key, message, now_seconds());
        let _ = self.events.send(LlmEvent::Finished(Box::new(outcome)));
    }
}

/// Runs one call with the repair → retry policy and sends its outcome.
pub(super) async fn run_call<B: Generate>(backend: &mut B, job: Job) {
    let started = Instant::now();
    let mut record = CallRecord {
        stage: job.stage.clone(),
        prompt_id: job.prompt_id(),
        prompt_version: job.version.clone(),
        model_key: job.model_key.clone(),
        backend: backend.name().to_owned(),
        contract: job.contract.as_ref().map(|c| c.name().to_owned()),
        attempts: Vec::new(),
        output: None,
        error: None,
        started_at: now_seconds(),
        total: std::time::Duration::ZERO,
    };
    let result = policy(
        &mut Attempter {
            backend,
            job: &job,
            record: &mut record,
        },
        &job,
    )
    .await;
    record.total = started.elapsed();
    match &result {
        Ok(value) => record.output = Some(value.clone()),
        Err(e) => record.error = Some(e.to_string()),
    }
    tracing::debug!(call = job.id, "{}", record.summary());
    let _ = job
        .events
        .send(LlmEvent::Finished(Box::new(CallOutcome { result, record })));
}

async fn policy<B: Generate>(attempt: &mut Attempter<'_, B>, job: &Job) -> Result<Value, LlmError> {
    if job.drafts > 1 && job.contract.is_none() {
        let mut drafts = Vec::new();
        for k in 0..job.drafts {
            let sampling = next_seed(&job.sampling, k);
            let text = attempt
                .run(
                    AttemptKind::Draft,
                    None,
                    job.messages.clone(),
                    &sampling,
                    &job.cache_slot,
                )
                .await?;
            drafts.push(Value::String(text));
        }
        return Ok(Value::Array(drafts));
    }
    let first = attempt
        .run(
            AttemptKind::First,
            None,
            job.messages.clone(),
            &job.sampling,
            &job.cache_slot,
        )
        .await?;
    let Some(contract) = &job.contract else {
        return Ok(Value::String(first));
    };
    let errors = match validate(contract, job.check.as_ref(), &first) {
        Ok(v) => return Ok(v),
        Err(errors) => errors,
    };
    attempt.refused(&errors);

    // 1. One repair prompt with the invalid output and what is wrong with it.
    let errors = match attempt.repair(contract, first, errors).await? {
        Ok(v) => return Ok(v),
        Err(errors) => errors,
    };
    attempt.refused(&errors);

    // 2. One full retry of the stage with the next seed.
    let sampling = next_seed(&job.sampling, 1);
    let text = attempt
        .run(
            AttemptKind::Retry,
            None,
            job.messages.clone(),
            &sampling,
            &job.cache_slot,
        )
        .await?;
    validate(contract, job.check.as_ref(), &text).map_err(|errors| {
        attempt.refused(&errors);
        LlmError::InvalidOutput {
            stage: job.stage.clone(),
            model_key: job.model_key.clone(),
            reason: errors.join("; "),
        }
    })
}

/// The engine's opening and the model's continuation of it, as one answer: a
/// continuation that begins with a word is joined with a space. A server
/// that answers with the opening it was given and then the rest
/// (llama-server's prefill does) is taken as it is.
pub fn continued(start: &str, text: &str) -> String {
    if start.is_empty() || text.starts_with(start) {
        return text.to_owned();
    }
    format!("{start}{}{text}", joiner(text))
}

/// A begun answer's stream as the caller sees it (the opening itself was
/// sent before the model started): the first piece joined to the opening as
/// [`continued`] joins it, and an echo of the opening (a server that repeats
/// it) held back and dropped.
struct Opening<'a> {
    start: &'a str,
    /// What came so far while it may still be the opening's echo; `None`
    /// once it is decided (or there is no opening).
    held: Option<String>,
}

impl<'a> Opening<'a> {
    fn new(start: &'a str) -> Self {
        Self {
            start,
            held: (!start.is_empty()).then(String::new),
        }
    }

    /// The text to stream for the model's next piece `t`, if any yet.
    fn next(&mut self, t: &str) -> Option<String> {
        let Some(held) = self.held.as_mut() else {
            return Some(t.to_owned());
        };
        held.push_str(t);
        if self.start.starts_with(held.as_str()) && held.len() < self.start.len() {
            return None;
        }
        let held = self.held.take().unwrap_or_default();
        let piece = match held.strip_prefix(self.start) {
            Some(rest) => rest.to_owned(),
            None => format!("{}{held}", joiner(&held)),
        };
        (!piece.is_empty()).then_some(piece)
    }
}

/// What goes between an opening and a continuation that begins with `text`:
/// a space before a word or a quotation, nothing before a space or a stop.
fn joiner(text: &str) -> &'static str {
    if text.starts_with(|c: char| c.is_alphanumeric() || c == '"' || c == '\u{201c}') {
        " "
    } else {
        ""
    }
}

/// `sampling` with its seed moved on by `k` (drafts, the retry).
fn next_seed(sampling: &Sampling, k: u32) -> Sampling {
    let mut next = sampling.clone();
    next.seed = next.seed.wrapping_add(k);
    next
}

fn validate(contract: &Contract, check: Option<&Check>, text: &str) -> Result<Value, Vec<String>> {
    let value = contract.check(text)?;
    if let Some(check) = check {
        check(&value)?;
    }
    Ok(value)
}

/// Runs a job's attempts on one backend and writes each into the call's record.
struct Attempter<'a, B> {
    backend: &'a mut B,
    job: &'a Job,
    record: &'a mut CallRecord,
}

impl<B: Generate> Attempter<'_, B> {
    /// One generation: streams its tokens to the caller (drafts excepted),
    /// stops when the caller cancels, and records it as an [`Attempt`].
    async fn run(
        &mut self,
        kind: AttemptKind,
        prompt_id: Option<String>,
        messages: Vec<Message>,
        sampling: &Sampling,
        cache_slot: &str,
    ) -> Result<String, LlmError> {
        let job = self.job;
        let _ = job.events.send(LlmEvent::AttemptStarted(kind));
        // The engine's opening (never under the repair prompt): the last
        // message is the assistant's, begun; the answer is it and what follows.
        let start = if kind == AttemptKind::Repair {
            ""
        } else {
            job.answer_start.as_str()
        };
        let mut messages = messages;
        if !start.is_empty() {
            messages.push(Message::new(super::backend::Role::Assistant, start));
            if kind != AttemptKind::Draft {
                let _ = job.events.send(LlmEvent::Token(start.to_owned()));
            }
        }
        // A repair sends its own prompt, under its own id; the others the stage's.
        let prompt_id = prompt_id.unwrap_or_else(|| self.record.prompt_id.clone());
        let request = job.request(prompt_id, messages, sampling.clone(), cache_slot);
        let events = job.events.clone();
        let cancel = job.cancel.clone();
        let mut opening = Opening::new(start);
        let mut on_token = |t: &str| {
            if kind != AttemptKind::Draft
                && let Some(piece) = opening.next(t)
            {
                let _ = events.send(LlmEvent::Token(piece));
            }
            !cancel.load(Ordering::Relaxed)
        };
        let outcome = self.backend.generate(&request, &mut on_token).await;
        let mut entry = Attempt {
            kind,
            prompt_id: request.prompt_id,
            messages: request.messages,
            sampling: request.sampling,
            raw_output: String::new(),
            finish: None,
            errors: Vec::new(),
            usage: super::backend::Usage::default(),
        };
        match outcome {
            Ok(generated) => {
                entry.raw_output.clone_from(&generated.text);
                entry.finish = Some(generated.finish);
                entry.usage = generated.usage;
                self.record.attempts.push(entry);
                Ok(continued(start, &generated.text))
            }
            Err(e) => {
                entry.errors = vec![e.to_string()];
                self.record.attempts.push(entry);
                Err(match e {
                    BackendError::Cancelled => LlmError::Cancelled {
                        stage: job.stage.clone(),
                    },
                    other => LlmError::Backend {
                        stage: job.stage.clone(),
                        model_key: job.model_key.clone(),
                        transient: matches!(other, BackendError::Transient(_)),
                        reason: other.to_string(),
                    },
                })
            }
        }
    }

    /// The repair attempt: the repair prompt shown the invalid `output` and
    /// its `errors`. The inner result is the repaired value, or why it is
    /// still refused (a repair prompt that does not render is one reason).
    async fn repair(
        &mut self,
        contract: &Contract,
        output: String,
        errors: Vec<String>,
    ) -> Result<Result<Value, Vec<String>>, LlmError> {
        let job = self.job;
        let vars = json!({
            "stage": job.stage,
            "contract": serde_json::to_string_pretty(contract.schema()).unwrap_or_default(),
            "output": output,
            "errors": errors,
        });
        let repair = match job.prompts.render(REPAIR_STAGE, None, &vars) {
            Ok(repair) => repair,
            Err(e) => {
                return Ok(Err(vec![format!(
                    "the repair prompt could not be rendered: {e}"
                )]));
            }
        };
        let repair_id = repair.id();
        let run = self
            .run(
                AttemptKind::Repair,
                Some(repair_id),
                repair.messages,
                &job.sampling,
                REPAIR_STAGE,
            )
            .await;
        match run {
            Ok(text) => Ok(validate(contract, job.check.as_ref(), &text)),
            // A repair the backend refused for good (its prompt, which carries the
            // whole contract and the invalid answer, outgrew the context) leaves the
            // stage to its fresh retry. A cancel, or a failure the backend calls
            // temporary (it has retried those itself), ends the call as it is.
            Err(
                e @ LlmError::Backend {
                    transient: false, ..
                },
            ) => Ok(Err(vec![format!("the repair attempt failed: {e}")])),
            Err(e) => Err(e),
        }
    }

    /// Writes why the last attempt's output was refused into its record.
    fn refused(&mut self, errors: &[String]) {
        if let Some(a) = self.record.attempts.last_mut() {
            a.errors = errors.to_vec();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Opening, continued};

    const START: &str = "You try to lift the chain, but";

    fn stream(pieces: &[&str]) -> String {
        let mut opening = Opening::new(START);
        let streamed: String = pieces.iter().filter_map(|p| opening.next(p)).collect();
        format!("{START}{streamed}")
    }

    #[test]
    fn a_continuation_is_joined_once_whether_or_not_the_server_echoes_the_opening() {
        // llama.cpp in-process: only what follows, a word or a stop.
        assert_eq!(continued(START, " it holds."), format!("{START} it holds."));
        assert_eq!(continued(START, "it holds."), format!("{START} it holds."));
        assert_eq!(
            continued(START, ", and holds."),
            format!("{START}, and holds.")
        );
        assert_eq!(stream(&[" it", " holds."]), format!("{START} it holds."));
        assert_eq!(stream(&["it", " holds."]), format!("{START} it holds."));
        // llama-server's prefill: the opening comes back first, in pieces.
        let echoed = format!("{START} it holds.");
        assert_eq!(continued(START, &echoed), echoed);
        assert_eq!(
            stream(&["You try", " to lift the", " chain, but", " it", " holds."]),
            echoed
        );
        assert_eq!(
            stream(&["You try to lift the chain, but it holds."]),
            echoed
        );
        // Something that only begins like the opening is the model's own.
        assert_eq!(stream(&["You", " slip."]), format!("{START} You slip."));
        // No opening: the stream is the model's, untouched.
        let mut none = Opening::new("");
        assert_eq!(none.next("The"), Some("The".to_owned()));
        assert_eq!(continued("", "The bolt."), "The bolt.");
    }
}
