//! GROW's choices: consecutive passages of every arc, gated where arcs part; their labels.

use std::collections::{BTreeMap, BTreeSet};

use super::codewords::grants_of;
use super::types::{Arc, Choice, Codeword, Passage};

/// Choices: consecutive passages of every arc; where arcs part, each way is gated by the
/// codewords all its arcs hold and not all hold.
pub(super) fn choices(
    arcs: &[Arc],
    passages: &BTreeMap<String, Passage>,
    codewords: &[Codeword],
) -> Vec<Choice> {
    // From passage → to passage → what each arc taking that step holds.
    let mut ways: BTreeMap<String, BTreeMap<String, Vec<BTreeSet<String>>>> = BTreeMap::new();
    for arc in arcs {
        let mut held = BTreeSet::new();
        for (i, pair) in arc.passages.windows(2).enumerate() {
            held.extend(grants_of(codewords, &arc.sequence[i]));
            ways.entry(pair[0].clone())
                .or_default()
                .entry(pair[1].clone())
                .or_default()
                .push(held.clone());
        }
    }
    let mut choices = Vec::new();
    for (from, targets) in &ways {
        let all: Vec<&BTreeSet<String>> = targets.values().flatten().collect();
        let everyone = intersect(all.iter().copied());
        for (to, steps) in targets {
            let requires: Vec<String> = if targets.len() == 1 {
                Vec::new()
            } else {
                intersect(steps.iter())
                    .difference(&everyone)
                    .cloned()
                    .collect()
            };
            let beat = &passages[to].beat;
            choices.push(Choice {
                from: from.clone(),
                to: to.clone(),
                requires,
                grants: grants_of(codewords, beat),
            });
        }
    }
    choices
}

fn intersect<'a>(mut sets: impl Iterator<Item = &'a BTreeSet<String>>) -> BTreeSet<String> {
    let Some(first) = sets.next() else {
        return BTreeSet::new();
    };
    sets.fold(first.clone(), |acc, s| {
        acc.intersection(s).cloned().collect()
    })
}

/// A diegetic label for the way to a passage, from its beat's summary: its
/// first sentence, without the full stop, at most 80 characters.
pub fn label_from(summary: &str) -> String {
    let first = summary
        .split_inclusive(['.', '!', '?'])
        .next()
        .unwrap_or(summary)
        .trim()
        .trim_end_matches('.')
        .trim();
    let mut label: String = first.chars().take(80).collect();
    if first.chars().count() > 80 {
        if let Some(cut) = label.rfind(' ') {
            label.truncate(cut);
        }
        label.push('…');
    }
    if label.is_empty() {
        "Go on".to_owned()
    } else {
        label
    }
}
