//! The discussion before a stage serializes: the model proposes, the author replies, then a brief.
//!
//! Seed 000's discuss → summarize → serialize with the author in the loop: at most
//! [`MAX_ROUNDS`] rounds (no "generate until good"), then one call sums up what was settled.
//! What each stage decides is the prompts' to say (`prompts/author/discuss/`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answers::Answer;
use super::ask::{self, StageError};
use super::ontology::Stage;
use super::project::{Project, ProjectError};
use crate::llm::{CallRequest, Gateway, LlmError};

/// The author's side of a discussion.
pub trait Author {
    /// The model said `said`; the author's reply, or `None` to end the discussion.
    fn reply(&mut self, stage: Stage, said: &str) -> Option<String>;
}

/// An author who lets the model's first proposal stand (`--yes`).
#[derive(Debug, Default)]
pub struct Unattended;

impl Author for Unattended {
    fn reply(&mut self, _stage: Stage, _said: &str) -> Option<String> {
        None
    }
}

/// At most this many rounds of discussion before the summary (no
/// "generate until good": seed 000's anti-pattern).
pub const MAX_ROUNDS: usize = 8;

/// One model call (the prompt stage `prompt`): its contract-checked answer.
pub fn call(gateway: &Gateway, prompt: &str, model: &str, vars: Value) -> Result<Value, LlmError> {
    gateway
        .call(CallRequest::new(prompt, model, vars))
        .wait()
        .result
}

/// One model call for `stage`, its answer read as `T`; a failure is the stage's.
pub fn call_for<T: Answer>(
    gateway: &Gateway,
    model: &str,
    vars: Value,
    stage: Stage,
) -> Result<T, ProjectError> {
    call_with(gateway, CallRequest::new(T::PROMPT, model, vars), stage)
}

/// [`call_for`] with a request the stage has shaped (its contract narrowed for the call).
pub fn call_with<T: Answer>(
    gateway: &Gateway,
    request: CallRequest,
    stage: Stage,
) -> Result<T, ProjectError> {
    gateway
        .call(request)
        .wait()
        .result
        .map_err(StageError::from)
        .and_then(ask::read)
        .map_err(|source| ProjectError::Stage { stage, source })
}

/// A plain-text answer (the discussion's prompts have no contract) as text.
fn text(
    gateway: &Gateway,
    prompt: &str,
    model: &str,
    vars: Value,
    stage: Stage,
) -> Result<String, ProjectError> {
    let said = call(gateway, prompt, model, vars).map_err(|e| ProjectError::Stage {
        stage,
        source: e.into(),
    })?;
    let text = said
        .as_str()
        .map_or_else(|| said.to_string(), str::to_owned);
    Ok(text.trim().to_owned())
}

/// Discuss (bounded rounds) and summarize; the brief the serializing call reads.
pub fn discuss(
    project: &Project,
    stage: Stage,
    context: &[String],
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
) -> Result<String, ProjectError> {
    let spark = project.spark()?;
    let mut conversation: Vec<Turn> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let vars = discuss_vars(stage, &spark, context, &conversation);
        let said = text(gateway, "author/discuss", model, vars, stage)?;
        let reply = author.reply(stage, &said);
        conversation.push(Turn::new(Who::You, said));
        match reply {
            Some(answer) if !answer.trim().is_empty() => {
                conversation.push(Turn::new(Who::Author, answer.trim().to_owned()));
            }
            _ => break,
        }
    }
    let vars = summary_vars(stage, &spark, &conversation);
    text(gateway, "author/summarize", model, vars, stage)
}

/// Who said a turn of a discussion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Who {
    Author,
    /// The model (the prompts' "you": the collaborator).
    You,
}

/// One turn of a discussion, as the prompts read it (`{who, text}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub who: Who,
    pub text: String,
}

impl Turn {
    pub fn new(who: Who, text: String) -> Self {
        Self { who, text }
    }
}

/// The discussion's variables (shared with the corpus, `tune`).
pub fn discuss_vars(stage: Stage, spark: &str, context: &[String], conversation: &[Turn]) -> Value {
    json!({
        "stage": stage.to_string(),
        "spark": spark,
        "context": context,
        "conversation": conversation,
    })
}

/// The summary's variables (shared with the corpus, `tune`).
pub fn summary_vars(stage: Stage, spark: &str, conversation: &[Turn]) -> Value {
    json!({
        "stage": stage.to_string(),
        "spark": spark,
        "conversation": conversation,
    })
}
