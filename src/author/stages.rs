//! The model-driven stages: seed 000's discuss → summarize → serialize with the author in the loop, each answer validated against its contract in `schemas/author/` and applied to the graph as one batch of mutations.

use serde_json::{Value, json};

use super::graph::Mutation;
use super::model::{NodeType, Stage};
use super::project::{Project, ProjectError};
use crate::llm::{CallRequest, Gateway};

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

/// What each stage decides, for the discussion prompts.
fn task(stage: Stage) -> &'static str {
    match stage {
        Stage::Dream => {
            "the story's genre, tone, themes, audience, constraints, content notes and how much it branches"
        }
        Stage::Brainstorm => {
            "the story's entities (characters, locations, objects, factions) and its dilemmas: dramatic questions with exactly two answers, both with costs"
        }
        _ => "the stage's decisions",
    }
}

fn stage_error(stage: Stage, message: impl std::fmt::Display) -> ProjectError {
    ProjectError::Gate(format!(
        "{stage} failed: {message}; the graph is as it was before {stage} (snapshot in snapshots/pre-{}.db)",
        stage.name()
    ))
}

/// One model call for `stage` (the prompt stage `prompt`): its validated answer.
fn ask(
    gateway: &Gateway,
    prompt: &str,
    model: &str,
    vars: Value,
    stage: Stage,
) -> Result<Value, ProjectError> {
    gateway
        .call(CallRequest::new(prompt, model, vars))
        .wait()
        .result
        .map_err(|e| stage_error(stage, e))
}

fn text_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// Discuss (bounded rounds) and summarize; the brief the serializing call reads.
fn discuss(
    project: &Project,
    stage: Stage,
    context: &[String],
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
) -> Result<String, ProjectError> {
    let spark = project.spark()?;
    let mut conversation: Vec<Value> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let vars = json!({
            "stage": stage.to_string(),
            "task": task(stage),
            "spark": spark,
            "context": context,
            "conversation": conversation,
        });
        let said = ask(gateway, "author/discuss", model, vars, stage)?;
        let said = text_of(&said).trim().to_owned();
        conversation.push(json!({"who": "you", "text": said}));
        match author.reply(stage, &said) {
            Some(answer) if !answer.trim().is_empty() => {
                conversation.push(json!({"who": "author", "text": answer.trim()}));
            }
            _ => break,
        }
    }
    let vars = json!({
        "stage": stage.to_string(),
        "task": task(stage),
        "spark": spark,
        "conversation": conversation,
    });
    let brief = ask(gateway, "author/summarize", model, vars, stage)?;
    Ok(text_of(&brief).trim().to_owned())
}

/// DREAM: the vision, from the spark, the author's scope and the discussion.
pub fn dream(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
) -> Result<(), ProjectError> {
    let brief = discuss(project, Stage::Dream, &[], gateway, model, author)?;
    let scope = project.scope()?;
    let vars = json!({
        "spark": project.spark()?,
        "scope": scope.name(),
        "brief": brief,
    });
    let answer = ask(gateway, "author/dream", model, vars, Stage::Dream)?;
    let vision = json!({
        "genre": answer["genre"],
        "tone": answer["tone"],
        "themes": answer["themes"],
        "audience": answer["audience"],
        "scope": {"length": scope.name(), "branches": answer["branches"]},
        "constraints": answer["constraints"],
        "content_notes": answer["content_notes"],
        "brief": brief,
    });
    project.graph.apply(
        Stage::Dream,
        "serialize",
        "the vision from the spark and the discussion",
        &[Mutation::create("vision", NodeType::Vision, vision)],
    )?;
    Ok(())
}
