//! Who answers a replayed call: the record where the prompt is unchanged, else the live model.
//!
//! Every recorded attempt (its stage, the messages it was sent and the text
//! that came back) waits in one queue. A call whose rendered prompt is one
//! recorded for its stage gets that answer back, streamed like the model's;
//! a call whose prompt changed (another prompt version, seed or history) goes
//! to the live model when the replay has one, and otherwise gets the next
//! recorded answer of its stage, marked stale. Each call is logged with how
//! it was answered, so a report can say which words are new.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::llm::backend::{Backend, BackendError, GenerateRequest, Generated, Message};
use crate::llm::{BackendConfig, CallRecord, Script, ScriptedBackend};

/// How one replayed call was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answered {
    /// The recorded answer to the same prompt.
    Recorded,
    /// The recorded answer, though the prompt changed (no live model).
    Stale,
    /// The live model, for a prompt that changed (or with `--live`, any).
    Live,
}

/// One recorded attempt, until a call takes it.
#[derive(Clone, Debug)]
struct Kept {
    stage: String,
    messages: Vec<Message>,
    /// The text that came back, or how the backend failed (it fails the same way again).
    text: Result<String, BackendError>,
}

/// A recorded attempt's answer: its text, or the backend's failure (an
/// attempt that never finished and says why).
fn answer_of(a: &crate::llm::Attempt) -> Result<String, BackendError> {
    match (&a.finish, a.errors.first()) {
        (None, Some(e)) if a.raw_output.is_empty() => {
            Err(match e.strip_suffix(" (temporary; retrying may help)") {
                Some(m) => BackendError::Transient(m.to_owned()),
                None if e == "cancelled" => BackendError::Cancelled,
                None => BackendError::Fatal(e.clone()),
            })
        }
        _ => Ok(a.raw_output.clone()),
    }
}

/// The live model, opened on the first call that needs it.
struct Live {
    config: BackendConfig,
    data_dir: PathBuf,
    /// Every call goes live, even one whose prompt is unchanged.
    always: bool,
    backend: Option<Box<dyn Backend>>,
}

/// The backend a replay registers for the session's model keys. Clones share
/// the queue, the log and the live model.
#[derive(Clone)]
pub struct Answers {
    kept: Arc<Mutex<Vec<Option<Kept>>>>,
    live: Option<Arc<Mutex<Live>>>,
    log: Arc<Mutex<Vec<(String, Answered)>>>,
}

impl Answers {
    /// Answers from `records` alone (an exact replay).
    pub fn recorded<'a>(records: impl IntoIterator<Item = &'a CallRecord>) -> Self {
        let kept = records
            .into_iter()
            .flat_map(|r| {
                r.attempts.iter().map(|a| {
                    Some(Kept {
                        stage: r.stage.clone(),
                        messages: a.messages.clone(),
                        text: answer_of(a),
                    })
                })
            })
            .collect();
        Self {
            kept: Arc::new(Mutex::new(kept)),
            live: None,
            log: Arc::default(),
        }
    }

    /// Calls whose prompt changed (or every call, when `always`) go to the
    /// model `config` names.
    pub fn with_live(mut self, config: BackendConfig, data_dir: PathBuf, always: bool) -> Self {
        self.live = Some(Arc::new(Mutex::new(Live {
            config,
            data_dir,
            always,
            backend: None,
        })));
        self
    }

    /// Each call so far, in order: its stage and how it was answered.
    pub fn log(&self) -> Vec<(String, Answered)> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// New queue and log for the next turn, keeping the live model open.
    pub fn next_turn<'a>(&self, records: impl IntoIterator<Item = &'a CallRecord>) -> Self {
        Self {
            live: self.live.clone(),
            ..Self::recorded(records)
        }
    }

    /// The recorded answer for `request`: the first kept attempt of its
    /// stage with the same messages, or (when `stale_ok`) the first of its stage.
    fn take(
        &self,
        request: &GenerateRequest,
        stale_ok: bool,
    ) -> Option<(Result<String, BackendError>, Answered)> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let of_stage = |k: &Option<Kept>| k.as_ref().is_some_and(|k| k.stage == request.stage);
        let same = kept.iter().position(|k| {
            of_stage(k) && k.as_ref().is_some_and(|k| k.messages == request.messages)
        });
        if let Some(i) = same {
            return kept[i].take().map(|k| (k.text, Answered::Recorded));
        }
        if !stale_ok {
            return None;
        }
        let i = kept.iter().position(of_stage)?;
        kept[i].take().map(|k| (k.text, Answered::Stale))
    }

    fn note(&self, stage: &str, how: Answered) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((stage.to_owned(), how));
    }
}

impl Backend for Answers {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        let always = self
            .live
            .as_ref()
            .is_some_and(|l| l.lock().unwrap_or_else(PoisonError::into_inner).always);
        let recorded = if always {
            None
        } else {
            self.take(request, self.live.is_none())
        };
        if let Some((text, how)) = recorded {
            self.note(&request.stage, how);
            // The recorded text streams and stops as the model's did.
            return ScriptedBackend::new(Script::in_order([text?])).generate(request, on_token);
        }
        let Some(live) = &self.live else {
            return Err(BackendError::Fatal(format!(
                "the replay has no recorded answer left for stage `{}` and no live model",
                request.stage
            )));
        };
        let mut live = live.lock().unwrap_or_else(PoisonError::into_inner);
        if live.backend.is_none() {
            live.backend = Some(crate::llm::open_backend(&live.config, &live.data_dir)?);
        }
        let Some(backend) = live.backend.as_mut() else {
            return Err(BackendError::Fatal("the live model did not open".into()));
        };
        let generated = backend.generate(request, on_token)?;
        drop(live);
        self.note(&request.stage, Answered::Live);
        Ok(generated)
    }
}
