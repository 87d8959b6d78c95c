//! DRESS on a project's graph (seed 000 Stage 6): the art direction and each shown entity's visual profile (gate 1); an illustration brief per passage with the hybrid priority score and each entity's codex tiers (gate 2, where the author sets the image budget); the sample illustration (its own gate), then the rest, through an `Illustrator`, each picture a content-addressed asset. DRESS reads the story and decorates it: it never changes prose, passages, choices or entities.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use super::dress::{
    self, BriefText, Budget, CodexProblem, Direction, Figure, Gated, Judgement, Position, Ranked,
    Tier,
};
use super::fill_stage::{Ask, beat_ids, err, order};
use super::graph::{Graph, GraphError, Mutation, Node};
use super::illustrate::{self, Illustrator};
use super::model::{EdgeType, NodeType, Stage};
use super::stages::with_notes;

/// Retries of an entity's codex after the first answer (seed: at most 2).
pub const CODEX_RETRIES: usize = 2;
/// The id of the art direction node.
pub const ART_DIRECTION: &str = "art_direction";

/// What a DRESS run did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    pub visuals: usize,
    pub briefs: usize,
    /// Briefs per priority: 1, 2, 3 and skipped.
    pub priorities: [usize; 4],
    pub codex_entries: usize,
    /// Illustrations drawn by this run.
    pub drawn: Vec<String>,
    /// Briefs whose picture the provider could not draw.
    pub failed: Vec<String>,
    /// Whether the stage has nothing left to draw after this run.
    pub done: bool,
    pub notes: Vec<String>,
}

/// The part of an id after its `kind::` prefix.
fn short(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, rest)| rest)
}

fn kept_entities(graph: &Graph) -> Result<Vec<Node>, String> {
    Ok(graph
        .nodes(NodeType::Entity)
        .map_err(err)?
        .into_iter()
        .filter(|e| e.str("disposition") != Some("cut"))
        .collect())
}

/// passage → the entities it shows, in the graph's order.
fn appearances(graph: &Graph) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in graph.edges(EdgeType::Appears).map_err(err)? {
        out.entry(e.to).or_default().push(e.from);
    }
    Ok(out)
}

fn details_text(node: &Node) -> Value {
    node.data.get("base").cloned().unwrap_or_else(|| json!({}))
}

/// Sub-stage 1: the art direction and a visual profile for every entity a
/// passage shows, from the discussion's brief. A profile the model left
/// out is made from the entity's own words (and said); one for an entity
/// the story does not show is dropped.
pub fn art(graph: &mut Graph, brief: &str, ask: &mut Ask) -> Result<Report, String> {
    let vision = graph
        .node("vision")
        .map_err(err)?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let voice = graph
        .node("voice")
        .map_err(err)?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let shown: BTreeSet<String> = appearances(graph)?.into_values().flatten().collect();
    let entities: Vec<Node> = kept_entities(graph)?
        .into_iter()
        .filter(|e| shown.contains(&e.id))
        .collect();
    let listed: Vec<Value> = entities
        .iter()
        .map(|e| {
            json!({"id": e.id, "name": e.str("name").unwrap_or(&e.id), "type": e.str("type").unwrap_or("character"),
                   "concept": e.str("concept"), "details": details_text(e)})
        })
        .collect();
    let answer = ask(
        "author/dress_art",
        json!({"brief": brief, "vision": vision, "voice": voice, "entities": listed}),
    )?;
    let mut notes = Vec::new();
    let mut aspect = answer["aspect_ratio"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    if dress::aspect(&aspect).is_none() {
        notes.push(format!(
            "the aspect ratio `{aspect}` is not W:H; 16:9 is used"
        ));
        aspect = "16:9".into();
    }
    let proposed: Vec<String> = super::graph::strings(answer.get("palette"));
    let (palette, dropped) = dress::usable_palette(&proposed);
    if !dropped.is_empty() {
        notes.push(format!(
            "palette entries that name no colour were dropped: {}{}",
            dropped
                .iter()
                .map(|d| format!("\"{d}\""))
                .collect::<Vec<_>>()
                .join(", "),
            if palette.is_empty() {
                " (none left: pictures take their colours from the mood; set a palette at the gate)"
            } else {
                ""
            }
        ));
    }
    let direction = json!({
        "style": answer["style"], "medium": answer["medium"], "palette": palette,
        "composition_notes": answer["composition_notes"],
        "negative_defaults": answer["negative_defaults"], "aspect_ratio": aspect,
    });
    let mut changes = vec![Mutation::create(
        ART_DIRECTION,
        NodeType::ArtDirection,
        direction,
    )];
    let mut given: BTreeMap<String, Value> = BTreeMap::new();
    for v in answer["visuals"].as_array().into_iter().flatten() {
        let id = v["entity"].as_str().unwrap_or_default();
        let known = entities.iter().find(|e| e.id == id || short(&e.id) == id);
        match known {
            Some(e) if !given.contains_key(&e.id) => {
                given.insert(e.id.clone(), v.clone());
            }
            Some(_) => notes.push(format!("a second profile for `{id}` (the first kept)")),
            None => notes.push(format!(
                "a profile for `{id}`, which no passage shows (dropped)"
            )),
        }
    }
    let mut visuals = 0;
    for e in &entities {
        let name = e.str("name").unwrap_or(&e.id).to_owned();
        let mut profile = given.remove(&e.id).unwrap_or_else(|| {
            notes.push(format!(
                "no profile for `{}`; made from its concept (edit it at the gate)",
                e.id
            ));
            json!({"description": e.str("concept").unwrap_or(&name), "distinguishing_features": [],
                   "color_associations": [], "reference_prompt_fragment": ""})
        });
        if profile["reference_prompt_fragment"]
            .as_str()
            .is_none_or(|f| f.trim().is_empty())
        {
            // Seed: never empty; the entity's own words stand in.
            let concept = e.str("concept").unwrap_or_default();
            profile["reference_prompt_fragment"] = json!(if concept.is_empty() {
                name.clone()
            } else {
                format!("{name}, {concept}")
            });
        }
        if let Some(o) = profile.as_object_mut() {
            o.remove("entity");
        }
        let id = format!("visual::{}", short(&e.id));
        changes.push(Mutation::create(
            id.clone(),
            NodeType::EntityVisual,
            profile,
        ));
        changes.push(Mutation::link(EdgeType::DescribesVisual, id, e.id.clone()));
        visuals += 1;
    }
    let why = with_notes(
        "the art direction and each shown entity's visual profile",
        &notes,
    );
    graph
        .apply(Stage::Dress, "art", &why, &changes)
        .map_err(err)?;
    Ok(Report {
        visuals,
        notes,
        ..Report::default()
    })
}

/// Where every passage stands, for its brief's structural score.
fn positions(graph: &Graph) -> Result<BTreeMap<String, Position>, String> {
    let passages: BTreeMap<String, Node> = graph
        .nodes(NodeType::Passage)
        .map_err(err)?
        .into_iter()
        .map(|p| (p.id.clone(), p))
        .collect();
    let mut out: BTreeMap<String, Position> = passages
        .keys()
        .map(|p| (p.clone(), Position::default()))
        .collect();
    let arcs = graph.nodes(NodeType::Arc).map_err(err)?;
    let spine: BTreeSet<String> = arcs
        .iter()
        .filter(|a| a.str("type") == Some("spine"))
        .flat_map(|a| a.strings("passages"))
        .collect();
    for arc in arcs.iter().filter(|a| a.str("type") != Some("spine")) {
        if let Some(first) = arc
            .strings("passages")
            .into_iter()
            .find(|p| !spine.contains(p))
            && let Some(pos) = out.get_mut(&first)
        {
            pos.branch_opening = true;
        }
    }
    let mut leads_out = BTreeSet::new();
    let mut before: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in graph.edges(EdgeType::Choice).map_err(err)? {
        leads_out.insert(c.from.clone());
        before.entry(c.to).or_default().push(c.from);
    }
    let types: BTreeMap<String, String> = graph
        .nodes(NodeType::Entity)
        .map_err(err)?
        .into_iter()
        .map(|e| (e.id.clone(), e.str("type").unwrap_or_default().to_owned()))
        .collect();
    let shows = appearances(graph)?;
    let places = |p: &str| -> BTreeSet<&String> {
        shows
            .get(p)
            .into_iter()
            .flatten()
            .filter(|e| types.get(*e).map(String::as_str) == Some("location"))
            .collect()
    };
    let mut beats: BTreeMap<String, Node> = BTreeMap::new();
    for b in graph.nodes(NodeType::Beat).map_err(err)? {
        beats.insert(b.id.clone(), b);
    }
    for (id, pos) in &mut out {
        pos.spine = spine.contains(id);
        pos.ending = !leads_out.contains(id);
        let mine = places(id);
        let earlier: BTreeSet<&String> = before
            .get(id)
            .into_iter()
            .flatten()
            .flat_map(|p| places(p))
            .collect();
        pos.new_location = mine.iter().any(|l| !earlier.contains(l));
        let its: Vec<&Node> = beat_ids(&passages[id])
            .iter()
            .filter_map(|b| beats.get(b))
            .collect();
        pos.climax = its.iter().any(|b| {
            b.data
                .get("dilemma_impacts")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|i| i["effect"] == "commits"))
        });
        pos.transition = !its.is_empty()
            && its.iter().all(|b| {
                b.data.get("is_gap_beat") == Some(&json!(true))
                    || b.str("scene_type") == Some("micro_beat")
            });
    }
    Ok(out)
}

/// The position in words, for the brief's prompt.
fn position_words(pos: &Position) -> Vec<&'static str> {
    [
        (pos.spine, "on the main line of the story"),
        (pos.branch_opening, "where a branch opens"),
        (pos.ending, "an ending"),
        (pos.climax, "where a dilemma is decided"),
        (pos.new_location, "the first sight of a place"),
        (pos.transition, "a short bridge between scenes"),
    ]
    .into_iter()
    .filter_map(|(on, words)| on.then_some(words))
    .collect()
}

/// Each entity's visual profile, by entity id.
fn visuals(graph: &Graph) -> Result<BTreeMap<String, Node>, String> {
    let mut out = BTreeMap::new();
    for e in graph.edges(EdgeType::DescribesVisual).map_err(err)? {
        if let Some(v) = graph.node(&e.from).map_err(err)? {
            out.insert(e.to, v);
        }
    }
    Ok(out)
}

/// Sub-stage 2: a brief per passage (2a), then each entity's codex (2b).
pub fn briefs(graph: &mut Graph, ask: &mut Ask) -> Result<Report, String> {
    let mut report = Report::default();
    let art = graph
        .node(ART_DIRECTION)
        .map_err(err)?
        .ok_or("the graph has no art direction: DRESS's first run writes it")?;
    let voice = graph
        .node("voice")
        .map_err(err)?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let positions = positions(graph)?;
    let appearing = appearances(graph)?;
    let profiles = visuals(graph)?;
    let entities: BTreeMap<String, Node> = kept_entities(graph)?
        .into_iter()
        .map(|e| (e.id.clone(), e))
        .collect();
    let art_vars = Value::Object(art.data.clone());
    for (passage_id, _) in order(graph)? {
        let Some(passage) = graph.node(&passage_id).map_err(err)? else {
            continue;
        };
        let pos = positions.get(&passage_id).cloned().unwrap_or_default();
        let shown: Vec<&Node> = appearing
            .get(&passage_id)
            .into_iter()
            .flatten()
            .filter_map(|e| entities.get(e))
            .collect();
        let listed: Vec<Value> = shown
            .iter()
            .map(|e| {
                let profile = profiles.get(&e.id);
                json!({"name": e.str("name").unwrap_or(&e.id), "type": e.str("type").unwrap_or("character"),
                       "description": profile.and_then(|v| v.str("description")),
                       "fragment": profile.and_then(|v| v.str("reference_prompt_fragment")).unwrap_or_default()})
            })
            .collect();
        let prose = passage
            .str("prose")
            .filter(|p| !p.trim().is_empty())
            .or_else(|| passage.str("summary"))
            .unwrap_or_default();
        let mut problems: Vec<String> = Vec::new();
        let mut brief = Value::Null;
        let mut first_caption: Option<String> = None;
        // One answer, and one more if its caption speaks about the picture.
        for _ in 0..2 {
            let vars = json!({
                "art": art_vars, "tone": voice["tone_words"],
                "passage": {"prose": prose, "summary": passage.str("summary"), "position": position_words(&pos)},
                "entities": listed, "problems": problems,
            });
            brief = ask("author/dress_brief", vars)?;
            let Some(problem) = brief["caption"].as_str().and_then(dress::caption_problem) else {
                problems.clear();
                break;
            };
            first_caption
                .get_or_insert_with(|| brief["caption"].as_str().unwrap_or_default().to_owned());
            problems = vec![problem];
        }
        let mut notes = Vec::new();
        if let Some(first) = &first_caption {
            notes.push(format!(
                "{passage_id}: the first caption would not do (\"{first}\"); asked again"
            ));
        }
        if !problems.is_empty() {
            notes.push(format!(
                "{passage_id}: the caption still would not do after a retry; the brief has no caption (write one at the gate)"
            ));
            brief["caption"] = json!("");
        }
        let judgement: Judgement = serde_json::from_value(brief.clone()).unwrap_or_default();
        let (base, reasons) = pos.base();
        let score = base + judgement.adjustment();
        let priority = dress::priority(score);
        report.priorities[priority.map_or(3, |p| usize::from(p) - 1)] += 1;
        let mut why_score: Vec<String> = reasons.iter().map(|r| (*r).to_owned()).collect();
        for (on, name) in [
            (judgement.visually_striking, "striking +1"),
            (judgement.emotionally_pivotal, "pivotal +1"),
            (judgement.dialogue_heavy, "dialogue -1"),
        ] {
            if on {
                why_score.push(name.to_owned());
            }
        }
        let id = format!("brief::{}", short(&passage_id));
        let data = json!({
            "category": brief["category"], "subject": brief["subject"],
            "composition": brief["composition"], "mood": brief["mood"],
            "negative": brief["negative"], "caption": brief["caption"],
            "style_overrides": {},
            "entities": shown.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
            "score": score, "score_reasons": why_score,
            "priority": priority.map_or_else(|| json!("skip"), |p| json!(p)),
        });
        let why = with_notes(
            &format!("the illustration brief of {passage_id} (score {score})"),
            &notes,
        );
        graph
            .apply(
                Stage::Dress,
                "briefs",
                &why,
                &[
                    Mutation::create(id.clone(), NodeType::IllustrationBrief, data),
                    Mutation::link(EdgeType::Targets, id, passage_id.clone()),
                ],
            )
            .map_err(err)?;
        report.notes.extend(notes);
        report.briefs += 1;
    }
    codex(graph, &entities, &voice, ask, &mut report)?;
    Ok(report)
}

/// The codewords that may gate an entity's tiers, with what each means:
/// those its overlays are shown under, and those tracking a consequence
/// of a dilemma that involves it.
fn entity_codewords(
    graph: &Graph,
    entity: &Node,
    codewords: &[Node],
) -> Result<Vec<(String, String)>, String> {
    let mut ids: BTreeSet<String> = entity
        .data
        .get("overlays")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|o| super::graph::strings(o.get("when")))
        .collect();
    let dilemmas: BTreeSet<String> = graph
        .edges(EdgeType::DilemmaInvolves)
        .map_err(err)?
        .into_iter()
        .filter(|e| e.to == entity.id)
        .map(|e| e.from)
        .collect();
    for c in codewords {
        let dilemma = field_of(graph, c.str("path"), "dilemma_id")?;
        if dilemma.is_some_and(|d| dilemmas.contains(&d)) {
            ids.insert(c.id.clone());
        }
    }
    let mut out = Vec::new();
    for id in ids {
        let Some(c) = codewords.iter().find(|c| c.id == id) else {
            continue;
        };
        let meaning = field_of(graph, c.str("tracks"), "description")?;
        out.push((
            id,
            meaning.unwrap_or_else(|| short(&c.id).replace('_', " ")),
        ));
    }
    Ok(out)
}

/// A text field of the node `id` names, if both are there.
fn field_of(graph: &Graph, id: Option<&str>, field: &str) -> Result<Option<String>, String> {
    let Some(id) = id else { return Ok(None) };
    Ok(graph
        .node(id)
        .map_err(err)?
        .and_then(|n| n.str(field).map(str::to_owned)))
}

/// An entity's details that only some codewords show (its overlays').
fn gated_details(entity: &Node) -> Vec<Gated> {
    let mut out = Vec::new();
    for o in entity
        .data
        .get("overlays")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let when = super::graph::strings(o.get("when"));
        for v in o
            .get("details")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|d| d.values())
        {
            if let Some(text) = v.as_str() {
                out.push(Gated {
                    when: when.clone(),
                    text: text.to_owned(),
                });
            }
        }
    }
    out
}

/// Sub-stage 2b: each entity's tiers, checked, retried at most twice with
/// the problems said; then rank 1 alone (its own, or the entity's concept).
fn codex(
    graph: &mut Graph,
    entities: &BTreeMap<String, Node>,
    voice: &Value,
    ask: &mut Ask,
    report: &mut Report,
) -> Result<(), String> {
    let vision = graph
        .node("vision")
        .map_err(err)?
        .map_or_else(|| json!({}), |v| Value::Object(v.data));
    let codewords = graph.nodes(NodeType::Codeword).map_err(err)?;
    for entity in entities.values() {
        let related = entity_codewords(graph, entity, &codewords)?;
        let allowed: BTreeSet<String> = related.iter().map(|(c, _)| c.clone()).collect();
        let gated = gated_details(entity);
        let name = entity.str("name").unwrap_or(&entity.id).to_owned();
        let vars_entity = json!({
            "name": name, "type": entity.str("type").unwrap_or("character"),
            "concept": entity.str("concept"), "details": details_text(entity),
            "overlays": entity.data.get("overlays").cloned().unwrap_or_else(|| json!([])),
        });
        let listed: Vec<Value> = related
            .iter()
            .map(|(id, meaning)| json!({"id": id, "meaning": meaning}))
            .collect();
        let mut problems: Vec<CodexProblem> = Vec::new();
        let mut tiers: Vec<Tier> = Vec::new();
        let mut retried: Vec<String> = Vec::new();
        for attempt in 0..=CODEX_RETRIES {
            if attempt > 0 {
                retried.extend(problems.iter().map(ToString::to_string));
            }
            let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
            let answer = ask(
                "author/dress_codex",
                json!({"entity": vars_entity, "codewords": listed, "vision": vision,
                       "voice": voice, "problems": said}),
            )?;
            tiers = serde_json::from_value(answer["tiers"].clone()).unwrap_or_default();
            problems = dress::check_codex(&mut tiers, &allowed, &gated);
            if problems.is_empty() {
                break;
            }
        }
        let mut why = format!(
            "{}'s codex: {} tier{}",
            entity.id,
            tiers.len(),
            if tiers.len() == 1 { "" } else { "s" }
        );
        if !retried.is_empty() {
            why = format!("{why} (asked again: {})", retried.join("; "));
        }
        if !problems.is_empty() {
            let first_ok = !tiers.is_empty()
                && !problems.iter().any(|p| {
                    matches!(
                        p,
                        CodexProblem::FirstGated
                            | CodexProblem::Empty(1)
                            | CodexProblem::Meta { rank: 1, .. }
                            | CodexProblem::Spoiler { rank: 1, .. }
                    )
                });
            let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
            tiers.truncate(1);
            if !first_ok {
                tiers = vec![Tier {
                    rank: 1,
                    visible_when: Vec::new(),
                    title: None,
                    content: entity.str("concept").unwrap_or(&name).to_owned(),
                }];
            }
            let note = format!(
                "{}: the tiers still had problems after {CODEX_RETRIES} retries ({}); rank 1 only{}",
                entity.id,
                said.join("; "),
                if first_ok {
                    ""
                } else {
                    ", from its concept (rewrite it at the gate)"
                }
            );
            why = format!("{why}; {note}");
            report.notes.push(note);
        }
        let mut changes = Vec::new();
        for t in &tiers {
            let id = format!("codex::{}::{}", short(&entity.id), t.rank);
            changes.push(Mutation::create(
                id.clone(),
                NodeType::CodexEntry,
                json!({"rank": t.rank, "visible_when": t.visible_when, "title": t.title, "content": t.content}),
            ));
            changes.push(Mutation::link(EdgeType::HasEntry, id, entity.id.clone()));
        }
        graph
            .apply(Stage::Dress, "codex", &why, &changes)
            .map_err(err)?;
        report.codex_entries += tiers.len();
    }
    Ok(())
}

/// The briefs, ranked for the budget.
pub fn ranked_briefs(graph: &Graph) -> Result<Vec<Ranked>, GraphError> {
    let mut out: Vec<Ranked> = graph
        .nodes(NodeType::IllustrationBrief)?
        .into_iter()
        .map(|b| Ranked {
            priority: b
                .data
                .get("priority")
                .and_then(Value::as_u64)
                .and_then(|p| u8::try_from(p).ok()),
            score: b
                .data
                .get("score")
                .and_then(Value::as_i64)
                .and_then(|s| i32::try_from(s).ok())
                .unwrap_or(0),
            id: b.id,
        })
        .collect();
    dress::rank(&mut out);
    Ok(out)
}

/// The author's budget, as kept at gate 2.
pub fn budget(graph: &Graph) -> Result<Option<Budget>, String> {
    graph
        .meta(dress::BUDGET_KEY)
        .map_err(err)?
        .and_then(|v| v.as_str().map(str::to_owned))
        .map(|s| s.parse())
        .transpose()
}

/// What every brief's prompt reads, read once per run: the art direction,
/// the visual profiles and each entity's type.
struct Prompter {
    direction: Direction,
    profiles: BTreeMap<String, Node>,
    kinds: BTreeMap<String, String>,
}

impl Prompter {
    fn read(graph: &Graph) -> Result<Self, String> {
        let art = graph
            .node(ART_DIRECTION)
            .map_err(err)?
            .ok_or("the graph has no art direction")?;
        let direction = serde_json::from_value(Value::Object(art.data))
            .map_err(|e| format!("the art direction: {e}"))?;
        let kinds = graph
            .nodes(NodeType::Entity)
            .map_err(err)?
            .into_iter()
            .filter_map(|e| Some((e.id.clone(), e.str("type")?.to_owned())))
            .collect();
        Ok(Self {
            direction,
            profiles: visuals(graph)?,
            kinds,
        })
    }

    /// The prompt for one brief (seed ).
    fn prompt(&self, brief: &Node) -> Result<dress::ImagePrompt, String> {
        let text: BriefText = serde_json::from_value(Value::Object(brief.data.clone()))
            .map_err(|e| format!("{}: {e}", brief.id))?;
        let figures = brief
            .strings("entities")
            .into_iter()
            .map(|e| {
                let profile = self.profiles.get(&e);
                Figure {
                    colours: profile
                        .map(|p| p.strings("color_associations"))
                        .unwrap_or_default(),
                    fragment: profile
                        .and_then(|p| p.str("reference_prompt_fragment"))
                        .unwrap_or_default()
                        .to_owned(),
                    kind: self
                        .kinds
                        .get(&e)
                        .cloned()
                        .unwrap_or_else(|| "character".into()),
                    entity: e,
                }
            })
            .collect();
        Ok(dress::image_prompt(
            &brief.id,
            &self.direction,
            &text,
            figures,
        ))
    }
}

/// Sub-stage 3: draws the budget's briefs not drawn yet: only the best one
/// when `sample` (seed: the style is confirmed on one picture before
/// the batch), else all the others; a picture the provider cannot draw is
/// said and skipped (no retry). After the batch, files in `assets/` no
/// illustration uses are removed.
pub fn draw(
    graph: &mut Graph,
    dir: &Path,
    provider: &dyn Illustrator,
    sample: bool,
) -> Result<Report, String> {
    let mut report = Report::default();
    let budget = budget(graph)?.ok_or(
        "no image budget: the author sets it at DRESS's gate 2 (`loreloom author approve DIR --render …`)",
    )?;
    let chosen = budget.select(&ranked_briefs(graph).map_err(err)?);
    let drawn: BTreeSet<String> = graph
        .edges(EdgeType::FromBrief)
        .map_err(err)?
        .into_iter()
        .map(|e| e.to)
        .collect();
    let todo: Vec<String> = chosen.into_iter().filter(|b| !drawn.contains(b)).collect();
    let take = if sample { 1 } else { todo.len() };
    let prompter = Prompter::read(graph)?;
    for brief_id in todo.iter().take(take) {
        let Some(brief) = graph.node(brief_id).map_err(err)? else {
            continue;
        };
        let Some(passage) = graph
            .targets(EdgeType::Targets, brief_id)
            .map_err(err)?
            .into_iter()
            .next()
        else {
            continue;
        };
        let prompt = prompter.prompt(&brief)?;
        let asset = provider
            .draw(&prompt)
            .and_then(|png| illustrate::store(dir, &png));
        let asset = match asset {
            Ok(asset) => asset,
            Err(e) => {
                tracing::error!(brief = %brief_id, provider = provider.name(), "not drawn: {e}");
                report.notes.push(format!(
                    "{brief_id}: {} could not draw it: {e}",
                    provider.name()
                ));
                report.failed.push(brief_id.clone());
                continue;
            }
        };
        let id = format!("illustration::{}", short(&passage));
        graph
            .apply(
                Stage::Dress,
                if sample { "sample" } else { "draw" },
                &format!("{brief_id} drawn by {}", provider.name()),
                &[
                    Mutation::create(
                        id.clone(),
                        NodeType::Illustration,
                        json!({"asset": asset, "caption": brief.str("caption").unwrap_or_default(),
                               "category": brief.str("category").unwrap_or("scene"),
                               "provider": provider.name(), "prompt": prompt.text,
                               "negative": prompt.negative}),
                    ),
                    Mutation::link(EdgeType::Depicts, id.clone(), passage),
                    Mutation::link(EdgeType::FromBrief, id.clone(), brief_id.clone()),
                ],
            )
            .map_err(err)?;
        report.drawn.push(id);
    }
    report.done = !sample || todo.len() <= 1;
    if report.done {
        let removed = remove_orphans(graph, dir)?;
        if removed > 0 {
            report.notes.push(format!(
                "{removed} pictures in assets/ no illustration uses were removed"
            ));
        }
    }
    Ok(report)
}

/// Removes the files in `dir/assets/` no illustration names.
fn remove_orphans(graph: &Graph, dir: &Path) -> Result<usize, String> {
    let used: BTreeSet<String> = graph
        .nodes(NodeType::Illustration)
        .map_err(err)?
        .iter()
        .filter_map(|i| i.str("asset").map(str::to_owned))
        .collect();
    let assets = dir.join("assets");
    let Ok(entries) = std::fs::read_dir(&assets) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = format!("assets/{}", entry.file_name().to_string_lossy());
        if entry.path().is_file() && !used.contains(&name) {
            std::fs::remove_file(entry.path())
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}
