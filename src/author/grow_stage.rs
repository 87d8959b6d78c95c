//! GROW on a project's graph: reads what SEED left into [`grow::Seeded`], runs the deterministic core, and applies its result (scene types, arcs, passages, codewords, choices with diegetic labels, appearances) as GROW's mutations, phase by phase, each all or nothing.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::graph::{Graph, GraphError, Mutation};
use super::grow::{self, Beat, Dilemma, Grown, Path, Policy, Seeded, label_from};
use super::model::{EdgeType, NodeType, Stage};

/// What SEED left in the graph, as GROW reads it. Beats come in SEED's order.
pub fn seeded(graph: &Graph) -> Result<Seeded, GraphError> {
    let mut beats = Vec::new();
    let mut nodes = graph.nodes(NodeType::Beat)?;
    nodes.sort_by(|a, b| {
        let rank = |n: &super::graph::Node| {
            n.data
                .get("rank")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX)
        };
        rank(a).cmp(&rank(b)).then_with(|| a.id.cmp(&b.id))
    });
    for n in nodes {
        let commits = n
            .data
            .get("dilemma_impacts")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|i| i["effect"] == "commits")
                    .filter_map(|i| i["dilemma_id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        beats.push(Beat {
            paths: graph.targets(EdgeType::BelongsTo, &n.id)?,
            summary: n.str("summary").unwrap_or_default().to_owned(),
            entities: n.strings("entities"),
            location: n.str("location").map(str::to_owned),
            alternatives: n.strings("location_alternatives"),
            is_gap: n.data.get("is_gap_beat") == Some(&json!(true)),
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
        let canonical = graph
            .node(&answer)?
            .is_some_and(|a| a.data.get("canonical") == Some(&json!(true)));
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
            let analysis = d.data.get("analysis").cloned().unwrap_or(Value::Null);
            Dilemma {
                policy: Policy::parse(analysis["convergence_policy"].as_str().unwrap_or("soft")),
                payoff_budget: usize::try_from(analysis["payoff_budget"].as_u64().unwrap_or(2))
                    .unwrap_or(2),
                residue: grow::Residue::parse(analysis["residue_weight"].as_str().unwrap_or("")),
                ending: grow::Salience::parse(analysis["ending_salience"].as_str().unwrap_or("")),
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
pub fn scene_type(impacts: Option<&Value>) -> &'static str {
    let effects: Vec<&str> = impacts
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|i| i["effect"].as_str()).collect())
        .unwrap_or_default();
    if effects
        .iter()
        .any(|e| matches!(*e, "commits" | "reveals" | "complicates"))
    {
        "scene"
    } else if effects.contains(&"advances") {
        "sequel"
    } else {
        "micro_beat"
    }
}

/// The most bridging (gap) beats GROW writes.
pub const MAX_GAPS: usize = 3;
/// The most gaps the model is offered.
const GAP_CANDIDATES: usize = 8;
/// The most beats whose scene type the model sets; the rest keep the engine's.
const PACED_BEATS: usize = 60;
const SCENE_TYPES: [&str; 3] = ["scene", "sequel", "micro_beat"];

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
fn pacing(
    graph: &mut Graph,
    seed: &Seeded,
    ask: &mut dyn FnMut(&str, Value) -> Result<Value, String>,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let err = |e: GraphError| e.to_string();
    let beat_nodes: BTreeMap<String, super::graph::Node> = graph
        .nodes(NodeType::Beat)
        .map_err(err)?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let ids: Vec<String> = seed.beats.iter().map(|b| b.id.clone()).collect();
    let weave = super::graph::topological(&ids, &seed.order);
    let guess: BTreeMap<&str, String> = beat_nodes
        .values()
        .map(|n| {
            let t = n.str("scene_type").map_or_else(
                || scene_type(n.data.get("dilemma_impacts")).to_owned(),
                str::to_owned,
            );
            (n.id.as_str(), t)
        })
        .collect();
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

    let paced: Vec<&String> = weave.iter().take(PACED_BEATS).collect();
    let vision = graph.node("vision").map_err(err)?;
    let vars = json!({
        "genre": vision.as_ref().and_then(|v| v.str("genre")).unwrap_or("interactive fiction"),
        "tone": vision.as_ref().map(|v| v.strings("tone")).unwrap_or_default(),
        "beats": paced.iter().enumerate().map(|(i, b)| json!({
            "n": i + 1, "summary": beat[b.as_str()].summary, "scene_type": guess[b.as_str()],
        })).collect::<Vec<_>>(),
        "gaps": gaps.iter().enumerate().map(|(i, g)| json!({
            "n": i + 1, "from": g.from.summary, "to": g.to.summary, "why": g.why,
        })).collect::<Vec<_>>(),
        "most": MAX_GAPS,
    });
    let answer = match ask("author/grow_pacing", vars) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!(
                "the model did not pace the beats ({e}); each keeps the scene type its impacts suggest, and no bridging beat was added"
            ));
            Value::Null
        }
    };
    let mut chosen: BTreeMap<&str, &str> = BTreeMap::new();
    for t in answer["scene_types"].as_array().into_iter().flatten() {
        let n = t["n"].as_u64().and_then(|n| usize::try_from(n).ok());
        let kind = t["scene_type"].as_str().filter(|k| SCENE_TYPES.contains(k));
        if let (Some(n), Some(kind)) = (n, kind)
            && let Some(b) = paced.get(n.wrapping_sub(1))
        {
            chosen.insert(b.as_str(), kind);
        }
    }
    let mut changes = Vec::new();
    for (id, node) in &beat_nodes {
        let kind = chosen
            .get(id.as_str())
            .copied()
            .unwrap_or(guess[id.as_str()].as_str());
        if node.str("scene_type") != Some(kind) {
            changes.push(Mutation::update(id.clone(), json!({"scene_type": kind})));
        }
    }
    let mut written = Vec::new();
    for g in answer["gaps"].as_array().into_iter().flatten() {
        let Some(gap) = g["n"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| gaps.get(n.wrapping_sub(1)))
        else {
            continue;
        };
        let summary = g["summary"].as_str().unwrap_or("").trim();
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
        let kind = g["scene_type"]
            .as_str()
            .filter(|k| SCENE_TYPES.contains(k))
            .unwrap_or("micro_beat");
        let rank = beat_nodes[&x.id]
            .data
            .get("rank")
            .cloned()
            .unwrap_or(Value::Null);
        changes.push(Mutation::create(
            id.clone(),
            NodeType::Beat,
            json!({
                "summary": summary, "scene_type": kind, "is_gap_beat": true,
                "transition_style": if smooth { "smooth" } else { "cut" },
                "bridges_from": x.id, "bridges_to": y.id, "rank": rank,
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
    graph
        .apply(Stage::Grow, "pacing", &why, &changes)
        .map_err(err)
}

/// The most overlays one consequence gets.
const OVERLAYS_PER_CONSEQUENCE: usize = 2;
/// The most entities offered for one consequence.
const ENTITIES_PER_CONSEQUENCE: usize = 6;

/// Seed 000: GROW "creates entity overlays to implement consequence
/// effects". For each kept codeword that tracks a consequence, the entities
/// it can touch (those its dilemma involves and those on its path's beats);
/// one bounded model call says what changes; each overlay is gated on the
/// codeword and checked (a listed entity, at most
/// [`OVERLAYS_PER_CONSEQUENCE`] per consequence). A failed call adds none.
fn overlays(
    graph: &mut Graph,
    seed: &Seeded,
    grown: &Grown,
    ask: &mut dyn FnMut(&str, Value) -> Result<Value, String>,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let err = |e: GraphError| e.to_string();
    let entities: BTreeMap<String, super::graph::Node> = graph
        .nodes(NodeType::Entity)
        .map_err(err)?
        .into_iter()
        .filter(|e| e.str("disposition") != Some("cut"))
        .map(|e| (e.id.clone(), e))
        .collect();
    let involves = graph.edges(EdgeType::DilemmaInvolves).map_err(err)?;
    let mut items: Vec<(String, Vec<String>, Value)> = Vec::new(); // codeword, entities, prompt item
    for c in &grown.codewords {
        let Some(tracks) = &c.tracks else { continue };
        let Some(consequence) = graph.node(tracks).map_err(err)? else {
            continue;
        };
        let Some(path) = graph.node(&c.path).map_err(err)? else {
            continue;
        };
        let dilemma = path.str("dilemma_id").unwrap_or_default().to_owned();
        let mut touched: Vec<String> = involves
            .iter()
            .filter(|e| e.from == dilemma)
            .map(|e| e.to.clone())
            .collect();
        for beat in seed.beats.iter().filter(|b| b.paths.contains(&c.path)) {
            touched.extend(beat.entities.iter().cloned());
        }
        let mut listed = std::collections::BTreeSet::new();
        touched.retain(|e| entities.contains_key(e) && listed.insert(e.clone()));
        touched.truncate(ENTITIES_PER_CONSEQUENCE);
        if touched.is_empty() {
            continue;
        }
        let answer = graph
            .targets(EdgeType::Explores, &c.path)
            .map_err(err)?
            .first()
            .map(|a| graph.node(a))
            .transpose()
            .map_err(err)?
            .flatten();
        let item = json!({
            "n": items.len() + 1,
            "answer": answer.as_ref().and_then(|a| a.str("description")).unwrap_or(path.str("description").unwrap_or_default()),
            "consequence": consequence.str("description").unwrap_or_default(),
            "ripples": consequence.strings("ripples"),
            "entities": touched.iter().map(|e| json!({
                "id": e,
                "name": entities[e].str("name").unwrap_or(e),
                "base": entities[e].data.get("base").filter(|b| b.is_object()),
            })).collect::<Vec<_>>(),
        });
        items.push((c.id.clone(), touched, item));
    }
    if items.is_empty() {
        return Ok(());
    }
    let vision = graph.node("vision").map_err(err)?;
    let vars = json!({
        "genre": vision.as_ref().and_then(|v| v.str("genre")).unwrap_or("interactive fiction"),
        "consequences": items.iter().map(|(_, _, v)| v.clone()).collect::<Vec<_>>(),
    });
    let answer = match ask("author/grow_overlays", vars) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!(
                "the model wrote no overlays ({e}); entities look the same whatever the player chose"
            ));
            return Ok(());
        }
    };
    let mut added: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut per_item: BTreeMap<usize, usize> = BTreeMap::new();
    let mut refused = 0;
    for o in answer["overlays"].as_array().into_iter().flatten() {
        let n = o["n"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        let Some((codeword, touched, _)) = items.get(n.wrapping_sub(1)) else {
            refused += 1;
            continue;
        };
        let entity = o["entity"].as_str().unwrap_or("");
        let entity = touched
            .iter()
            .find(|e| *e == entity || e.trim_start_matches("entity::") == entity)
            .cloned();
        let details: serde_json::Map<String, Value> = o["details"]
            .as_object()
            .map(|d| {
                d.iter()
                    .filter_map(|(k, v)| {
                        let v = v.as_str()?.trim();
                        (!k.trim().is_empty() && !v.is_empty())
                            .then(|| (k.trim().to_owned(), json!(v)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let count = per_item.entry(n).or_default();
        let (Some(entity), false, true) = (
            entity,
            details.is_empty(),
            *count < OVERLAYS_PER_CONSEQUENCE,
        ) else {
            refused += 1;
            continue;
        };
        *count += 1;
        let list = added.entry(entity).or_default();
        match list.iter_mut().find(|v| v["when"] == json!([codeword])) {
            Some(existing) => {
                if let Some(d) = existing["details"].as_object_mut() {
                    d.extend(details);
                }
            }
            None => list.push(json!({"when": [codeword], "details": details})),
        }
    }
    if refused > 0 {
        notes.push(format!(
            "{refused} overlays the model wrote named no listed consequence or entity, had no details, or went past {OVERLAYS_PER_CONSEQUENCE} for one consequence; left out"
        ));
    }
    let mut changes = Vec::new();
    for (entity, new) in added {
        let mut list: Vec<Value> = entities[&entity]
            .data
            .get("overlays")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.extend(new);
        changes.push(Mutation::update(entity, json!({"overlays": list})));
    }
    graph
        .apply(
            Stage::Grow,
            "overlays",
            "what each kept consequence changes in the entities it touches, gated by its codeword",
            &changes,
        )
        .map_err(err)
}

/// The most intersections GROW makes.
pub const MAX_INTERSECTIONS: usize = 8;

/// Asks the model which candidates to merge and merges them: the first beat
/// absorbs the second (paths, entities, summary, place, ordering), one
/// batch; a pick that reuses a beat or would make the order cycle is skipped.
fn merge_intersections(
    graph: &mut Graph,
    seed: &mut Seeded,
    candidates: &[grow::Candidate],
    ask: &mut dyn FnMut(&str, Value) -> Result<Value, String>,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let err = |e: GraphError| e.to_string();
    let summary = |id: &str| {
        seed.beats
            .iter()
            .find(|b| b.id == id)
            .map(|b| b.summary.clone())
            .unwrap_or_default()
    };
    let asked: Vec<Value> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"n": i + 1, "a": summary(&c.a), "b": summary(&c.b), "place": c.place, "shared": c.shared})
        })
        .collect();
    let genre = graph
        .node("vision")
        .map_err(err)?
        .and_then(|v| v.str("genre").map(str::to_owned))
        .unwrap_or_else(|| "interactive fiction".into());
    let picks: Vec<usize> = match ask(
        "author/grow_intersections",
        json!({"genre": genre, "candidates": asked}),
    ) {
        Ok(answer) => answer["merge"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_u64)
                    .filter_map(|n| usize::try_from(n).ok())
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => {
            notes.push(format!(
                "no intersections: the model did not pick among {} candidates ({e})",
                candidates.len()
            ));
            return Ok(());
        }
    };
    let mut used: Vec<&str> = Vec::new();
    let mut order = seed.order.clone();
    let mut changes = Vec::new();
    let mut made = Vec::new();
    for n in picks {
        let Some(c) = n.checked_sub(1).and_then(|i| candidates.get(i)) else {
            notes.push(format!("intersection pick {n} is no candidate (skipped)"));
            continue;
        };
        if used.contains(&c.a.as_str())
            || used.contains(&c.b.as_str())
            || made.len() >= MAX_INTERSECTIONS
        {
            continue;
        }
        let moved: Vec<(String, String)> = order
            .iter()
            .map(|(after, before)| {
                let swap = |x: &String| if *x == c.b { c.a.clone() } else { x.clone() };
                (swap(after), swap(before))
            })
            .filter(|(after, before)| after != before)
            .collect();
        if super::graph::cycle_member(&moved).is_some() {
            notes.push(format!(
                "`{}` + `{}` would make the order cycle (skipped)",
                c.a, c.b
            ));
            continue;
        }
        let (Some(a), Some(b)) = (
            seed.beats.iter().find(|x| x.id == c.a),
            seed.beats.iter().find(|x| x.id == c.b),
        ) else {
            continue;
        };
        let mut entities = a.entities.clone();
        entities.extend(
            b.entities
                .iter()
                .filter(|e| !a.entities.contains(e))
                .cloned(),
        );
        changes.push(Mutation::update(
            c.a.clone(),
            json!({
                "summary": format!("{} {}", a.summary, b.summary),
                "entities": entities,
                "location": c.place.clone().or_else(|| a.location.clone()),
                "intersection": {"merged": c.b, "shared": c.shared},
            }),
        ));
        for p in &b.paths {
            changes.push(Mutation::link(EdgeType::BelongsTo, c.a.clone(), p.clone()));
        }
        for (after, before) in &moved {
            if !order.contains(&(after.clone(), before.clone())) {
                changes.push(Mutation::link(
                    EdgeType::SequencedAfter,
                    after.clone(),
                    before.clone(),
                ));
            }
        }
        changes.push(Mutation::Remove { id: c.b.clone() });
        order = moved;
        used.push(&c.a);
        used.push(&c.b);
        made.push(format!("`{}` + `{}`", c.a, c.b));
    }
    if made.is_empty() {
        return Ok(());
    }
    graph
        .apply(
            Stage::Grow,
            "intersections",
            &format!(
                "the model picked, among the engine's candidates: {}",
                made.join(", ")
            ),
            &changes,
        )
        .map_err(err)?;
    *seed = seeded(graph).map_err(err)?;
    Ok(())
}

/// Whether a label reads as something the player does in the story, not
/// as talk about the story (seed 000: never "Continue").
pub fn diegetic(label: &str) -> bool {
    let lower = label.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let meta = [
        "continue", "passage", "choice", "option", "reader", "chapter",
    ];
    !words.is_empty()
        && label.chars().count() <= 70
        && !words.iter().any(|w| meta.contains(w))
        && !matches!(words.as_slice(), ["next" | "ok"] | ["go", "on"])
}

/// Runs GROW on the graph: intersections, pacing (scene types, bridging
/// beats), then the weave, arcs, passages, codewords, overlays and choices. When the arcs do not open on one beat, GROW adds
/// an opening gap beat every path shares. Returns the grown topology.
pub fn run(
    graph: &mut Graph,
    spark: &str,
    ask: &mut dyn FnMut(&str, Value) -> Result<Value, String>,
) -> Result<Grown, String> {
    let err = |e: GraphError| e.to_string();
    let mut grown_notes: Vec<String> = Vec::new();
    let mut seed = seeded(graph).map_err(err)?;
    if seed.beats.is_empty() {
        return Err("SEED left no beats to grow".into());
    }

    // Phase: intersections; the engine lists the compatible pairs, the
    // model picks, the engine merges what stays acyclic.
    let candidates = grow::intersection_candidates(&seed);
    if !candidates.is_empty() {
        merge_intersections(graph, &mut seed, &candidates, ask, &mut grown_notes)?;
    }

    // Phase: pacing; scene types, and bridging beats in the gaps the
    // engine finds, as far as the model writes them.
    pacing(graph, &seed, ask, &mut grown_notes)?;
    seed = seeded(graph).map_err(err)?;

    // Phase: the weave; an opening beat when the arcs would start apart.
    let grown = match grow::grow(&seed) {
        Err(grow::GrowError::ManyStarts { .. }) => {
            let roots: Vec<String> = seed
                .beats
                .iter()
                .filter(|b| !seed.order.iter().any(|(after, _)| after == &b.id))
                .map(|b| b.id.clone())
                .collect();
            let all_paths: Vec<String> = seed.paths.iter().map(|p| p.id.clone()).collect();
            let opening = "beat::opening".to_owned();
            let summary = format!("The story opens: {spark}");
            let mut changes = vec![Mutation::create(
                opening.clone(),
                NodeType::Beat,
                json!({"summary": summary, "is_gap_beat": true, "transition_style": "cut",
                       "scene_type": "micro_beat", "rank": 0, "entities": [], "dilemma_impacts": []}),
            )];
            for p in &all_paths {
                changes.push(Mutation::link(
                    EdgeType::BelongsTo,
                    opening.clone(),
                    p.clone(),
                ));
            }
            for r in &roots {
                changes.push(Mutation::link(
                    EdgeType::SequencedAfter,
                    r.clone(),
                    opening.clone(),
                ));
            }
            graph
                .apply(
                    Stage::Grow,
                    "gaps",
                    "the arcs opened on different beats: an opening beat every path shares",
                    &changes,
                )
                .map_err(err)?;
            seed = seeded(graph).map_err(err)?;
            grow::grow(&seed).map_err(|e| e.to_string())?
        }
        other => other.map_err(|e| e.to_string())?,
    };

    // Phase: arcs.
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
    graph
        .apply(
            Stage::Grow,
            "arcs",
            "one arc per combination of explored paths, woven in one order",
            &changes,
        )
        .map_err(err)?;

    // Phase: passages (1:1 from beats within a world), who appears, and
    // which relationships are at work (both ends present).
    let beats: BTreeMap<&str, &Beat> = seed.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let bonds = graph.nodes(NodeType::Relationship).map_err(err)?;
    let mut changes = Vec::new();
    for p in &grown.passages {
        let all = p.all_beats();
        let beat = beats[p.beat.as_str()];
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
            // Seed 000's merged passage: every beat, the primary, where it came from,
            // and how the prose moves from one beat to the next (FILL's guidance).
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
        changes.push(Mutation::create(p.id.clone(), NodeType::Passage, data));
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
        if let Some(l) = &beat.location {
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
            if graph.node(e).map_err(err)?.is_some() {
                changes.push(Mutation::link_with(
                    EdgeType::Appears,
                    e.clone(),
                    p.id.clone(),
                    json!({"role": role}),
                ));
            }
        }
    }
    graph
        .apply(
            Stage::Grow,
            "passages",
            "a passage per beat in each world it is read in",
            &changes,
        )
        .map_err(err)?;

    // Phase: prune (seed 000 "Validation Rules"): a relationship no passage
    // involves goes; an entity no passage shows is an orphan and goes, unless a dilemma involves it (a core
    // entity that never appears means the story is incomplete: said, kept).
    let appearing: std::collections::BTreeSet<String> = graph
        .edges(EdgeType::Appears)
        .map_err(err)?
        .into_iter()
        .map(|e| e.from)
        .collect();
    let core: std::collections::BTreeSet<String> = graph
        .edges(EdgeType::DilemmaInvolves)
        .map_err(err)?
        .into_iter()
        .map(|e| e.to)
        .collect();
    let mut pruned = Vec::new();
    let mut changes = Vec::new();
    // A relationship no passage involves is an orphan and goes.
    let involved: std::collections::BTreeSet<String> = graph
        .edges(EdgeType::Involves)
        .map_err(err)?
        .into_iter()
        .map(|e| e.from)
        .collect();
    for r in graph.nodes(NodeType::Relationship).map_err(err)? {
        if !involved.contains(&r.id) {
            pruned.push(r.id.clone());
            changes.push(Mutation::Remove { id: r.id });
        }
    }
    for e in graph.nodes(NodeType::Entity).map_err(err)? {
        if e.str("disposition") == Some("cut") || appearing.contains(&e.id) {
            continue;
        }
        if core.contains(&e.id) {
            grown_notes.push(format!(
                "`{}` is part of a dilemma but appears in no passage: give it a beat in SEED",
                e.id
            ));
        } else {
            pruned.push(e.id.clone());
            changes.push(Mutation::Remove { id: e.id });
        }
    }
    if !changes.is_empty() {
        graph
            .apply(
                Stage::Grow,
                "prune",
                &format!(
                    "entities no passage shows, relationships no passage involves: {}",
                    pruned.join(", ")
                ),
                &changes,
            )
            .map_err(err)?;
    }

    // Phase: codewords and their grants.
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
    graph
        .apply(Stage::Grow, "codewords", &why, &changes)
        .map_err(err)?;

    // Phase: overlays; what each kept consequence changes in the
    // entities it touches, gated by its codeword.
    overlays(graph, &seed, &grown, ask, &mut grown_notes)?;

    // Phase: choices, with labels the model writes (one bounded call),
    // each checked; a missing or meta label is the target's first sentence.
    let passages: BTreeMap<&str, &grow::Passage> =
        grown.passages.iter().map(|p| (p.id.as_str(), p)).collect();
    let summary_of = |id: &str| beats[passages[id].beat.as_str()].summary.clone();
    let vision = graph.node("vision").map_err(err)?;
    let asked: Vec<Value> = grown
        .choices
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"n": i + 1, "from": summary_of(&c.from), "to": summary_of(&c.to)}))
        .collect();
    let vars = json!({
        "genre": vision.as_ref().and_then(|v| v.str("genre")).unwrap_or("interactive fiction"),
        "tone": vision.as_ref().map(|v| v.strings("tone")).unwrap_or_default(),
        "choices": asked,
    });
    let written: BTreeMap<usize, String> = match ask("author/grow_labels", vars) {
        Ok(answer) => answer["labels"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|l| {
                        let n = usize::try_from(l["n"].as_u64()?).ok()?;
                        Some((n, l["label"].as_str()?.trim().to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => {
            grown_notes.push(format!(
                "the model wrote no labels ({e}); each is its target's first sentence"
            ));
            BTreeMap::new()
        }
    };
    let mut changes = Vec::new();
    let mut used: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut fallbacks = 0;
    for (i, c) in grown.choices.iter().enumerate() {
        let taken = used.entry(c.from.as_str()).or_default();
        let label = match written.get(&(i + 1)) {
            Some(l) if diegetic(l) && !taken.contains(l) => l.clone(),
            _ => {
                fallbacks += 1;
                label_from(&summary_of(&c.to))
            }
        };
        taken.push(label.clone());
        changes.push(Mutation::link_with(
            EdgeType::Choice,
            c.from.clone(),
            c.to.clone(),
            json!({"label": label, "requires": c.requires, "grants": c.grants}),
        ));
    }
    if fallbacks > 0 && !written.is_empty() {
        grown_notes.push(format!(
            "{fallbacks} of {} labels were missing, repeated or not in the story's voice; those are their target's first sentence",
            grown.choices.len()
        ));
    }
    changes.push(Mutation::Meta {
        key: "grow.start".into(),
        value: json!(grown.start),
    });
    let mut notes = grown.notes.clone();
    notes.extend(grown_notes.iter().cloned());
    changes.push(Mutation::Meta {
        key: "grow.notes".into(),
        value: json!(notes),
    });
    graph
        .apply(
            Stage::Grow,
            "choices",
            "choices from comparing the arcs' sequences, labelled by the model where its labels hold",
            &changes,
        )
        .map_err(err)?;
    let mut grown = grown;
    grown.notes = notes;
    Ok(grown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_say_what_the_player_does_not_what_the_story_is() {
        for good in [
            "Wait for the tide",
            "Row to the next island",
            "Take the lantern down",
        ] {
            assert!(diegetic(good), "{good}");
        }
        for bad in [
            "Continue",
            "Go on",
            "Next",
            "Choose this option",
            "Read the next passage",
            "",
        ] {
            assert!(!diegetic(bad), "{bad}");
        }
        assert_eq!(
            label_from("Mara gives the sea her years. Then the storm."),
            "Mara gives the sea her years"
        );
        assert!(label_from(&"word ".repeat(40)).ends_with('…'));
    }
}
