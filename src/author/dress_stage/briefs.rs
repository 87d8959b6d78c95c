//! DRESS sub-stage 2a: an illustration brief per passage, scored for the image budget.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::codex::codex;
use super::read::{appearances, data_of, kept_entities, short, visuals};
use super::report::Report;
use crate::author::answers::BriefAnswer;
use crate::author::ask::{self, Ask, StageError, with_notes};
use crate::author::diegetic::caption_problem;
use crate::author::dress::{self, ART_DIRECTION, Judgement, Position};
use crate::author::fields;
use crate::author::graph::{Graph, GraphError, Mutation, Node};
use crate::author::ontology::{EdgeType, NodeType, Stage};
use crate::author::reading::{beat_ids, order};

/// Where every passage stands, for its brief's structural score.
fn positions(graph: &Graph) -> Result<BTreeMap<String, Position>, GraphError> {
    let passages: BTreeMap<String, Node> = graph
        .nodes(NodeType::Passage)?
        .into_iter()
        .map(|p| (p.id.clone(), p))
        .collect();
    let mut out: BTreeMap<String, Position> = passages
        .keys()
        .map(|p| (p.clone(), Position::default()))
        .collect();
    let arcs = graph.nodes(NodeType::Arc)?;
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
    for c in graph.edges(EdgeType::Choice)? {
        leads_out.insert(c.from.clone());
        before.entry(c.to).or_default().push(c.from);
    }
    let types: BTreeMap<String, String> = graph
        .nodes(NodeType::Entity)?
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
    for b in graph.nodes(NodeType::Beat)? {
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
        pos.climax = its
            .iter()
            .any(|b| fields::impacts(b).iter().any(fields::Impact::commits));
        pos.transition = !its.is_empty()
            && its
                .iter()
                .all(|b| b.flag("is_gap_beat") || b.str("scene_type") == Some("micro_beat"));
    }
    Ok(out)
}

/// What every brief's prompt reads besides its passage.
struct Briefing {
    art: Value,
    tone: Value,
    profiles: BTreeMap<String, Node>,
}

/// Sub-stage 2: a brief per passage (2a), then each entity's codex (2b).
pub fn briefs(graph: &mut Graph, ask: &mut Ask) -> Result<Report, StageError> {
    let mut report = Report::default();
    let art = graph
        .node(ART_DIRECTION)?
        .ok_or(StageError::NoArtDirection)?;
    let voice = data_of(graph.node("voice")?);
    let positions = positions(graph)?;
    let appearing = appearances(graph)?;
    let briefing = Briefing {
        art: Value::Object(art.data),
        tone: voice.get("tone_words").cloned().unwrap_or(Value::Null),
        profiles: visuals(graph)?,
    };
    let entities: BTreeMap<String, Node> = kept_entities(graph)?
        .into_iter()
        .map(|e| (e.id.clone(), e))
        .collect();
    for (passage_id, _) in order(graph)? {
        let Some(passage) = graph.node(&passage_id)? else {
            continue;
        };
        let pos = positions.get(&passage_id).cloned().unwrap_or_default();
        let shown: Vec<&Node> = appearing
            .get(&passage_id)
            .into_iter()
            .flatten()
            .filter_map(|e| entities.get(e))
            .collect();
        let mut notes = Vec::new();
        let brief = brief(&briefing, &passage, &pos, &shown, ask, &mut notes)?;
        let judgement = Judgement {
            visually_striking: brief.visually_striking,
            emotionally_pivotal: brief.emotionally_pivotal,
            dialogue_heavy: brief.dialogue_heavy,
        };
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
            "category": brief.category, "subject": brief.subject,
            "composition": brief.composition, "mood": brief.mood,
            "negative": brief.negative, "caption": brief.caption,
            "style_overrides": {},
            "entities": shown.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
            "score": score, "score_reasons": why_score,
            "priority": priority.map_or_else(|| json!("skip"), |p| json!(p)),
        });
        let why = with_notes(
            &format!("the illustration brief of {passage_id} (score {score})"),
            &notes,
        );
        graph.apply(
            Stage::Dress,
            "briefs",
            &why,
            &[
                Mutation::create(id.clone(), NodeType::IllustrationBrief, data),
                Mutation::link(EdgeType::Targets, id, passage_id.clone()),
            ],
        )?;
        report.notes.extend(notes);
        report.briefs += 1;
    }
    codex(graph, &entities, &voice, ask, &mut report)?;
    Ok(report)
}

/// One passage's brief: one answer, and one more if its caption speaks about the picture;
/// a caption still wrong after that is left empty for the author (each said in `notes`).
fn brief(
    briefing: &Briefing,
    passage: &Node,
    pos: &Position,
    shown: &[&Node],
    ask: &mut Ask,
    notes: &mut Vec<String>,
) -> Result<BriefAnswer, StageError> {
    let listed: Vec<Value> = shown
        .iter()
        .map(|e| {
            let profile = briefing.profiles.get(&e.id);
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
    let vars = |problems: &[String]| {
        json!({
            "art": briefing.art, "tone": briefing.tone,
            "passage": {"prose": prose, "summary": passage.str("summary"), "position": pos.flags()},
            "entities": listed, "problems": problems,
        })
    };
    let mut brief: BriefAnswer = ask::answer(ask, vars(&[]))?;
    if let Some(problem) = caption_problem(&brief.caption) {
        notes.push(format!(
            "{}: the first caption would not do (\"{}\"); asked again",
            passage.id, brief.caption
        ));
        brief = ask::answer(ask, vars(&[problem]))?;
        if caption_problem(&brief.caption).is_some() {
            notes.push(format!(
                "{}: the caption still would not do after a retry; the brief has no caption (write one at the gate)",
                passage.id
            ));
            brief.caption.clear();
        }
    }
    Ok(brief)
}
