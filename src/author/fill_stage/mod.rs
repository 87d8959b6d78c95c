//! FILL on a project's graph (seed 000 Stage 5): the voice, then the prose, reviewed and revised.
//!
//! The voice document first (its own gate), then one passage per model call, spine first,
//! each with the seed's context (`world`: voice, beats and scene types, entity states from
//! the codewords held on the way, shadows, a sliding window of prose, lookahead at
//! convergence, the prose layer's contracts) and checked before it is kept (one bounded
//! repair); the author's gate; then at most two review-and-revise cycles, after which the
//! prose ships as it is.

mod world;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::answers::{EntityUpdate, ProseAnswer, ReviewAnswer, VoiceAnswer};
use super::ask::{self, Ask, StageError};
use super::fill::{self, Problem, Rules};
use super::graph::{Graph, Mutation, Node};
use super::ontology::{NodeType, Stage};
use super::reading::{order, scene_types};
pub use world::WINDOW;
use world::{World, context, voice_vars};

/// At most this many review-and-revise cycles (seed 000's hard cap).
pub const MAX_CYCLES: usize = 2;
/// Passages per review call.
const REVIEW_WINDOW: usize = 6;

/// What FILL's prose phases did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    pub written: usize,
    /// Drafts mended by the repair call.
    pub repaired: usize,
    pub cycles: usize,
    pub revised: usize,
    /// Passages still flagged when the cycles ran out.
    pub flagged: Vec<String>,
    /// Passages the model wrote nothing usable for.
    pub missing: Vec<String>,
    /// Each prose call's prompt size in tokens (as the backend counted them).
    pub prompt_tokens: Vec<u32>,
    pub notes: Vec<String>,
}

/// Phase 0: the voice document, one model call, checked (a point-of-view
/// character must be one of the story's characters).
pub fn voice(graph: &mut Graph, spark: &str, ask: &mut Ask) -> Result<VoiceAnswer, StageError> {
    let vision = graph
        .node("vision")?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let characters: Vec<Node> = graph
        .nodes(NodeType::Entity)?
        .into_iter()
        .filter(|e| e.str("type") == Some("character") && e.str("disposition") != Some("cut"))
        .collect();
    let listed: Vec<Value> = characters
        .iter()
        .map(|c| json!({"id": c.id, "name": c.str("name").unwrap_or(&c.id), "concept": c.str("concept")}))
        .collect();
    let mut opening = Vec::new();
    for (p, _) in order(graph)?.into_iter().take(6) {
        if let Some(node) = graph.node(&p)? {
            opening.push(json!({"summary": node.str("summary").unwrap_or_default(),
                                "scene_type": scene_types(graph, &node)?.join(" + ")}));
        }
    }
    let mut answer: VoiceAnswer = ask::answer(
        ask,
        json!({"spark": spark, "vision": vision, "characters": listed, "opening": opening}),
    )?;
    let mut why = "the voice every passage is written in".to_owned();
    if let Some(Some(who)) = &answer.pov_character
        && !characters.iter().any(|c| c.id == *who)
    {
        why = format!(
            "{why}; the point-of-view character `{who}` is no character of the story (dropped)"
        );
        answer.pov_character = Some(None);
    }
    graph.apply(
        Stage::Fill,
        "voice",
        &why,
        &[Mutation::create("voice", NodeType::Voice, json!(answer))],
    )?;
    Ok(answer)
}

/// One draft: the model's prose (trimmed), its entity updates, and its problems.
struct Draft {
    prose: String,
    updates: Vec<EntityUpdate>,
    problems: Vec<Problem>,
}

fn draft(ask: &mut Ask, vars: &Value, rules: &Rules) -> Result<Draft, StageError> {
    let answer: ProseAnswer = ask::answer(ask, vars.clone())?;
    let prose = answer.prose.trim().to_owned();
    let problems = fill::check(&prose, rules);
    Ok(Draft {
        prose,
        updates: answer.entity_updates,
        problems,
    })
}

/// Writes one passage: a draft, one repair if it has problems (the better
/// of the two is kept), then its prose, what is still wrong, and the entity
/// micro-updates (only for entities it shows, only details they lack).
fn write(
    graph: &mut Graph,
    world: &mut World,
    ask: &mut Ask,
    id: &str,
    (arc, at): (&str, usize),
    revise: Option<&[String]>,
    report: &mut Report,
) -> Result<bool, StageError> {
    let (mut vars, rules) = context(world, id, arc, at);
    if let (Some(issues), Some(old)) = (revise, world.prose(id)) {
        vars["revise"] = json!({"prose": old, "problems": issues});
    }
    let mut best = match draft(ask, &vars, &rules) {
        Ok(d) => d,
        Err(e) => {
            report
                .notes
                .push(format!("`{id}`: the model wrote nothing usable ({e})"));
            return Ok(false);
        }
    };
    if !best.problems.is_empty() {
        let said: Vec<String> = best.problems.iter().map(ToString::to_string).collect();
        vars["revise"] = json!({"prose": best.prose, "problems": said});
        if let Ok(again) = draft(ask, &vars, &rules)
            && again.problems.len() < best.problems.len()
        {
            report.repaired += usize::from(again.problems.is_empty());
            best = again;
        }
    }
    if let (Some(_), Some(old)) = (revise, world.prose(id)) {
        // A revision is kept only if it is no worse than what it replaces.
        if best.problems.len() > fill::check(old, &rules).len() {
            return Ok(false);
        }
    }
    let flags: Vec<String> = best.problems.iter().map(ToString::to_string).collect();
    let mut changes = vec![Mutation::update(
        id,
        json!({"prose": best.prose, "review": {"flags": flags}}),
    )];
    changes.extend(details(world, id, &best.updates, &mut report.notes));
    let why = format!(
        "{} words in the voice{}",
        fill::words(&best.prose),
        if flags.is_empty() {
            String::new()
        } else {
            format!("; still: {}", flags.join("; "))
        }
    );
    let phase = if revise.is_some() { "revise" } else { "prose" };
    graph.apply(Stage::Fill, phase, &why, &changes)?;
    world.absorb(&changes);
    Ok(true)
}

/// The entity micro-updates a draft gives, as changes of the entities' `base`: only for
/// entities the passage shows (FILL never makes entities), only details they lack.
fn details(
    world: &World,
    id: &str,
    updates: &[EntityUpdate],
    notes: &mut Vec<String>,
) -> Vec<Mutation> {
    let shown: Vec<String> = world.appears.get(id).cloned().unwrap_or_default();
    let mut touched: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for u in updates {
        let e = u.id.as_str();
        let Some(entity) = world
            .entities
            .get(e)
            .filter(|_| shown.iter().any(|s| s == e))
        else {
            notes.push(format!(
                "`{id}`: an update of `{e}`, which the passage does not show (FILL never makes entities), left out"
            ));
            continue;
        };
        let base = touched
            .entry(e.to_owned())
            .or_insert_with(|| entity.field("base").unwrap_or_default());
        let field = u.field.trim().to_lowercase().replace(' ', "_");
        if !base.contains_key(&field) {
            base.insert(field, json!(u.value.trim()));
        }
    }
    touched
        .into_iter()
        .map(|(e, base)| Mutation::update(e, json!({"base": base})))
        .collect()
}

/// Phase 1: every passage without prose is written (one call each, in FILL's order; a run
/// stopped half-way picks up where it was). The author's gate follows (seed 000).
pub fn prose(graph: &mut Graph, ask: &mut Ask) -> Result<Report, StageError> {
    let mut world = World::read(graph)?;
    let mut report = Report::default();
    let order = order(graph)?;
    for (id, (arc, at)) in &order {
        if world.prose(id).is_some() {
            continue;
        }
        if write(graph, &mut world, ask, id, (arc, *at), None, &mut report)? {
            report.written += 1;
        } else {
            report.missing.push(id.clone());
        }
    }
    Ok(report)
}

/// Phases 2 and 3, after the author's gate: up to [`MAX_CYCLES`] cycles of review (the
/// checks' flags and the model's, window by window) and revision of what was flagged; a
/// passage still without prose is written on the way.
pub fn review_and_revise(graph: &mut Graph, ask: &mut Ask) -> Result<Report, StageError> {
    let mut world = World::read(graph)?;
    let mut report = Report::default();
    let order = order(graph)?;
    report.missing = order
        .iter()
        .filter(|(id, _)| world.prose(id).is_none())
        .map(|(id, _)| id.clone())
        .collect();
    for cycle in 1..=MAX_CYCLES {
        let flagged = review(&world, ask, &order, &mut report);
        if flagged.is_empty() {
            break;
        }
        report.cycles = cycle;
        for (id, issues) in &flagged {
            let Some((_, (arc, at))) = order.iter().find(|(p, _)| p == id) else {
                continue;
            };
            if write(
                graph,
                &mut world,
                ask,
                id,
                (arc, *at),
                Some(issues),
                &mut report,
            )? {
                report.revised += 1;
                report.missing.retain(|m| m != id);
            }
        }
    }
    let still = review_flags(&world, &order);
    report.flagged = still.keys().cloned().collect();
    if !report.flagged.is_empty() && report.cycles == MAX_CYCLES {
        report.notes.push(format!(
            "{} passages are still flagged after {MAX_CYCLES} review cycles and ship as they are (seed 000's cap): {}",
            report.flagged.len(),
            report.flagged.join(", ")
        ));
    }
    Ok(report)
}

/// The checks' flags as they stand: passage → problems (and no prose at all).
fn review_flags(
    world: &World,
    order: &[(String, (String, usize))],
) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (id, _) in order {
        let flags = match world.prose(id) {
            None => vec!["it has no prose yet".to_owned()],
            Some(_) => super::graph::strings(
                world.passages[id]
                    .data
                    .get("review")
                    .and_then(|r| r.get("flags")),
            ),
        };
        if !flags.is_empty() {
            out.insert(id.clone(), flags);
        }
    }
    out
}

/// One review: the checks' flags, and the model's over windows of
/// [`REVIEW_WINDOW`] passages (a failed call flags nothing and is said).
fn review(
    world: &World,
    ask: &mut Ask,
    order: &[(String, (String, usize))],
    report: &mut Report,
) -> BTreeMap<String, Vec<String>> {
    let mut flagged = review_flags(world, order);
    let written: Vec<&String> = order
        .iter()
        .map(|(id, _)| id)
        .filter(|id| world.prose(id).is_some())
        .collect();
    for window in written.chunks(REVIEW_WINDOW) {
        let passages: Vec<Value> = window
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let types: Vec<&str> = world
                    .beats_of(id)
                    .iter()
                    .map(|b| b.str("scene_type").unwrap_or("scene"))
                    .collect();
                json!({"n": i + 1, "scene_type": types.join(" + "), "summary": world.summary(id),
                       "prose": world.prose(id), "arrivals": world.arrivals.get(*id).map_or(0, Vec::len)})
            })
            .collect();
        let vars = json!({"voice": voice_vars(&world.voice), "passages": passages});
        match ask::answer::<ReviewAnswer>(ask, vars) {
            Ok(answer) => {
                for f in answer.flags {
                    if let Some(id) = window.get(f.n.wrapping_sub(1)) {
                        flagged.entry((*id).clone()).or_default().push(f.issue);
                    }
                }
            }
            Err(e) => report.notes.push(format!(
                "a review of {} passages failed ({e}); only the checks' flags count",
                window.len()
            )),
        }
    }
    flagged
}
