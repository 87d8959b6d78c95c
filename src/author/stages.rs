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

/// The last stage this version runs.
pub const LAST_BUILT: Stage = Stage::Dress;

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
        Stage::Dress => {
            "the story's look: style and medium, a palette of colour words, framing and light, what every picture avoids, the aspect ratio, and how its characters and places look"
        }
        _ => "the stage's decisions",
    }
}

fn stage_error(stage: Stage, message: impl std::fmt::Display) -> ProjectError {
    ProjectError::Gate(format!("{stage} failed: {message}"))
}

/// One model call (the prompt stage `prompt`): its validated answer.
fn call(gateway: &Gateway, prompt: &str, model: &str, vars: Value) -> Result<Value, String> {
    answer(gateway.call(CallRequest::new(prompt, model, vars)).wait())
}

/// A finished call's answer, its error said in words.
fn answer(outcome: crate::llm::CallOutcome) -> Result<Value, String> {
    outcome.result.map_err(|e| e.to_string())
}

/// One model call for `stage`; a failure is the stage's.
fn ask(
    gateway: &Gateway,
    prompt: &str,
    model: &str,
    vars: Value,
    stage: Stage,
) -> Result<Value, ProjectError> {
    call(gateway, prompt, model, vars).map_err(|e| stage_error(stage, e))
}

/// A batch's reason, with what the engine dropped or mended.
pub(super) fn with_notes(why: &str, notes: &[String]) -> String {
    if notes.is_empty() {
        why.to_owned()
    } else {
        format!("{why}; {}", notes.join("; "))
    }
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

/// GROW: the topology, deterministic but for the intersections the model
/// picks and the choices' labels it writes (`grow_stage`).
pub fn grow(
    project: &mut Project,
    gateway: &Gateway,
    model: &str,
) -> Result<super::grow::Grown, ProjectError> {
    let spark = project.spark()?;
    let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
    super::grow_stage::run(&mut project.graph, &spark, &mut ask)
        .map_err(|e| stage_error(Stage::Grow, e))
}

/// Where a FILL run stopped.
#[derive(Debug)]
pub enum FillStep {
    /// The voice document is written and waits at its own gate.
    Voice(Value),
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
                sizes.push(first.tokens_in);
            }
            answer(outcome)
        };
        let report = super::fill_stage::prose(&mut project.graph, &mut ask);
        report
            .map(|mut r| {
                r.prompt_tokens = sizes;
                FillStep::Prose(r)
            })
            .map_err(|e| stage_error(Stage::Fill, e))
    } else {
        let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
        super::fill_stage::voice(&mut project.graph, &spark, &mut ask)
            .map(FillStep::Voice)
            .map_err(|e| stage_error(Stage::Fill, e))
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
    let failed = |e: String| stage_error(Stage::Dress, e);
    let passed = project.passed_inner(Stage::Dress)?.map(|g| g.waiting);
    let mut ask = |prompt: &str, vars: Value| call(gateway, prompt, model, vars);
    match passed {
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
            ds::art(&mut project.graph, &brief, &mut ask)
                .map(DressStep::Art)
                .map_err(failed)
        }
        Some("art") => ds::briefs(&mut project.graph, &mut ask)
            .map(DressStep::Briefs)
            .map_err(failed),
        Some("briefs") => ds::draw(&mut project.graph, &project.dir, provider, true)
            .map(DressStep::Sample)
            .map_err(failed),
        Some(_) => ds::draw(&mut project.graph, &project.dir, provider, false)
            .map(DressStep::Batch)
            .map_err(failed),
    }
}

/// How many dilemmas and beats per path a scope wants.
fn sizes(scope: super::project::Scope) -> (&'static str, &'static str) {
    use super::project::Scope;
    match scope {
        Scope::Micro => ("1 or 2", "2 to 3"),
        Scope::Short => ("2 or 3", "3 to 4"),
        Scope::Medium => ("4 to 6", "4 to 6"),
        Scope::Long => ("6 to 8", "6 to 8"),
    }
}

fn vision(project: &Project) -> Result<Value, ProjectError> {
    project
        .graph
        .node("vision")?
        .map(|n| Value::Object(n.data))
        .ok_or_else(|| ProjectError::Gate("the graph has no vision: run DREAM first".into()))
}

/// The settled context lines the discussion of a later stage reads.
fn vision_lines(vision: &Value) -> Vec<String> {
    let list = |k: &str| {
        vision[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    vec![
        format!("genre: {}", vision["genre"].as_str().unwrap_or("")),
        format!("tone: {}", list("tone")),
        format!("themes: {}", list("themes")),
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
        "vision": vision,
        "brief": brief,
        "dilemmas": dilemmas,
    });
    let answer = ask(gateway, "author/brainstorm", model, vars, Stage::Brainstorm)?;
    let (changes, notes) =
        brainstorm_mutations(&answer).map_err(|e| stage_error(Stage::Brainstorm, e))?;
    let rationale = with_notes(
        "entities and dilemmas from the vision and the discussion",
        &notes,
    );
    project
        .graph
        .apply(Stage::Brainstorm, "serialize", &rationale, &changes)?;
    Ok(())
}

/// BRAINSTORM's answer as graph mutations, and notes on what was dropped.
pub fn brainstorm_mutations(answer: &Value) -> Result<(Vec<Mutation>, Vec<String>), String> {
    use super::model::EdgeType;
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    let empty = Vec::new();
    for e in answer["entities"].as_array().unwrap_or(&empty) {
        let id = e["id"].as_str().unwrap_or_default().to_owned();
        if !ids.insert(id.clone()) {
            notes.push(format!("entity `{id}` given twice (the first kept)"));
            continue;
        }
        let mut data = json!({
            "type": e["type"],
            "name": e["name"],
            "concept": e["concept"],
        });
        if let Some(n) = e["notes"].as_str().filter(|n| !n.is_empty()) {
            data["notes"] = json!(n);
        }
        changes.push(Mutation::create(id, NodeType::Entity, data));
    }
    for d in answer["dilemmas"].as_array().unwrap_or(&empty) {
        let name = d["id"].as_str().unwrap_or_default();
        let id = format!("dilemma::{}", name.trim_start_matches("dilemma::"));
        if !ids.insert(id.clone()) {
            notes.push(format!("dilemma `{id}` given twice (the first kept)"));
            continue;
        }
        let answers = d["answers"].as_array().unwrap_or(&empty);
        let canonical = answers
            .iter()
            .filter(|a| a["canonical"].as_bool() == Some(true))
            .count();
        if canonical != 1 {
            return Err(format!(
                "dilemma `{id}` marks {canonical} answers canonical; exactly one must be"
            ));
        }
        changes.push(Mutation::create(
            id.clone(),
            NodeType::Dilemma,
            json!({"question": d["question"], "why_it_matters": d["why_it_matters"]}),
        ));
        for a in answers {
            let given = a["id"].as_str().unwrap_or_default().to_owned();
            let mut answer_id = given.clone();
            if !ids.insert(answer_id.clone()) {
                // Ids are unique across the graph: an answer named like an
                // entity or another answer takes its dilemma's name first.
                answer_id = format!("{}_{given}", name.trim_start_matches("dilemma::"));
                if !ids.insert(answer_id.clone()) {
                    return Err(format!(
                        "answer id `{given}` of `{id}` is already used, and so is `{answer_id}`; answer ids are unique across the story"
                    ));
                }
                notes.push(format!(
                    "answer `{given}` of `{id}` renamed `{answer_id}` (the id was taken)"
                ));
            }
            changes.push(Mutation::create(
                answer_id.clone(),
                NodeType::Answer,
                json!({"description": a["description"], "canonical": a["canonical"], "dilemma_id": id}),
            ));
            changes.push(Mutation::link(EdgeType::HasAnswer, id.clone(), answer_id));
        }
        for entity in d["involves"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
        {
            if answer["entities"]
                .as_array()
                .is_some_and(|es| es.iter().any(|e| e["id"] == entity))
            {
                changes.push(Mutation::link(
                    EdgeType::DilemmaInvolves,
                    id.clone(),
                    entity,
                ));
            } else {
                notes.push(format!(
                    "`{id}` involves `{entity}`, which is no entity (dropped)"
                ));
            }
        }
    }
    Ok((changes, notes))
}

/// SEED: curation, paths, consequences, initial beats, analyses.
pub fn seed(project: &mut Project, gateway: &Gateway, model: &str) -> Result<(), ProjectError> {
    use super::model::EdgeType;
    let vision = vision(project)?;
    let entities: Vec<Value> = project
        .graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .map(|e| json!({"id": e.id, "type": e.data["type"], "name": e.data["name"], "concept": e.data["concept"]}))
        .collect();
    let mut dilemmas = Vec::new();
    for d in project.graph.nodes(NodeType::Dilemma)? {
        let mut answers = Vec::new();
        for a in project.graph.targets(EdgeType::HasAnswer, &d.id)? {
            if let Some(node) = project.graph.node(&a)? {
                answers.push(json!({"id": a, "description": node.data["description"], "canonical": node.data["canonical"]}));
            }
        }
        dilemmas.push(json!({
            "id": d.id.trim_start_matches("dilemma::"),
            "question": d.data["question"],
            "why_it_matters": d.data["why_it_matters"],
            "answers": answers,
        }));
    }
    let (_, beats_per_path) = sizes(project.scope()?);
    let vars = json!({
        "spark": project.spark()?,
        "vision": vision,
        "entities": entities,
        "dilemmas": dilemmas,
        "beats_per_path": beats_per_path,
    });
    let answer = ask(gateway, "author/seed", model, vars, Stage::Seed)?;
    let (changes, notes) =
        seed_mutations(&project.graph, &answer).map_err(|e| stage_error(Stage::Seed, e))?;
    let rationale = with_notes(
        "paths, consequences and initial beats from the brainstorm",
        &notes,
    );
    project
        .graph
        .apply(Stage::Seed, "serialize", &rationale, &changes)?;
    Ok(())
}

/// SEED's answer as graph mutations (and notes on what the engine dropped
/// or mended). The engine, not the model, makes the ids: `path::d__a`,
/// `beat::…`, `consequence::…`. The canonical answer of every dilemma is
/// always explored. A path no beat commits gets its last beat as the
/// commit; beats are ordered along each path as listed, plus any `after`
/// that keeps the order acyclic.
pub fn seed_mutations(
    graph: &super::graph::Graph,
    answer: &Value,
) -> Result<(Vec<Mutation>, Vec<String>), String> {
    use super::model::{EdgeType, path_id};
    use std::collections::{BTreeMap, BTreeSet};
    let err = |e: super::graph::GraphError| e.to_string();
    let empty = Vec::new();
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let entities: BTreeMap<String, super::graph::Node> = graph
        .nodes(NodeType::Entity)
        .map_err(err)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    // Dilemma → (answers, canonical).
    let mut dilemmas: BTreeMap<String, (Vec<String>, String)> = BTreeMap::new();
    for d in graph.nodes(NodeType::Dilemma).map_err(err)? {
        let answers = graph.targets(EdgeType::HasAnswer, &d.id).map_err(err)?;
        let mut canonical = String::new();
        for a in &answers {
            if graph
                .node(a)
                .map_err(err)?
                .is_some_and(|n| n.data["canonical"] == json!(true))
            {
                canonical.clone_from(a);
            }
        }
        dilemmas.insert(d.id.clone(), (answers, canonical));
    }
    let dilemma_id = |s: &str| format!("dilemma::{}", s.trim_start_matches("dilemma::"));

    // Curation.
    let mut cut = BTreeSet::new();
    for id in answer["cut_entities"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(Value::as_str)
    {
        if entities.contains_key(id) {
            cut.insert(id.to_owned());
            changes.push(Mutation::update(id, json!({"disposition": "cut"})));
        } else {
            notes.push(format!("cut `{id}`: no such entity"));
        }
    }
    for id in entities.keys().filter(|id| !cut.contains(*id)) {
        changes.push(Mutation::update(id.clone(), json!({"disposition": "kept"})));
    }
    // Relationships between kept entities (seed 000: created in SEED),
    // one per ordered pair.
    let mut bonds = BTreeSet::new();
    for r in answer["relationships"].as_array().unwrap_or(&empty) {
        let (from, to) = (
            r["from"].as_str().unwrap_or_default(),
            r["to"].as_str().unwrap_or_default(),
        );
        let kept = |e: &str| entities.contains_key(e) && !cut.contains(e);
        if from == to || !kept(from) || !kept(to) {
            notes.push(format!(
                "a relationship `{from}` → `{to}` between entities that are not two kept ones (dropped)"
            ));
            continue;
        }
        let id = format!("relationship::{from}__{to}");
        if bonds.insert(id.clone()) {
            changes.push(Mutation::create(
                id,
                NodeType::Relationship,
                json!({"from_entity": from, "to_entity": to,
                       "base": {"nature": r["nature"].as_str().unwrap_or_default()}}),
            ));
        }
    }

    // Paths: one per explored answer; the canonical one always.
    let mut paths: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut given: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for p in answer["paths"].as_array().unwrap_or(&empty) {
        let d = dilemma_id(p["dilemma_id"].as_str().unwrap_or_default());
        let a = p["answer_id"].as_str().unwrap_or_default().to_owned();
        match dilemmas.get(&d) {
            Some((answers, _)) if answers.contains(&a) => {
                given.entry((d, a)).or_insert(p);
            }
            Some(_) => notes.push(format!(
                "a path for `{a}`, which is no answer of `{d}` (dropped)"
            )),
            None => notes.push(format!("a path for `{d}`, which is no dilemma (dropped)")),
        }
    }
    let mut consequences_seen = BTreeSet::new();
    for (d, (answers, canonical)) in &dilemmas {
        let mut explored = Vec::new();
        for a in answers {
            let p = given.get(&(d.clone(), a.clone())).copied();
            if p.is_none() && a != canonical {
                continue;
            }
            explored.push(a.clone());
            let id = path_id(d, a);
            let fallback = json!({});
            let p = p.unwrap_or(&fallback);
            if p.as_object().is_some_and(serde_json::Map::is_empty) {
                notes.push(format!(
                    "the canonical answer `{a}` had no path; `{id}` made"
                ));
            }
            let answer_text = graph
                .node(a)
                .map_err(err)?
                .and_then(|n| n.str("description").map(str::to_owned))
                .unwrap_or_default();
            changes.push(Mutation::create(
                id.clone(),
                NodeType::Path,
                json!({
                    "name": p["name"].as_str().unwrap_or(&answer_text),
                    "dilemma_id": d,
                    "answer_id": a,
                    "shadows": answers.iter().filter(|x| *x != a).collect::<Vec<_>>(),
                    "tier": p["tier"].as_str().unwrap_or("major"),
                    "description": p["description"].as_str().unwrap_or(&answer_text),
                }),
            ));
            changes.push(Mutation::link(EdgeType::Explores, id.clone(), a.clone()));
            for c in p["consequences"].as_array().unwrap_or(&empty) {
                let cid = format!("consequence::{}", c["id"].as_str().unwrap_or_default());
                if !consequences_seen.insert(cid.clone()) {
                    notes.push(format!("consequence `{cid}` given twice (the first kept)"));
                    continue;
                }
                changes.push(Mutation::create(
                    cid.clone(),
                    NodeType::Consequence,
                    json!({"path_id": id, "description": c["description"], "ripples": c["ripples"]}),
                ));
                changes.push(Mutation::link(EdgeType::HasConsequence, id.clone(), cid));
            }
            paths.insert(id, (d.clone(), a.clone()));
        }
        let unexplored: Vec<&String> = answers.iter().filter(|a| !explored.contains(a)).collect();
        changes.push(Mutation::update(
            d.clone(),
            json!({"explored": explored, "unexplored": unexplored}),
        ));
    }

    // Analyses.
    for a in answer["dilemma_analyses"].as_array().unwrap_or(&empty) {
        let d = dilemma_id(a["dilemma_id"].as_str().unwrap_or_default());
        if dilemmas.contains_key(&d) {
            let mut analysis = a.clone();
            if let Some(m) = analysis.as_object_mut() {
                m.remove("dilemma_id");
            }
            changes.push(Mutation::update(d, json!({"analysis": analysis})));
        } else {
            notes.push(format!(
                "an analysis of `{d}`, which is no dilemma (dropped)"
            ));
        }
    }

    // Beats.
    let path_ref = |s: &str| -> Option<String> {
        let s = s.trim_start_matches("path::");
        let (d, a) = s.split_once("__")?;
        let id = path_id(&dilemma_id(d), a);
        paths.contains_key(&id).then_some(id)
    };
    let mut beat_ids: Vec<String> = Vec::new();
    let mut beat_paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut commits: BTreeSet<String> = BTreeSet::new();
    let mut afters: Vec<(String, String)> = Vec::new();
    let mut beat_nodes: BTreeMap<String, Value> = BTreeMap::new();
    for b in answer["beats"].as_array().unwrap_or(&empty) {
        let id = format!(
            "beat::{}",
            b["id"]
                .as_str()
                .unwrap_or_default()
                .trim_start_matches("beat::")
        );
        if beat_nodes.contains_key(&id) {
            notes.push(format!("beat `{id}` given twice (the first kept)"));
            continue;
        }
        let on: Vec<String> = b["paths"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
            .filter_map(path_ref)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if on.is_empty() {
            notes.push(format!("beat `{id}` serves no explored path (dropped)"));
            continue;
        }
        let known = |e: &&str| entities.contains_key(*e) && !cut.contains(*e);
        let its_entities: Vec<&str> = b["entities"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
            .filter(known)
            .collect();
        let is_place = |e: &&str| known(e) && entities[*e].str("type") == Some("location");
        let location = b["location"].as_str().filter(is_place);
        let alternatives: Vec<&str> = b["location_alternatives"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
            .filter(is_place)
            .filter(|l| Some(*l) != location)
            .collect();
        let impacts: Vec<Value> = b["impacts"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|i| {
                let d = dilemma_id(i["dilemma_id"].as_str()?);
                dilemmas
                    .contains_key(&d)
                    .then(|| json!({"dilemma_id": d, "effect": i["effect"], "note": i["note"]}))
            })
            .collect();
        for p in &on {
            let d = &paths[p].0;
            if impacts
                .iter()
                .any(|i| i["dilemma_id"] == json!(d) && i["effect"] == json!("commits"))
            {
                commits.insert(p.clone());
            }
        }
        for after in b["after"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
        {
            afters.push((
                id.clone(),
                format!("beat::{}", after.trim_start_matches("beat::")),
            ));
        }
        beat_nodes.insert(
            id.clone(),
            json!({
                "summary": b["summary"],
                "dilemma_impacts": impacts,
                "entities": its_entities,
                "location": location,
                "location_alternatives": alternatives,
            }),
        );
        beat_paths.insert(id.clone(), on);
        beat_ids.push(id);
    }
    // Every path needs a beat that commits its dilemma: the last one does if none says so.
    for (p, (d, _)) in &paths {
        if commits.contains(p) {
            continue;
        }
        let Some(last) = beat_ids
            .iter()
            .rev()
            .find(|b| beat_paths[*b].contains(p))
            .cloned()
        else {
            // No beat at all: the path's answer, as the beat that commits it.
            let answer_id = &paths[p].1;
            let summary = graph
                .node(answer_id)
                .map_err(err)?
                .and_then(|n| n.str("description").map(str::to_owned))
                .unwrap_or_else(|| answer_id.clone());
            let id = format!("beat::{}_commits", p.trim_start_matches("path::"));
            beat_nodes.insert(
                id.clone(),
                json!({"summary": summary, "entities": [], "location": null, "location_alternatives": [],
                       "dilemma_impacts": [{"dilemma_id": d, "effect": "commits",
                                            "note": "made by the engine from the answer: SEED gave the path no beat"}]}),
            );
            beat_paths.insert(id.clone(), vec![p.clone()]);
            beat_ids.push(id.clone());
            notes.push(format!("`{p}` had no beats; `{id}` made from its answer"));
            continue;
        };
        let node = beat_nodes.get_mut(&last).expect("listed beats have nodes");
        if let Some(list) = node["dilemma_impacts"].as_array_mut() {
            list.push(json!({"dilemma_id": d, "effect": "commits", "note": "the path commits here (set by the engine: no beat said so)"}));
        }
        notes.push(format!(
            "no beat committed `{p}`; its last beat `{last}` does"
        ));
    }
    for (rank, id) in beat_ids.iter().enumerate() {
        let mut node = beat_nodes[id].clone();
        node["rank"] = json!(rank + 1);
        changes.push(Mutation::create(id.clone(), NodeType::Beat, node));
        for p in &beat_paths[id] {
            changes.push(Mutation::link(EdgeType::BelongsTo, id.clone(), p.clone()));
        }
    }
    // Order: along each path as listed, then `after` where it keeps the order acyclic.
    let mut order: Vec<(String, String)> = Vec::new();
    for p in paths.keys() {
        let on: Vec<&String> = beat_ids
            .iter()
            .filter(|b| beat_paths[*b].contains(p))
            .collect();
        for pair in on.windows(2) {
            let edge = (pair[1].clone(), pair[0].clone());
            if !order.contains(&edge) {
                order.push(edge);
            }
        }
    }
    for (after, before) in afters {
        if !beat_nodes.contains_key(&before) {
            notes.push(format!(
                "`{after}` after `{before}`, which is no beat (dropped)"
            ));
            continue;
        }
        let mut trial = order.clone();
        trial.push((after.clone(), before.clone()));
        if super::graph::cycle_member(&trial).is_some() {
            notes.push(format!(
                "`{after}` after `{before}` would make a cycle (dropped)"
            ));
        } else if !order.contains(&(after.clone(), before.clone())) {
            order = trial;
        }
    }
    for (after, before) in order {
        changes.push(Mutation::link(EdgeType::SequencedAfter, after, before));
    }
    changes.push(Mutation::Meta {
        key: "seed.convergence_sketch".into(),
        value: answer["convergence_sketch"].clone(),
    });
    changes.push(Mutation::Meta {
        key: "seed.interaction_constraints".into(),
        value: answer["interaction_constraints"].clone(),
    });
    Ok((changes, notes))
}
