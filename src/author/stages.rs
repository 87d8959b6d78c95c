//! The model-driven stages as the CLI runs them: each stage's run on a project, model included.
//!
//! DREAM, BRAINSTORM and SEED discuss with the author (`discuss`), then one serializing call
//! whose answer, read as its contract's type, becomes one batch of mutations (`brainstorm`,
//! `seed`); GROW, FILL and DRESS hand their `*_stage` module an [`Ask`] on the gateway.

use serde_json::{Value, json};

use super::answers::Answer;
use super::answers::{BrainstormAnswer, DreamAnswer, SeedAnswer, VoiceAnswer};
use super::ask::{Ask, StageError, with_notes};
use super::brainstorm::brainstorm_mutations;
use super::discuss::{Author, call, call_for, call_with, discuss};
use super::graph::{Graph, GraphError, Mutation, Node};
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
    let vars = dream_vars(&project.spark()?, scope, &brief);
    let answer: DreamAnswer = call_for(gateway, model, vars, Stage::Dream)?;
    let vision = vision_of(&answer, scope, &brief);
    project.graph.apply(
        Stage::Dream,
        "serialize",
        "the vision from the spark and the discussion",
        &[Mutation::create("vision", NodeType::Vision, vision)],
    )?;
    Ok(())
}

/// DREAM's variables (shared with the corpus, `tune`).
pub fn dream_vars(spark: &str, scope: Scope, brief: &str) -> Value {
    json!({"spark": spark, "scope": scope.name(), "brief": brief})
}

/// The vision node DREAM's answer becomes.
pub fn vision_of(answer: &DreamAnswer, scope: Scope, brief: &str) -> Value {
    json!({
        "genre": answer.genre,
        "tone": answer.tone,
        "themes": answer.themes,
        "audience": answer.audience,
        "scope": {"length": scope.name(), "branches": answer.branches},
        "constraints": answer.constraints,
        "content_notes": answer.content_notes,
        "brief": brief,
    })
}

/// BRAINSTORM's variables (shared with the corpus, `tune`).
pub fn brainstorm_vars(spark: &str, vision: &Value, brief: &str, shape: Shape) -> Value {
    json!({
        "spark": spark,
        "vision": vision,
        "brief": brief,
        "dilemmas": shape.dilemmas_text(),
    })
}

/// BRAINSTORM's call: its contract holds the dilemmas to the scope's count.
pub fn brainstorm_request(model: &str, vars: Value, shape: Shape) -> CallRequest {
    CallRequest::new(BrainstormAnswer::PROMPT, model, vars).tighten(
        "/dilemmas",
        json!({"minItems": shape.dilemmas.0, "maxItems": shape.dilemmas.1}),
    )
}

/// SEED's variables from the brainstormed graph (shared with the corpus, `tune`):
/// `entities` as `{id, type, name, concept}`, `dilemmas` as
/// `{id (no prefix), question, why_it_matters, answers: [{id, description, canonical}]}`.
pub fn seed_vars(
    spark: &str,
    vision: &Value,
    entities: &[Value],
    dilemmas: &[Value],
    shape: Shape,
) -> Value {
    json!({
        "spark": spark,
        "vision": vision,
        "entities": entities,
        "dilemmas": dilemmas,
        "beats_per_path": shape.beats_text(),
        "both_ways": shape.both_ways.min(dilemmas.len()),
    })
}

/// What SEED is shown of BRAINSTORM's graph: its entities and its dilemmas with their answers.
pub fn seed_inputs(graph: &Graph) -> Result<(Vec<Value>, Vec<Value>), GraphError> {
    let field = |n: &Node, k: &str| n.data.get(k).cloned().unwrap_or(Value::Null);
    let entities: Vec<Value> = graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .map(|e| json!({"id": e.id, "type": field(&e, "type"), "name": field(&e, "name"), "concept": field(&e, "concept")}))
        .collect();
    let mut dilemmas = Vec::new();
    for d in graph.nodes(NodeType::Dilemma)? {
        let mut answers = Vec::new();
        for a in graph.targets(EdgeType::HasAnswer, &d.id)? {
            if let Some(node) = graph.node(&a)? {
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
    Ok((entities, dilemmas))
}

/// SEED's call: its contract holds every id the answer names to the graph's (dilemmas,
/// answers, the paths they make, entities, places) and at least one path a dilemma; what
/// the grammar cannot hold, the engine mends.
pub fn seed_request(
    model: &str,
    vars: Value,
    entities: &[Value],
    dilemmas: &[Value],
) -> CallRequest {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let dilemma_ids: Vec<String> = dilemmas.iter().filter_map(|d| text(d, "id")).collect();
    let mut answer_ids = Vec::new();
    let mut refs = Vec::new();
    for d in dilemmas {
        let Some(id) = text(d, "id") else { continue };
        for a in d
            .get("answers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(a) = text(a, "id") {
                refs.push(format!("{id}__{a}"));
                answer_ids.push(a);
            }
        }
    }
    let entity_ids: Vec<String> = entities.iter().filter_map(|e| text(e, "id")).collect();
    let mut places: Vec<Value> = entities
        .iter()
        .filter(|e| text(e, "type").as_deref() == Some("location"))
        .filter_map(|e| text(e, "id").map(Value::from))
        .collect();
    // No floor on the beats: a small model held to ten of them rambled past its answer's
    // tokens; a path with none gets its answer as its beat (`seed_mutations`).
    let mut request = CallRequest::new(SeedAnswer::PROMPT, model, vars).tighten(
        "/paths",
        json!({"minItems": dilemma_ids.len().clamp(1, 16)}),
    );
    if dilemma_ids.is_empty() || entity_ids.is_empty() {
        return request;
    }
    request = request
        .allow("/paths/items/dilemma_id", dilemma_ids.clone())
        .allow("/paths/items/answer_id", answer_ids)
        .allow("/beats/items/paths/items", refs)
        .allow("/beats/items/entities/items", entity_ids.clone())
        .allow("/cut_entities/items", entity_ids)
        .allow("/dilemma_analyses/items/dilemma_id", dilemma_ids.clone())
        .allow(
            "/interaction_constraints/items/dilemma_a",
            dilemma_ids.clone(),
        )
        .allow("/interaction_constraints/items/dilemma_b", dilemma_ids);
    if !places.is_empty() {
        places.push(Value::Null);
        request = request.allow("/beats/items/location", places);
    }
    request
}

/// The story's shape a scope asks for (#42: a micro story has something to weave).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// How many dilemmas BRAINSTORM makes (its contract holds it to this range).
    pub dilemmas: (usize, usize),
    /// How many dilemmas SEED explores on both answers at least (the engine tops up).
    pub both_ways: usize,
    /// How many beats each path wants.
    pub beats: (usize, usize),
}

impl Shape {
    /// The shape of `scope`.
    pub fn of(scope: Scope) -> Self {
        let (dilemmas, both_ways, beats) = match scope {
            Scope::Micro => ((3, 3), 2, (2, 3)),
            Scope::Short => ((3, 4), 2, (3, 4)),
            Scope::Medium => ((4, 6), 3, (4, 6)),
            Scope::Long => ((6, 8), 4, (6, 8)),
        };
        Self {
            dilemmas,
            both_ways,
            beats,
        }
    }

    /// The dilemma count as the prompt says it ("3", "3 or 4", "4 to 6").
    pub fn dilemmas_text(&self) -> String {
        range_text(self.dilemmas, "or")
    }

    /// The beats a path wants as the prompt says it ("2 to 3").
    pub fn beats_text(&self) -> String {
        range_text(self.beats, "to")
    }
}

/// `(lo, hi)` as words: "3", "3 or 4" (`word` "or") or "4 to 6".
fn range_text((lo, hi): (usize, usize), word: &str) -> String {
    match (lo, hi) {
        (lo, hi) if lo == hi => lo.to_string(),
        (lo, hi) if hi == lo + 1 => format!("{lo} {word} {hi}"),
        (lo, hi) => format!("{lo} to {hi}"),
    }
}

fn vision(project: &Project) -> Result<Value, ProjectError> {
    let node = project
        .graph
        .node("vision")?
        .ok_or(ProjectError::NoVision)?;
    Ok(Value::Object(node.data))
}

/// What DREAM settled, as the discussions after it are told (shared with the corpus, `tune`).
pub fn vision_lines(vision: &Value) -> Vec<String> {
    let strings = |key: &str| super::graph::strings(vision.get(key)).join(", ");
    vec![
        format!(
            "genre: {}",
            vision.get("genre").and_then(Value::as_str).unwrap_or("")
        ),
        format!("tone: {}", strings("tone")),
        format!("themes: {}", strings("themes")),
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
    let shape = Shape::of(project.scope()?);
    let vars = brainstorm_vars(&project.spark()?, &vision, &brief, shape);
    let answer: BrainstormAnswer = call_with(
        gateway,
        brainstorm_request(model, vars, shape),
        Stage::Brainstorm,
    )?;
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
    let (entities, dilemmas) = seed_inputs(&project.graph)?;
    let shape = Shape::of(project.scope()?);
    let vars = seed_vars(&project.spark()?, &vision, &entities, &dilemmas, shape);
    let answer: SeedAnswer = call_with(
        gateway,
        seed_request(model, vars, &entities, &dilemmas),
        Stage::Seed,
    )?;
    let (changes, notes) =
        seed_mutations(&project.graph, &answer, shape.both_ways).map_err(failed(Stage::Seed))?;
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
    /// The prose is written and waits for the author's reading (seed 000's gate
    /// between generation and review).
    Prose(super::fill_stage::Report),
    /// The prose is reviewed and revised: FILL is done.
    Reviewed(super::fill_stage::Report),
}

/// FILL: the voice document on the first run (then its gate), the prose on the run after
/// the voice is approved (then its gate), the review and revision on the run after that.
pub fn fill(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
) -> Result<FillStep, ProjectError> {
    let spark = project.spark()?;
    if project.passed_inner(Stage::Fill)?.map(|g| g.waiting) == Some("prose") {
        let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
        super::fill_stage::review_and_revise(&mut project.graph, &mut ask)
            .map(FillStep::Reviewed)
            .map_err(failed(Stage::Fill))
    } else if project.resuming(Stage::Fill)? {
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
