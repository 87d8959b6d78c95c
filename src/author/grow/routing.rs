//! Seed 000's routing check on the grown choices: every arc can take its way, and only its own.

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Arc, Choice, GrowError, Passage};

/// Seed 000 `check_routing_coverage`, on every step of every arc: the arc
/// can take it with the codewords its earlier choices granted (collectively
/// exhaustive: an error, GROW would ship a dead end), and no other variant
/// of the passage it goes to is open to it (mutually exclusive: said in the
/// notes, the player could pick a world that is not theirs).
pub(super) fn check_routing(
    arcs: &[Arc],
    passages: &BTreeMap<String, Passage>,
    choices: &[Choice],
    notes: &mut Vec<String>,
) -> Result<(), GrowError> {
    let mut leaving: BTreeMap<&str, Vec<&Choice>> = BTreeMap::new();
    for c in choices {
        leaving.entry(c.from.as_str()).or_default().push(c);
    }
    let none = Vec::new();
    let mut overlapping = BTreeSet::new();
    for arc in arcs {
        let mut held: BTreeSet<&String> = BTreeSet::new();
        for pair in arc.passages.windows(2) {
            let here = leaving.get(pair[0].as_str()).unwrap_or(&none);
            let open = |c: &Choice| c.requires.iter().all(|r| held.contains(r));
            let step = here
                .iter()
                .find(|c| c.to == pair[1])
                .filter(|c| open(c))
                .ok_or_else(|| GrowError::Uncovered {
                    arc: arc.id.clone(),
                    from: pair[0].clone(),
                    to: pair[1].clone(),
                })?;
            let beat = &passages[&pair[1]].beat;
            for rival in here
                .iter()
                .filter(|c| open(c) && c.to != pair[1] && &passages[&c.to].beat == beat)
            {
                overlapping.insert((pair[1].clone(), rival.to.clone()));
            }
            held.extend(&step.grants);
        }
    }
    for (mine, rival) in overlapping {
        notes.push(format!(
            "a player on the way to `{mine}` may also open `{rival}` (nothing they hold tells the two apart)"
        ));
    }
    Ok(())
}
