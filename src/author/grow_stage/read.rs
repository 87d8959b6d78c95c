//! What GROW reads from the graph SEED left: its beats, paths and dilemmas as [`Seeded`].

use serde_json::{Value, json};

use crate::author::fields;
use crate::author::graph::{Graph, GraphError, Node};
use crate::author::grow::{Beat, Dilemma, Path, Policy, Residue, Salience, Seeded};
use crate::author::ontology::{EdgeType, NodeType};

/// What SEED left in the graph, as GROW reads it. Beats come in SEED's order.
pub fn seeded(graph: &Graph) -> Result<Seeded, GraphError> {
    let mut beats = Vec::new();
    let mut nodes = graph.nodes(NodeType::Beat)?;
    nodes.sort_by(|a, b| {
        let rank = |n: &Node| n.field::<u64>("rank").unwrap_or(u64::MAX);
        rank(a).cmp(&rank(b)).then_with(|| a.id.cmp(&b.id))
    });
    for n in nodes {
        let commits = fields::impacts(&n)
            .into_iter()
            .filter(fields::Impact::commits)
            .filter_map(|i| i.dilemma_id)
            .collect();
        beats.push(Beat {
            paths: graph.targets(EdgeType::BelongsTo, &n.id)?,
            summary: n.str("summary").unwrap_or_default().to_owned(),
            entities: n.strings("entities"),
            location: n.str("location").map(str::to_owned),
            alternatives: n.strings("location_alternatives"),
            is_gap: n.flag("is_gap_beat"),
            commits,
            id: n.id,
        });
    }
    let mut paths = Vec::new();
    for p in graph.nodes(NodeType::Path)? {
        let answer = graph
            .targets(EdgeType::Explores, &p.id)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let canonical = graph.node(&answer)?.is_some_and(|a| a.flag("canonical"));
        paths.push(Path {
            consequences: graph.targets(EdgeType::HasConsequence, &p.id)?,
            dilemma: p.str("dilemma_id").unwrap_or_default().to_owned(),
            answer,
            canonical,
            id: p.id,
        });
    }
    let dilemmas = graph
        .nodes(NodeType::Dilemma)?
        .into_iter()
        .map(|d| {
            let analysis = fields::analysis(&d);
            Dilemma {
                policy: Policy::parse(analysis.convergence_policy.as_deref().unwrap_or("soft")),
                payoff_budget: usize::try_from(analysis.payoff_budget.unwrap_or(2)).unwrap_or(2),
                residue: Residue::parse(analysis.residue_weight.as_deref().unwrap_or("")),
                ending: Salience::parse(analysis.ending_salience.as_deref().unwrap_or("")),
                id: d.id,
            }
        })
        .collect();
    let order = graph
        .edges(EdgeType::SequencedAfter)?
        .into_iter()
        .map(|e| (e.from, e.to))
        .collect();
    Ok(Seeded {
        beats,
        paths,
        dilemmas,
        order,
    })
}

/// The pacing of a beat from its dilemma impacts (seed 000 scene types):
/// a commit, reveal or complication is a scene; an advance a sequel; a beat
/// that moves no dilemma a micro-beat.
pub fn scene_type(beat: &Node) -> &'static str {
    let effects: Vec<String> = fields::impacts(beat)
        .into_iter()
        .filter_map(|i| i.effect)
        .collect();
    if effects
        .iter()
        .any(|e| matches!(e.as_str(), "commits" | "reveals" | "complicates"))
    {
        "scene"
    } else if effects.iter().any(|e| e == "advances") {
        "sequel"
    } else {
        "micro_beat"
    }
}

/// The story's genre and tone words, as the GROW prompts read them.
pub(super) struct Vision {
    pub genre: String,
    pub tone: Vec<String>,
}

impl Vision {
    pub fn read(graph: &Graph) -> Result<Self, GraphError> {
        let vision = graph.node("vision")?;
        Ok(Self {
            genre: vision
                .as_ref()
                .and_then(|v| v.str("genre"))
                .unwrap_or("interactive fiction")
                .to_owned(),
            tone: vision
                .as_ref()
                .map(|v| v.strings("tone"))
                .unwrap_or_default(),
        })
    }
}

/// A field's value as it is, to copy it onto a new node (`null` when missing).
pub(super) fn copied(node: &Node, key: &str) -> Value {
    node.data.get(key).cloned().unwrap_or(json!(null))
}
