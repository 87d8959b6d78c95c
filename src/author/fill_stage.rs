//! FILL on a project's graph (seed 000 Stage 5): the voice document first (its own gate), then one passage per model call, spine first, each with the seed's context (voice, beats and scene types, entity states from the codewords held on the way, shadows, a sliding window of prose, lookahead at convergence) and checked before it is kept (one bounded repair); then at most two review-and-revise cycles, after which the prose ships as it is.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::fill::{self, Problem, Rules};
use super::graph::{Graph, GraphError, Mutation, Node};
use super::model::{EdgeType, NodeType, Stage};

/// The passages of prose before this one in its context.
pub const WINDOW: usize = 3;
/// At most this many review-and-revise cycles (seed 000's hard cap).
pub const MAX_CYCLES: usize = 2;
/// Passages per review call.
const REVIEW_WINDOW: usize = 6;
/// Arrivals and characters listed in a prompt, at most.
const LISTED: usize = 4;
/// Characters of the next passage's prose shown as lookahead.
const LOOKAHEAD_CHARS: usize = 600;

/// A model call: prompt name and variables in, the contract-checked answer out.
pub type Ask<'a> = dyn FnMut(&str, Value) -> Result<Value, String> + 'a;

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

pub(super) fn err(e: GraphError) -> String {
    e.to_string()
}

/// Phase 0: the voice document, one model call, checked (a point-of-view
/// character must be one of the story's characters).
pub fn voice(graph: &mut Graph, spark: &str, ask: &mut Ask) -> Result<Value, String> {
    let vision = graph
        .node("vision")
        .map_err(err)?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let characters: Vec<Node> = graph
        .nodes(NodeType::Entity)
        .map_err(err)?
        .into_iter()
        .filter(|e| e.str("type") == Some("character") && e.str("disposition") != Some("cut"))
        .collect();
    let listed: Vec<Value> = characters
        .iter()
        .map(|c| json!({"id": c.id, "name": c.str("name").unwrap_or(&c.id), "concept": c.str("concept")}))
        .collect();
    let mut opening = Vec::new();
    for (p, _) in order(graph)?.into_iter().take(6) {
        if let Some(node) = graph.node(&p).map_err(err)? {
            opening.push(json!({"summary": node.str("summary").unwrap_or_default(),
                                "scene_type": scene_types(graph, &node)?.join(" + ")}));
        }
    }
    let mut answer = ask(
        "author/fill_voice",
        json!({"spark": spark, "vision": vision, "characters": listed, "opening": opening}),
    )?;
    let mut why = "the voice every passage is written in".to_owned();
    if let Some(who) = answer["pov_character"].as_str().map(str::to_owned)
        && !characters.iter().any(|c| c.id == who)
    {
        answer["pov_character"] = Value::Null;
        why = format!(
            "{why}; the point-of-view character `{who}` is no character of the story (dropped)"
        );
    }
    graph
        .apply(
            Stage::Fill,
            "voice",
            &why,
            &[Mutation::create("voice", NodeType::Voice, answer.clone())],
        )
        .map_err(err)?;
    Ok(answer)
}

/// Every passage once, in FILL's order: the spine's passages first, then
/// each branch's not yet met; with the arc it is written along and its
/// place on it.
pub(crate) fn order(graph: &Graph) -> Result<Vec<(String, (String, usize))>, String> {
    let mut arcs = graph.nodes(NodeType::Arc).map_err(err)?;
    arcs.sort_by_key(|a| (a.str("type") != Some("spine"), a.id.clone()));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for arc in &arcs {
        for (i, p) in arc.strings("passages").into_iter().enumerate() {
            if seen.insert(p.clone()) {
                out.push((p, (arc.id.clone(), i)));
            }
        }
    }
    // Passages on no arc (none, after GROW) still get written.
    for p in graph.nodes(NodeType::Passage).map_err(err)? {
        if seen.insert(p.id.clone()) {
            out.push((p.id, (String::new(), 0)));
        }
    }
    Ok(out)
}

/// A passage's beats, in order (several for a passage merged from a run).
pub(crate) fn beat_ids(passage: &Node) -> Vec<String> {
    match passage.data.get("from_beats") {
        Some(b) => super::graph::strings(Some(b)),
        None => passage
            .str("from_beat")
            .map(str::to_owned)
            .into_iter()
            .collect(),
    }
}

/// The scene types of a passage's beats, in order.
pub(crate) fn scene_types(graph: &Graph, passage: &Node) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for b in beat_ids(passage) {
        let t = graph
            .node(&b)
            .map_err(err)?
            .and_then(|n| n.str("scene_type").map(str::to_owned))
            .unwrap_or_else(|| "scene".to_owned());
        out.push(t);
    }
    Ok(out)
}

/// The voice as the prose and review prompts read it: every field there
/// (an author's edit may have removed one), the exemplar as its text.
fn voice_vars(voice: &Value) -> Value {
    let mut v = voice.clone();
    for (key, default) in [
        ("pov", json!("third_limited")),
        ("pov_character", Value::Null),
        ("tense", json!("past")),
        ("register", json!("plain")),
        ("sentence_rhythm", json!("varied")),
        ("tone_words", json!([])),
        ("avoid_words", json!([])),
        ("avoid_patterns", json!([])),
    ] {
        if v.get(key).is_none() {
            v[key] = default;
        }
    }
    v["exemplar"] = voice["exemplar"]["text"].clone();
    v
}

/// Everything one passage's call needs, read from the graph.
struct World {
    voice: Value,
    passages: BTreeMap<String, Node>,
    beats: BTreeMap<String, Node>,
    entities: BTreeMap<String, Node>,
    /// passage → entities appearing (in order).
    appears: BTreeMap<String, Vec<String>>,
    /// (from, to) → what that choice grants.
    grants: BTreeMap<(String, String), Vec<String>>,
    /// passage → the passages whose choices lead to it.
    arrivals: BTreeMap<String, Vec<String>>,
    arcs: BTreeMap<String, Vec<String>>,
    /// beat → the shadows of its paths' dilemmas.
    shadows: BTreeMap<String, Vec<String>>,
}

impl World {
    fn read(graph: &Graph) -> Result<Self, String> {
        let by_id = |kind| -> Result<BTreeMap<String, Node>, String> {
            Ok(graph
                .nodes(kind)
                .map_err(err)?
                .into_iter()
                .map(|n| (n.id.clone(), n))
                .collect())
        };
        let voice = graph
            .node("voice")
            .map_err(err)?
            .map(|v| Value::Object(v.data))
            .ok_or("FILL has no voice document: run FILL from its start (`loreloom author rollback DIR fill`)")?;
        let mut appears: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in graph.edges(EdgeType::Appears).map_err(err)? {
            appears.entry(e.to).or_default().push(e.from);
        }
        let mut grants = BTreeMap::new();
        let mut arrivals: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in graph.edges(EdgeType::Choice).map_err(err)? {
            arrivals
                .entry(c.to.clone())
                .or_default()
                .push(c.from.clone());
            grants.insert((c.from, c.to), super::graph::strings(c.data.get("grants")));
        }
        let arcs = graph
            .nodes(NodeType::Arc)
            .map_err(err)?
            .into_iter()
            .map(|a| (a.id.clone(), a.strings("passages")))
            .collect();
        // Shadows: the unexplored answers of the dilemmas a beat's paths explore.
        let answers = by_id(NodeType::Answer)?;
        let unexplored: BTreeMap<String, Vec<String>> = by_id(NodeType::Dilemma)?
            .into_iter()
            .map(|(id, d)| {
                let texts = d
                    .strings("unexplored")
                    .into_iter()
                    .map(|a| {
                        answers
                            .get(&a)
                            .and_then(|n| n.str("description"))
                            .map_or(a, str::to_owned)
                    })
                    .collect();
                (id, texts)
            })
            .collect();
        let paths = by_id(NodeType::Path)?;
        let mut shadows: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in graph.edges(EdgeType::BelongsTo).map_err(err)? {
            let texts = paths
                .get(&e.to)
                .and_then(|p| p.str("dilemma_id"))
                .and_then(|d| unexplored.get(d));
            let list = shadows.entry(e.from).or_default();
            for text in texts.into_iter().flatten() {
                if !list.contains(text) {
                    list.push(text.clone());
                }
            }
        }
        Ok(Self {
            voice,
            passages: by_id(NodeType::Passage)?,
            beats: by_id(NodeType::Beat)?,
            entities: by_id(NodeType::Entity)?,
            appears,
            grants,
            arrivals,
            arcs,
            shadows,
        })
    }

    /// Takes in the field changes FILL just applied to passages and entities,
    /// so the next call sees them without reading the graph again.
    fn absorb(&mut self, changes: &[Mutation]) {
        for change in changes {
            let Mutation::Update { id, fields } = change else {
                continue;
            };
            let node = if let Some(n) = self.passages.get_mut(id) {
                n
            } else if let Some(n) = self.entities.get_mut(id) {
                n
            } else {
                continue;
            };
            node.data.extend(fields.clone());
        }
    }

    fn prose(&self, id: &str) -> Option<&str> {
        self.passages
            .get(id)
            .and_then(|p| p.str("prose"))
            .filter(|p| !p.trim().is_empty())
    }

    fn summary(&self, id: &str) -> &str {
        self.passages
            .get(id)
            .and_then(|p| p.str("summary"))
            .unwrap_or_default()
    }

    fn beats_of(&self, id: &str) -> Vec<&Node> {
        let Some(p) = self.passages.get(id) else {
            return Vec::new();
        };
        beat_ids(p)
            .iter()
            .filter_map(|b| self.beats.get(b))
            .collect()
    }

    /// The codewords a reader holds on arriving at place `at` of `arc`.
    fn held(&self, arc: &str, at: usize) -> BTreeSet<String> {
        let mut held = BTreeSet::new();
        if let Some(passages) = self.arcs.get(arc) {
            for pair in passages[..=at.min(passages.len().saturating_sub(1))].windows(2) {
                if let Some(g) = self.grants.get(&(pair[0].clone(), pair[1].clone())) {
                    held.extend(g.iter().cloned());
                }
            }
        }
        held
    }

    /// An entity's details under `held` (seed 000 state resolution: base,
    /// then the overlays whose codewords are all held, most specific last).
    fn state(entity: &Node, held: &BTreeSet<String>) -> serde_json::Map<String, Value> {
        let mut details = entity
            .data
            .get("base")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut overlays: Vec<(usize, usize, &serde_json::Map<String, Value>)> = entity
            .data
            .get("overlays")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, o)| {
                let when = super::graph::strings(o.get("when"));
                (when.iter().all(|w| held.contains(w)))
                    .then(|| o["details"].as_object().map(|d| (when.len(), i, d)))
                    .flatten()
            })
            .collect();
        overlays.sort_by_key(|(n, i, _)| (*n, *i));
        for (_, _, d) in overlays {
            details.extend(d.clone());
        }
        details
    }
}

/// The prose call's variables and the rules its answer is checked by.
fn context(world: &World, id: &str, arc: &str, at: usize) -> (Value, Rules) {
    let beats = world.beats_of(id);
    let types: Vec<&str> = beats
        .iter()
        .map(|b| b.str("scene_type").unwrap_or("scene"))
        .collect();
    let (least, most) = fill::merged_band(types.iter().copied());
    let held = world.held(arc, at);
    let entities: Vec<Value> = world
        .appears
        .get(id)
        .into_iter()
        .flatten()
        .filter_map(|e| world.entities.get(e))
        .map(|e| json!({"id": e.id, "name": e.str("name").unwrap_or(&e.id), "details": World::state(e, &held)}))
        .collect();
    let mut shadows: Vec<String> = Vec::new();
    for b in &beats {
        for s in world.shadows.get(&b.id).into_iter().flatten() {
            if !shadows.contains(s) {
                shadows.push(s.clone());
            }
        }
    }
    let on_arc = world.arcs.get(arc).cloned().unwrap_or_default();
    let before: Vec<String> = on_arc[..at.min(on_arc.len())]
        .iter()
        .rev()
        .filter_map(|p| world.prose(p).map(str::to_owned))
        .take(WINDOW)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    // Lookahead: what it leads into (its prose if written, else its summary).
    let after = on_arc.get(at + 1).map(|next| {
        world.prose(next).map_or_else(
            || world.summary(next).to_owned(),
            |p| p.chars().take(LOOKAHEAD_CHARS).collect(),
        )
    });
    let previous = at.checked_sub(1).and_then(|i| on_arc.get(i));
    let arrivals: Vec<String> = world
        .arrivals
        .get(id)
        .into_iter()
        .flatten()
        .filter(|from| Some(*from) != previous)
        .take(LISTED)
        .map(|from| world.summary(from).to_owned())
        .collect();
    let mut neighbours = before.clone();
    neighbours.extend(after.iter().cloned());
    let rules = Rules {
        words: (least, most),
        pov: world.voice["pov"].as_str().unwrap_or_default().to_owned(),
        tense: world.voice["tense"].as_str().unwrap_or_default().to_owned(),
        avoid_words: super::graph::strings(world.voice.get("avoid_words")),
        neighbours,
        summaries: beats
            .iter()
            .filter_map(|b| b.str("summary").map(str::to_owned))
            .collect(),
    };
    let vars = json!({
        "voice": voice_vars(&world.voice),
        "beats": beats.iter().zip(&types).map(|(b, t)| json!({"summary": b.str("summary").unwrap_or_default(), "scene_type": t})).collect::<Vec<_>>(),
        "words": {"least": least, "most": most},
        "entities": entities,
        "shadows": shadows,
        "before": before,
        "after": after,
        "arrivals": arrivals,
        "revise": Value::Null,
    });
    (vars, rules)
}

/// One draft: the model's prose (trimmed), its entity updates, and its problems.
struct Draft {
    prose: String,
    updates: Vec<Value>,
    problems: Vec<Problem>,
}

fn draft(ask: &mut Ask, vars: &Value, rules: &Rules) -> Result<Draft, String> {
    let answer = ask("author/fill_prose", vars.clone())?;
    let prose = answer["prose"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let problems = fill::check(&prose, rules);
    Ok(Draft {
        prose,
        updates: answer["entity_updates"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
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
) -> Result<bool, String> {
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
    let shown: Vec<String> = world.appears.get(id).cloned().unwrap_or_default();
    let mut touched: BTreeMap<String, serde_json::Map<String, Value>> = BTreeMap::new();
    for u in &best.updates {
        let (Some(e), Some(field), Some(value)) =
            (u["id"].as_str(), u["field"].as_str(), u["value"].as_str())
        else {
            continue;
        };
        let Some(entity) = world
            .entities
            .get(e)
            .filter(|_| shown.iter().any(|s| s == e))
        else {
            report.notes.push(format!(
                "`{id}`: an update of `{e}`, which the passage does not show (FILL never makes entities), left out"
            ));
            continue;
        };
        let base = touched.entry(e.to_owned()).or_insert_with(|| {
            entity
                .data
                .get("base")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        });
        let field = field.trim().to_lowercase().replace(' ', "_");
        if !base.contains_key(&field) {
            base.insert(field, json!(value.trim()));
        }
    }
    for (e, base) in touched {
        changes.push(Mutation::update(e.clone(), json!({"base": base})));
    }
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
    graph
        .apply(Stage::Fill, phase, &why, &changes)
        .map_err(err)?;
    world.absorb(&changes);
    Ok(true)
}

/// Phase 1, 2 and 3: every passage without prose is written (one call
/// each, in FILL's order; a run stopped half-way picks up where it was),
/// then up to [`MAX_CYCLES`] cycles of review (the checks' flags and the
/// model's, window by window) and revision of what was flagged.
pub fn prose(graph: &mut Graph, ask: &mut Ask) -> Result<Report, String> {
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
        match ask(
            "author/fill_review",
            json!({"voice": voice_vars(&world.voice), "passages": passages}),
        ) {
            Ok(answer) => {
                for f in answer["flags"].as_array().into_iter().flatten() {
                    let n = f["n"].as_u64().and_then(|n| usize::try_from(n).ok());
                    if let (Some(id), Some(issue)) = (
                        n.and_then(|n| window.get(n.wrapping_sub(1))),
                        f["issue"].as_str(),
                    ) {
                        flagged
                            .entry((*id).clone())
                            .or_default()
                            .push(issue.to_owned());
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
