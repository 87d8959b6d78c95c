//! GROW's intersections: the model picks among the engine's candidates, the engine merges.

use serde_json::{Value, json};

use super::read::{Vision, seeded};
use crate::author::answers::IntersectionsAnswer;
use crate::author::ask::{self, Ask, StageError};
use crate::author::graph::{Graph, Mutation, cycle_member};
use crate::author::grow::{Candidate, Seeded};
use crate::author::ontology::{EdgeType, Stage};

/// The most intersections GROW makes.
pub const MAX_INTERSECTIONS: usize = 8;

/// Asks the model which candidates to merge and merges them: the first beat
/// absorbs the second (paths, entities, summary, place, ordering), one
/// batch; a pick that reuses a beat or would make the order cycle is skipped.
pub(super) fn merge_intersections(
    graph: &mut Graph,
    seed: &mut Seeded,
    candidates: &[Candidate],
    ask: &mut Ask,
    notes: &mut Vec<String>,
) -> Result<(), StageError> {
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
    let genre = Vision::read(graph)?.genre;
    let vars = json!({"genre": genre, "candidates": asked});
    let picks = match ask::answer::<IntersectionsAnswer>(ask, vars) {
        Ok(answer) => answer.merge,
        Err(e) => {
            notes.push(format!(
                "no intersections: the model did not pick among {} candidates ({e})",
                candidates.len()
            ));
            return Ok(());
        }
    };
    let (changes, made) = merges(seed, candidates, &picks, notes);
    if made.is_empty() {
        return Ok(());
    }
    graph.apply(
        Stage::Grow,
        "intersections",
        &format!(
            "the model picked, among the engine's candidates: {}",
            made.join(", ")
        ),
        &changes,
    )?;
    *seed = seeded(graph)?;
    Ok(())
}

/// The merges the picks make, in order, as one batch; and each merge said (`a` + `b`).
fn merges(
    seed: &Seeded,
    candidates: &[Candidate],
    picks: &[usize],
    notes: &mut Vec<String>,
) -> (Vec<Mutation>, Vec<String>) {
    let mut used: Vec<&str> = Vec::new();
    let mut order = seed.order.clone();
    let mut changes = Vec::new();
    let mut made = Vec::new();
    for &n in picks {
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
        if cycle_member(&moved).is_some() {
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
    (changes, made)
}
