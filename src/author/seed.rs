//! SEED's answer as graph mutations: curation, paths, consequences, beats and their order.
//!
//! The engine, not the model, makes the ids: `path::d__a`, `beat::…`, `consequence::…`. The
//! canonical answer of every dilemma is always explored; a path goes to the dilemma its
//! answer belongs to, and a repeated path is the first one. A path no beat commits gets its last
//! beat as the commit; beats are ordered along each path as listed, plus any `after` that
//! keeps the order acyclic. What the engine dropped or mended is said in the notes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::json;

use super::answers::{BeatIdea, Effect, ImpactIdea, PathIdea, SeedAnswer};
use super::ask::StageError;
use super::graph::{Graph, GraphError, Mutation, Node};
use super::ontology::{EdgeType, NodeType, path_id};

/// SEED's answer as graph mutations (and notes on what the engine dropped or mended).
///
/// `both_ways` is how many dilemmas the scope wants explored on both answers: when the
/// answer explores fewer, the engine explores the other answer of the dilemmas that
/// involve the most entities (then by id) until it has them, each path made from its answer.
pub fn seed_mutations(
    graph: &Graph,
    answer: &SeedAnswer,
    both_ways: usize,
) -> Result<(Vec<Mutation>, Vec<String>), StageError> {
    let known = Brainstormed::read(graph)?;
    let mut batch = Batch::default();
    let cut = curate(&known, answer, &mut batch);
    relationships(&known, &cut, answer, &mut batch);
    let paths = paths(graph, &known, answer, both_ways, &mut batch)?;
    analyses(&known, answer, &mut batch);
    let mut beats = Beats::from_answer(&known, &cut, &paths, answer, &mut batch);
    beats.commit_every_path(graph, &paths, &mut batch)?;
    beats.write(&mut batch);
    beats.order(&paths, &mut batch);
    batch.changes.push(Mutation::Meta {
        key: "seed.convergence_sketch".into(),
        value: json!(answer.convergence_sketch),
    });
    batch.changes.push(Mutation::Meta {
        key: "seed.interaction_constraints".into(),
        value: json!(answer.interaction_constraints),
    });
    Ok((batch.changes, batch.notes))
}

/// The changes made so far, and notes on what the engine dropped or mended.
#[derive(Default)]
struct Batch {
    changes: Vec<Mutation>,
    notes: Vec<String>,
}

/// What BRAINSTORM left, as SEED's answer is checked against it.
struct Brainstormed {
    entities: BTreeMap<String, Node>,
    /// Dilemma → (answers, canonical).
    dilemmas: BTreeMap<String, (Vec<String>, String)>,
    /// Dilemma → how many entities it involves.
    involves: BTreeMap<String, usize>,
    /// Answer → its dilemma (an answer id is unique in the graph).
    owner: BTreeMap<String, String>,
}

impl Brainstormed {
    fn read(graph: &Graph) -> Result<Self, GraphError> {
        let entities = graph
            .nodes(NodeType::Entity)?
            .into_iter()
            .map(|n| (n.id.clone(), n))
            .collect();
        let mut dilemmas = BTreeMap::new();
        let mut involves = BTreeMap::new();
        let mut owner = BTreeMap::new();
        for d in graph.nodes(NodeType::Dilemma)? {
            involves.insert(
                d.id.clone(),
                graph.targets(EdgeType::DilemmaInvolves, &d.id)?.len(),
            );
            let answers = graph.targets(EdgeType::HasAnswer, &d.id)?;
            let mut canonical = String::new();
            for a in &answers {
                if graph.node(a)?.is_some_and(|n| n.flag("canonical")) {
                    canonical.clone_from(a);
                }
            }
            owner.extend(answers.iter().map(|a| (a.clone(), d.id.clone())));
            dilemmas.insert(d.id.clone(), (answers, canonical));
        }
        Ok(Self {
            entities,
            dilemmas,
            involves,
            owner,
        })
    }

    /// Whether `id` is an entity SEED kept.
    fn kept(&self, cut: &BTreeSet<String>, id: &str) -> bool {
        self.entities.contains_key(id) && !cut.contains(id)
    }
}

/// A dilemma id with its `dilemma::` prefix, whether the model wrote it or not.
fn dilemma_id(s: &str) -> String {
    format!("dilemma::{}", s.trim_start_matches("dilemma::"))
}

/// Curation: the entities cut, and every other one kept.
fn curate(known: &Brainstormed, answer: &SeedAnswer, batch: &mut Batch) -> BTreeSet<String> {
    let mut cut = BTreeSet::new();
    for id in &answer.cut_entities {
        if known.entities.contains_key(id) {
            cut.insert(id.clone());
            batch
                .changes
                .push(Mutation::update(id.clone(), json!({"disposition": "cut"})));
        } else {
            batch.notes.push(format!("cut `{id}`: no such entity"));
        }
    }
    for id in known.entities.keys().filter(|id| !cut.contains(*id)) {
        batch
            .changes
            .push(Mutation::update(id.clone(), json!({"disposition": "kept"})));
    }
    cut
}

/// Relationships between kept entities (seed 000: created in SEED), one per ordered pair.
fn relationships(
    known: &Brainstormed,
    cut: &BTreeSet<String>,
    answer: &SeedAnswer,
    batch: &mut Batch,
) {
    let mut bonds = BTreeSet::new();
    for r in &answer.relationships {
        let (from, to) = (r.from.as_str(), r.to.as_str());
        if from == to || !known.kept(cut, from) || !known.kept(cut, to) {
            batch.notes.push(format!(
                "a relationship `{from}` → `{to}` between entities that are not two kept ones (dropped)"
            ));
            continue;
        }
        let id = format!("relationship::{from}__{to}");
        if bonds.insert(id.clone()) {
            batch.changes.push(Mutation::create(
                id,
                NodeType::Relationship,
                json!({"from_entity": from, "to_entity": to, "base": {"nature": r.nature}}),
            ));
        }
    }
}

/// The paths made: path id → (dilemma, answer).
type Paths = BTreeMap<String, (String, String)>;

/// Paths: one per explored answer, the canonical one always; their consequences; and
/// each dilemma's explored and unexplored answers.
fn paths(
    graph: &Graph,
    known: &Brainstormed,
    answer: &SeedAnswer,
    both_ways: usize,
    batch: &mut Batch,
) -> Result<Paths, GraphError> {
    let mut given: BTreeMap<(String, String), &PathIdea> = BTreeMap::new();
    for p in &answer.paths {
        let mut d = dilemma_id(&p.dilemma_id);
        let a = p.answer_id.clone();
        // An answer id names its dilemma: a path filed under another dilemma goes to the
        // answer's own (said once; a repeat keeps the first, below).
        if let Some(owner) = known.owner.get(&a).filter(|o| **o != d) {
            if !given.contains_key(&(owner.clone(), a.clone())) {
                batch.notes.push(format!(
                    "a path for `{a}` under `{d}`: `{a}` answers `{owner}`, so it goes there"
                ));
            }
            d.clone_from(owner);
        }
        match known.dilemmas.get(&d) {
            Some((answers, _)) if answers.contains(&a) => {
                given.entry((d, a)).or_insert(p);
            }
            Some(_) => batch.notes.push(format!(
                "a path for `{a}`, which is no answer of `{d}` (dropped)"
            )),
            None => batch
                .notes
                .push(format!("a path for `{d}`, which is no dilemma (dropped)")),
        }
    }
    let widened = widen(known, &given, both_ways);
    let mut paths = Paths::new();
    let mut consequences_seen = BTreeSet::new();
    for (d, (answers, canonical)) in &known.dilemmas {
        let mut explored = Vec::new();
        let wide = widened.contains(d);
        for a in answers {
            let p = given.get(&(d.clone(), a.clone())).copied();
            if p.is_none() && a != canonical && !wide {
                continue;
            }
            explored.push(a.clone());
            let id = path_id(d, a);
            if p.is_none() && a == canonical {
                batch.notes.push(format!(
                    "the canonical answer `{a}` had no path; `{id}` made"
                ));
            } else if p.is_none() {
                batch.notes.push(format!(
                    "`{d}` explored on both answers (the scope wants {both_ways} so): `{id}` made"
                ));
            }
            let answer_text = graph
                .node(a)?
                .and_then(|n| n.str("description").map(str::to_owned))
                .unwrap_or_default();
            batch.changes.push(Mutation::create(
                id.clone(),
                NodeType::Path,
                json!({
                    "name": p.map_or(answer_text.as_str(), |p| p.name.as_str()),
                    "dilemma_id": d,
                    "answer_id": a,
                    "shadows": answers.iter().filter(|x| *x != a).collect::<Vec<_>>(),
                    "tier": p.map_or(json!("major"), |p| json!(p.tier)),
                    "description": p.map_or(answer_text.as_str(), |p| p.description.as_str()),
                }),
            ));
            batch
                .changes
                .push(Mutation::link(EdgeType::Explores, id.clone(), a.clone()));
            for c in p.map(|p| p.consequences.as_slice()).unwrap_or_default() {
                let cid = format!("consequence::{}", c.id);
                if !consequences_seen.insert(cid.clone()) {
                    batch
                        .notes
                        .push(format!("consequence `{cid}` given twice (the first kept)"));
                    continue;
                }
                batch.changes.push(Mutation::create(
                    cid.clone(),
                    NodeType::Consequence,
                    json!({"path_id": id, "description": c.description, "ripples": c.ripples}),
                ));
                batch
                    .changes
                    .push(Mutation::link(EdgeType::HasConsequence, id.clone(), cid));
            }
            paths.insert(id, (d.clone(), a.clone()));
        }
        let unexplored: Vec<&String> = answers.iter().filter(|a| !explored.contains(a)).collect();
        batch.changes.push(Mutation::update(
            d.clone(),
            json!({"explored": explored, "unexplored": unexplored}),
        ));
    }
    Ok(paths)
}

/// The dilemmas the engine explores on both answers beyond the answer's own, so that
/// `both_ways` are: those involving the most entities first, then by id.
fn widen(
    known: &Brainstormed,
    given: &BTreeMap<(String, String), &PathIdea>,
    both_ways: usize,
) -> BTreeSet<String> {
    // Explored on both answers by the answer itself: every other answer has a path.
    let both = |d: &String| {
        let (answers, canonical) = &known.dilemmas[d];
        answers.len() > 1
            && answers
                .iter()
                .filter(|a| *a != canonical)
                .all(|a| given.contains_key(&(d.clone(), a.clone())))
    };
    let (already, mut rest): (Vec<&String>, Vec<&String>) =
        known.dilemmas.keys().partition(|d| both(d));
    rest.sort_by_key(|d| std::cmp::Reverse(known.involves.get(*d).copied().unwrap_or(0)));
    rest.into_iter()
        .take(both_ways.saturating_sub(already.len()))
        .cloned()
        .collect()
}

/// Each dilemma's analysis, kept on it (without the dilemma's id).
fn analyses(known: &Brainstormed, answer: &SeedAnswer, batch: &mut Batch) {
    for a in &answer.dilemma_analyses {
        let d = dilemma_id(&a.dilemma_id);
        if known.dilemmas.contains_key(&d) {
            batch
                .changes
                .push(Mutation::update(d, json!({"analysis": a})));
        } else {
            batch.notes.push(format!(
                "an analysis of `{d}`, which is no dilemma (dropped)"
            ));
        }
    }
}

/// A beat as SEED writes it.
#[derive(Clone, Debug, Serialize)]
struct SeededBeat {
    summary: String,
    dilemma_impacts: Vec<ImpactIdea>,
    entities: Vec<String>,
    location: Option<String>,
    location_alternatives: Vec<String>,
}

/// The beats SEED keeps, in its order, and what the engine needs to place them.
struct Beats {
    ids: Vec<String>,
    nodes: BTreeMap<String, SeededBeat>,
    /// Beat → the explored paths it serves.
    on: BTreeMap<String, Vec<String>>,
    /// The paths some beat commits.
    commits: BTreeSet<String>,
    /// `(after, before)` as the model asked.
    afters: Vec<(String, String)>,
}

impl Beats {
    /// The answer's beats that serve an explored path, with what they name that exists.
    fn from_answer(
        known: &Brainstormed,
        cut: &BTreeSet<String>,
        paths: &Paths,
        answer: &SeedAnswer,
        batch: &mut Batch,
    ) -> Self {
        let mut beats = Beats {
            ids: Vec::new(),
            nodes: BTreeMap::new(),
            on: BTreeMap::new(),
            commits: BTreeSet::new(),
            afters: Vec::new(),
        };
        for b in &answer.beats {
            let id = format!("beat::{}", b.id.trim_start_matches("beat::"));
            if beats.nodes.contains_key(&id) {
                batch
                    .notes
                    .push(format!("beat `{id}` given twice (the first kept)"));
                continue;
            }
            let on = served(paths, b);
            if on.is_empty() {
                batch
                    .notes
                    .push(format!("beat `{id}` serves no explored path (dropped)"));
                continue;
            }
            let node = beat(known, cut, b);
            for p in &on {
                let d = &paths[p].0;
                if node
                    .dilemma_impacts
                    .iter()
                    .any(|i| i.dilemma_id == *d && i.effect == Effect::Commits)
                {
                    beats.commits.insert(p.clone());
                }
            }
            for after in &b.after {
                beats.afters.push((
                    id.clone(),
                    format!("beat::{}", after.trim_start_matches("beat::")),
                ));
            }
            beats.nodes.insert(id.clone(), node);
            beats.on.insert(id.clone(), on);
            beats.ids.push(id);
        }
        beats
    }

    /// Every path needs a beat that commits its dilemma: the last one does if none says so,
    /// and a path with no beat at all gets its answer as that beat.
    fn commit_every_path(
        &mut self,
        graph: &Graph,
        paths: &Paths,
        batch: &mut Batch,
    ) -> Result<(), GraphError> {
        for (p, (d, answer_id)) in paths {
            if self.commits.contains(p) {
                continue;
            }
            let Some(last) = self
                .ids
                .iter()
                .rev()
                .find(|b| self.on[*b].contains(p))
                .cloned()
            else {
                let summary = graph
                    .node(answer_id)?
                    .and_then(|n| n.str("description").map(str::to_owned))
                    .unwrap_or_else(|| answer_id.clone());
                let id = format!("beat::{}_commits", p.trim_start_matches("path::"));
                self.nodes.insert(
                    id.clone(),
                    SeededBeat {
                        summary,
                        dilemma_impacts: vec![commits(
                            d,
                            "made by the engine from the answer: SEED gave the path no beat",
                        )],
                        entities: Vec::new(),
                        location: None,
                        location_alternatives: Vec::new(),
                    },
                );
                self.on.insert(id.clone(), vec![p.clone()]);
                self.ids.push(id.clone());
                batch
                    .notes
                    .push(format!("`{p}` had no beats; `{id}` made from its answer"));
                continue;
            };
            if let Some(node) = self.nodes.get_mut(&last) {
                node.dilemma_impacts.push(commits(
                    d,
                    "the path commits here (set by the engine: no beat said so)",
                ));
            }
            batch.notes.push(format!(
                "no beat committed `{p}`; its last beat `{last}` does"
            ));
        }
        Ok(())
    }

    /// Each beat, ranked in SEED's order, and the paths it belongs to.
    fn write(&self, batch: &mut Batch) {
        for (rank, id) in self.ids.iter().enumerate() {
            let mut node = json!(self.nodes[id]);
            node["rank"] = json!(rank + 1);
            batch
                .changes
                .push(Mutation::create(id.clone(), NodeType::Beat, node));
            for p in &self.on[id] {
                batch
                    .changes
                    .push(Mutation::link(EdgeType::BelongsTo, id.clone(), p.clone()));
            }
        }
    }

    /// Order: along each path as listed, then `after` where it keeps the order acyclic.
    fn order(self, paths: &Paths, batch: &mut Batch) {
        let mut order: Vec<(String, String)> = Vec::new();
        for p in paths.keys() {
            let on: Vec<&String> = self
                .ids
                .iter()
                .filter(|b| self.on[*b].contains(p))
                .collect();
            for pair in on.windows(2) {
                let edge = (pair[1].clone(), pair[0].clone());
                if !order.contains(&edge) {
                    order.push(edge);
                }
            }
        }
        for (after, before) in self.afters {
            if !self.nodes.contains_key(&before) {
                batch.notes.push(format!(
                    "`{after}` after `{before}`, which is no beat (dropped)"
                ));
                continue;
            }
            let mut trial = order.clone();
            trial.push((after.clone(), before.clone()));
            if super::graph::cycle_member(&trial).is_some() {
                batch.notes.push(format!(
                    "`{after}` after `{before}` would make a cycle (dropped)"
                ));
            } else if !order.contains(&(after.clone(), before.clone())) {
                order = trial;
            }
        }
        for (after, before) in order {
            batch
                .changes
                .push(Mutation::link(EdgeType::SequencedAfter, after, before));
        }
    }
}

/// The explored paths a beat serves (its `paths`, as ids the engine made).
fn served(paths: &Paths, b: &BeatIdea) -> Vec<String> {
    let path_ref = |s: &String| -> Option<String> {
        let s = s.trim_start_matches("path::");
        let (d, a) = s.split_once("__")?;
        let id = path_id(&dilemma_id(d), a);
        paths.contains_key(&id).then_some(id)
    };
    b.paths
        .iter()
        .filter_map(path_ref)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A beat's node: its kept entities, its place and alternatives (locations only), and its
/// impacts on dilemmas that exist.
fn beat(known: &Brainstormed, cut: &BTreeSet<String>, b: &BeatIdea) -> SeededBeat {
    let known_entity = |e: &str| known.kept(cut, e);
    let is_place = |e: &str| known_entity(e) && known.entities[e].str("type") == Some("location");
    let location = b.location.clone().filter(|l| is_place(l));
    SeededBeat {
        summary: b.summary.clone(),
        dilemma_impacts: b
            .impacts
            .iter()
            .filter_map(|i| {
                let d = dilemma_id(&i.dilemma_id);
                known.dilemmas.contains_key(&d).then(|| ImpactIdea {
                    dilemma_id: d,
                    effect: i.effect,
                    note: i.note.clone(),
                })
            })
            .collect(),
        entities: b
            .entities
            .iter()
            .filter(|e| known_entity(e))
            .cloned()
            .collect(),
        location_alternatives: b
            .location_alternatives
            .iter()
            .filter(|l| is_place(l) && Some(*l) != location.as_ref())
            .cloned()
            .collect(),
        location,
    }
}

/// An impact by which the engine makes a beat commit a path's dilemma.
fn commits(dilemma: &str, note: &str) -> ImpactIdea {
    ImpactIdea {
        dilemma_id: dilemma.to_owned(),
        effect: Effect::Commits,
        note: note.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::seed_mutations;
    use crate::author::answers::{BrainstormAnswer, SeedAnswer};
    use crate::author::brainstorm::brainstorm_mutations;
    use crate::author::graph::{Graph, Mutation};
    use crate::author::ontology::Stage;

    /// Two dilemmas of two answers; SEED's paths as a small model wrote them: one filed
    /// under the wrong dilemma, the same one twice, and too few explored both ways.
    #[test]
    fn a_path_goes_to_its_answers_dilemma_and_the_scope_gets_its_branches() {
        let brainstorm: BrainstormAnswer = serde_json::from_value(json!({
            "entities": [
                {"id": "ada", "type": "character", "name": "Ada", "concept": "a ferrywoman"},
                {"id": "quay", "type": "location", "name": "The quay", "concept": "stone steps"}],
            "dilemmas": [
                {"id": "carry", "question": "Does Ada carry the stranger?", "why_it_matters": "trust",
                 "involves": ["ada"], "answers": [
                    {"id": "carries", "description": "She carries him", "canonical": true},
                    {"id": "refuses", "description": "She refuses him", "canonical": false}]},
                {"id": "tell", "question": "Does Ada tell the reeve?", "why_it_matters": "duty",
                 "involves": ["ada", "quay"], "answers": [
                    {"id": "tells", "description": "She tells the reeve", "canonical": true},
                    {"id": "keeps", "description": "She keeps it to herself", "canonical": false}]}]
        }))
        .unwrap();
        let mut g = Graph::open(Path::new(":memory:")).unwrap();
        g.apply(
            Stage::Dream,
            "test",
            "test",
            &[Mutation::create(
                "vision",
                crate::author::NodeType::Vision,
                json!({}),
            )],
        )
        .unwrap();
        let (changes, _) = brainstorm_mutations(&brainstorm).unwrap();
        g.apply(Stage::Brainstorm, "test", "test", &changes)
            .unwrap();
        let path = |d: &str, a: &str| {
            json!({"dilemma_id": d, "answer_id": a, "name": "p", "tier": "major",
            "description": "d", "consequences": [{"id": format!("{a}_c"), "description": "c", "ripples": []}]})
        };
        let seed: SeedAnswer = serde_json::from_value(json!({
            "cut_entities": [], "beats": [], "dilemma_analyses": [], "interaction_constraints": [],
            "convergence_sketch": {"convergence_points": [], "residue_notes": []},
            "paths": [path("tell", "refuses"), path("tell", "refuses"), path("tell", "tells")]
        }))
        .unwrap();
        let (changes, notes) = seed_mutations(&g, &seed, 2).unwrap();
        let made: Vec<String> = changes
            .iter()
            .filter_map(|c| match c {
                Mutation::Create { id, .. } if id.starts_with("path::") => Some(id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            made,
            [
                "path::carry__carries",
                "path::carry__refuses",
                "path::tell__tells",
                "path::tell__keeps"
            ],
            "{notes:?}"
        );
        let notes = notes.join("\n");
        assert!(
            notes.contains("`refuses` answers `dilemma::carry`, so it goes there"),
            "{notes}"
        );
        assert!(
            notes.contains("`dilemma::tell` explored on both answers"),
            "{notes}"
        );
        assert_eq!(notes.matches("so it goes there").count(), 1, "{notes}");
    }
}
