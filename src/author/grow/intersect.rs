//! GROW's intersection candidates: pairs of beats from different dilemmas that could be one scene.

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Beat, Seeded};
use crate::author::graph::topological;

/// A pair of beats that could be one scene (seed 000 "Intersection
/// Operations", merge): from different dilemmas, neither a gap beat, each
/// serving every explored answer of its own dilemmas (so the merged beat
/// lies on exactly the arcs both did: no path is infected), neither ordered
/// before the other, sharing an entity or a place (a location or an
/// alternative). The model only picks among these.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub a: String,
    pub b: String,
    /// The place the scene would be at, if they share one.
    pub place: Option<String>,
    /// The entities both have.
    pub shared: Vec<String>,
}

/// Every intersection candidate, in the weave's order.
pub fn intersection_candidates(seeded: &Seeded) -> Vec<Candidate> {
    let dilemma_of: BTreeMap<&str, &str> = seeded
        .paths
        .iter()
        .map(|p| (p.id.as_str(), p.dilemma.as_str()))
        .collect();
    let explored = |d: &str| seeded.paths.iter().filter(|p| p.dilemma == d).count();
    let dilemmas = |b: &Beat| -> BTreeSet<String> {
        b.paths
            .iter()
            .filter_map(|p| dilemma_of.get(p.as_str()).map(|d| (*d).to_owned()))
            .collect()
    };
    // Serves every explored answer of each dilemma it touches.
    let neutral = |b: &Beat| {
        dilemmas(b).iter().all(|d| {
            b.paths
                .iter()
                .filter(|p| dilemma_of.get(p.as_str()) == Some(&d.as_str()))
                .count()
                == explored(d)
        })
    };
    // What each beat must come after, directly or not.
    let mut before: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let ids: Vec<String> = seeded.beats.iter().map(|b| b.id.clone()).collect();
    for id in topological(&ids, &seeded.order) {
        let mut all = BTreeSet::new();
        for (after, earlier) in &seeded.order {
            if *after == id {
                all.insert(earlier.as_str());
                all.extend(before.get(earlier.as_str()).cloned().unwrap_or_default());
            }
        }
        let key = ids.iter().find(|x| **x == id).map_or("", String::as_str);
        before.insert(key, all);
    }
    let ordered = |a: &str, b: &str| {
        before.get(a).is_some_and(|s| s.contains(b)) || before.get(b).is_some_and(|s| s.contains(a))
    };
    let eligible: Vec<&Beat> = seeded
        .beats
        .iter()
        .filter(|b| !b.is_gap && !b.paths.is_empty() && neutral(b))
        .collect();
    let mut out = Vec::new();
    for (i, a) in eligible.iter().enumerate() {
        for b in &eligible[i + 1..] {
            if !dilemmas(a).is_disjoint(&dilemmas(b)) || ordered(&a.id, &b.id) {
                continue;
            }
            let places_a: Vec<&String> = a.location.iter().chain(&a.alternatives).collect();
            let places_b: Vec<&String> = b.location.iter().chain(&b.alternatives).collect();
            let place = if a.location.is_some() && a.location == b.location {
                a.location.clone()
            } else {
                places_a
                    .iter()
                    .find(|p| places_b.contains(p))
                    .map(|p| (*p).clone())
            };
            let shared: Vec<String> = a
                .entities
                .iter()
                .filter(|e| b.entities.contains(e))
                .cloned()
                .collect();
            if place.is_some() || !shared.is_empty() {
                out.push(Candidate {
                    a: a.id.clone(),
                    b: b.id.clone(),
                    place,
                    shared,
                });
            }
        }
    }
    out
}
