//! The scripted backend: replies read from a script, for tests, demos and replay.
//!
//! A script is JSON: `{"replies": [{"stage": "narrator", "text": "…"}, …]}`. Each
//! call takes the first unused reply whose `stage` (and `prompt`, `stage@version`,
//! if given) matches; replies without either match any call, in order. A repair
//! asks under its stage's name with the repair prompt's id (`repair@v1`). Replies
//! stream word by word like a real model.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::backend::{
    Backend, BackendError, FinishReason, GenerateRequest, Generated, Message, Usage,
};
use super::record::CallRecord;
use super::stream::TextStream;

/// One scripted reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    pub text: String,
}

/// A script of replies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub replies: Vec<Reply>,
}

/// Why a script file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a reply script: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_path_to_error::Error<serde_json::Error>,
    },
}

impl Script {
    /// Reads a script file.
    pub fn read(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(de).map_err(|source| ScriptError::Parse {
            path: path.to_owned(),
            source,
        })
    }

    /// Replies that replay recorded calls exactly: every attempt's raw output, in order.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a CallRecord>) -> Self {
        let replies = records
            .into_iter()
            .flat_map(|r| {
                r.attempts.iter().map(|a| Reply {
                    stage: Some(r.stage.clone()),
                    prompt: None,
                    text: a.raw_output.clone(),
                })
            })
            .collect();
        Self { replies }
    }

    /// Replies in order, any stage.
    pub fn in_order(texts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            replies: texts
                .into_iter()
                .map(|t| Reply {
                    stage: None,
                    prompt: None,
                    text: t.into(),
                })
                .collect(),
        }
    }
}

/// Plays a [`Script`]. Clones share the script, so a test can keep a handle and
/// see what is left.
#[derive(Clone, Debug)]
pub struct ScriptedBackend {
    remaining: Arc<Mutex<Vec<Option<Reply>>>>,
    /// Every prompt the script was asked, in order (what a test reads back).
    heard: Arc<Mutex<Vec<Vec<Message>>>>,
    /// Pause between streamed words (for demos; zero in tests).
    pub word_delay: Duration,
}

impl ScriptedBackend {
    pub fn new(script: Script) -> Self {
        Self {
            remaining: Arc::new(Mutex::new(script.replies.into_iter().map(Some).collect())),
            heard: Arc::default(),
            word_delay: Duration::ZERO,
        }
    }

    /// Replies not yet used.
    pub fn unused(&self) -> usize {
        self.remaining
            .lock()
            .map_or(0, |r| r.iter().flatten().count())
    }

    /// The messages of every request the script was asked, in order.
    pub fn heard(&self) -> Vec<Vec<Message>> {
        self.heard.lock().map(|h| h.clone()).unwrap_or_default()
    }

    fn take(&self, request: &GenerateRequest) -> Option<String> {
        if let Ok(mut heard) = self.heard.lock() {
            heard.push(request.messages.clone());
        }
        let mut remaining = self.remaining.lock().ok()?;
        let slot = remaining.iter_mut().find(|r| {
            r.as_ref().is_some_and(|r| {
                r.stage.as_ref().is_none_or(|s| *s == request.stage)
                    && r.prompt.as_ref().is_none_or(|p| *p == request.prompt_id)
            })
        })?;
        slot.take().map(|r| r.text)
    }
}

impl Backend for ScriptedBackend {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        let start = Instant::now();
        let text = self.take(request).ok_or_else(|| {
            BackendError::Fatal(format!(
                "the reply script has no reply left for stage `{}` ({})",
                request.stage, request.prompt_id
            ))
        })?;
        let mut stream = TextStream::new(&request.sampling.stop);
        let mut first = None;
        let mut tokens_out = 0u32;
        let mut finish = FinishReason::Stop;
        for word in text.split_inclusive(char::is_whitespace) {
            if tokens_out >= request.sampling.max_tokens {
                finish = FinishReason::Length;
                break;
            }
            tokens_out += 1;
            let piece = stream.push_str(word);
            first.get_or_insert_with(|| start.elapsed());
            if !piece.is_empty() && !on_token(&piece) {
                return Err(BackendError::Cancelled);
            }
            if stream.stopped() {
                finish = FinishReason::StopString;
                break;
            }
            if !self.word_delay.is_zero() {
                std::thread::sleep(self.word_delay);
            }
        }
        let rest = stream.finish();
        if !rest.is_empty() {
            on_token(&rest);
        }
        let words_in = request
            .messages
            .iter()
            .map(|m| m.content.split_whitespace().count())
            .sum::<usize>();
        Ok(Generated {
            text: stream.into_text(),
            finish,
            usage: Usage {
                tokens_in: u32::try_from(words_in).unwrap_or(u32::MAX),
                tokens_out,
                cached_tokens: 0,
                time_to_first_token: first.unwrap_or_default(),
                total: start.elapsed(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::backend::{Message, Role, Sampling};

    fn request(stage: &str) -> GenerateRequest {
        GenerateRequest {
            stage: stage.into(),
            prompt_id: format!("{stage}@v1"),
            messages: vec![Message::new(Role::User, "go on")],
            sampling: Sampling::default(),
            json_schema: None,
            cache_slot: stage.into(),
        }
    }

    #[test]
    fn replies_match_by_stage_then_fall_back_to_order() {
        let script: Script = serde_json::from_str(
            r#"{"replies": [
                {"stage": "narrator", "text": "The rain stops."},
                {"text": "anything"},
                {"stage": "intent", "text": "I wait."}
            ]}"#,
        )
        .unwrap();
        let mut backend = ScriptedBackend::new(script);
        let mut pieces = Vec::new();
        let out = backend
            .generate(&request("intent"), &mut |t| {
                pieces.push(t.to_owned());
                true
            })
            .unwrap();
        assert_eq!(
            out.text, "anything",
            "the unstaged reply comes before the later intent one"
        );
        assert_eq!(
            backend
                .generate(&request("intent"), &mut |_| true)
                .unwrap()
                .text,
            "I wait."
        );
        let narr = backend
            .generate(&request("narrator"), &mut |t| {
                pieces.push(t.to_owned());
                true
            })
            .unwrap();
        assert_eq!(narr.text, "The rain stops.");
        assert_eq!(pieces, ["anything", "The ", "rain ", "stops."]);
        let err = backend
            .generate(&request("narrator"), &mut |_| true)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no reply left for stage `narrator`"),
            "{err}"
        );
    }

    #[test]
    fn stop_strings_and_max_tokens_apply_to_scripted_replies() {
        let mut backend =
            ScriptedBackend::new(Script::in_order(["one two three four", "a b END c"]));
        let mut req = request("x");
        req.sampling.max_tokens = 2;
        let out = backend.generate(&req, &mut |_| true).unwrap();
        assert_eq!(
            (out.text.as_str(), out.finish),
            ("one two ", FinishReason::Length)
        );
        req.sampling.max_tokens = 100;
        req.sampling.stop = vec![" END".into()];
        let out = backend.generate(&req, &mut |_| true).unwrap();
        assert_eq!(
            (out.text.as_str(), out.finish),
            ("a b", FinishReason::StopString)
        );
    }

    #[test]
    fn a_malformed_script_names_the_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.json");
        std::fs::write(&path, r#"{"replies": [{"txt": "x"}]}"#).unwrap();
        let err = Script::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("script.json") && err.contains("replies[0]"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_script_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Script::read(&dir.path().join("none.json")).unwrap_err();
        assert!(matches!(err, ScriptError::Read { .. }), "{err}");
        assert!(
            err.to_string().starts_with("cannot read the script"),
            "{err}"
        );
    }
}
