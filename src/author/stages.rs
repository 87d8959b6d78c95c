//! The model-driven stages as the CLI runs them: each stage's run on a project, model included.
//!
//! DREAM, BRAINSTORM and SEED discuss with the author (`discuss`), then one serializing call
//! whose answer, read as its contract's type, becomes one batch of mutations (`brainstorm`,
//! `seed`); GROW, FILL and DRESS hand their `*_stage` module an [`Ask`] on the gateway.

use serde_json::{Value, json};

use super::answers::{BrainstormAnswer, DreamAnswer, SeedAnswer, VoiceAnswer};
use super::ask::{Ask, StageError, with_notes};
use super::brainstorm::brainstorm_mutations;
use super::discuss::{Author, call, call_for, discuss};
use super::graph::{Mutation, Node};
use super::ontology::{EdgeType, NodeType, Stage};
use super::project::{Project, ProjectError, Scope};
use super::seed::seed_mutations;
use crate::llm::{CallRequest, Gateway};

/// A stage's failure, as the project's.
fn failed(stage: Stage) -> impl Fn(StageError) -> ProjectError {
    move |source| ProjectError::Stage { stage, source }
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
    let answer: DreamAnswer = call_for(gateway, model, vars, Stage::Dream)?;
    let vision = json!({
        "genre": answer.genre,
        "tone": answer.tone,
        "themes": answer.themes,
        "audience": answer.audience,
        "scope": {"length": scope.name(), "branches": answer.branches},
        "constraints": answer.constraints,
        "content_notes": answer.content_notes,
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

/// How many dilemmas and beats per path a scope wants.
fn sizes(scope: Scope) -> (&'static str, &'static str) {
    match scope {
        Scope::Micro => ("1 or 2", "2 to 3"),
        Scope::Short => ("2 or 3", "3 to 4"),
        Scope::Medium => ("4 to 6", "4 to 6"),
        Scope::Long => ("6 to 8", "6 to 8"),
    }
}

fn vision(project: &Project) -> Result<Node, ProjectError> {
    project.graph.node("vision")?.ok_or(ProjectError::NoVision)
}

/// The settled context lines the discussion of a later stage reads.
fn vision_lines(vision: &Node) -> Vec<String> {
    vec![
        format!("genre: {}", vision.str("genre").unwrap_or("")),
        format!("tone: {}", vision.strings("tone").join(", ")),
        format!("themes: {}", vision.strings("themes").join(", ")),
    ]
}

/// BRAINSTORM: entities and dilemmas (two answers each, one canonical).
/// Ids are the engine's (`dilemma::…` added); an `involves` naming no
/// entity is dropped and said in the audit's rationale.
pub fn brainstorm(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
) -> Result<(), ProjectError> {
    let vision = vision(project)?;
    let brief = discuss(
        project,
        Stage::Brainstorm,
        &vision_lines(&vision),
        gateway,
        model,
        author,
    )?;
    let (dilemmas, _) = sizes(project.scope()?);
    let vars = json!({
        "spark": project.spark()?,
        "vision": vision.data,
        "brief": brief,
        "dilemmas": dilemmas,
    });
    let answer: BrainstormAnswer = call_for(gateway, model, vars, Stage::Brainstorm)?;
    let (changes, notes) = brainstorm_mutations(&answer).map_err(failed(Stage::Brainstorm))?;
    let rationale = with_notes(
        "entities and dilemmas from the vision and the discussion",
        &notes,
    );
    project
        .graph
        .apply(Stage::Brainstorm, "serialize", &rationale, &changes)?;
    Ok(())
}

/// SEED: curation, paths, consequences, initial beats, analyses.
pub fn seed(project: &mut Project, gateway: &Gateway, model: &str) -> Result<(), ProjectError> {
    let vision = vision(project)?;
    let field = |n: &Node, k: &str| n.data.get(k).cloned().unwrap_or(Value::Null);
    let entities: Vec<Value> = project
        .graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .map(|e| json!({"id": e.id, "type": field(&e, "type"), "name": field(&e, "name"), "concept": field(&e, "concept")}))
        .collect();
    let mut dilemmas = Vec::new();
    for d in project.graph.nodes(NodeType::Dilemma)? {
        let mut answers = Vec::new();
        for a in project.graph.targets(EdgeType::HasAnswer, &d.id)? {
            if let Some(node) = project.graph.node(&a)? {
                answers.push(json!({"id": a, "description": field(&node, "description"), "canonical": field(&node, "canonical")}));
            }
        }
        dilemmas.push(json!({
            "id": d.id.trim_start_matches("dilemma::"),
            "question": field(&d, "question"),
            "why_it_matters": field(&d, "why_it_matters"),
            "answers": answers,
        }));
    }
    let (_, beats_per_path) = sizes(project.scope()?);
    let vars = json!({
        "spark": project.spark()?,
        "vision": vision.data,
        "entities": entities,
        "dilemmas": dilemmas,
        "beats_per_path": beats_per_path,
    });
    let answer: SeedAnswer = call_for(gateway, model, vars, Stage::Seed)?;
    let (changes, notes) = seed_mutations(&project.graph, &answer).map_err(failed(Stage::Seed))?;
    let rationale = with_notes(
        "paths, consequences and initial beats from the brainstorm",
        &notes,
    );
    project
        .graph
        .apply(Stage::Seed, "serialize", &rationale, &changes)?;
    Ok(())
}

/// GROW: the topology, deterministic but for the intersections the model
/// picks and the choices' labels it writes (`grow_stage`).
pub fn grow(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
) -> Result<super::grow::Grown, ProjectError> {
    let spark = project.spark()?;
    let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
    super::grow_stage::run(&mut project.graph, &spark, &mut ask).map_err(failed(Stage::Grow))
}

/// Where a FILL run stopped.
#[derive(Debug)]
pub enum FillStep {
    /// The voice document is written and waits at its own gate.
    Voice(VoiceAnswer),
    /// The prose is written, reviewed and revised.
    Prose(super::fill_stage::Report),
}

/// FILL: the voice document on the first run (then its gate), the prose
/// on the run after the voice is approved.
pub fn fill(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
) -> Result<FillStep, ProjectError> {
    let spark = project.spark()?;
    if project.resuming(Stage::Fill)? {
        // The prose prompts' size in tokens (the seed estimates 3,000–5,000).
        let mut sizes = Vec::new();
        let mut ask = |prompt: &str, vars: Value| {
            let outcome = gateway.call(CallRequest::new(prompt, model, vars)).wait();
            if prompt == "author/fill_prose"
                && let Some(first) = outcome.record.attempts.first()
            {
                sizes.push(first.usage.tokens_in);
            }
            outcome.result
        };
        let report = super::fill_stage::prose(&mut project.graph, &mut ask);
        report
            .map(|mut r| {
                r.prompt_tokens = sizes;
                FillStep::Prose(r)
            })
            .map_err(failed(Stage::Fill))
    } else {
        let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
        super::fill_stage::voice(&mut project.graph, &spark, &mut ask)
            .map(FillStep::Voice)
            .map_err(failed(Stage::Fill))
    }
}

/// Where a DRESS run stopped.
#[derive(Debug)]
pub enum DressStep {
    /// The art direction and visual profiles wait at gate 1.
    Art(super::dress_stage::Report),
    /// The briefs and the codex wait at gate 2 for the image budget.
    Briefs(super::dress_stage::Report),
    /// The sample picture waits for the author's confirmation (or, with
    /// `done`, there was nothing more to draw).
    Sample(super::dress_stage::Report),
    /// The other pictures are drawn.
    Batch(super::dress_stage::Report),
}

/// DRESS, one part per run: the art direction (after a discussion), the
/// briefs and codex, the sample picture, the rest.
pub fn dress(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
    provider: &dyn super::illustrate::Illustrator,
) -> Result<DressStep, ProjectError> {
    use super::dress_stage as ds;
    let passed = project.passed_inner(Stage::Dress)?.map(|g| g.waiting);
    let mut on_gateway = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
    let ask: &mut Ask = &mut on_gateway;
    let step = match passed {
        None => {
            let mut context = vision_lines(&vision(project)?);
            if let Some(voice) = project.graph.node("voice")? {
                context.push(format!(
                    "voice: {}, {}",
                    voice.str("register").unwrap_or_default(),
                    voice.strings("tone_words").join(", ")
                ));
            }
            let brief = discuss(project, Stage::Dress, &context, gateway, model, author)?;
            ds::art(&mut project.graph, &brief, ask).map(DressStep::Art)
        }
        Some("art") => ds::briefs(&mut project.graph, ask).map(DressStep::Briefs),
        Some("briefs") => {
            ds::draw(&mut project.graph, &project.dir, provider, true).map(DressStep::Sample)
        }
        Some(_) => {
            ds::draw(&mut project.graph, &project.dir, provider, false).map(DressStep::Batch)
        }
    };
    step.map_err(failed(Stage::Dress))
}
