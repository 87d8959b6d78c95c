//! GROW's linear runs collapsed into one passage (seed 000 Phase 9d).

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Arc, Beat, Choice, Passage};

/// The most beats one merged passage holds.
pub const MAX_RUN: usize = 4;

/// Seed 000 Phase 9d: linear runs collapse into one passage. A passage whose
/// only way on is an ungated choice that grants nothing, into a passage
/// nothing else leads to, at the same place, absorbs it (up to `max_run`
/// beats); the merged passage keeps the first passage's id and every beat.
pub(super) fn collapse(
    mut passages: BTreeMap<String, Passage>,
    choices: Vec<Choice>,
    arcs: &mut [Arc],
    beats: &BTreeMap<&str, &Beat>,
    max_run: usize,
) -> (BTreeMap<String, Passage>, Vec<Choice>) {
    let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut into: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in choices.iter().enumerate() {
        out.entry(c.from.as_str()).or_default().push(i);
        *into.entry(c.to.as_str()).or_default() += 1;
    }
    // A link that may merge: neither end has another way in or out, and
    // nothing is gated or granted on it, at one place. Merging never
    // changes these facts for other links, so they are found once.
    let location = |p: &str| beats[passages[p].beat.as_str()].location.clone();
    let next: BTreeMap<String, (usize, String)> = choices
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            out[c.from.as_str()].len() == 1
                && into.get(c.to.as_str()) == Some(&1)
                && c.requires.is_empty()
                && c.grants.is_empty()
                && c.from != c.to
                && location(&c.from) == location(&c.to)
        })
        .map(|(i, c)| (c.from.clone(), (i, c.to.clone())))
        .collect();
    let tails: BTreeSet<&String> = next.values().map(|(_, to)| to).collect();
    let mut merged_into: BTreeMap<String, String> = BTreeMap::new();
    let mut folds: Vec<(String, String)> = Vec::new(); // (tail, head), in chain order
    let mut dropped: BTreeSet<usize> = BTreeSet::new();
    // Walk each chain from a passage no mergeable link enters, `max_run` beats a passage.
    let heads: Vec<String> = next
        .keys()
        .filter(|p| !tails.contains(p))
        .cloned()
        .collect();
    for first in heads {
        let mut head = first;
        let mut at = head.clone();
        let mut run = vec![head.clone()];
        while let Some((link, to)) = next.get(&at) {
            if run.len() < max_run {
                dropped.insert(*link);
                merged_into.insert(to.clone(), head.clone());
                folds.push((to.clone(), head.clone()));
                run.push(to.clone());
            } else {
                head.clone_from(to);
                run = vec![head.clone()];
            }
            at.clone_from(to);
        }
    }
    // Fold each tail into its head, in chain order.
    for (tail_id, head_id) in &folds {
        let tail = passages.remove(tail_id).expect("chains join passages");
        let head = passages.get_mut(head_id).expect("chains join passages");
        if head.beats.is_empty() {
            head.beats.push(head.beat.clone());
            head.merged_from.push(head.id.clone());
        }
        head.beats.push(tail.beat.clone());
        head.merged_from.push(tail.id.clone());
        for answer in tail.routed {
            if !head.routed.contains(&answer) {
                head.routed.push(answer);
            }
        }
    }
    let choices: Vec<Choice> = choices
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, mut c)| {
            if let Some(head) = merged_into.get(&c.from) {
                c.from.clone_from(head);
            }
            c
        })
        .collect();
    for arc in arcs.iter_mut() {
        arc.passages.retain(|p| !merged_into.contains_key(p));
        for at in [&mut arc.diverges_at, &mut arc.converges_at] {
            if let Some(head) = at.as_ref().and_then(|p| merged_into.get(p)) {
                *at = Some(head.clone());
            }
        }
    }
    (passages, choices)
}
