//! GROW's result written to the graph, phase by phase: arcs, passages, pruning, codewords.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::author::graph::{Graph, GraphError, Mutation};
use crate::author::grow::{Beat, Grown, Passage, Seeded};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// When the arcs would start apart: an opening beat every path shares, before every beat
/// nothing comes before.
pub(super) fn opening(graph: &mut Graph, seed: &Seeded, spark: &str) -> Result<(), GraphError> {
    let roots: Vec<String> = seed
        .beats
        .iter()
        .filter(|b| !seed.order.iter().any(|(after, _)| after == &b.id))
        .map(|b| b.id.clone())
        .collect();
    let opening = "beat::opening".to_owned();
    let summary = format!("The story opens: {spark}");
    let mut changes = vec![Mutation::create(
        opening.clone(),
        NodeType::Beat,
        json!({"summary": summary, "is_gap_beat": true, "transition_style": "cut",
               "scene_type": "micro_beat", "rank": 0, "entities": [], "dilemma_impacts": []}),
    )];
    for p in &seed.paths {
        changes.push(Mutation::link(
            EdgeType::BelongsTo,
            opening.clone(),
            p.id.clone(),
        ));
    }
    for r in &roots {
        changes.push(Mutation::link(
            EdgeType::SequencedAfter,
            r.clone(),
            opening.clone(),
        ));
    }
    graph.apply(
        Stage::Grow,
        "gaps",
        "the arcs opened on different beats: an opening beat every path shares",
        &changes,
    )
}

/// Phase: arcs.
pub(super) fn arcs(graph: &mut Graph, grown: &Grown) -> Result<(), GraphError> {
    let mut changes = Vec::new();
    for arc in &grown.arcs {
        changes.push(Mutation::create(
            arc.id.clone(),
            NodeType::Arc,
            json!({
                "type": if arc.spine { "spine" } else { "branch" },
                "paths": arc.paths,
                "sequence": arc.sequence,
                "passages": arc.passages,
                "diverges_at": arc.diverges_at,
                "converges_at": arc.converges_at,
            }),
        ));
        for p in &arc.paths {
            changes.push(Mutation::link(EdgeType::Weaves, arc.id.clone(), p.clone()));
        }
    }
    graph.apply(
        Stage::Grow,
        "arcs",
        "one arc per combination of explored paths, woven in one order",
        &changes,
    )
}

/// Phase: passages (1:1 from beats within a world), who appears, and
/// which relationships are at work (both ends present).
pub(super) fn passages(graph: &mut Graph, seed: &Seeded, grown: &Grown) -> Result<(), GraphError> {
    let beats: BTreeMap<&str, &Beat> = seed.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let bonds = graph.nodes(NodeType::Relationship)?;
    let mut changes = Vec::new();
    for p in &grown.passages {
        let all = p.all_beats();
        changes.push(Mutation::create(
            p.id.clone(),
            NodeType::Passage,
            passage(p, &all, &beats),
        ));
        let mut present: Vec<(&String, &str)> = Vec::new();
        for b in &all {
            let b = beats[b.as_str()];
            changes.push(Mutation::link(
                EdgeType::FromBeat,
                p.id.clone(),
                b.id.clone(),
            ));
            for e in &b.entities {
                if !present.iter().any(|(x, _)| *x == e) {
                    present.push((e, "present"));
                }
            }
        }
        if let Some(l) = &beats[p.beat.as_str()].location {
            present.retain(|(e, _)| *e != l);
            present.push((l, "location"));
        }
        for r in &bonds {
            let end = |k: &str| present.iter().any(|(e, _)| Some(e.as_str()) == r.str(k));
            if end("from_entity") && end("to_entity") {
                changes.push(Mutation::link(
                    EdgeType::Involves,
                    r.id.clone(),
                    p.id.clone(),
                ));
            }
        }
        for (e, role) in present {
            if graph.node(e)?.is_some() {
                changes.push(Mutation::link_with(
                    EdgeType::Appears,
                    e.clone(),
                    p.id.clone(),
                    json!({"role": role}),
                ));
            }
        }
    }
    graph.apply(
        Stage::Grow,
        "passages",
        "a passage per beat in each world it is read in",
        &changes,
    )
}

/// A passage node: its beat, summary and world; the answers it is routed for; and, for
/// seed 000's merged passage, every beat, the primary, where it came from, and how the
/// prose moves from one beat to the next (FILL's guidance).
fn passage(p: &Passage, all: &[String], beats: &BTreeMap<&str, &Beat>) -> Value {
    let summary = all
        .iter()
        .map(|b| beats[b.as_str()].summary.as_str())
        .collect::<Vec<_>>()
        .join(" / ");
    let mut data = json!({"from_beat": p.beat, "summary": summary, "world": p.world});
    if !p.routed.is_empty() {
        // Variant routing: FILL writes this one for these answers.
        data["routed"] = json!(p.routed);
    }
    if !p.beats.is_empty() {
        let transitions: Vec<Value> = all
            .windows(2)
            .enumerate()
            .map(|(i, pair)| {
                let (a, b) = (beats[pair[0].as_str()], beats[pair[1].as_str()]);
                let bridge: Vec<&String> = b
                    .entities
                    .iter()
                    .filter(|e| a.entities.contains(e))
                    .collect();
                json!({"index": i + 1, "style": "smooth", "bridge_entities": bridge,
                       "note": "same place, no choice between: carry the scene straight on"})
            })
            .collect();
        data["from_beats"] = json!(all);
        data["primary_beat"] = json!(p.beat);
        data["merged_from"] = json!(p.merged_from);
        data["transition_points"] = json!(transitions);
    }
    data
}

/// Phase: prune (seed 000 "Validation Rules"): a relationship no passage
/// involves goes; an entity no passage shows is an orphan and goes, unless a dilemma
/// involves it (a core entity that never appears means the story is incomplete: said,
/// kept).
pub(super) fn prune(graph: &mut Graph, notes: &mut Vec<String>) -> Result<(), GraphError> {
    let ends = |kind, to: bool| -> Result<BTreeSet<String>, GraphError> {
        Ok(graph
            .edges(kind)?
            .into_iter()
            .map(|e| if to { e.to } else { e.from })
            .collect())
    };
    let appearing = ends(EdgeType::Appears, false)?;
    let core = ends(EdgeType::DilemmaInvolves, true)?;
    let involved = ends(EdgeType::Involves, false)?;
    let mut pruned = Vec::new();
    let mut changes = Vec::new();
    for r in graph.nodes(NodeType::Relationship)? {
        if !involved.contains(&r.id) {
            pruned.push(r.id.clone());
            changes.push(Mutation::Remove { id: r.id });
        }
    }
    for e in graph.nodes(NodeType::Entity)? {
        if e.str("disposition") == Some("cut") || appearing.contains(&e.id) {
            continue;
        }
        if core.contains(&e.id) {
            notes.push(format!(
                "`{}` is part of a dilemma but appears in no passage: give it a beat in SEED",
                e.id
            ));
        } else {
            pruned.push(e.id.clone());
            changes.push(Mutation::Remove { id: e.id });
        }
    }
    if changes.is_empty() {
        return Ok(());
    }
    graph.apply(
        Stage::Grow,
        "prune",
        &format!(
            "entities no passage shows, relationships no passage involves: {}",
            pruned.join(", ")
        ),
        &changes,
    )
}

/// Phase: codewords and their grants.
pub(super) fn codewords(graph: &mut Graph, grown: &Grown) -> Result<(), GraphError> {
    let mut changes = Vec::new();
    for c in &grown.codewords {
        changes.push(Mutation::create(
            c.id.clone(),
            NodeType::Codeword,
            json!({"type": "granted", "tracks": c.tracks, "path": c.path}),
        ));
        for b in &c.granted_by {
            changes.push(Mutation::link(EdgeType::Grants, b.clone(), c.id.clone()));
        }
    }
    let why = if grown.unread.is_empty() {
        "a codeword per consequence of a branching path, granted where it commits".to_owned()
    } else {
        format!(
            "a codeword per consequence of a branching path, granted where it commits; never read by a gate, so not kept: {}",
            grown.unread.join(", ")
        )
    };
    graph.apply(Stage::Grow, "codewords", &why, &changes)
}
