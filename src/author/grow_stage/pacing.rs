//! GROW's pacing (seed 000 Phase 4): a scene type per beat, bridging beats for some gaps.

use std::collections::BTreeMap;

use serde_json::json;

use super::read::{Vision, copied, scene_type};
use crate::author::answers::{Bridge, PacingAnswer, SceneType};
use crate::author::ask::{self, Ask, StageError};
use crate::author::graph::{Graph, Mutation, Node, topological};
use crate::author::grow::{Beat, Seeded};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// The most bridging (gap) beats GROW writes.
pub const MAX_GAPS: usize = 3;
/// The most gaps the model is offered.
const GAP_CANDIDATES: usize = 8;
/// The most beats whose scene type the model sets; the rest keep the engine's.
const PACED_BEATS: usize = 60;

/// The gap GROW bridges first: pacing with no breath in it.
const THREE_SCENES: &str = "three scenes in a row";

/// A place a bridging beat could go: between two beats SEED ordered one
/// right after the other on a path they share.
struct Gap<'a> {
    from: &'a Beat,
    to: &'a Beat,
    paths: Vec<String>,
    why: &'static str,
}

/// Seed 000 Phase 4 (gap detection). The engine guesses each beat's scene
/// type from its impacts and finds the gaps (three scenes in a row; a
/// change of place with nothing between); one bounded model call sets the
/// scene types and writes bridging beats for at most [`MAX_GAPS`] of those
/// gaps. A gap beat lies on the paths both neighbours share, between them,
/// with their people and the place it leads from (or to, on a cut). A
/// failed call keeps the engine's guesses and adds no beat.
pub(super) fn pacing(
    graph: &mut Graph,
    seed: &Seeded,
    ask: &mut Ask,
    notes: &mut Vec<String>,
) -> Result<(), StageError> {
    let beat_nodes: BTreeMap<String, Node> = graph
        .nodes(NodeType::Beat)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let ids: Vec<String> = seed.beats.iter().map(|b| b.id.clone()).collect();
    let weave = topological(&ids, &seed.order);
    let guess: BTreeMap<&str, String> = beat_nodes
        .values()
        .map(|n| {
            let t = n
                .str("scene_type")
                .map_or_else(|| scene_type(n).to_owned(), str::to_owned);
            (n.id.as_str(), t)
        })
        .collect();
    let beat: BTreeMap<&str, &Beat> = seed.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let gaps = gaps(seed, &weave, &guess);

    let paced: Vec<&String> = weave.iter().take(PACED_BEATS).collect();
    let vision = Vision::read(graph)?;
    let vars = json!({
        "genre": vision.genre,
        "tone": vision.tone,
        "beats": paced.iter().enumerate().map(|(i, b)| json!({
            "n": i + 1, "summary": beat[b.as_str()].summary, "scene_type": guess[b.as_str()],
        })).collect::<Vec<_>>(),
        "gaps": gaps.iter().enumerate().map(|(i, g)| json!({
            "n": i + 1, "from": g.from.summary, "to": g.to.summary, "why": g.why,
        })).collect::<Vec<_>>(),
        "most": MAX_GAPS,
    });
    let answer = match ask::answer::<PacingAnswer>(ask, vars) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!(
                "the model did not pace the beats ({e}); each keeps the scene type its impacts suggest, and no bridging beat was added"
            ));
            PacingAnswer::default()
        }
    };
    let mut chosen: BTreeMap<&str, SceneType> = BTreeMap::new();
    for t in &answer.scene_types {
        if let Some(b) = paced.get(t.n.wrapping_sub(1)) {
            chosen.insert(b.as_str(), t.scene_type);
        }
    }
    let mut changes = Vec::new();
    for (id, node) in &beat_nodes {
        let kind = chosen
            .get(id.as_str())
            .map_or(guess[id.as_str()].as_str(), |k| k.name());
        if node.str("scene_type") != Some(kind) {
            changes.push(Mutation::update(id.clone(), json!({"scene_type": kind})));
        }
    }
    let written = bridges(&answer.gaps, &gaps, &beat_nodes, &mut changes);
    let why = if written.is_empty() {
        "a scene type per beat (scene, sequel or micro-beat)".to_owned()
    } else {
        format!(
            "a scene type per beat; bridging beats where {}",
            written
                .iter()
                .map(|(x, y, why)| format!("`{x}` → `{y}` had {why}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(graph.apply(Stage::Grow, "pacing", &why, &changes)?)
}

/// The gaps the engine finds (three scenes in a row first, then in the weave's order), at
/// most [`GAP_CANDIDATES`].
fn gaps<'a>(seed: &'a Seeded, weave: &[String], guess: &BTreeMap<&str, String>) -> Vec<Gap<'a>> {
    let beat: BTreeMap<&str, &Beat> = seed.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let at: BTreeMap<&str, usize> = weave
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_str(), i))
        .collect();
    let is_scene = |id: &str| guess.get(id).is_some_and(|t| t == "scene");
    let mut gaps: Vec<Gap> = Vec::new();
    for (after, before) in &seed.order {
        let (Some(x), Some(y)) = (beat.get(before.as_str()), beat.get(after.as_str())) else {
            continue;
        };
        if x.is_gap || y.is_gap {
            continue;
        }
        let paths: Vec<String> = x
            .paths
            .iter()
            .filter(|p| y.paths.contains(p))
            .cloned()
            .collect();
        if paths.is_empty() {
            continue;
        }
        let three_scenes = is_scene(&x.id)
            && is_scene(&y.id)
            && seed.order.iter().any(|(a, b)| a == &x.id && is_scene(b));
        let why = if three_scenes {
            THREE_SCENES
        } else if x.location.is_some() && y.location.is_some() && x.location != y.location {
            "a change of place with nothing between"
        } else {
            continue;
        };
        gaps.push(Gap {
            from: x,
            to: y,
            paths,
            why,
        });
    }
    gaps.sort_by_key(|g| {
        (
            g.why != THREE_SCENES,
            at[g.to.id.as_str()],
            g.from.id.clone(),
        )
    });
    gaps.truncate(GAP_CANDIDATES);
    gaps
}

/// The bridging beats the model wrote for numbered gaps, checked (a real summary, at most
/// [`MAX_GAPS`], one per gap, not a neighbour's words) and added to `changes`; returns
/// each bridged gap as (from, to, why).
fn bridges(
    written_by_model: &[Bridge],
    gaps: &[Gap],
    beat_nodes: &BTreeMap<String, Node>,
    changes: &mut Vec<Mutation>,
) -> Vec<(String, String, &'static str)> {
    let mut written = Vec::new();
    for g in written_by_model {
        let Some(gap) = gaps.get(g.n.wrapping_sub(1)) else {
            continue;
        };
        let summary = g.summary.trim();
        if summary.len() < 10
            || written.len() >= MAX_GAPS
            || written
                .iter()
                .any(|(f, t, _)| *f == gap.from.id && *t == gap.to.id)
            || summary == gap.from.summary
            || summary == gap.to.summary
        {
            continue;
        }
        let mut k = written.len() + 1;
        while beat_nodes.contains_key(&format!("beat::gap_{k}")) {
            k += 1;
        }
        let id = format!("beat::gap_{k}");
        let (x, y) = (gap.from, gap.to);
        let shared: Vec<&String> = x
            .entities
            .iter()
            .filter(|e| y.entities.contains(e))
            .collect();
        let smooth = x.location == y.location && !shared.is_empty();
        let entities: Vec<&String> = if shared.is_empty() {
            x.entities.iter().collect()
        } else {
            shared
        };
        let kind = g.scene_type.unwrap_or(SceneType::MicroBeat).name();
        changes.push(Mutation::create(
            id.clone(),
            NodeType::Beat,
            json!({
                "summary": summary, "scene_type": kind, "is_gap_beat": true,
                "transition_style": if smooth { "smooth" } else { "cut" },
                "bridges_from": x.id, "bridges_to": y.id, "rank": copied(&beat_nodes[&x.id], "rank"),
                "entities": entities,
                "location": if smooth { &x.location } else { &y.location },
                "dilemma_impacts": [],
            }),
        ));
        for p in &gap.paths {
            changes.push(Mutation::link(EdgeType::BelongsTo, id.clone(), p.clone()));
        }
        changes.push(Mutation::link(
            EdgeType::SequencedAfter,
            id.clone(),
            x.id.clone(),
        ));
        changes.push(Mutation::link(
            EdgeType::SequencedAfter,
            y.id.clone(),
            id.clone(),
        ));
        written.push((x.id.clone(), y.id.clone(), gap.why));
    }
    written
}
