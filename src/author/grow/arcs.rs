//! GROW's arcs: one explored path per dilemma, each beat a passage in the world the arc is in.
//!
//! The world of a beat is the set of choices the arc made that have not (yet) come back
//! together with the other branches; where a heavy-residue dilemma's branches meet, and at
//! every ending of a high-salience one, the passage is one per answer (variant routing).

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Arc, GrowError, Passage, Path, Policy, Residue, Salience};
use super::weave::Weave;

/// Every arc (spine first) and the passages they go through, by id.
pub(super) fn arcs(weave: &Weave) -> (Vec<Arc>, BTreeMap<String, Passage>) {
    let mut combos: Vec<Vec<&Path>> = vec![Vec::new()];
    for list in weave.by_dilemma.values() {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                list.iter().map(move |p| {
                    let mut c = c.clone();
                    c.push(*p);
                    c
                })
            })
            .collect();
    }
    let mut arcs = Vec::new();
    let mut passages = BTreeMap::new();
    for combo in &combos {
        arcs.push(arc(weave, combo, &mut passages));
    }
    arcs.sort_by_key(|a| (!a.spine, a.id.clone()));
    (arcs, passages)
}

/// The arc of one combination of paths: its beats in the weave's order, each as the
/// passage of the world the arc is in there (made the first time an arc needs it).
fn arc(weave: &Weave, combo: &[&Path], passages: &mut BTreeMap<String, Passage>) -> Arc {
    let sequence: Vec<String> = weave
        .order
        .iter()
        .filter(|b| weave.on_arc(weave.beat(b), combo))
        .cloned()
        .collect();
    let mut walk = Walk::default();
    let mut passage_ids = Vec::new();
    for (at_beat, b) in sequence.iter().enumerate() {
        let beat = weave.beat(b);
        let landed = walk.step(weave, b);
        let world = walk.world(weave, combo, b);
        let last = at_beat + 1 == sequence.len();
        let routed = walk.routed(weave, combo, &landed, last);
        let name = b.strip_prefix("beat::").unwrap_or(b);
        let tags: Vec<&String> = world.iter().chain(&routed).collect();
        let id = if tags.is_empty() {
            format!("passage::{name}")
        } else {
            format!(
                "passage::{name}--{}",
                tags.iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join("--")
            )
        };
        passages.entry(id.clone()).or_insert_with(|| Passage {
            id: id.clone(),
            beat: b.clone(),
            world,
            routed,
            beats: Vec::new(),
            merged_from: Vec::new(),
        });
        passage_ids.push(id);
        for d in &beat.commits {
            if let Some((&d, _)) = weave.by_dilemma.get_key_value(d.as_str())
                && !walk.committed.contains_key(d)
            {
                walk.committed.insert(d, 1);
            }
        }
    }
    let spine = combo.iter().all(|p| p.canonical);
    let id = if spine {
        "arc::spine".to_owned()
    } else {
        format!(
            "arc::{}",
            combo
                .iter()
                .filter(|p| !p.canonical)
                .map(|p| p.answer.as_str())
                .collect::<Vec<_>>()
                .join("+")
        )
    };
    Arc {
        id,
        spine,
        paths: combo.iter().map(|p| p.id.clone()).collect(),
        sequence,
        passages: passage_ids,
        diverges_at: None,
        converges_at: None,
    }
}

/// Where an arc's dilemmas stand as it walks its beats.
#[derive(Default)]
struct Walk<'a> {
    /// Dilemma → beats of its own since its commit.
    committed: BTreeMap<&'a str, usize>,
    /// The dilemmas whose branches have come back together.
    converged: BTreeSet<&'a str>,
}

impl<'a> Walk<'a> {
    /// Counts beat `b` for the dilemmas it is a branch's own beat of, and returns those whose
    /// branches come back together at it. A branch comes back only where no branch of its
    /// dilemma has anything of its own left in the weave (so what follows is the same
    /// whichever answer was chosen): at once for flavor, after `payoff_budget` beats of its
    /// own for soft, never for hard.
    fn step(&mut self, weave: &Weave<'a>, b: &str) -> Vec<&'a str> {
        let beat = weave.beat(b);
        for (d, seen) in &mut self.committed {
            if weave.exclusive_to(beat, d) {
                *seen += 1;
            }
        }
        let mut landed = Vec::new();
        for (d, seen) in &self.committed {
            let (pol, budget) = weave
                .contract
                .get(d)
                .map_or((Policy::Soft, 2), |c| (c.policy, c.payoff_budget.max(1)));
            let rest_shared = weave.last_own.get(d).is_none_or(|last| weave.at[b] > *last);
            let together = match pol {
                Policy::Flavor => rest_shared,
                Policy::Soft => *seen >= budget && rest_shared,
                Policy::Hard => false,
            };
            if together && self.converged.insert(d) {
                landed.push(*d);
            }
        }
        landed
    }

    /// The answers that set beat `b`'s passage apart on this arc: the hard (or not yet
    /// converged) choices made, except where the beat is itself a branch's own.
    fn world(&self, weave: &Weave, combo: &[&Path], b: &str) -> Vec<String> {
        let beat = weave.beat(b);
        combo
            .iter()
            .filter(|p| self.committed.contains_key(p.dilemma.as_str()))
            .filter(|p| !self.converged.contains(p.dilemma.as_str()))
            .filter(|p| weave.by_dilemma[p.dilemma.as_str()].len() > 1)
            .filter(|p| !beat.paths.contains(&p.id) || !weave.exclusive_to(beat, &p.dilemma))
            .map(|p| p.answer.clone())
            .collect()
    }

    /// Seed 000 `split_and_reroute`: the answers a passage is one per, where a heavy-residue
    /// dilemma's branches come back together (`landed` there) and at every ending (`last`)
    /// of a high-salience one; the arcs arriving there are routed to theirs.
    fn routed(&self, weave: &Weave, combo: &[&Path], landed: &[&str], last: bool) -> Vec<String> {
        combo
            .iter()
            .filter(|p| {
                let d = p.dilemma.as_str();
                weave.routable.contains(d)
                    && self.converged.contains(d)
                    && weave.contract.get(d).is_some_and(|info| {
                        (info.residue == Residue::Heavy && landed.contains(&d))
                            || (last && info.ending == Salience::High)
                    })
            })
            .map(|p| p.answer.clone())
            .collect()
    }
}

/// Where every arc parts from the spine and comes back to it; the passage they all start
/// from (an arc that opens elsewhere is refused).
pub(super) fn place(
    arcs: &mut [Arc],
    passages: &BTreeMap<String, Passage>,
) -> Result<String, GrowError> {
    let spine = arcs.first().cloned().ok_or(GrowError::NoBeats)?;
    let start = spine.passages.first().cloned().ok_or(GrowError::NoBeats)?;
    for arc in arcs.iter_mut() {
        if arc.passages.first() != Some(&start) {
            return Err(GrowError::ManyStarts {
                arc: arc.id.clone(),
                first: arc.sequence.first().cloned().unwrap_or_default(),
                spine: spine.sequence.first().cloned().unwrap_or_default(),
            });
        }
        if arc.spine {
            continue;
        }
        let common = arc
            .passages
            .iter()
            .zip(&spine.passages)
            .take_while(|(a, b)| a == b)
            .count();
        arc.diverges_at = arc.passages.get(common.saturating_sub(1)).cloned();
        // The first passage from which the rest is the spine's rest (a
        // passage split by variant routing is still the same place in the
        // structure: its variants differ in what the prose shows).
        let shape = |ids: &[String]| -> Vec<(String, Vec<String>)> {
            ids.iter()
                .map(|id| (passages[id].beat.clone(), passages[id].world.clone()))
                .collect()
        };
        let (mine, theirs) = (shape(&arc.passages), shape(&spine.passages));
        arc.converges_at = (common..arc.passages.len())
            .find(|&i| {
                let rest = &mine[i..];
                theirs.len() >= rest.len() && theirs[theirs.len() - rest.len()..] == *rest
            })
            .map(|i| arc.passages[i].clone());
    }
    Ok(start)
}
