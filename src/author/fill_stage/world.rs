//! What one FILL call reads of the graph: the voice, a passage's beats, people and neighbours.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::author::ask::StageError;
use crate::author::fields;
use crate::author::fill::{self, Rules};
use crate::author::graph::{Edge, Graph, GraphError, Mutation, Node};
use crate::author::ontology::{EdgeType, NodeType};
use crate::author::reading::beat_ids;

/// The passages of prose before this one in its context.
pub const WINDOW: usize = 3;
/// Arrivals and characters listed in a prompt, at most.
const LISTED: usize = 4;
/// Characters of the next passage's prose shown as lookahead.
const LOOKAHEAD_CHARS: usize = 600;

/// The voice as the prose and review prompts read it: every field there
/// (an author's edit may have removed one), the exemplar as its text.
pub(super) fn voice_vars(voice: &Node) -> Value {
    let mut v = voice.data.clone();
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
        v.entry(key).or_insert(default);
    }
    let exemplar = voice
        .data
        .get("exemplar")
        .and_then(|e| e.get("text"))
        .cloned()
        .unwrap_or(Value::Null);
    v.insert("exemplar".into(), exemplar);
    Value::Object(v)
}

/// Everything one passage's call needs, read from the graph.
pub(super) struct World {
    pub voice: Node,
    pub passages: BTreeMap<String, Node>,
    beats: BTreeMap<String, Node>,
    pub entities: BTreeMap<String, Node>,
    /// passage → entities appearing (in order).
    pub appears: BTreeMap<String, Vec<String>>,
    /// (from, to) → what that choice grants.
    grants: BTreeMap<(String, String), Vec<String>>,
    /// passage → the passages whose choices lead to it.
    pub arrivals: BTreeMap<String, Vec<String>>,
    arcs: BTreeMap<String, Vec<String>>,
    /// beat → the shadows of its paths' dilemmas.
    shadows: BTreeMap<String, Vec<String>>,
    /// The prose layer's contracts (seed 000), read once.
    contracts: Contracts,
}

/// What the prose layer asks of passages (seed 000 "Prose Layer Obligations"), from the
/// dilemmas' analyses, the paths, the beats' impacts and the arcs.
#[derive(Default)]
struct Contracts {
    /// answer id → its description.
    answers: BTreeMap<String, String>,
    /// answer id → its dilemma.
    dilemma_of: BTreeMap<String, String>,
    /// dilemma → what its analysis asks of the prose.
    dilemmas: BTreeMap<String, Layer>,
    /// beat → the paths it serves, as (path name, dilemma).
    serves: BTreeMap<String, Vec<(String, String)>>,
    /// passage → the dilemmas some reader has already chosen on arriving there.
    chosen_before: BTreeMap<String, BTreeSet<String>>,
    /// Passages no choice leaves.
    endings: BTreeSet<String>,
}

/// A dilemma's prose layer (seed 000): its question, and its analysis's residue weight,
/// ending salience and ending tone.
struct Layer {
    question: String,
    residue: String,
    salience: String,
    tone: Option<String>,
}

/// What [`Contracts::read`] reads: what [`World::read`] has read of the graph.
struct Read<'a> {
    answers: &'a BTreeMap<String, Node>,
    dilemmas: &'a BTreeMap<String, Node>,
    belongs: &'a [Edge],
    paths: &'a BTreeMap<String, Node>,
    passages: &'a BTreeMap<String, Node>,
    beats: &'a BTreeMap<String, Node>,
    arcs: &'a BTreeMap<String, Vec<String>>,
    grants: &'a BTreeMap<(String, String), Vec<String>>,
}

impl Contracts {
    fn read(r: &Read) -> Self {
        let mut contracts = Contracts {
            answers: r
                .answers
                .iter()
                .map(|(id, a)| (id.clone(), a.str("description").unwrap_or(id).to_owned()))
                .collect(),
            dilemma_of: r
                .answers
                .iter()
                .filter_map(|(id, a)| Some((id.clone(), a.str("dilemma_id")?.to_owned())))
                .collect(),
            ..Contracts::default()
        };
        for (id, d) in r.dilemmas {
            let analysis = fields::analysis(d);
            contracts.dilemmas.insert(
                id.clone(),
                Layer {
                    question: d.str("question").unwrap_or(id).to_owned(),
                    residue: analysis.residue_weight.unwrap_or_else(|| "light".into()),
                    salience: analysis.ending_salience.unwrap_or_else(|| "low".into()),
                    tone: analysis.ending_tone,
                },
            );
        }
        for e in r.belongs {
            if let Some(path) = r.paths.get(&e.to) {
                contracts.serves.entry(e.from.clone()).or_default().push((
                    path.str("name").unwrap_or(&e.to).to_owned(),
                    path.str("dilemma_id").unwrap_or_default().to_owned(),
                ));
            }
        }
        // Along each arc, the dilemmas committed by the passages before each passage.
        for on_arc in r.arcs.values() {
            let mut chosen = BTreeSet::new();
            for p in on_arc {
                contracts
                    .chosen_before
                    .entry(p.clone())
                    .or_default()
                    .extend(chosen.iter().cloned());
                for b in r.passages.get(p).map(beat_ids).unwrap_or_default() {
                    let impacts = r.beats.get(&b).map(fields::impacts).unwrap_or_default();
                    chosen.extend(
                        impacts
                            .into_iter()
                            .filter(fields::Impact::commits)
                            .filter_map(|i| i.dilemma_id),
                    );
                }
            }
        }
        let leaving: BTreeSet<&String> = r.grants.keys().map(|(from, _)| from).collect();
        contracts.endings = r
            .passages
            .keys()
            .filter(|p| !leaving.contains(p))
            .cloned()
            .collect();
        contracts
    }
}

impl World {
    pub fn read(graph: &Graph) -> Result<Self, StageError> {
        let by_id = |kind| -> Result<BTreeMap<String, Node>, GraphError> {
            Ok(graph
                .nodes(kind)?
                .into_iter()
                .map(|n| (n.id.clone(), n))
                .collect())
        };
        let voice = graph.node("voice")?.ok_or(StageError::NoVoice)?;
        let mut appears: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in graph.edges(EdgeType::Appears)? {
            appears.entry(e.to).or_default().push(e.from);
        }
        let mut grants = BTreeMap::new();
        let mut arrivals: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in graph.edges(EdgeType::Choice)? {
            arrivals
                .entry(c.to.clone())
                .or_default()
                .push(c.from.clone());
            grants.insert(
                (c.from, c.to),
                crate::author::graph::strings(c.data.get("grants")),
            );
        }
        let arcs: BTreeMap<String, Vec<String>> = graph
            .nodes(NodeType::Arc)?
            .into_iter()
            .map(|a| (a.id.clone(), a.strings("passages")))
            .collect();
        // Shadows: the unexplored answers of the dilemmas a beat's paths explore.
        let answers = by_id(NodeType::Answer)?;
        let dilemmas = by_id(NodeType::Dilemma)?;
        let unexplored: BTreeMap<String, Vec<String>> = dilemmas
            .iter()
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
                (id.clone(), texts)
            })
            .collect();
        let paths = by_id(NodeType::Path)?;
        let belongs = graph.edges(EdgeType::BelongsTo)?;
        let mut shadows: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in &belongs {
            let texts = paths
                .get(&e.to)
                .and_then(|p| p.str("dilemma_id"))
                .and_then(|d| unexplored.get(d));
            let list = shadows.entry(e.from.clone()).or_default();
            for text in texts.into_iter().flatten() {
                if !list.contains(text) {
                    list.push(text.clone());
                }
            }
        }
        let passages = by_id(NodeType::Passage)?;
        let beats = by_id(NodeType::Beat)?;
        let contracts = Contracts::read(&Read {
            answers: &answers,
            dilemmas: &dilemmas,
            belongs: &belongs,
            paths: &paths,
            passages: &passages,
            beats: &beats,
            arcs: &arcs,
            grants: &grants,
        });
        Ok(Self {
            voice,
            passages,
            beats,
            entities: by_id(NodeType::Entity)?,
            appears,
            grants,
            arrivals,
            arcs,
            shadows,
            contracts,
        })
    }

    /// Takes in the field changes FILL just applied to passages and entities,
    /// so the next call sees them without reading the graph again.
    pub fn absorb(&mut self, changes: &[Mutation]) {
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

    pub fn prose(&self, id: &str) -> Option<&str> {
        self.passages
            .get(id)
            .and_then(|p| p.str("prose"))
            .filter(|p| !p.trim().is_empty())
    }

    pub fn summary(&self, id: &str) -> &str {
        self.passages
            .get(id)
            .and_then(|p| p.str("summary"))
            .unwrap_or_default()
    }

    pub fn beats_of(&self, id: &str) -> Vec<&Node> {
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
    fn state(entity: &Node, held: &BTreeSet<String>) -> Map<String, Value> {
        let mut details: Map<String, Value> = entity.field("base").unwrap_or_default();
        let mut overlays: Vec<(usize, usize, Map<String, Value>)> = fields::overlays(entity)
            .into_iter()
            .enumerate()
            .filter_map(|(i, o)| {
                (o.when.iter().all(|w| held.contains(w)))
                    .then(|| o.details.map(|d| (o.when.len(), i, d)))
                    .flatten()
            })
            .collect();
        overlays.sort_by_key(|(n, i, _)| (*n, *i));
        for (_, _, d) in overlays {
            details.extend(d);
        }
        details
    }
}

/// A passage's prose contracts (seed 000): the answers it is the version for (it must
/// show them), the choices it must not mention (cosmetic residue in a shared passage, an
/// ending's `none` salience), the paths an intersection weaves, and, at an ending, its tone.
fn obligations(world: &World, id: &str, beats: &[&Node]) -> Value {
    let c = &world.contracts;
    let passage = world.passages.get(id);
    let routed: Vec<String> = passage
        .map(|p| p.strings("routed"))
        .unwrap_or_default()
        .iter()
        .filter_map(|a| c.answers.get(a).cloned())
        .collect();
    // The dilemmas this passage is told apart by (its world or its routing).
    let apart: BTreeSet<&String> = passage
        .map(|p| {
            let mut answers = p.strings("world");
            answers.extend(p.strings("routed"));
            answers
        })
        .unwrap_or_default()
        .iter()
        .filter_map(|a| c.dilemma_of.get(a))
        .collect();
    let ending = c.endings.contains(id);
    let mut silent = Vec::new();
    for d in c.chosen_before.get(id).into_iter().flatten() {
        let Some(layer) = c.dilemmas.get(d) else {
            continue;
        };
        // Readers of either answer arrive here: the prose may not take a side.
        let shared = !apart.contains(d);
        if shared && (layer.residue == "cosmetic" || (ending && layer.salience == "none")) {
            silent.push(layer.question.clone());
        }
    }
    let mut weaves = Vec::new();
    for b in beats {
        let serves = c.serves.get(&b.id).map(Vec::as_slice).unwrap_or_default();
        let dilemmas: BTreeSet<&String> = serves.iter().map(|(_, d)| d).collect();
        if dilemmas.len() > 1 {
            weaves.extend(serves.iter().map(|(name, _)| name.clone()));
        }
    }
    weaves.dedup();
    let tones: Vec<String> = apart
        .iter()
        .filter_map(|d| c.dilemmas.get(*d))
        .filter(|layer| layer.salience == "high")
        .filter_map(|layer| layer.tone.clone())
        .collect();
    json!({
        "routed": routed,
        "silent_on": silent,
        "weaves": weaves,
        "ending": ending.then(|| json!({"tones": tones})),
    })
}

/// How a beat is entered (seed 000): a gap beat's `transition_style`, or a merged
/// passage's transition point at that beat.
fn transition(passage: Option<&Node>, index: usize, beat: &Node) -> Value {
    if let Some(point) = passage
        .and_then(|p| p.data.get("transition_points"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| t.get("index").and_then(Value::as_u64) == Some(index as u64))
    {
        return point.get("style").cloned().unwrap_or(Value::Null);
    }
    if beat.flag("is_gap_beat") {
        return beat
            .data
            .get("transition_style")
            .cloned()
            .unwrap_or(Value::Null);
    }
    Value::Null
}

/// The prose call's variables and the rules its answer is checked by.
pub(super) fn context(world: &World, id: &str, arc: &str, at: usize) -> (Value, Rules) {
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
        pov: world.voice.str("pov").unwrap_or_default().to_owned(),
        tense: world.voice.str("tense").unwrap_or_default().to_owned(),
        avoid_words: world.voice.strings("avoid_words"),
        neighbours,
        summaries: beats
            .iter()
            .filter_map(|b| b.str("summary").map(str::to_owned))
            .collect(),
    };
    let vars = json!({
        "voice": voice_vars(&world.voice),
        "beats": beats.iter().zip(&types).enumerate().map(|(i, (b, t))| json!({"summary": b.str("summary").unwrap_or_default(), "scene_type": t, "transition": transition(world.passages.get(id), i, b)})).collect::<Vec<_>>(),
        "contracts": obligations(world, id, &beats),
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
